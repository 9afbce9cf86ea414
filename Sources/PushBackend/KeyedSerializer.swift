import Synchronization

/// Runs operations that share a key one at a time, in the order they arrive; operations on
/// different keys run concurrently. Only keys in use are remembered.
///
/// The backend registers a device token under it, so that within one process the writes for a
/// token reach the hub in the order its rows were stored.
final class KeyedSerializer<Key: Hashable & Sendable>: Sendable {
    /// For each key in use, the operations waiting behind the one running.
    private let queues = Mutex<[Key: [CheckedContinuation<Void, Never>]]>([:])

    func run<Result>(_ key: Key, _ operation: () async throws -> Result) async rethrows -> Result {
        await acquire(key)
        defer { release(key) }
        return try await operation()
    }

    private func acquire(_ key: Key) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free = queues.withLock { queues in
                guard queues[key] != nil else {
                    queues[key] = []
                    return true
                }
                queues[key]!.append(continuation)
                return false
            }
            if free { continuation.resume() }
        }
    }

    private func release(_ key: Key) {
        let next = queues.withLock { queues -> CheckedContinuation<Void, Never>? in
            guard var waiting = queues[key], !waiting.isEmpty else {
                queues[key] = nil
                return nil
            }
            let next = waiting.removeFirst()
            queues[key] = waiting
            return next
        }
        next?.resume()
    }
}
