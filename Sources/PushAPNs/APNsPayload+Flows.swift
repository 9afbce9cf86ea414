import PushJSON

/// The payloads of the two flows the reference backend runs.
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

    /// The secure-push flow's silent notification: it carries only `secureId`; the app fetches
    /// the content over its own authenticated connection.
    public static func silentSecurePush(secureId: String) -> APNsPayload {
        APNsPayload(aps: APNsAPS(contentAvailable: true), customKeys: [JSONMember("secureId", .string(secureId))])
    }
}
