/// What the rules between `aps` keys look at, read from a model (``APNsAPS``) or from the tape (the
/// validator behind lint, the views and the decoder), so that both sides ask the same rules.
struct APSFacts {
    var hasAlert: Bool
    var hasBadge: Bool
    var hasSound: Bool
    var contentAvailable: Bool
    var contentChanged: Bool
    /// `aps.event` is set: the push updates a Live Activity.
    var isLiveActivity: Bool
}

/// The rules between `aps` keys, written once.
@usableFromInline
enum APNsRules {
    /// A push that only wakes the app: `content-available` with no alert, badge or sound.
    static func isBackgroundOnly(_ facts: APSFacts) -> Bool {
        facts.contentAvailable && !facts.hasAlert && !facts.hasBadge && !facts.hasSound
    }

    /// `liveactivity` for a Live Activity event, `widgets` for a widget reload, `background` for
    /// a push with nothing to show, `alert` otherwise.
    static func inferredPushType(_ facts: APSFacts) -> APNsPushType {
        if facts.isLiveActivity { return .liveactivity }
        if facts.contentChanged { return .widgets }
        if isBackgroundOnly(facts) { return .background }
        return .alert
    }

    /// `relevance-score` is within 0...1 for notifications; any finite value orders Live
    /// Activities.
    @inlinable
    static func allowsRelevanceScore(_ score: Double, isLiveActivity: Bool) -> Bool {
        isLiveActivity || (0...1).contains(score)
    }
}
