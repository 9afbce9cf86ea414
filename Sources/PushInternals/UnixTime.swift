#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The wall clock in whole Unix seconds, for token expiries and ages. Seconds are all they need,
/// so Linux's coarse clock (a few milliseconds of resolution, a fraction of the cost) is enough:
/// a token cache hit reads it.
public func unixSeconds() -> Int64 {
    var time = timespec()
    #if os(Linux)
    clock_gettime(CLOCK_REALTIME_COARSE, &time)
    #else
    clock_gettime(CLOCK_REALTIME, &time)
    #endif
    return Int64(time.tv_sec)
}
