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

    private let entries = Mutex<[String: Entry]>([:])

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
        if let token = entries.withLock({ entries -> String? in
            guard let entry = entries[resource], now < entry.refreshAt else { return nil }
            return entry.token
        }) {
            return token
        }
        // Mint outside the lock: a signature costs far more than a lookup.
        let expiry = try SASSigner.expiry(now: now, ttl: ttl)
        let token = try signer.token(for: resource, expiry: expiry)
        let refreshAt = expiry.subtractingReportingOverflow(refreshMargin)
        let entry = Entry(token: token, refreshAt: refreshAt.overflow ? Int64.min : refreshAt.partialValue)
        entries.withLock { entries in
            if entries.count >= capacity && entries[resource] == nil {
                entries = entries.filter { now < $0.value.refreshAt }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[resource] = entry
        }
        return token
    }

    /// Drops every cached token (after a key rotation, say).
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }
}
