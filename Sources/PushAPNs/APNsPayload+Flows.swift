import PushJSON

/// The payloads of the flows the reference backend runs.
extension APNsPayload {
    /// The rich-push flow's silent notification: it wakes the app in the background to fetch
    /// the stored item named by `richId` (`content-available: 1`, no alert, badge or sound).
    public static func silentRichPush(richId: String, richType: String, richMessage: String) -> APNsPayload {
        APNsPayload(
            aps: APNsAPS(contentAvailable: true),
            customKeys: [
                JSONMember("richId", .string(richId)),
                JSONMember("richType", .string(richType)),
                JSONMember("richMessage", .string(richMessage)),
            ])
    }

    /// The rich-push flow's alert: `message` is shown, and `mutable-content: 1` lets the app's
    /// notification service extension fetch the item named by `richId` and attach it first. Unlike
    /// a silent push, iOS delivers it to an app the user swiped away, and does not throttle it.
    public static func richAlert(richId: String, richType: String, message: String) -> APNsPayload {
        APNsPayload(
            aps: APNsAPS(alert: .text(message), mutableContent: true),
            customKeys: [JSONMember("richId", .string(richId)), JSONMember("richType", .string(richType))])
    }

    /// The secure-push flow's silent notification: it carries only `secureId`; the app fetches
    /// the content over its own authenticated connection.
    public static func silentSecurePush(secureId: String) -> APNsPayload {
        APNsPayload(aps: APNsAPS(contentAvailable: true), customKeys: [JSONMember("secureId", .string(secureId))])
    }

    /// The key of the localized text a secure alert shows, in the app's `Localizable.strings`.
    public static let secureAlertLocKey = "PUSH_SECURE_ALERT"

    /// The secure-push flow's alert: it shows `placeholder` (or the app's localized text for
    /// ``secureAlertLocKey``), and `mutable-content: 1` lets the app's notification service
    /// extension fetch the content named by `secureId` and show it instead. Unlike a silent push,
    /// iOS delivers it to an app the user swiped away, and does not throttle it. Nothing secret
    /// travels: the placeholder is what shows should the fetch fail.
    public static func secureAlert(secureId: String, placeholder: String) -> APNsPayload {
        APNsPayload(
            aps: APNsAPS(alert: .fields(APNsAlertFields(body: .text(placeholder), locKey: secureAlertLocKey)), mutableContent: true),
            customKeys: [JSONMember("secureId", .string(secureId))])
    }
}
