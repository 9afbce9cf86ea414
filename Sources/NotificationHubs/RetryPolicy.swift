/// When to try a request again: exponential backoff with jitter inside a total time budget, and
/// the hub's `Retry-After` honoured.
///
/// By default 429, 503, and 403 with `Retry-After` (the hub's throttling) are retried, and so are
/// connections that failed before the request was written. A request whose outcome is unknown —
/// the timeout struck after it was written — is **not** re-sent unless `retriesUnknownOutcome` is
/// set, because the hub may have accepted it and a second POST would notify every device twice.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var maximumAttempts: Int
    /// The backoff before the first retry; it doubles after each one.
    public var initialBackoff: Duration
    /// The longest backoff between two attempts.
    public var maximumBackoff: Duration
    /// No retry starts later than this after the first attempt.
    public var budget: Duration
    /// The fraction of each backoff that is random (0 = none, 1 = "full jitter").
    public var jitter: Double
    /// Statuses worth retrying (403 only counts when `Retry-After` came with it).
    public var retryableStatuses: Set<Int>
    /// Whether a request that may have reached the hub is sent again.
    public var retriesUnknownOutcome: Bool

    public init(
        maximumAttempts: Int = 4, initialBackoff: Duration = .milliseconds(200), maximumBackoff: Duration = .seconds(10),
        budget: Duration = .seconds(30), jitter: Double = 0.5, retryableStatuses: Set<Int> = [403, 429, 503],
        retriesUnknownOutcome: Bool = false
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.budget = budget
        self.jitter = min(max(jitter, 0), 1)
        self.retryableStatuses = retryableStatuses
        self.retriesUnknownOutcome = retriesUnknownOutcome
    }

    /// Never retries.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// How an attempt ended.
    public enum Outcome: Sendable, Hashable {
        /// The hub answered.
        case response(status: Int, retryAfter: Duration?)
        /// The connection failed before the request was written: nothing reached the hub.
        case notSent
        /// The request was written but no answer came (a timeout, a dropped connection).
        case unknown
    }

    /// The wait before the next attempt, or nil to stop.
    /// - Parameters:
    ///   - attempt: attempts made so far (1 after the first).
    ///   - elapsed: time since the first attempt started.
    ///   - outcome: how the last attempt ended.
    ///   - random: the jitter's source (seeded in tests).
    public func delay(
        afterAttempt attempt: Int, elapsed: Duration, outcome: Outcome, using random: inout some RandomNumberGenerator
    ) -> Duration? {
        guard attempt < maximumAttempts else { return nil }
        var requested: Duration?
        switch outcome {
        case .notSent:
            break
        case .unknown:
            guard retriesUnknownOutcome else { return nil }
        case .response(let status, let retryAfter):
            guard retryableStatuses.contains(status), status != 403 || retryAfter != nil else { return nil }
            requested = retryAfter
        }
        let delay = requested ?? backoff(afterAttempt: attempt, using: &random)
        // A wait that would start the next attempt after the budget is not worth starting.
        guard elapsed + delay <= budget else { return nil }
        return delay
    }

    private func backoff(afterAttempt attempt: Int, using random: inout some RandomNumberGenerator) -> Duration {
        let exponent = min(attempt - 1, 30)
        let nominal = min(initialBackoff * (1 << exponent), maximumBackoff)
        let random = Double.random(in: 0...1, using: &random)
        return nominal * (1 - jitter * random)
    }
}
