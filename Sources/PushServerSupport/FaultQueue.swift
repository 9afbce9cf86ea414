/// The faults a test queued on a verifying emulator: applied one per request, the first after a
/// number of requests pass untouched: what each emulator's `POST /_emulator/faults` and `inject` queue.
package struct FaultQueue<Fault: Sendable>: Sendable {
    private var queued: [(requestsBefore: Int, fault: Fault)] = []

    package init() {}

    /// Queues `faults`, the first after `requests` more requests pass untouched. False, and nothing
    /// queued, when more than `limit` would then wait.
    package mutating func enqueue(_ faults: [Fault], after requests: Int, limit: Int = .max) -> Bool {
        guard queued.count + faults.count <= limit else { return false }
        for (index, fault) in faults.enumerated() { queued.append((index == 0 ? max(requests, 0) : 0, fault)) }
        return true
    }

    /// The fault for the request arriving now, when its turn has come.
    package mutating func next() -> Fault? {
        guard !queued.isEmpty else { return nil }
        guard queued[0].requestsBefore == 0 else {
            queued[0].requestsBefore -= 1
            return nil
        }
        return queued.removeFirst().fault
    }

    package mutating func removeAll() { queued.removeAll() }
}
