import CoreMetrics
package import Logging
package import NIOCore
package import NIOHPACK
import NIOPosix
package import NIOSSL
import Synchronization

/// A request as a connection writes it; the pseudo-header fields come from the pool's origin.
package struct HTTP2Request: Sendable {
    package var method: String
    package var path: String
    /// Lowercase names, without pseudo-header fields.
    package var headers: HPACKHeaders
    package var body: ByteBuffer?
    /// The largest answer body taken; a longer one fails the request.
    package var responseLimit: Int

    package init(method: String, path: String, headers: HPACKHeaders, body: ByteBuffer?, responseLimit: Int) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.responseLimit = responseLimit
    }
}

package struct HTTP2Response: Sendable {
    package var status: Int
    package var headers: HPACKHeaders
    package var body: ByteBuffer
}

/// Why a request to APNs or FCM got no answer. Later versions may tell more failures apart: a
/// `switch` outside this package needs a `default` case.
@nonexhaustive
public enum TransportFailure: Error, Hashable, Sendable, CustomStringConvertible {
    case timeout
    case connectionLost
    case connectionRefused
    case tls
    /// APNs, not sent: the token has a character that would change the request's path (`/`, `?`,
    /// `%`, …).
    case invalidDeviceToken
    /// FCM, not sent: the token has a character no registration token has (`/`, `"`, a space, …).
    case invalidRegistrationToken
    /// FCM: no access token could be had from the service account's token URI (its answer, escaped).
    case noAccessToken(String)
    /// The HTTP proxy would not open a tunnel (its address and answer, never its credentials).
    case proxy(String)
    /// The server retired the connection with a GOAWAY (its `reason`, when it gave one) before
    /// answering.
    case goAway(reason: String?)
    case other(String)

    public var description: String {
        switch self {
        case .timeout: "timeout"
        case .connectionLost: "connection lost"
        case .connectionRefused: "connection refused"
        case .tls: "TLS handshake failed"
        case .invalidDeviceToken: "not a device token"
        case .invalidRegistrationToken: "not a registration token"
        case .noAccessToken(let problem): "no access token: \(problem)"
        case .proxy(let problem): problem
        case .goAway(let reason): "GOAWAY \(reason ?? "without reason")"
        case .other(let text): text
        }
    }
}

/// Why a request got no answer, and whether it may have reached the server.
package struct HTTP2ExchangeFailure: Error, Hashable, Sendable {
    package var failure: TransportFailure
    package var mayHaveBeenWritten: Bool
}

/// A request waiting for a stream or riding on one. It is in exactly one place at a time (the
/// pool's queue or one connection's streams), and whichever holds it resumes it once.
struct HTTP2PendingRequest: Sendable {
    let request: HTTP2Request
    let continuation: CheckedContinuation<Result<HTTP2Response, HTTP2ExchangeFailure>, Never>
    /// When it fails `timeout`: the request timeout from when the pool took it, whether it is still
    /// waiting for a stream then or riding on one.
    let deadline: NIODeadline
    /// Times it came back unprocessed (above a GOAWAY's last stream, refused, never written).
    var resends = 0

    func resume(_ result: Result<HTTP2Response, HTTP2ExchangeFailure>) {
        continuation.resume(returning: result)
    }
}

