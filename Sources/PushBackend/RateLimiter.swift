import Synchronization

/// A budget: up to `burst` at once, refilled at `perSecond`.
public struct RateLimit: Sendable, Hashable {
    public var burst: Int
    public var perSecond: Double

    public init(burst: Int, perSecond: Double) {
        precondition(burst >= 1 && perSecond > 0 && perSecond.isFinite, "a rate limit needs a burst of at least 1 and a positive rate")
        self.burst = burst
        self.perSecond = perSecond
    }
}

/// One token bucket per key (a client address, a user name), in memory.
///
/// Keys are remembered up to ``capacity``; beyond it, buckets that have refilled are forgotten
/// (they hold nothing a new bucket would not), and if every one is still draining, all are:
/// a flood of new keys costs memory up to the capacity and no more.
final class RateLimiter<Key: Hashable & Sendable>: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let limit: RateLimit
    let capacity: Int
    private let buckets = Mutex<[Key: Bucket]>([:])

    init(_ limit: RateLimit, capacity: Int = 10_000) {
        self.limit = limit
        self.capacity = capacity
    }

    /// Takes one token for `key`.
    /// - Returns: nil when taken; otherwise how long until one will be there.
    func take(_ key: Key, now: ContinuousClock.Instant = .now) -> Duration? {
        buckets.withLock { buckets in
            var bucket = buckets[key].map { refilled($0, at: now) } ?? Bucket(tokens: Double(limit.burst), updated: now)
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return .seconds((1 - bucket.tokens) / limit.perSecond)
            }
            bucket.tokens -= 1
            if buckets[key] == nil && buckets.count >= capacity { forgetIdle(&buckets, at: now) }
            buckets[key] = bucket
            return nil
        }
    }

    /// Takes `count` more tokens for `key`, into debt if need be: work already let through turned
    /// out to cost more than one (a notification reaching many devices). Later ``take(_:now:)``
    /// calls wait until the debt is paid.
    func charge(_ key: Key, count: Int, now: ContinuousClock.Instant = .now) {
        guard count > 0 else { return }
        buckets.withLock { buckets in
            var bucket = buckets[key].map { refilled($0, at: now) } ?? Bucket(tokens: Double(limit.burst), updated: now)
            bucket.tokens -= Double(count)
            buckets[key] = bucket
        }
    }

    /// Returns a token taken for work that turned out not to count (a login that succeeded).
    func giveBack(_ key: Key, now: ContinuousClock.Instant = .now) {
        buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return }
            var refilledBucket = refilled(bucket, at: now)
            refilledBucket.tokens = min(Double(limit.burst), refilledBucket.tokens + 1)
            buckets[key] = refilledBucket
        }
    }

    private func refilled(_ bucket: Bucket, at now: ContinuousClock.Instant) -> Bucket {
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Bucket(tokens: min(Double(limit.burst), bucket.tokens + max(0, seconds) * limit.perSecond), updated: now)
    }

    private func forgetIdle(_ buckets: inout [Key: Bucket], at now: ContinuousClock.Instant) {
        buckets = buckets.filter { refilled($0.value, at: now).tokens < Double(limit.burst) }
        if buckets.count >= capacity { buckets.removeAll() }
    }
}

extension Duration {
    /// Whole seconds, rounded up and at least 1: the value of a `Retry-After` header.
    var retryAfterSeconds: Int {
        let (seconds, attoseconds) = components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
