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
#endif
