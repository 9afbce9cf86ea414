import NIOCore
import NIOHTTP2
import NIOHTTPTypesHTTP2

/// Ends each answer's stream on its last frame, as APNs does: a 200 is one HEADERS frame with
/// END_STREAM, an error HEADERS then one DATA frame with the JSON reason and END_STREAM. The HTTP
/// codec under Hummingbird ends every stream with an empty DATA frame of its own, which a client
/// that takes every DATA frame for a reason misreads.
///
/// It holds the last HEADERS or DATA frame written until the next write or flush; the codec's empty
/// END_STREAM frame, when it comes next, is folded into the held one.
final class EndStreamCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var held: (payload: HTTP2Frame.FramePayload, promise: EventLoopPromise<Void>?)?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let payload = unwrapOutboundIn(data)
        if case .data(let frame) = payload, frame.endStream, frame.data.readableBytes == 0, var ending = held {
            switch ending.payload {
            case .headers(var headers):
                headers.endStream = true
                ending.payload = .headers(headers)
            case .data(var data):
                data.endStream = true
                ending.payload = .data(data)
            default:
                break
            }
            held = nil
            var combined = ending.promise
            if let promise {
                if let combined { combined.futureResult.cascade(to: promise) } else { combined = promise }
            }
            context.write(wrapOutboundOut(ending.payload), promise: combined)
            return
        }
        writeHeld(context: context)
        switch payload {
        case .headers(let headers) where !headers.endStream: held = (payload, promise)
        case .data(let frame) where !frame.endStream: held = (payload, promise)
        default: context.write(data, promise: promise)
        }
    }

    func flush(context: ChannelHandlerContext) {
        writeHeld(context: context)
        context.flush()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        writeHeld(context: context)
    }

    private func writeHeld(context: ChannelHandlerContext) {
        guard let pending = held else { return }
        held = nil
        context.write(wrapOutboundOut(pending.payload), promise: pending.promise)
    }

    /// Put among Hummingbird's stream handlers (which follow its HTTP codec), it puts the
    /// coalescer in front of the codec on HTTP/2 streams, and tells the connection's
    /// ``ConnectionRetirement`` (added with its first stream) of the stream; it does nothing on
    /// HTTP/1 connections.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Any

        func handlerAdded(context: ChannelHandlerContext) {
            // Only a stream's pipeline holds the HTTP/2 codec (asking a socket for a stream option traps).
            guard (try? context.pipeline.syncOperations.handler(type: HTTP2FramePayloadToHTTPServerCodec.self)) != nil else { return }
            try? context.pipeline.syncOperations.addHandler(EndStreamCoalescer(), position: .first)
            guard let connection = context.channel.parent,
                let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
            else { return }
            let pipeline = connection.pipeline.syncOperations
            let existing = try? pipeline.handler(type: ConnectionRetirement.self)
            let retirement = existing ?? ConnectionRetirement()
            if existing == nil, let http2 = try? pipeline.handler(type: NIOHTTP2Handler.self) {
                try? pipeline.addHandler(retirement, position: .after(http2))
            }
            retirement.opened(streamID)
            let bound = NIOLoopBound(retirement, eventLoop: context.eventLoop)
            context.channel.closeFuture.whenComplete { _ in bound.value.closed(streamID) }
        }
    }
}
