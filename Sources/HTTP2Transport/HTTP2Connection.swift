import CoreMetrics
import Logging
import NIOCore
import NIOExtras
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import PushInternals

/// One HTTP/2 connection of a pool: TCP (through an HTTP CONNECT proxy when one is configured),
/// TLS with ALPN `h2`, and its streams' frames, all on one event loop.
final class HTTP2Connection: @unchecked Sendable {
    let id: Int
    let eventLoop: any EventLoop
    /// Touched on `eventLoop` only: the reason this type is `@unchecked Sendable`.
    private let handler: HTTP2ConnectionHandler

    init(id: Int, pool: HTTP2ConnectionPool) {
        self.id = id
        eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        handler = HTTP2ConnectionHandler(id: id, pool: pool)
    }

    /// Connects; the pool hears `connectionReady` once the server's first SETTINGS arrive, or
    /// `connectionClosed` with the reason it failed.
    func open() {
        eventLoop.execute { [self] in
            let configuration = handler.pool.configuration
            handler.opening(eventLoop: eventLoop)
            let target = configuration.proxy.map { ($0.host, $0.port) } ?? (configuration.host, configuration.port)
            ClientBootstrap(group: eventLoop)
                .connectTimeout(configuration.connectTimeout)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { [self] channel in
                    channel.eventLoop.makeCompletedFuture { try configure(channel) }
                }
                .connect(host: target.0, port: target.1)
                .whenComplete { [self] result in
                    switch result {
                    case .success(let channel): handler.connected(channel)
                    case .failure(let error): handler.connectFailed(error)
                    }
                }
        }
    }

    /// Sends `requests`, each on a stream of its own, in one flush.
    func start(_ requests: [HTTP2PendingRequest]) {
        if eventLoop.inEventLoop {
            handler.start(requests)
        } else {
            eventLoop.execute { [self] in handler.start(requests) }
        }
    }

    /// Closes the connection; its unanswered streams fail.
    func close() async {
        let closed = eventLoop.flatSubmit { [self] in handler.close(on: eventLoop) }
        try? await closed.get()
    }

    private func configure(_ channel: any Channel) throws {
        let configuration = handler.pool.configuration
        let pipeline = channel.pipeline.syncOperations
        guard let proxy = configuration.proxy else {
            try addTLSAndHTTP2(to: pipeline)
            return
        }
        // CONNECT in HTTP/1.1 first; once the proxy answers 2xx, its HTTP handlers leave and TLS
        // runs end to end inside the tunnel.
        let encoder = HTTPRequestEncoder()
        let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
        var headers = HTTPHeaders()
        if let credentials = proxy.basicCredentials { headers.add(name: "proxy-authorization", value: "Basic " + credentials) }
        let tunnel = channel.eventLoop.makePromise(of: Void.self)
        let connect = NIOHTTP1ProxyConnectHandler(
            targetHost: configuration.host, targetPort: configuration.port, headers: headers,
            deadline: .now() + configuration.connectTimeout, promise: tunnel)
        let answer = ProxyAnswerHead()
        try pipeline.addHandlers([encoder, decoder, answer, connect])
        let handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        tunnel.futureResult.assumeIsolated().whenComplete { [self] result in
            guard case .failure(let error) = result else {
                // The HTTP handlers leave before TLS writes its first bytes, which the decoder,
                // watching writes for request methods, would take for HTTP parts. The decoder is
                // mid-read here and leaves once the read is done. A proxy says nothing more before
                // the client speaks.
                pipeline.removeHandler(answer, promise: nil)
                pipeline.removeHandler(encoder, promise: nil)
                let removed = channel.eventLoop.makePromise(of: Void.self)
                pipeline.removeHandler(decoder, promise: removed)
                removed.futureResult.assumeIsolated().whenComplete { [self] result in
                    do {
                        try result.get()
                        try addTLSAndHTTP2(to: pipeline)
                    } catch {
                        handler.value.record(HTTP2ConnectionHandler.classify(error))
                        channel.close(promise: nil)
                    }
                }
                return
            }
            handler.value.record(proxy.failure(answer.isMalformed ? "did not answer CONNECT in HTTP/1.1" : Self.describe(error, head: answer.head)))
        }
    }

