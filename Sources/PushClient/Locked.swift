import Foundation

/// A value behind a lock. Synchronization's `Mutex` would do, but it needs iOS 18 and the app side
/// runs from iOS 16; `NSLock` is on every platform PushClient builds for.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
