/// The rich-push and secure-push flows' messages for Android, the counterparts of the APNs ones:
/// what the app reads is in `data` under the same keys (`richId`, `richType`, `richMessage`,
/// `secureId`), so one backend serves both apps alike.
extension FCMMessage {
    /// The rich-push flow's data message: no notification is shown; the app is woken (at high
    /// priority, as a silent APNs push wakes an iOS app) to fetch the item named by `richId`.
    public static func silentRichPush(richId: String, richType: String, richMessage: String) -> FCMMessage {
        FCMMessage(data: ["richId": richId, "richType": richType, "richMessage": richMessage], android: FCMAndroidConfig(priority: .high))
    }

    /// The rich-push flow's alert: `message` is shown, and the app fetches the item named by
    /// `richId` when the user opens it.
    public static func richAlert(richId: String, richType: String, message: String) -> FCMMessage {
        FCMMessage(
            notification: FCMNotification(body: message), data: ["richId": richId, "richType": richType],
            android: FCMAndroidConfig(priority: .high))
    }

    /// The secure-push flow's data message: it carries only `secureId`; the app fetches the
    /// content over its own authenticated connection.
    public static func silentSecurePush(secureId: String) -> FCMMessage {
        FCMMessage(data: ["secureId": secureId], android: FCMAndroidConfig(priority: .high))
    }

    /// The secure-push flow's alert: a data message, so that the app, woken at high priority,
    /// fetches the content named by `secureId` and shows it itself, falling back to `placeholder`
    /// (a notification message would be shown by the system as it stands, secret-less text only).
    public static func secureAlert(secureId: String, placeholder: String) -> FCMMessage {
        FCMMessage(data: ["secureId": secureId, "placeholder": placeholder], android: FCMAndroidConfig(priority: .high))
    }
}
