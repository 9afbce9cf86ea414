import HTTPTypes
import Hummingbird
package import HummingbirdCore
import HummingbirdHTTP2
package import Logging
import NIOCore
import NIOHTTP2
import NIOHTTPTypes
package import NIOSSL
import NIOTLS
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one connection may hold of the server: how long it may sit idle, how long a request head
/// and then its body may take to arrive, and how many connections are served at once.
public struct ServerLimits: Sendable, Hashable {
    /// A connection with no request in progress for this long is closed (also one that opened and
    /// never sent anything).
    public var idleTimeout: Duration
    /// Once the first byte of a request arrives, its whole head (request line and headers) must
    /// follow within this time, or the connection is closed: a client trickling a head byte by byte
    /// cannot hold a connection.
    public var requestHeadTimeout: Duration
    /// Once a request's head has arrived, its whole body must follow within this time, or the
    /// connection is closed: a body trickled a byte at a time cannot hold a handler, nor keep a
    /// graceful shutdown waiting.
    public var requestBodyTimeout: Duration
    /// Connections served at once. At the cap the oldest idle connection is closed to make room;
    /// with none idle the server stops accepting (new ones wait in the kernel's backlog) and logs
    /// that the cap was reached. Lowered at start to what the process's file descriptor limit allows.
    public var maximumConnections: Int
    /// Connections one client address may hold (a trusted proxy is not limited): at the limit its
    /// own oldest idle connection makes room, or the new one is closed at once.
    public var maximumConnectionsPerAddress: Int
    /// Requests one connection may carry; after the last one's response it is closed.
    public var maximumRequestsPerConnection: Int
    /// How long a connection may live: the first response after it is its last.
    public var maximumConnectionAge: Duration
    /// How long a response may make no progress (the client reads none of it while the socket's
    /// buffers are full) before the connection is closed.
    public var writeTimeout: Duration

    /// Requests read ahead of their answers: while this many wait for theirs, nothing more is read
    /// from the socket, so a client that pipelines requests and never reads the answers fills its
    /// own socket buffers, not the server's memory.
    static let pipelinedRequestsRead = 2
    /// Requests a connection may have decoded and not answered. One read can hold many small
    /// pipelined requests, all decoded at once; past this many the connection is closed.
    static let maximumPipelinedRequests = 32

    public init(
        idleTimeout: Duration = .seconds(30), requestHeadTimeout: Duration = .seconds(10), requestBodyTimeout: Duration = .seconds(30),
        maximumConnections: Int = 4096, maximumConnectionsPerAddress: Int = 256, maximumRequestsPerConnection: Int = 10_000,
        maximumConnectionAge: Duration = .seconds(900), writeTimeout: Duration = .seconds(30)
    ) {
        self.idleTimeout = idleTimeout
        self.requestHeadTimeout = requestHeadTimeout
        self.requestBodyTimeout = requestBodyTimeout
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
        self.maximumRequestsPerConnection = maximumRequestsPerConnection
        self.maximumConnectionAge = maximumConnectionAge
        self.writeTimeout = writeTimeout
    }

    /// Descriptors kept back from connections: the database, log streams, the hub client's sockets.
    static let reservedDescriptors = 128

    /// ``maximumConnections``, lowered to fit under the file descriptor limit (raised first to its
    /// hard maximum, as servers do).
    func effectiveMaximumConnections() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return maximumConnections }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        let available = Int(clamping: limit.rlim_cur) - Self.reservedDescriptors
        return max(1, min(maximumConnections, available))
    }
}

/// The connection cap, logging each time it is reached (once until connections fall below it again).
/// Every listener of `push-backend` has one: the API's, the metrics', the in-process emulators'.
/// (The API's ``ConnectionRegistry`` closes the oldest idle connection at the same cap.)
package struct ConnectionCap: AvailableConnectionsDelegate {
    let maximum: Int
    let logger: Logger
    private var open = 0

    package init(maximum: Int, logger: Logger) {
        self.maximum = maximum
        self.logger = logger
    }

    package mutating func connectionOpened() {
        open += 1
        if open == maximum {
            logger.warning("connection cap reached: not accepting until one closes", metadata: ["connections": "\(open)"])
        }
    }

    package mutating func connectionClosed() { open -= 1 }

    package func isAcceptingNewConnections() -> Bool { open < maximum }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with the idle timeout, the request head and body deadlines and the bounds on a
    /// connection's requests and age of `limits`, and, with a registry, the limit on each client
    /// address's connections.
    package static func http1(limits: ServerLimits, connections: ConnectionRegistry? = nil) -> HTTPServerBuilder {
        .init { responder in LimitedHTTP1Channel(responder: responder, limits: limits, connections: connections) }
    }

    /// HTTPS: HTTP/2 or HTTP/1.1 as the client's ALPN chooses (HTTP/1.1 when it names neither),
    /// with `limits` as ``http1(limits:connections:)`` applies them; on an HTTP/2 connection, its
    /// idle timeout and age, and streams at most as idle as a connection may be.
    package static func https(limits: ServerLimits, connections: ConnectionRegistry? = nil, tls: TLSConfiguration) throws -> HTTPServerBuilder {
        var tls = tls
        tls.applicationProtocols = NIOHTTP2SupportedALPNProtocols
        let context = try NIOSSLContext(configuration: tls)
        return .init { responder in
            LimitedHTTPSChannel(
                http1: LimitedHTTP1Channel(responder: responder, limits: limits, connections: connections),
                http2: HTTP2Channel(
                    responder: responder,
                    configuration: .init(
                        idleTimeout: limits.idleTimeout, gracefulCloseTimeout: limits.writeTimeout, maxAgeTimeout: limits.maximumConnectionAge,
                        streamConfiguration: .init(idleTimeout: TimeAmount(limits.idleTimeout)))),
                tls: context)
        }
    }
}