    /// What a proxy did instead of opening the tunnel, in its own words where it gave some (its
    /// status line, escaped and cut short), never the credentials sent to it.
    static func describe(_ error: any Error, head: HTTPResponseHead?) -> String {
        guard let error = error as? NIOHTTP1ProxyConnectHandler.Error else { return "did not answer CONNECT in HTTP/1.1" }
        if error == .remoteConnectionClosed() || error == .channelUnexpectedlyInactive() {
            return "closed the connection before the tunnel opened"
        }
        if error == .httpProxyHandshakeTimeout() { return "did not open the tunnel in time" }
        if let head, error == .proxyAuthenticationRequired() || error == .invalidProxyResponseHead(head) {
            return "refused the tunnel: \(escapingControls("\(head.status.code) \(head.status.reasonPhrase)".prefix(100)))"
        }
        return "did not answer CONNECT in HTTP/1.1"
    }

    private func addTLSAndHTTP2(to pipeline: ChannelPipeline.SynchronousOperations) throws {
        let configuration = handler.pool.configuration
        let isAddress = (try? SocketAddress(ipAddress: configuration.host, port: 0)) != nil
        let tls = try NIOSSLClientHandler(context: handler.pool.sslContext, serverHostname: isAddress ? nil : configuration.host)
        let http2 = NIOHTTP2Handler(
            mode: .client,
            initialSettings: [
                HTTP2Setting(parameter: .enablePush, value: 0),
                HTTP2Setting(parameter: .maxConcurrentStreams, value: 0),
                // An answer of up to the largest response limit fits a stream's window; streams
                // are never reused, so their windows need no update.
                HTTP2Setting(parameter: .initialWindowSize, value: HTTP2ConnectionHandler.streamWindow),
                HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
            ])
        try pipeline.addHandlers([tls, http2, handler])
    }
}

