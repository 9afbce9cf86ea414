#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `iat` and token ages count from: Unix seconds. Inject one in tests.
public struct APNsTokenClock: Sendable {
    public let now: @Sendable () -> Int64

    public init(_ now: @escaping @Sendable () -> Int64) { self.now = now }

    /// The system's wall clock. Token ages are whole seconds, so Linux's coarse clock (a few
    /// milliseconds of resolution, a fraction of the cost) is enough: a cache hit reads it.
    public static let system = APNsTokenClock {
        var time = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_REALTIME_COARSE, &time)
        #else
        clock_gettime(CLOCK_REALTIME, &time)
        #endif
        return Int64(time.tv_sec)
    }

    /// Always `seconds`.
    public static func fixed(_ seconds: Int64) -> APNsTokenClock { APNsTokenClock { seconds } }
}
