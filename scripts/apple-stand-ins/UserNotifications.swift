// A stand-in for Apple's UserNotifications, with only the declarations PushClient uses, spelt as
// the SDK's headers declare them and Swift imports them (UNNotificationAttachment.h,
// UNNotificationContent.h, UNNotificationRequest.h, UNNotificationServiceExtension.h: classes, their read-only and, in the mutable
// content, read-write properties): enough to type-check PushClient's Apple-only code on Linux.
public import Foundation

open class UNNotificationAttachment: NSObject, @unchecked Sendable {
    open var identifier: String { fatalError("stand-in") }
    open var url: URL { fatalError("stand-in") }
    open var type: String { fatalError("stand-in") }

    public convenience init(identifier: String, url URL: URL, options: [AnyHashable: Any]? = nil) throws {
        fatalError("stand-in")
    }
}

public let UNNotificationAttachmentOptionsTypeHintKey: String = "UNNotificationAttachmentOptionsTypeHintKey"

open class UNNotificationContent: NSObject, NSMutableCopying, @unchecked Sendable {
    open var title: String { fatalError("stand-in") }
    open var subtitle: String { fatalError("stand-in") }
    open var body: String { fatalError("stand-in") }
    open var attachments: [UNNotificationAttachment] { fatalError("stand-in") }
    open var userInfo: [AnyHashable: Any] { fatalError("stand-in") }

    open func mutableCopy(with zone: NSZone? = nil) -> Any { fatalError("stand-in") }
}

open class UNMutableNotificationContent: UNNotificationContent, @unchecked Sendable {
    open override var title: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    open override var subtitle: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    open override var body: String {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
    open override var attachments: [UNNotificationAttachment] {
        get { fatalError("stand-in") }
        set { fatalError("stand-in") }
    }
}

open class UNNotificationRequest: NSObject, @unchecked Sendable {
    open var identifier: String { fatalError("stand-in") }
    open var content: UNNotificationContent { fatalError("stand-in") }
}

open class UNNotificationServiceExtension: NSObject {
    open func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        fatalError("stand-in")
    }

    open func serviceExtensionTimeWillExpire() { fatalError("stand-in") }
}
