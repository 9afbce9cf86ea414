import NIOPosix
import Synchronization

/// The password checks waiting for the hashing threads, served fairly.
///
/// Each client network has a lane of its own and the lanes take turns. A network with no failed
/// check in the last ``quietWindow`` has a quiet lane, and quiet lanes get every other turn while
/// any wait: a flood from many networks (each of which fails, and so turns noisy after its first
/// check) delays a quiet network's first login by a check or two, not by a round of every
/// flooding network's lane. A lane's first check is always let in: the lanes are bounded by the
/// requests the server holds at once (its connection cap), not by the flood. Further checks of a
/// lane wait only while fewer than ``capacity`` are waiting in all, and at most ``perLane`` per
/// lane; others are refused, and the refusal costs their address its login budget. Checks of a
/// name that logged in from the same network recently go before every lane.
package final class PasswordCheckQueue: Sendable {
    package typealias Check = @Sendable () -> Bool

    /// How long a network's failed check makes its lane noisy.
    static let quietWindow = Duration.seconds(600)
    /// Networks whose last failure is remembered, at most.
    static let failuresRemembered = 100_000

    private struct Waiting {
        let lane: String
        let check: Check
        let continuation: CheckedContinuation<Bool?, Never>
    }

    private struct State {
        var priority: [Waiting] = []
        var lanes: [String: [Waiting]] = [:]
        /// The noisy and the quiet lanes with checks waiting, each in the order they are served next.
        var turns: [String] = []
        var quietTurns: [String] = []
        var quietGoesNext = true
        var waiting = 0
        var running = 0
        /// When each network last failed a check.
        var lastFailure: [String: ContinuousClock.Instant] = [:]

        /// The next check to run: a priority one, else the head of the lane whose turn it is,
        /// quiet and noisy lanes taking turns.
        mutating func next() -> Waiting? {
            if !priority.isEmpty {
                waiting -= 1
                return priority.removeFirst()
            }
            guard !turns.isEmpty || !quietTurns.isEmpty else {
                running -= 1
                return nil
            }
            let quiet = turns.isEmpty || (!quietTurns.isEmpty && quietGoesNext)
            quietGoesNext = !quiet
            let name = quiet ? quietTurns.removeFirst() : turns.removeFirst()
            var checks = lanes[name] ?? []
            let check = checks.removeFirst()
            if checks.isEmpty {
                lanes[name] = nil
            } else {
                lanes[name] = checks
                if quiet { quietTurns.append(name) } else { turns.append(name) }
            }
            waiting -= 1
            return check
        }

        func isQuiet(_ lane: String, now: ContinuousClock.Instant) -> Bool {
            lastFailure[lane].map { now - $0 >= PasswordCheckQueue.quietWindow } ?? true
        }

        mutating func recordFailure(_ lane: String, now: ContinuousClock.Instant) {
            if lastFailure[lane] == nil && lastFailure.count >= PasswordCheckQueue.failuresRemembered {
                lastFailure = lastFailure.filter { now - $0.value < PasswordCheckQueue.quietWindow }
                if lastFailure.count >= PasswordCheckQueue.failuresRemembered { lastFailure.removeAll() }
            }
            lastFailure[lane] = now
        }
    }

    let threads: Int
    /// Checks waiting (running ones not counted) beyond which a lane's further checks are refused;
    /// also the priority checks waiting at most.
    let capacity: Int
    /// Checks one lane may have waiting.
    let perLane: Int
    private let pool: NIOThreadPool
    private let state = Mutex(State())

    package init(threads: Int, capacity: Int, perLane: Int) {
        self.threads = max(threads, 1)
        self.capacity = max(capacity, 1)
        self.perLane = max(perLane, 1)
        pool = NIOThreadPool(numberOfThreads: self.threads)
        pool.start()
    }

    package func shutdown() async {
        let pool = self.pool
        await Task { try? await pool.shutdownGracefully() }.value  // also when the caller is cancelled
    }

    /// Runs `check` on a hashing thread once its turn comes.
    /// - Parameters:
    ///   - lane: The client's network.
    ///   - priority: Whether the check goes before every lane.
    /// - Returns: The check's result; nil when it was refused: its lane, or the queue, was full.
    package func run(lane: String, priority: Bool, _ check: @escaping Check) async -> Bool? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool?, Never>) in
            let (admitted, startsWorker) = state.withLock { state -> (Bool, Bool) in
                let waiting = Waiting(lane: lane, check: check, continuation: continuation)
                if priority {
                    guard state.priority.count < capacity else { return (false, false) }
                    state.priority.append(waiting)
                } else if let checks = state.lanes[lane] {
                    guard checks.count < perLane, state.waiting < capacity else { return (false, false) }
                    state.lanes[lane] = checks + [waiting]
                } else {
                    state.lanes[lane] = [waiting]
                    if state.isQuiet(lane, now: .now) { state.quietTurns.append(lane) } else { state.turns.append(lane) }
                }
                state.waiting += 1
                guard state.running < threads else { return (true, false) }
                state.running += 1
                return (true, true)
            }
            guard admitted else {
                continuation.resume(returning: nil)
                return
            }
            if startsWorker { Task { await work() } }
        }
    }

    /// Checks waiting, for tests that line checks up in a known order.
    package var waitingCount: Int { state.withLock { $0.waiting } }

    /// Runs `check` on one of the queue's threads; false once the queue is shut down. Submitted, not
    /// through `runIfActive`: the sanitizer run suppresses what the process-wide pool's async
    /// `runIfActive` leaves at exit (SQLiteNIO's queries), and this pool must not hide behind it.
    private func hash(_ check: @escaping Check) async -> Bool {
        await withCheckedContinuation { continuation in
            pool.submit { state in continuation.resume(returning: state == .active && check()) }
        }
    }

    /// Runs checks until none is waiting.
    private func work() async {
        while let next = state.withLock({ $0.next() }) {
            let matches = await hash(next.check)
            if !matches { state.withLock { $0.recordFailure(next.lane, now: .now) } }
            next.continuation.resume(returning: matches)
        }
    }
}