/// TLS in front of ``LimitedHTTP1Channel`` or Hummingbird's HTTP/2 channel, as ALPN decides. The
/// deadlines handler stays in front of TLS, on the socket's bytes: a handshake counts against the
/// head's time, and an HTTP/2 connection, whose requests are streams, leaves it only the write
/// timeout and the connection registry.
struct LimitedHTTPSChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Channel.Value>>
        let channel: any Channel
    }

    let http1: LimitedHTTP1Channel
    let http2: HTTP2Channel
    let tls: NIOSSLContext

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let (http1, http2) = (http1, http2)
        return channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(http1.deadlines(), position: .first)
            try pipeline.addHandler(NIOSSLServerHandler(context: tls))
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Channel.Value>> {
                result in
                switch result {
                case .negotiated("h2"):
                    channel.triggerUserOutboundEvent(RequestProgressEvent.multiplexed, promise: nil)
                    return http2.setup(channel: channel, logger: logger).map { .http2($0) }
                case .negotiated("http/1.1"), .fallback:
                    return http1.http1.setup(channel: channel, logger: logger).map { .http1_1($0) }
                case .negotiated:
                    return channel.close().flatMapThrowing { throw NIOHTTP2Errors.invalidALPNToken() }
                }
            }
            try pipeline.addHandler(negotiation)
            return Value(negotiated: negotiation.protocolNegotiationResult, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        switch try? await value.negotiated.get() {
        case .http1_1(let connection): await http1.handle(value: connection, logger: logger)
        case .http2(let connection): await http2.handle(value: connection, logger: logger)
        case nil: logger.debug("TLS or protocol negotiation failed")
        }
    }
}

