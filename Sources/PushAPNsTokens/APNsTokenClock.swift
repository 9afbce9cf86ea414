import PushInternals

/// Where `iat` and token ages count from: Unix seconds. Inject one in tests.
public struct APNsTokenClock: Sendable {
    public let now: @Sendable () -> Int64

    public init(_ now: @escaping @Sendable () -> Int64) { self.now = now }

    /// The system's wall clock, in whole seconds: a cache hit reads it, so it is the cheap one.
    public static let system = APNsTokenClock { unixSeconds() }

    /// Always `seconds`.
    public static func fixed(_ seconds: Int64) -> APNsTokenClock { APNsTokenClock { seconds } }
}
