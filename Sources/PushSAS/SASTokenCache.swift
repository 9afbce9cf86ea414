import Synchronization

/// One token per resource, reused until `expiry - refreshMargin` (an absolute expiry, not a
/// sliding one), then minted again. Safe to share between tasks; a hit allocates nothing.
public final class SASTokenCache: Sendable {
    public let signer: SASSigner
    /// How long a minted token is valid: 20 minutes by default.
    public let ttl: Int64
    /// How long before its expiry a token is replaced: 2 minutes by default.
    public let refreshMargin: Int64
    public let clock: SASClock
    /// Resources kept at most; past it, expired entries are dropped, then all if none had expired.
    public let capacity: Int

    private struct Entry {
        let token: String
        let refreshAt: Int64
    }

    private struct State {
        /// The resource asked for last: most backends sign for one hub, and comparing a string
        /// with itself is cheaper than hashing it.
        var lastResource = ""
        var last: Entry?
        var entries: [String: Entry] = [:]
    }

    private let state = Mutex(State())

    public init(signer: SASSigner, ttl: Int64 = 20 * 60, refreshMargin: Int64 = 2 * 60, clock: SASClock = .system, capacity: Int = 1024) {
        self.signer = signer
        self.ttl = ttl
        self.refreshMargin = refreshMargin
        self.clock = clock
        self.capacity = max(capacity, 1)
    }

    /// The cached token for `resource`, or a new one.
    /// - Throws: `invalidExpiry` when the clock and TTL give no valid expiry.
    public func token(for resource: String) throws(SASError) -> String {
        let now = clock.now()
        let cached = state.withLock { state -> String? in
            if let last = state.last, state.lastResource == resource {
                return now < last.refreshAt ? last.token : nil
            }
            guard let entry = state.entries[resource], now < entry.refreshAt else { return nil }
            state.lastResource = resource
            state.last = entry
            return entry.token
        }
        if let cached { return cached }
        // Mint outside the lock: a signature costs far more than a lookup.
        let expiry = try SASSigner.expiry(now: now, ttl: ttl)
        let token = try signer.token(for: resource, expiry: expiry)
        let refreshAt = expiry.subtractingReportingOverflow(refreshMargin)
        let entry = Entry(token: token, refreshAt: refreshAt.overflow ? Int64.min : refreshAt.partialValue)
        state.withLock { state in
            if state.entries.count >= capacity && state.entries[resource] == nil {
                state.entries = state.entries.filter { now < $0.value.refreshAt }
                if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            }
            state.entries[resource] = entry
            state.lastResource = resource
            state.last = entry
        }
        return token
    }

    /// Drops every cached token (after a key rotation, say).
    public func removeAll() {
        state.withLock { $0 = State() }
    }
}