/// The frames of one connection's streams, on its event loop: no stream channels, no HTTP/1
/// translation. A request's HEADERS and DATA leave in one write and one flush with the requests
/// started beside it; an answer is its HEADERS (a 200 ends there) and the DATA that follow.
final class HTTP2ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = Never
    typealias OutboundOut = HTTP2Frame

    /// Each stream's receive window: the largest answer any request takes (a channel list), and some.
    static let streamWindow = (4 << 20) + (64 << 10)
    /// The connection's receive window, topped up when half is used.
    static let connectionWindow = 16 << 20

    let id: Int
    let pool: HTTP2ConnectionPool
    private var context: ChannelHandlerContext?
    private var channel: (any Channel)?
    /// The client closes it: set before the channel exists, it closes the channel once it does.
    private var closeRequested = false

    private enum Phase {
        case opening
        case ready
        case draining
        case closed
    }

    private var phase = Phase.opening
    private var streams: [HTTP2StreamID: Stream] = [:]
    private var nextStreamID = HTTP2StreamID(1)
    private var capacity = 0
    /// Streams finished since the pool last heard, reported once per read burst.
    private var finishedSinceReport = 0
    /// Why the connection failed or is closing, for the streams it ends.
    private var failure: TransportFailure?
    /// What the streams a GOAWAY left waiting end with, if the connection closes before their answers.
    private var goAwayFailure: TransportFailure?
    private var receivedSinceWindowUpdate = 0
    /// Streams refused unprocessed during the current read, to be sent again after it.
    private var refused: [HTTP2PendingRequest] = []

    private var tick: RepeatedTask?
    private var connectDeadline = NIODeadline.distantFuture
    private var lastRead = NIODeadline.now()
    private var readSinceTick = false
    private var pingDeadline: NIODeadline?

    private struct Stream {
        var pending: HTTP2PendingRequest
        /// Its last frame reached the socket: the server may have it.
        var written = false
        var status: Int?
        var headers = HPACKHeaders()
        var body: ByteBuffer?
    }

    init(id: Int, pool: HTTP2ConnectionPool) {
        self.id = id
        self.pool = pool
    }

    // MARK: Life

    /// Starts the clock that checks deadlines and health: every quarter of the shortest of the
    /// request timeout, the PING interval and timeout, and the connect timeout.
    func opening(eventLoop: any EventLoop) {
        let configuration = pool.configuration
        connectDeadline = .now() + configuration.connectTimeout
        let shortest = min(configuration.requestTimeout, configuration.pingInterval, configuration.pingTimeout, configuration.connectTimeout)
        let period = max(TimeAmount.milliseconds(10), TimeAmount.nanoseconds(shortest.nanoseconds / 4))
        let handler = NIOLoopBound(self, eventLoop: eventLoop)
        tick = eventLoop.scheduleRepeatedTask(initialDelay: period, delay: period) { _ in handler.value.onTick() }
    }

    func connected(_ channel: any Channel) {
        self.channel = channel
        if closeRequested { channel.close(promise: nil) }
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        channel.closeFuture.whenComplete { _ in handler.value.closed() }
    }

    func connectFailed(_ error: any Error) {
        let failure = Self.classify(error)
        record(pool.configuration.proxy.map { $0.failure("could not be reached (\(failure))") } ?? failure)
        closed()
    }

    /// Keeps the first reason the connection failed.
    func record(_ failure: TransportFailure) {
        if self.failure == nil { self.failure = failure }
    }

    func close(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        record(.other("the client closed the connection"))
        closeRequested = true
        guard let channel else { return eventLoop.makeSucceededVoidFuture() }
        channel.close(promise: nil)
        return channel.closeFuture
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        record(Self.classify(error))
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let negotiated)? = event as? TLSUserEvent, negotiated != "h2" {
            record(.other("the server did not agree to HTTP/2"))
            context.close(promise: nil)
        } else if let event = event as? StreamClosedEvent, let reason = event.reason, context.channel.isActive,
            let stream = streams.removeValue(forKey: event.streamID)
        {
            if reason == .refusedStream {
                // HTTP/2 guarantees a refused stream was not processed. A GOAWAY's refusals come
                // just before the frame itself: hand them back once the read is done, when the
                // pool knows this connection takes nothing more.
                refused.append(stream.pending)
            } else {
                finishedSinceReport += 1
                stream.pending.resume(
                    .failure(HTTP2ExchangeFailure(failure: .other("stream reset (\(reason))"), mayHaveBeenWritten: stream.written)))
            }
            closeIfDrained(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The channel is gone, or given up: written streams may have been delivered; unwritten ones go back.
    private func closed() {
        guard phase != .closed else { return }
        let wasOpening = phase == .opening
        phase = .closed
        tick?.cancel()
        tick = nil
        let failure = failure ?? goAwayFailure ?? .connectionLost
        var unwritten = refused
        refused = []
        for (_, stream) in streams.sorted(by: { $0.key < $1.key }) {
            if stream.written {
                stream.pending.resume(.failure(HTTP2ExchangeFailure(failure: failure, mayHaveBeenWritten: true)))
            } else {
                unwritten.append(stream.pending)
            }
        }
        streams = [:]
        if !wasOpening {
            pool.metrics.connectionClosed()
            pool.logger.debug("\(pool.configuration.service) connection closed", metadata: ["connection": "\(id)", "reason": "\(failure)"])
        }
        // One report: the pool forgets the connection before it sends the unwritten requests again.
        pool.connectionClosed(id, returning: unwritten, failure: failure, wasReady: !wasOpening)
    }

    // MARK: Writing

    func start(_ requests: [HTTP2PendingRequest]) {
        guard phase == .ready, let context, context.channel.isActive else {
            pool.returned(id, requests, failure: failure ?? .connectionLost)
            return
        }
        // Stream ids are 31 bits; a connection that has used them all retires.
        let idsLeft = (Int(Int32.max) - Int(nextStreamID)) / 2
        let batch = requests.prefix(idsLeft)
        if batch.count < requests.count {
            drain(context: context)
            pool.returned(id, Array(requests.dropFirst(batch.count)), failure: .connectionLost)
            guard !batch.isEmpty else { return }
        }
        // One promise for the batch, on its last frame: writes complete in order.
        let written = context.eventLoop.makePromise(of: Void.self)
        var started: [HTTP2StreamID] = []
        started.reserveCapacity(batch.count)
        for (index, pending) in batch.enumerated() {
            let streamID = nextStreamID
            nextStreamID = HTTP2StreamID(Int(nextStreamID) + 2)
            let request = pending.request
            var headers = HPACKHeaders()
            headers.reserveCapacity(4 + request.headers.count)
            headers.add(name: ":method", value: request.method)
            headers.add(name: ":scheme", value: "https")
            headers.add(name: ":authority", value: pool.authority)
            headers.add(name: ":path", value: request.path)
            headers.add(contentsOf: request.headers)
            let promise = index == batch.count - 1 ? written : nil
            if let body = request.body, body.readableBytes > 0 {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
                    promise: promise)
            } else {
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))),
                    promise: promise)
            }
            streams[streamID] = Stream(pending: pending)
            started.append(streamID)
        }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenSuccess { [started] in
            for streamID in started { handler.value.streams[streamID]?.written = true }
        }
        context.flush()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readSinceTick = true
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            guard var stream = streams[frame.streamID] else { return }
            if stream.status == nil {
                guard let status = headers.headers.first(name: ":status").flatMap({ Int($0) }) else { return }
                // Informational answers (1xx) precede the real one.
                guard status >= 200 else { return }
                stream.status = status
                stream.headers = headers.headers
            }
            if headers.endStream {
                complete(frame.streamID, stream)
            } else {
                streams[frame.streamID] = stream
            }
        case .data(let data):
            guard case .byteBuffer(let bytes) = data.data else { return }
            receivedSinceWindowUpdate += bytes.readableBytes
            guard var stream = streams[frame.streamID] else { return }
            if stream.body == nil {
                stream.body = bytes
            } else {
                stream.body!.writeImmutableBuffer(bytes)
            }
            if stream.body!.readableBytes > stream.pending.request.responseLimit {
                streams[frame.streamID] = nil
                finishedSinceReport += 1
                context.write(wrapOutboundOut(HTTP2Frame(streamID: frame.streamID, payload: .rstStream(.cancel))), promise: nil)
                stream.pending.resume(
                    .failure(
                        HTTP2ExchangeFailure(
                            failure: .other("answer larger than \(stream.pending.request.responseLimit) bytes"), mayHaveBeenWritten: true)))
            } else if data.endStream {
                complete(frame.streamID, stream)
            } else {
                streams[frame.streamID] = stream
            }
        case .rstStream:
            // Its StreamClosedEvent, which came first, settled it.
            break
        case .settings(.settings(let settings)):
            settingsReceived(settings)
        case .goAway(let lastStreamID, let errorCode, let debugData):
            goAwayReceived(lastStreamID: lastStreamID, errorCode: errorCode, debugData: debugData, context: context)
        case .ping(_, ack: true):
            pingDeadline = nil
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if receivedSinceWindowUpdate >= Self.connectionWindow / 2 {
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: receivedSinceWindowUpdate))),
                promise: nil)
            receivedSinceWindowUpdate = 0
        }
        context.flush()
        reportFinished()
        if !refused.isEmpty {
            let again = refused
            refused = []
            pool.returned(id, again, failure: goAwayFailure ?? .connectionLost)
        }
        context.fireChannelReadComplete()
    }

    /// Tells the pool how many streams ended since it last heard: once per read burst or tick.
    private func reportFinished() {
        guard finishedSinceReport > 0 else { return }
        let finished = finishedSinceReport
        finishedSinceReport = 0
        pool.streamsFinished(id, count: finished)
    }

    private func complete(_ streamID: HTTP2StreamID, _ stream: Stream) {
        streams[streamID] = nil
        finishedSinceReport += 1
        stream.pending.resume(.success(HTTP2Response(status: stream.status ?? 0, headers: stream.headers, body: stream.body ?? ByteBuffer())))
        if let context { closeIfDrained(context: context) }
    }

    private func settingsReceived(_ settings: HTTP2Settings) {
        let limit = pool.configuration.maximumStreamsPerConnection
        var allowed = phase == .opening ? limit : capacity
        for setting in settings where setting.parameter == .maxConcurrentStreams {
            allowed = min(setting.value, limit)
        }
        switch phase {
        case .opening:
            guard let context else { return }
            phase = .ready
            capacity = allowed
            lastRead = .now()
            // The connection's window starts at 64 KiB: widen it once, then top it up as answers arrive.
            context.writeAndFlush(
                wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: Self.connectionWindow - 65_535))),
                promise: nil)
            pool.metrics.connectionOpened()
            pool.connectionReady(id, capacity: allowed)
        case .ready where allowed != capacity:
            capacity = allowed
            pool.capacityChanged(id, capacity: allowed)
        default:
            capacity = allowed
        }
    }

    /// Streams above `lastStreamID` were not processed: they go back to the pool, to be sent on
    /// another connection. Those at or below it are answered, or end with the connection.
    private func goAwayReceived(lastStreamID: HTTP2StreamID, errorCode: HTTP2ErrorCode, debugData: ByteBuffer?, context: ChannelHandlerContext) {
        let reason = debugData.flatMap(pool.configuration.goAwayReason) ?? (errorCode == .noError ? nil : "\(errorCode)")
        goAwayFailure = .goAway(reason: reason)
        let unprocessed = streams.keys.filter { $0 > lastStreamID }.sorted()
        // The answer to our own closing is no news.
        pool.logger.log(
            level: closeRequested ? .debug : .notice, "\(pool.configuration.service) sent GOAWAY",
            metadata: [
                "connection": "\(id)", "reason": "\(reason ?? "-")", "error-code": "\(errorCode)", "last-stream-id": "\(lastStreamID)",
                "resent": "\(unprocessed.count)", "awaited": "\(streams.count - unprocessed.count)",
            ])
        pool.metrics.goAways.increment()
        let returned = unprocessed.map { streams.removeValue(forKey: $0)!.pending }
        drain(context: context)
        pool.returned(id, returned, failure: .goAway(reason: reason))
    }

    /// Takes no new stream; closes once the ones it has are done.
    private func drain(context: ChannelHandlerContext) {
        guard phase == .ready || phase == .opening else { return }
        phase = .draining
        pool.connectionDraining(id)
        closeIfDrained(context: context)
    }

    private func closeIfDrained(context: ChannelHandlerContext) {
        if phase == .draining, streams.isEmpty { context.close(promise: nil) }
    }

    // MARK: Deadlines and health

    private func onTick() {
        let now = NIODeadline.now()
        if readSinceTick {
            // Any frame read proves the peer alive, as its PING answer would: on a busy server the
            // answers queued before the PING come first.
            lastRead = now
            readSinceTick = false
            pingDeadline = nil
        }
        let configuration = pool.configuration
        switch phase {
        case .opening:
            if now >= connectDeadline {
                record(.timeout)
                channel?.close(promise: nil)
            }
        case .ready, .draining:
            guard let context else { return }
            var expired: [HTTP2StreamID] = []
            for (streamID, stream) in streams where stream.pending.deadline <= now { expired.append(streamID) }
            for streamID in expired {
                let stream = streams.removeValue(forKey: streamID)!
                finishedSinceReport += 1
                context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
                stream.pending.resume(.failure(HTTP2ExchangeFailure(failure: .timeout, mayHaveBeenWritten: stream.written)))
            }
            if let pingDeadline, now >= pingDeadline {
                pool.metrics.pingsFailed.increment()
                pool.logger.warning(
                    "\(pool.configuration.service) connection did not answer a PING; closing it",
                    metadata: ["connection": "\(id)", "streams": "\(streams.count)"])
                record(.timeout)
                // A dead peer would hold TLS's closing handshake for seconds: settle the streams now.
                closed()
                context.close(promise: nil)
                return
            }
            if pingDeadline == nil, now - lastRead >= configuration.pingInterval {
                pingDeadline = now + configuration.pingTimeout
                pool.metrics.pings.increment()
                context.write(
                    wrapOutboundOut(
                        HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: UInt64(now.uptimeNanoseconds)), ack: false))),
                    promise: nil)
            }
            context.flush()
            reportFinished()
            closeIfDrained(context: context)
        case .closed:
            break
        }
    }

    /// What went wrong with a connection. Whether a request on it may have been written is the
    /// stream's own record (its write promise), not the error's.
    static func classify(_ error: any Error) -> TransportFailure {
        if error is NIOHTTP2Errors.StreamClosed { return .connectionLost }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return .timeout
            case .ioOnClosedChannel, .alreadyClosed, .eof: return .connectionLost
            default: break
            }
        }
        if error is NIOConnectionError { return .connectionRefused }
        if let error = error as? IOError, error.errnoCode == 111 { return .connectionRefused }
        if error is NIOSSLError || error is BoringSSLError { return .tls }
        return .other(String(describing: type(of: error)))
    }
}

/// Keeps the proxy's answer head, which `NIOHTTP1ProxyConnectHandler`'s errors do not show, for the
/// failure that names what the proxy said.
private final class ProxyAnswerHead: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    private(set) var head: HTTPResponseHead?
    /// The answer was not HTTP/1.1 the decoder could read.
    private(set) var isMalformed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) { self.head = head }
        context.fireChannelRead(data)
    }

    /// The decoder's error: nothing more will be read, so the connection closes now rather than
    /// wait out the connect timeout.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPParserError {
            isMalformed = true
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }
}