/// The HTTP/2 connections to one origin (APNs' push host or its channel management host, FCM's
/// API host or Google's token endpoint): opened
/// when requests come, up to a number; each carries as many streams at once as the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` allows; requests wait in order for a free stream.
///
/// Requests that a connection proves it never processed — above a GOAWAY's last stream id,
/// refused with `REFUSED_STREAM`, or not yet written when it closed — go back to the front of the
/// queue and are sent on another connection; they cost no attempt.
package final class HTTP2ConnectionPool: Sendable {
    package struct Configuration: Sendable {
        /// The service's name in log lines: `APNs`, `FCM`.
        package var service: String
        package var host: String
        package var port: Int
        package var connections: Int
        package var connectTimeout: TimeAmount
        package var requestTimeout: TimeAmount
        package var pingInterval: TimeAmount
        package var pingTimeout: TimeAmount
        package var proxy: HTTPProxy?
        /// Streams one connection carries at most, whatever the server allows.
        package var maximumStreamsPerConnection: Int
        /// The reason in a GOAWAY's debug data, in the service's format.
        package var goAwayReason: @Sendable (ByteBuffer) -> String?

        package init(
            service: String, host: String, port: Int, connections: Int, connectTimeout: TimeAmount, requestTimeout: TimeAmount,
            pingInterval: TimeAmount, pingTimeout: TimeAmount, proxy: HTTPProxy?, maximumStreamsPerConnection: Int,
            goAwayReason: @escaping @Sendable (ByteBuffer) -> String?
        ) {
            self.service = service
            self.host = host
            self.port = port
            self.connections = connections
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.pingInterval = pingInterval
            self.pingTimeout = pingTimeout
            self.proxy = proxy
            self.maximumStreamsPerConnection = maximumStreamsPerConnection
            self.goAwayReason = goAwayReason
        }
    }

    /// A request sent back this many times fails, not written: every connection kept refusing it.
    static let maximumResends = 8

    package let configuration: Configuration
    /// `:authority`: the host, with the port when it is not 443.
    let authority: String
    let sslContext: NIOSSLContext
    let logger: Logger
    let metrics: HTTP2TransportMetrics
    private let state = Mutex(State())

    fileprivate struct State {
        var connections: [Entry] = []
        var waiting = CircularBuffer<HTTP2PendingRequest>()
        var nextConnectionID = 1
        var isShutDown = false
        /// A check of the waiting requests' deadlines is scheduled.
        var expiryScheduled = false
    }

    fileprivate struct Entry {
        enum Phase {
            case opening
            /// Taking new streams, up to `capacity` at once.
            case ready(capacity: Int)
            /// GOAWAY, PING failure or a stream id run out: finishing what it has, taking nothing new.
            case draining
        }

        let connection: HTTP2Connection
        var phase: Phase
        var inFlight = 0
    }

    /// What to do outside the lock after a change: start streams, open a connection, fail requests.
    private struct Work {
        var starts: [(HTTP2Connection, [HTTP2PendingRequest])] = []
        var open: HTTP2Connection?
        var failures: [(HTTP2PendingRequest, HTTP2ExchangeFailure)] = []
        var closes: [HTTP2Connection] = []
        /// When to check the waiting requests' deadlines next.
        var checkExpiry: NIODeadline?
    }

    package init(configuration: Configuration, sslContext: NIOSSLContext, logger: Logger, metrics: HTTP2TransportMetrics) {
        self.configuration = configuration
        authority = configuration.port == 443 ? configuration.host : "\(configuration.host):\(configuration.port)"
        self.sslContext = sslContext
        self.logger = logger
        self.metrics = metrics
    }

    /// Sends `request` on the next free stream and waits for its answer.
    package func execute(_ request: HTTP2Request) async -> Result<HTTP2Response, HTTP2ExchangeFailure> {
        let deadline = NIODeadline.now() + configuration.requestTimeout
        return await withCheckedContinuation { continuation in
            let pending = HTTP2PendingRequest(request: request, continuation: continuation, deadline: deadline)
            perform { state, work in
                guard !state.isShutDown else {
                    work.failures.append((pending, HTTP2ExchangeFailure(failure: .other("the client is shut down"), mayHaveBeenWritten: false)))
                    return
                }
                state.waiting.append(pending)
            }
        }
    }

    /// Closes every connection (their unanswered streams fail) and fails what waits.
    package func shutdown() async {
        let connections = state.withLock { state -> [HTTP2Connection] in
            state.isShutDown = true
            return state.connections.map(\.connection)
        }
        perform { state, work in
            while let pending = state.waiting.popFirst() {
                work.failures.append((pending, HTTP2ExchangeFailure(failure: .other("the client is shut down"), mayHaveBeenWritten: false)))
            }
        }
        for connection in connections { await connection.close() }
    }

    // MARK: What connections report (on their event loops)

    func connectionReady(_ id: Int, capacity: Int) {
        perform { state, _ in
            state.update(id) { $0.phase = .ready(capacity: capacity) }
        }
    }

    func capacityChanged(_ id: Int, capacity: Int) {
        perform { state, _ in
            state.update(id) { entry in
                if case .ready = entry.phase { entry.phase = .ready(capacity: capacity) }
            }
        }
    }

    func streamsFinished(_ id: Int, count: Int) {
        perform { state, _ in
            state.update(id) { $0.inFlight -= count }
        }
    }

    func connectionDraining(_ id: Int) {
        perform { state, _ in
            state.update(id) { $0.phase = .draining }
        }
    }

    /// Requests the connection did not process, back to the front of the queue in their order.
    func returned(_ id: Int, _ requests: [HTTP2PendingRequest], failure: TransportFailure) {
        guard !requests.isEmpty else { return }
        perform { state, work in
            state.update(id) { $0.inFlight -= requests.count }
            requeue(requests, failure: failure, &state, &work)
        }
    }

    /// The connection is gone; `unwritten` were on it and go to another. One that never became
    /// ready failed with `failure`: what waits fails with it unless another connection may still
    /// take it.
    func connectionClosed(_ id: Int, returning unwritten: [HTTP2PendingRequest], failure: TransportFailure, wasReady: Bool) {
        perform { state, work in
            state.connections.removeAll { $0.connection.id == id }
            requeue(unwritten, failure: failure, &state, &work)
            guard !wasReady else { return }
            let othersMayServe = state.connections.contains { entry in
                if case .draining = entry.phase { return false }
                return true
            }
            if !othersMayServe {
                let reason = HTTP2ExchangeFailure(failure: failure, mayHaveBeenWritten: false)
                while let pending = state.waiting.popFirst() { work.failures.append((pending, reason)) }
            }
        }
    }

    private func requeue(_ requests: [HTTP2PendingRequest], failure: TransportFailure, _ state: inout State, _ work: inout Work) {
        guard !requests.isEmpty else { return }
        metrics.resends.increment(by: requests.count)
        for var pending in requests.reversed() {
            pending.resends += 1
            if state.isShutDown || pending.resends > Self.maximumResends {
                work.failures.append((pending, HTTP2ExchangeFailure(failure: failure, mayHaveBeenWritten: false)))
            } else {
                state.waiting.prepend(pending)
            }
        }
    }

    // MARK: Dispatch

    /// Changes the state under the lock, hands waiting requests to connections with free streams,
    /// opens a connection when there is work and room, then acts outside the lock.
    private func perform(_ change: (inout State, inout Work) -> Void) {
        let work = state.withLock { state -> Work in
            var work = Work()
            change(&state, &work)
            dispatch(&state, &work)
            return work
        }
        for (pending, failure) in work.failures { pending.resume(.failure(failure)) }
        if let connection = work.open { connection.open() }
        for (connection, requests) in work.starts { connection.start(requests) }
        for connection in work.closes { Task { await connection.close() } }
        if let deadline = work.checkExpiry {
            MultiThreadedEventLoopGroup.singleton.any().scheduleTask(deadline: deadline) { [self] in expireWaiting() }
        }
    }

    /// Fails the requests whose deadline passed while they waited for a stream: never written, so
    /// safe to send again. A connection that offered no stream all that time (a server whose
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` is 0) and carries nothing is closed, so that the next
    /// requests go to a fresh one rather than wait behind it.
    private func expireWaiting() {
        perform { state, work in
            state.expiryScheduled = false
            let now = NIODeadline.now()
            guard state.waiting.contains(where: { $0.deadline <= now }) else { return }
            var kept = CircularBuffer<HTTP2PendingRequest>(initialCapacity: state.waiting.count)
            while let pending = state.waiting.popFirst() {
                if pending.deadline <= now {
                    work.failures.append((pending, HTTP2ExchangeFailure(failure: .timeout, mayHaveBeenWritten: false)))
                } else {
                    kept.append(pending)
                }
            }
            state.waiting = kept
            for index in state.connections.indices {
                guard case .ready(let capacity) = state.connections[index].phase, capacity == 0, state.connections[index].inFlight == 0
                else { continue }
                state.connections[index].phase = .draining
                work.closes.append(state.connections[index].connection)
            }
        }
    }

    private func dispatch(_ state: inout State, _ work: inout Work) {
        guard !state.isShutDown else { return }
        var dispatched = false
        if !state.waiting.isEmpty {
            var batches = [[HTTP2PendingRequest]](repeating: [], count: state.connections.count)
            while !state.waiting.isEmpty {
                // The ready connection with the most free streams, request by request: the load
                // spreads over the connections and their event loops.
                var best: Int?
                var bestFree = 0
                for (index, entry) in state.connections.enumerated() {
                    guard case .ready(let capacity) = entry.phase else { continue }
                    let free = capacity - entry.inFlight
                    if free > bestFree {
                        best = index
                        bestFree = free
                    }
                }
                guard let best else { break }
                batches[best].append(state.waiting.removeFirst())
                state.connections[best].inFlight += 1
                dispatched = true
            }
            for (index, batch) in batches.enumerated() where !batch.isEmpty {
                work.starts.append((state.connections[index].connection, batch))
            }
        }
        // Lazily, one at a time, up to the configured number: while requests wait, or while there is
        // traffic to spread.
        let live = state.connections.count { entry in
            if case .draining = entry.phase { return false }
            return true
        }
        let opening = state.connections.contains { entry in
            if case .opening = entry.phase { return true }
            return false
        }
        if !state.waiting.isEmpty && !state.expiryScheduled {
            state.expiryScheduled = true
            work.checkExpiry = state.waiting.lazy.map(\.deadline).min()
        }
        if !opening, live < configuration.connections, !state.waiting.isEmpty || dispatched {
            let connection = HTTP2Connection(id: state.nextConnectionID, pool: self)
            state.nextConnectionID += 1
            state.connections.append(Entry(connection: connection, phase: .opening))
            work.open = connection
        }
    }
}

extension HTTP2ConnectionPool.State {
    fileprivate mutating func update(_ id: Int, _ change: (inout HTTP2ConnectionPool.Entry) -> Void) {
        guard let index = connections.firstIndex(where: { $0.connection.id == id }) else { return }
        change(&connections[index])
    }
}
