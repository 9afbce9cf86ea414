#if canImport(UserNotifications)
import Foundation
public import UserNotifications

extension DownloadedImage {
    /// The image as an attachment of the notification a service extension completes: the system
    /// moves the file into its own store, so it must sit in the extension's own container.
    /// (Not built on Linux, where this repository's checks run.)
    public func attachment(identifier: String = "image") throws -> UNNotificationAttachment {
        let typeHints = ["image/png": "public.png", "image/jpeg": "public.jpeg", "image/gif": "com.compuserve.gif"]
        return try UNNotificationAttachment(
            identifier: identifier, url: file, options: [UNNotificationAttachmentOptionsTypeHintKey: typeHints[contentType] ?? "public.image"])
    }
}

extension NotificationServiceHelper {
    /// `UNNotificationServiceExtension.didReceive(_:withContentHandler:)`, forwarded as it is:
    /// the handler is called once, with the request's content completed or as it came.
    public func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        let handler = ContentHandler(contentHandler)
        let content = request.content
        let shown = NotificationContent(title: content.title, subtitle: content.subtitle, body: content.body)
        didReceive(PushMessage(userInfo: content.userInfo), showing: shown) { result in
            guard result != shown, let completed = content.mutableCopy() as? UNMutableNotificationContent else { return handler.call(content) }
            completed.title = result.title
            completed.subtitle = result.subtitle
            completed.body = result.body
            if let attachment = try? result.image?.attachment() { completed.attachments = [attachment] }
            handler.call(completed)
        }
    }

    /// `UNNotificationServiceExtension.serviceExtensionTimeWillExpire()`, forwarded as it is.
    public func serviceExtensionTimeWillExpire() { timeWillExpire() }
}

/// The system's content handler, which it lets an extension call from any thread, once.
private struct ContentHandler: @unchecked Sendable {
    let call: (UNNotificationContent) -> Void
    init(_ call: @escaping (UNNotificationContent) -> Void) { self.call = call }
}
#endif
