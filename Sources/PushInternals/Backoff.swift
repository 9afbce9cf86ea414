/// Waits between attempts with full jitter (AWS's "Exponential Backoff And Jitter"): a random
/// duration below a ceiling that doubles with each retry, so that many clients that failed
/// together do not come back together.
public enum Backoff {
    /// A random wait in `0...min(base × 2^(retry − 1), maximum)`; `retry` counts from 1.
    public static func fullJitter(retry: Int, base: Duration, maximum: Duration) -> Duration {
        let ceiling = min(base * (1 << min(max(retry - 1, 0), 20)), maximum)
        let nanoseconds = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
        return .nanoseconds(Int64.random(in: 0...max(nanoseconds, 0)))
    }
}
