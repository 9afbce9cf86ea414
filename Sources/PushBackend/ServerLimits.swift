import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
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
    /// Connections served at once; beyond it the server stops accepting (new ones wait in the
    /// kernel's backlog) and logs that the cap was reached. Lowered at start to what the process's
    /// file descriptor limit allows.
    public var maximumConnections: Int

    public init(
        idleTimeout: Duration = .seconds(30), requestHeadTimeout: Duration = .seconds(10), requestBodyTimeout: Duration = .seconds(30),
        maximumConnections: Int = 4096
    ) {
        self.idleTimeout = idleTimeout
        self.requestHeadTimeout = requestHeadTimeout
        self.requestBodyTimeout = requestBodyTimeout
        self.maximumConnections = maximumConnections
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
    /// HTTP/1.1 with the idle timeout and the request head and body deadlines of `limits`.
    package static func http1(limits: ServerLimits) -> HTTPServerBuilder {
        .init { responder in LimitedHTTP1Channel(responder: responder, limits: limits) }
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

    init(responder: @escaping HTTPChannelHandler.Responder, limits: ServerLimits) {
        requestHeadTimeout = TimeAmount(limits.requestHeadTimeout)
        requestBodyTimeout = TimeAmount(limits.requestBodyTimeout)
        http1 = HTTP1Channel(
            responder: responder,
            configuration: .init(
                additionalChannelHandlers: [RequestProgress()],
                idleTimeout: TimeAmount(limits.idleTimeout)))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let (head, body) = (requestHeadTimeout, requestBodyTimeout)
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RequestDeadlines(head: head, body: body), position: .first)
        }.flatMap {
            http1.setup(channel: channel, logger: logger)
        }
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
}

/// In front of the decoder: closes the connection when a head started and did not arrive in time,
/// or a body did not arrive in time after its head.
private final class RequestDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let headTimeout: TimeAmount
    let bodyTimeout: TimeAmount
    private var awaitingHead = true
    private var deadline: Scheduled<Void>?

    init(head: TimeAmount, body: TimeAmount) {
        headTimeout = head
        bodyTimeout = body
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if awaitingHead && deadline == nil { startClock(context: context, timeout: headTimeout) }
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
        }
        promise?.succeed()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }
}

/// Behind the decoder: tells ``RequestDeadlines`` when a head and a body's end arrived and when a
/// response ended.
private final class RequestProgress: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: context.triggerUserOutboundEvent(RequestProgressEvent.headArrived, promise: nil)
        case .end: context.triggerUserOutboundEvent(RequestProgressEvent.bodyArrived, promise: nil)
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if isEnd { context.triggerUserOutboundEvent(RequestProgressEvent.awaitingNext, promise: nil) }
    }
}
