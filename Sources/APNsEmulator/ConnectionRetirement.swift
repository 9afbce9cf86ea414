import NIOCore
import NIOHTTP2

/// Retires a connection as APNs does: a GOAWAY that names the last stream the emulator took and
/// carries `{"reason":…}`; the streams up to it are answered, any opened later are refused
/// unprocessed (`REFUSED_STREAM`, which NIOHTTP2 sends for streams above a GOAWAY it sent), and
/// the connection closes once the last of them is answered.
///
/// One per HTTP/2 connection, at the end of its pipeline, told of every stream by
/// ``EndStreamCoalescer/Installer``.
final class ConnectionRetirement: ChannelOutboundHandler, RemovableChannelHandler {
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
        // close once that write and its flush are done, or the answer would be lost.
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            bound.value.flush()
            bound.value.close(promise: nil)
        }
    }
}

/// Drops every byte a connection receives, in front of TLS: the connection hangs, open.
final class Silence: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    func channelReadComplete(context: ChannelHandlerContext) {}
}
