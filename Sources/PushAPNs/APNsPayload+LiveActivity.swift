public import PushJSON

/// Live Activity pushes: start one on a device (push-to-start), update it, end it. Send them with
/// ``APNsHeaders/init(for:topic:collapseID:expiration:id:)``, which gives them the `liveactivity`
/// push type and adds `.push-type.liveactivity` to the bundle ID.
extension APNsPayload {
    /// Starts a Live Activity with a push-to-start token.
    /// - Parameters:
    ///   - attributesType: The app's `ActivityAttributes` type name, as ActivityKit spells it.
    ///   - attributes: Its static fields, an object.
    ///   - contentState: Its first `ContentState`, an object.
    ///   - timestamp: Unix seconds; the device ignores a push older than the last one it applied.
    ///   - alert: Shown when the activity starts (a start needs one to light the screen).
    ///   - inputPushToken: Ask the new activity for its own push token (sent to the app's server by the app).
    ///   - inputPushChannel: Subscribe the new activity to this broadcast channel (iOS 18).
    ///   - staleDate: Unix seconds after which the system shows the activity as out of date.
    ///   - relevanceScore: Which of the app's activities the system shows first (higher first).
    public static func liveActivityStart(
        attributesType: String, attributes: JSON, contentState: JSON, timestamp: Int, alert: APNsAlert? = nil,
        staleDate: Int? = nil, relevanceScore: Double? = nil, inputPushToken: Bool = false, inputPushChannel: String? = nil
    ) -> APNsPayload {
        APNsPayload(
            aps: APNsAPS(
                alert: alert, relevanceScore: relevanceScore, staleDate: staleDate, timestamp: timestamp, event: .start, contentState: contentState,
                attributesType: attributesType, attributes: attributes, inputPushToken: inputPushToken, inputPushChannel: inputPushChannel))
    }

    /// Updates a running Live Activity (sent to its push token, or broadcast on its channel).
    /// - Parameters:
    ///   - contentState: Its new `ContentState`, an object.
    ///   - timestamp: Unix seconds; the device ignores a push older than the last one it applied.
    ///   - alert: Shown with the update, when it should light the screen.
    ///   - staleDate: Unix seconds after which the system shows the activity as out of date.
    ///   - relevanceScore: Which of the app's activities the system shows first (higher first).
    public static func liveActivityUpdate(
        contentState: JSON, timestamp: Int, alert: APNsAlert? = nil, staleDate: Int? = nil, relevanceScore: Double? = nil
    ) -> APNsPayload {
        APNsPayload(
            aps: APNsAPS(
                alert: alert, relevanceScore: relevanceScore, staleDate: staleDate, timestamp: timestamp, event: .update, contentState: contentState))
    }

    /// Ends a Live Activity, with its final content when given.
    /// - Parameters:
    ///   - contentState: Its final `ContentState`, an object; the last one stays when nil.
    ///   - timestamp: Unix seconds; the device ignores a push older than the last one it applied.
    ///   - dismissalDate: Unix seconds at which the ended activity leaves the Lock Screen (at most
    ///     four hours on; the system's default when nil, a past time for at once).
    ///   - alert: Shown with the end, when it should light the screen.
    public static func liveActivityEnd(
        contentState: JSON? = nil, timestamp: Int, dismissalDate: Int? = nil, alert: APNsAlert? = nil
    ) -> APNsPayload {
        APNsPayload(aps: APNsAPS(alert: alert, timestamp: timestamp, event: .end, dismissalDate: dismissalDate, contentState: contentState))
    }
}
