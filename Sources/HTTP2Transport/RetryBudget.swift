import Synchronization

/// Retries left for one send, shared by its requests' tasks: a send whose server is failing makes
/// a bounded number of extra requests, however many devices it has.
package final class RetryBudget: Sendable {
    private let remaining: Atomic<Int>

    package init(_ retries: Int) { remaining = Atomic(retries) }

    package func take() -> Bool {
        remaining.subtract(1, ordering: .relaxed).newValue >= 0
    }
}
