package import APNs
import Synchronization

/// Holds back token pruning when a send's failures blame the server's configuration rather than
/// the devices.
///
/// A wrong environment, topic, key or certificate makes every device answer the same 400 or 403
/// (``APNsRejectionReason/pointsAtConfiguration``). Pruning on those answers would delete the
/// registration of every device the server sends to, and the phones do not register again until
/// their app runs. So the brake weighs a send's answers together with the last
/// ``historyLength`` answers before it, and holds when one such reason is more than half of them.
///
/// Why half: in a working deployment tokens die by uninstalls, which answer 410, and the 400s the
/// brake watches are a small share of answers; a misconfiguration makes them every answer. Half
/// sits far from both. Weighing the history with the send lets a small send (one user's one or
/// two devices) be judged by what the process saw before it; a big send outweighs the history and
/// is judged by its own answers. A process that has answered nothing yet trusts no such answer,
/// so its first sends prune only 410s and what no environment could take. The history is the
/// process's: a fixed configuration means a restart, and a restart starts afresh.
package final class PruningBrake: Sendable {
    /// Answers remembered from earlier sends.
    static let historyLength = 100
    /// The "configuration suspect" log line is written at most this often.
    static let logInterval = Duration.seconds(60)

    private struct State {
        /// The last answers: nil for delivered, else the rejection's reason. A ring of
        /// ``historyLength`` once full.
        var history: [APNsRejectionReason?] = []
        var nextSlot = 0
        var lastLog: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    package init() {}

    /// Records a send's answers and says whether pruning must hold.
    /// - Returns: The reason blamed on the configuration when pruning must hold, else nil.
    package func judge(_ results: [APNsSendResult]) -> APNsRejectionReason? {
        // Unanswered requests say nothing about anybody's configuration.
        let answers = results.compactMap { result -> APNsRejectionReason?? in
            switch result.outcome {
            case .delivered: .some(nil)
            case .rejected(_, let reason, _): .some(reason)
            case .failed: nil
            }
        }
        return state.withLock { state in
            var counts: [APNsRejectionReason: Int] = [:]
            for case let reason? in answers + state.history where reason.pointsAtConfiguration { counts[reason, default: 0] += 1 }
            let total = answers.count + state.history.count
            let blamed = counts.max { $0.value < $1.value }.flatMap { 2 * $0.value > total ? $0.key : nil }
            for answer in answers.suffix(Self.historyLength) {
                if state.history.count < Self.historyLength {
                    state.history.append(answer)
                } else {
                    state.history[state.nextSlot] = answer
                    state.nextSlot = (state.nextSlot + 1) % Self.historyLength
                }
            }
            return blamed
        }
    }

    /// Whether the brake's log line is due: the first time, then once per ``logInterval``.
    package func logIsDue(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            if let last = state.lastLog, now - last < Self.logInterval { return false }
            state.lastLog = now
            return true
        }
    }
}
