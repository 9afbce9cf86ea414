package import Hummingbird
package import HummingbirdCore
import HummingbirdHTTP2
package import Logging
package import NIOCore
import NIOHTTP2
package import NIOSSL
package import PushServerSupport
import ServiceLifecycle

/// Retires a connection as APNs does: a GOAWAY that names the last stream the emulator took and
/// carries `{"reason":…}`; the streams up to it are answered, any opened later are refused
/// unprocessed (`REFUSED_STREAM`, which NIOHTTP2 sends for streams above a GOAWAY it sent), and
/// the connection closes once the last of them is answered.
///
/// It also keeps the client's PINGs (which `NIOHTTP2Handler` has answered) from Hummingbird's
/// connection manager, whose keepalive rule closes a connection pinged more than every 30 s while
/// it has no request: a client's health checks are its own business, here as on APNs.
///
/// One per HTTP/2 connection, right after its `NIOHTTP2Handler`, told of every stream by
/// ``EndStreamCoalescer/Installer``. Once it has sent the GOAWAY it keeps swift-nio-http2's errors
/// from Hummingbird's connection manager, which closes the whole connection on any error, answers
/// to earlier streams and all. They are the client's requests that crossed the GOAWAY: their
/// HEADERS are refused, and the DATA after them is taken for a frame on an idle stream.
final class ConnectionRetirement: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private var context: ChannelHandlerContext?
    private var open: Set<HTTP2StreamID> = []
    private var highest = HTTP2StreamID(0)
    private var lastStreamID: HTTP2StreamID?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .ping(_, ack: false) = unwrapInboundIn(data).payload { return }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if lastStreamID != nil, error is any NIOHTTP2Error { return }
        context.fireErrorCaught(error)
    }

    func opened(_ streamID: HTTP2StreamID) {
        open.insert(streamID)
        highest = max(highest, streamID)
    }

    func closed(_ streamID: HTTP2StreamID) {
        open.remove(streamID)
        closeIfDone()
    }

    /// Sends the GOAWAY (once): the last stream is the highest the connection has opened.
    func retire(reason: String) {
        guard lastStreamID == nil, let context else { return }
        lastStreamID = highest
        var debugData = context.channel.allocator.buffer(capacity: 32)
        debugData.writeString(#"{"reason":"\#(reason)"}"#)
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: highest, errorCode: .noError, opaqueData: debugData))),
            promise: nil)
        closeIfDone()
    }

    private func closeIfDone() {
        guard let lastStreamID, let context, !open.contains(where: { $0 <= lastStreamID }) else { return }
        // A stream counts as closed while its last frame is still on its way down the pipeline:
        // close once that write and its flush are done. And close the output only: requests the
        // client wrote before it read the GOAWAY may still arrive, and a socket closed with unread
        // bytes answers with a reset that makes the client's kernel drop the answers it has not
        // read yet. The client closes its side on the end of the stream; a client that does not
        // is closed on after a while.
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let context = bound.value
            context.flush()
            let closing = context.eventLoop.makePromise(of: Void.self)
            context.close(mode: .output, promise: closing)
            closing.futureResult.whenFailure { _ in bound.value.close(promise: nil) }
            context.eventLoop.scheduleTask(in: .seconds(10)) { bound.value.close(promise: nil) }
        }
    }
}

/// Drops every byte a connection receives, in front of TLS: the connection hangs, open.
final class Silence: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    func channelReadComplete(context: ChannelHandlerContext) {}
}

/// What a fault queued on an emulator (APNs or FCM) does to the request it falls on, and to that
/// request's connection.
public enum ConnectionFault: Sendable, Hashable {
    /// Answer only after this delay, then handle the request normally.
    case delay(Duration)
    /// Shut the connection down gracefully, as APNs does when it retires one: a GOAWAY naming the
    /// last stream opened so far, with `{"reason":"Shutdown"}`; the streams up to it (this one too)
    /// are answered, any opened later are refused unprocessed, and the connection closes once the
    /// last is answered. An HTTP/1.1 connection is closed after the answer instead.
    case goAway
    /// Close the connection at once, unanswered and undelivered: the client cannot tell whether
    /// what was in flight was accepted.
    case dropConnection
    /// Stop reading the connection, leaving it open: this request and any after it go unanswered,
    /// and so do PINGs, as when a peer or the network between hangs.
    case silence

    /// `"connection"` in a `POST /_emulator/faults` body: `goAway`, `drop` or `silence`.
    package init(hookName: String?) throws(HookRefusal) {
        switch hookName {
        case "goAway": self = .goAway
        case "drop": self = .dropConnection
        case "silence": self = .silence
        default: throw HookRefusal(400, #"connection is "goAway", "drop" or "silence""#)
        }
    }
}

/// The connection faults an emulator applies from a request's handler, for the FCM emulator too:
/// its streams get the same handlers as this emulator's.
package enum EmulatorConnectionFaults {
    /// An emulator's server on 127.0.0.1: HTTP/2 over TLS (HTTP/1.1 where ALPN asks for it),
    /// connections idle for ``APNsEmulator/idleTimeout`` closed, and every stream ready for the
    /// faults above.
    package static func application(
        router: Router<APNsEmulatorRequestContext>, tls: TLSConfiguration, serverName: String, port: Int,
        connectionCap: (any AvailableConnectionsDelegate)? = nil, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void
    ) throws -> some ApplicationProtocol {
        let idleTimeout = APNsEmulator.idleTimeout
        return Application(
            router: router,
            server: try .http2Upgrade(
                tlsConfiguration: tls,
                configuration: .init(
                    idleTimeout: idleTimeout,
                    streamConfiguration: .init(additionalChannelHandlers: [EndStreamCoalescer.Installer()], idleTimeout: TimeAmount(idleTimeout)))),
            configuration: ApplicationConfiguration(
                address: .hostname("127.0.0.1", port: port), serverName: serverName, availableConnectionsDelegate: connectionCap),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    /// A graceful GOAWAY naming the last stream opened so far, with `{"reason": …}` as its debug data.
    package static func retire(_ connection: any Channel, reason: String) {
        connection.eventLoop.execute {
            (try? connection.pipeline.syncOperations.handler(type: ConnectionRetirement.self))?.retire(reason: reason)
        }
    }

    /// Answers through `handle` after what `fault` does to the request's connection: a delay (cut
    /// short by a graceful shutdown), a dropped or silenced connection (no answer reaches the
    /// client), or a GOAWAY (the request, on a stream the GOAWAY still covers, is answered; over
    /// HTTP/1 the answer says `Connection: close`).
    package static func answer(
        after fault: ConnectionFault, context: APNsEmulatorRequestContext, _ handle: () async throws -> Response
    ) async throws -> Response {
        switch fault {
        case .delay(let delay):
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: delay) }
        case .dropConnection:
            try? await context.connection.close()
            return Response(status: .internalServerError)
        case .silence:
            await silence(context.connection)
            return Response(status: .internalServerError)
        case .goAway where context.isHTTP2:
            retire(context.connection, reason: "Shutdown")
        case .goAway:
            var response = try await handle()
            response.headers[.connection] = "close"
            return response
        }
        return try await handle()
    }

    /// Reads nothing more from the connection (no request, no PING) until it closes.
    package static func silence(_ connection: any Channel) async {
        try? await connection.eventLoop.submit {
            try connection.pipeline.syncOperations.addHandler(Silence(), position: .first)
        }.get()
        try? await connection.closeFuture.get()
    }
}
