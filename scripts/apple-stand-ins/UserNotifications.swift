// A stand-in for Apple's UserNotifications, with only the declarations PushClient uses, as the
// SDK declares them: enough to type-check PushClient's Apple-only code on Linux.
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
