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

/// `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
    /// The wait the header asks for, at `now` (Unix seconds); a date in the past means no wait.
    /// Nil for a value that is neither form.
    public static func parse(_ value: String, now: Int64) -> Duration? {
        let text = value.trimmingOptionalWhitespace()
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Saturate absurd values rather than overflow: a day is already "stop trying".
            guard text.utf8.count <= 9, let seconds = Int64(text) else { return .seconds(86_400 * 365) }
            return .seconds(seconds)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return .seconds(max(0, date - now))
    }
}

/// HTTP-dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms that
/// recipients must still accept. Returns Unix seconds.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func parse(_ text: Substring) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        let day: Int?, month: Int?, year: Int?, time: [Int]?
        switch parts.count {
        case 6 where parts[5] == "GMT":  // Sun, 06 Nov 1994 08:49:37 GMT
            (day, month, year, time) = (Int(parts[1]), months.firstIndex(of: parts[2]), Int(parts[3]), clock(parts[4]))
        case 4 where parts[3] == "GMT":  // Sunday, 06-Nov-94 08:49:37 GMT
            let date = parts[1].split(separator: "-").map(String.init)
            guard date.count == 3, date[2].count == 2, let shortYear = Int(date[2]) else { return nil }
            // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
            (day, month, year, time) = (
                Int(date[0]), months.firstIndex(of: date[1]), shortYear < 70 ? 2000 + shortYear : 1900 + shortYear, clock(parts[2])
            )
        case 5:  // Sun Nov  6 08:49:37 1994
            (day, month, year, time) = (Int(parts[2]), months.firstIndex(of: parts[1]), Int(parts[4]), clock(parts[3]))
        default:
            return nil
        }
        guard let day, let month, let year, let time, (1...31).contains(day), (1970...9999).contains(year) else { return nil }
        return daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + Int64(time[0] * 3600 + time[1] * 60 + time[2])
    }

    private static func clock(_ text: String) -> [Int]? {
        let fields = text.split(separator: ":").compactMap { Int($0) }
        guard fields.count == 3, (0...23).contains(fields[0]), (0...59).contains(fields[1]), (0...60).contains(fields[2]) else { return nil }
        return fields
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
