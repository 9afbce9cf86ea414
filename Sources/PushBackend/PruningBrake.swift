package import APNs
import Synchronization

/// Holds back token pruning when a send's failures blame the server's configuration rather than
/// the devices.
///
/// A wrong environment, topic, key or certificate makes every device answer the same 400 or 403
/// (``APNsRejectionReason/pointsAtConfiguration``). Pruning on those answers would delete the
/// registration of every device the server sends to, and the phones do not register again until
/// their app runs. So the brake holds when such a reason is what most recipients' devices answer.
///
/// It judges recipients, not answers: each recipient has one verdict, from its latest send (fine
/// when any of its devices took the push, else the configuration reason most of its devices
/// answered, if one is), and the brake holds when more than half of the recipients it remembers,
/// this send's included, have the same reason as their verdict. A misconfiguration gives every
/// recipient that verdict; a few users whose tokens are junk stay a few recipients however many
/// tokens they hold or however often they are sent to, so they cannot hold pruning back for
/// everyone. A process that has judged nobody yet trusts no such answer, so its first sends prune
/// only what the brake never holds. The memory is the process's: a fixed configuration means a
/// restart, and a restart starts afresh.
///
/// A 410 is never held back: no configuration produces one (a wrong environment or topic answers
/// 400), so a token APNs calls unregistered since its registration is pruned whatever the brake says.
package final class PruningBrake: Sendable {
    /// Recipients remembered from earlier sends.
    static let historyLength = 100
    /// The "configuration suspect" log line is written at most this often.
    static let logInterval = Duration.seconds(60)

    private struct State {
        /// Each remembered recipient's verdict: nil for fine, else the reason blamed.
        var verdicts: [String: APNsRejectionReason?] = [:]
        /// The remembered recipients, oldest first; at most ``historyLength``.
        var order: [String] = []
        var lastLog: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    package init() {}

    /// Records a send's answers as `recipient`'s verdict and says whether pruning must hold.
    /// - Returns: The reason blamed on the configuration when pruning must hold, else nil.
    package func judge(_ results: [APNsSendResult], recipient: String) -> APNsRejectionReason? {
        // Unanswered requests say nothing about anybody's configuration.
        var delivered = false
        var answered = 0
        var counts: [APNsRejectionReason: Int] = [:]
        for result in results {
            switch result.outcome {
            case .delivered:
                delivered = true
                answered += 1
            case .rejected(_, let reason, _):
                answered += 1
                if reason.pointsAtConfiguration { counts[reason, default: 0] += 1 }
            case .failed:
                continue
            }
        }
        let verdict: APNsRejectionReason?? =
            answered == 0 ? nil : .some(delivered ? nil : counts.max { $0.value < $1.value }.flatMap { 2 * $0.value > answered ? $0.key : nil })
        return state.withLock { state in
            if let verdict {
                if state.verdicts.updateValue(verdict, forKey: recipient) != nil { state.order.removeAll { $0 == recipient } }
                state.order.append(recipient)
                if state.order.count > Self.historyLength { state.verdicts[state.order.removeFirst()] = nil }
            }
            var blamed: [APNsRejectionReason: Int] = [:]
            for case let reason?? in state.verdicts.values { blamed[reason, default: 0] += 1 }
            return blamed.max { $0.value < $1.value }.flatMap { 2 * $0.value > state.verdicts.count ? $0.key : nil }
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
