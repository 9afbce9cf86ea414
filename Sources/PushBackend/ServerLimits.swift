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
/// may take to arrive once its first byte has, and how many connections are served at once.
public struct ServerLimits: Sendable, Hashable {
    /// A connection with no request in progress for this long is closed (also one that opened and
    /// never sent anything).
    public var idleTimeout: Duration
    /// Once the first byte of a request arrives, its whole head (request line and headers) must
    /// follow within this time, or the connection is closed: a client trickling a head byte by byte
    /// cannot hold a connection.
    public var requestHeadTimeout: Duration
    /// Connections served at once; beyond it the server stops accepting (new ones wait in the
    /// kernel's backlog) and logs that the cap was reached. Lowered at start to what the process's
    /// file descriptor limit allows.
    public var maximumConnections: Int

    public init(idleTimeout: Duration = .seconds(30), requestHeadTimeout: Duration = .seconds(10), maximumConnections: Int = 4096) {
        self.idleTimeout = idleTimeout
        self.requestHeadTimeout = requestHeadTimeout
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
struct ConnectionCap: AvailableConnectionsDelegate {
    let maximum: Int
    let logger: Logger
    private var open = 0

    init(maximum: Int, logger: Logger) {
        self.maximum = maximum
        self.logger = logger
    }

    mutating func connectionOpened() {
        open += 1
        if open == maximum {
            logger.warning("connection cap reached: not accepting until one closes", metadata: ["connections": "\(open)"])
        }
    }

    mutating func connectionClosed() { open -= 1 }

    func isAcceptingNewConnections() -> Bool { open < maximum }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with the idle timeout and the request head deadline of `limits`.
    static func http1(limits: ServerLimits) -> HTTPServerBuilder {
        .init { responder in LimitedHTTP1Channel(responder: responder, limits: limits) }
    }
}

/// Hummingbird's HTTP/1 channel with a request head deadline: a handler in front of the HTTP
/// decoder starts the clock at a request's first byte, one behind it stops the clock at the
/// decoded head, and a response's end makes the connection wait for the next head.
struct LimitedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let requestHeadTimeout: TimeAmount

    init(responder: @escaping HTTPChannelHandler.Responder, limits: ServerLimits) {
        let headTimeout = TimeAmount(limits.requestHeadTimeout)
        requestHeadTimeout = headTimeout
        http1 = HTTP1Channel(
            responder: responder,
            configuration: .init(
                additionalChannelHandlers: [RequestHeadArrival()],
                idleTimeout: TimeAmount(limits.idleTimeout)))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeout = requestHeadTimeout
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RequestHeadStart(timeout: timeout), position: .first)
        }.flatMap {
            http1.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

/// Sent down the pipeline by ``RequestHeadArrival`` to ``RequestHeadStart``.
private enum RequestHeadEvent {
    /// A whole head was decoded: stop the clock.
    case arrived
    /// A response ended: the next bytes start another head.
    case awaitingNext
}

/// In front of the decoder: closes the connection when a head started and did not arrive in time.
private final class RequestHeadStart: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let timeout: TimeAmount
    private var awaitingHead = true
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if awaitingHead && deadline == nil {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
        }
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let event = event as? RequestHeadEvent else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        deadline?.cancel()
        deadline = nil
        awaitingHead = event == .awaitingNext
        promise?.succeed()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }
}

/// Behind the decoder: tells ``RequestHeadStart`` when a head arrived and when a response ended.
private final class RequestHeadArrival: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { context.triggerUserOutboundEvent(RequestHeadEvent.arrived, promise: nil) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if isEnd { context.triggerUserOutboundEvent(RequestHeadEvent.awaitingNext, promise: nil) }
    }
}
