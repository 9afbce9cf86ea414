import Synchronization

/// The provider token every send of one key carries. APNs rejects a token older than an hour
/// (`ExpiredProviderToken`) and a key whose token changes more often than every 20 minutes
/// (`TooManyProviderTokenUpdates`), so the cache keeps one token, replaces it once it is
/// `refreshAge` old, and never mints twice within `minimumMintInterval`.
///
/// Safe to share between tasks. A hit reads the clock and takes a lock, and allocates nothing. A
/// mint happens under the lock: however many sends ask at once, one signs (a few tens of
/// microseconds) and the others get its token.
public final class APNsTokenCache: Sendable {
    public let key: APNsSigningKey
    /// Age at which a token is replaced: 50 minutes by default, never less than `minimumMintInterval`.
    public let refreshAge: Int64
    /// Shortest time between two mints: 20 minutes by default.
    public let minimumMintInterval: Int64
    public let clock: APNsTokenClock

    private struct State {
        var token: String?
        var issuedAt: Int64 = 0
        var mints = 0
    }

    private let state = Mutex(State())

    public init(key: APNsSigningKey, refreshAge: Int64 = 50 * 60, minimumMintInterval: Int64 = 20 * 60, clock: APNsTokenClock = .system) {
        self.key = key
        self.refreshAge = max(refreshAge, minimumMintInterval)
        self.minimumMintInterval = minimumMintInterval
        self.clock = clock
    }

    /// The current token, minted first when there is none or it is `refreshAge` old.
    /// - Throws: `invalidIssuedAt` when the clock is before 1970; `signingFailed`.
    public func token() throws(APNsTokenError) -> String {
        let now = clock.now()
        return try state.withLock { state throws(APNsTokenError) -> String in
            // A clock that stepped back leaves the token as it is.
            if let token = state.token, now - state.issuedAt < refreshAge { return token }
            return try Self.mint(&state, key: key, now: now)
        }
    }

    /// Replaces `rejected` after APNs answered `ExpiredProviderToken` for it, unless that would
    /// mint within `minimumMintInterval` of the last mint.
    /// - Returns: The token to retry with: a new one, or one another send already put in its
    ///   place; `nil` when there is nothing better to retry with (the rejected token is the
    ///   current one and too young to replace).
    public func replace(rejected: String) throws(APNsTokenError) -> String? {
        let now = clock.now()
        return try state.withLock { state throws(APNsTokenError) -> String? in
            if let token = state.token, token != rejected { return token }
            guard state.token == nil || now - state.issuedAt >= minimumMintInterval else { return nil }
            return try Self.mint(&state, key: key, now: now)
        }
    }

    /// How many tokens this cache has minted.
    public var mintCount: Int { state.withLock { $0.mints } }

    private static func mint(_ state: inout State, key: APNsSigningKey, now: Int64) throws(APNsTokenError) -> String {
        let token = try key.token(issuedAt: now)
        state.token = token
        state.issuedAt = now
        state.mints += 1
        return token
    }
}