/// Hummingbird's HTTP/1 channel with request deadlines: a handler in front of the HTTP decoder
/// starts the head's clock at a request's first byte and the body's at its decoded head; one behind
/// the decoder says when the head and the body's end were decoded, and when a response ended,
/// after which the connection waits for the next head.
struct LimitedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let requestHeadTimeout: TimeAmount
    let requestBodyTimeout: TimeAmount
    let writeTimeout: TimeAmount
    let connections: ConnectionRegistry?

    init(responder: @escaping HTTPChannelHandler.Responder, limits: ServerLimits, connections: ConnectionRegistry?) {
        requestHeadTimeout = TimeAmount(limits.requestHeadTimeout)
        requestBodyTimeout = TimeAmount(limits.requestBodyTimeout)
        writeTimeout = TimeAmount(limits.writeTimeout)
        self.connections = connections
        let (requests, age) = (limits.maximumRequestsPerConnection, limits.maximumConnectionAge)
        http1 = HTTP1Channel(
            responder: responder,
            configuration: .init(
                additionalChannelHandlers: [RequestProgress(maximumRequests: requests, maximumAge: age)],
                idleTimeout: TimeAmount(limits.idleTimeout)))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(deadlines(), position: .first)
        }.flatMap {
            http1.setup(channel: channel, logger: logger)
        }
    }

    /// The handler that keeps a connection's deadlines, for the front of its pipeline.
    fileprivate func deadlines() -> RequestDeadlines {
        RequestDeadlines(head: requestHeadTimeout, body: requestBodyTimeout, write: writeTimeout, connections: connections)
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

/// Sent down the pipeline by ``RequestProgress`` to ``RequestDeadlines``.
private enum RequestProgressEvent {
    /// A whole head was decoded: stop the head's clock, start the body's.
    case headArrived
    /// The body's end was decoded: stop the body's clock.
    case bodyArrived
    /// A response ended: the next bytes start another head.
    case awaitingNext
    /// The connection speaks HTTP/2: its requests are streams, whose heads and bodies this handler
    /// does not see; only the write timeout and the registry apply.
    case multiplexed
}

/// In front of the decoder: closes the connection when a head started and did not arrive in time,
/// or a body did not arrive in time after its head, or a response made no progress for the write
/// timeout; stops reading while requests read ahead wait for their answers, and closes a connection
/// with more unanswered requests than a connection may hold; and keeps the connection registry told
/// of the connection and of whether it is idle (waiting for a head that has not begun).
private final class RequestDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let headTimeout: TimeAmount
    let bodyTimeout: TimeAmount
    let writeTimeout: TimeAmount
    let connections: ConnectionRegistry?
    private var awaitingHead = true
    private var deadline: Scheduled<Void>?
    /// Requests whose heads were decoded and whose responses have not ended.
    private var unanswered = 0
    /// A read asked for while too many requests wait for answers: passed on once fewer do.
    private var readHeld = false
    private var writeDeadline: Scheduled<Void>?

    init(head: TimeAmount, body: TimeAmount, write: TimeAmount, connections: ConnectionRegistry?) {
        headTimeout = head
        bodyTimeout = body
        writeTimeout = write
        self.connections = connections
    }

    func read(context: ChannelHandlerContext) {
        guard unanswered < ServerLimits.pipelinedRequestsRead else {
            readHeld = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // Unwritable: the socket's buffers are full and a response waits on the client. It must
        // become writable again within the write timeout.
        if context.channel.isWritable {
            writeDeadline?.cancel()
            writeDeadline = nil
        } else if writeDeadline == nil {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            writeDeadline = context.eventLoop.scheduleTask(in: writeTimeout) { loopBound.value.close(promise: nil) }
        }
        context.fireChannelWritabilityChanged()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Checked as the connection is accepted: one over its address's limit never reads a byte.
        if let connections, !connections.admit(context.channel) { context.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if awaitingHead && deadline == nil {
            startClock(context: context, timeout: headTimeout)
            connections?.setIdle(context.channel, false)
        }
        context.fireChannelRead(data)
    }

    private func stopClock() {
        deadline?.cancel()
        deadline = nil
    }

    private func startClock(context: ChannelHandlerContext, timeout: TimeAmount) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let event = event as? RequestProgressEvent else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch event {
        case .headArrived:
            unanswered += 1
            if unanswered > ServerLimits.maximumPipelinedRequests {
                context.close(promise: nil)
                promise?.succeed()
                return
            }
            stopClock()
            awaitingHead = false
            startClock(context: context, timeout: bodyTimeout)
        case .bodyArrived:
            // After an early response the rest of a body may still come in; the clock then
            // running is the next head's.
            if !awaitingHead { stopClock() }
        case .awaitingNext:
            stopClock()
            awaitingHead = true
            connections?.setIdle(context.channel, true)
            unanswered = max(unanswered - 1, 0)
            if readHeld && unanswered < ServerLimits.pipelinedRequestsRead {
                readHeld = false
                context.read()
            }
        case .multiplexed:
            stopClock()
            awaitingHead = false
            connections?.setIdle(context.channel, false)
        }
        promise?.succeed()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        writeDeadline?.cancel()
        writeDeadline = nil
        connections?.remove(context.channel)
    }
}

/// Behind the decoder: tells ``RequestDeadlines`` when a head and a body's end arrived and when a
/// response ended, and ends a connection that has carried its last request or outlived its age:
/// that response says `Connection: close`, and the connection closes once it is written. It also
/// answers `Expect: 100-continue` (RFC 9110 §10.1.1) with `100 Continue`, when nothing else is being
/// answered on the connection, so that a client that waits for it (curl, for a body over 1 MiB)
/// sends its body at once rather than after its own timeout.
private final class RequestProgress: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let maximumRequests: Int
    let closesAfter: ContinuousClock.Instant
    /// Responses begun: pipelined heads may be read well before their answers.
    private var responses = 0
    /// Decided with the response's head, so that its `Connection` header tells the truth.
    private var closing = false
    /// Heads read and responses ended: a `100 Continue` goes out only when they differ by one.
    private var requestsRead = 0
    private var responsesEnded = 0

    init(maximumRequests: Int, maximumAge: Duration) {
        self.maximumRequests = maximumRequests
        closesAfter = .now + maximumAge
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestsRead += 1
            context.triggerUserOutboundEvent(RequestProgressEvent.headArrived, promise: nil)
            if requestsRead == responsesEnded + 1, head.headerFields[.expect]?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            }
        case .end: context.triggerUserOutboundEvent(RequestProgressEvent.bodyArrived, promise: nil)
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            responses += 1
            closing = responses >= maximumRequests || ContinuousClock.now >= closesAfter
            if closing { head.headerFields[.connection] = "close" }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closing:
            responsesEnded += 1
            let written = promise ?? context.eventLoop.makePromise()
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
            context.write(data, promise: written)
        case .end:
            responsesEnded += 1
            context.write(data, promise: promise)
            context.triggerUserOutboundEvent(RequestProgressEvent.awaitingNext, promise: nil)
        default:
            context.write(data, promise: promise)
        }
    }
}
