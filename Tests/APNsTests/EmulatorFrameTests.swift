import APNs
import APNsEmulator
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushAPNsTokens
import Synchronization
import Testing

/// The emulator's answers frame by frame, through a raw swift-nio-http2 client: what a client that
/// reads frames (pushy, apns2) sees.
@Suite("The APNs emulator, frame for frame", .serialized)
struct EmulatorFrameTests {
    /// The frames of one stream's answer, until END_STREAM.
    final class AnswerRecorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTP2Frame.FramePayload
        let frames = Mutex<[HTTP2Frame.FramePayload]>([])
        let done: EventLoopPromise<[HTTP2Frame.FramePayload]>

        init(done: EventLoopPromise<[HTTP2Frame.FramePayload]>) { self.done = done }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            let all = frames.withLock { frames in
                frames.append(frame)
                return frames
            }
            switch frame {
            case .headers(let headers) where headers.endStream: done.succeed(all)
            case .data(let data) where data.endStream: done.succeed(all)
            default: break
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) { done.fail(error) }
    }

    /// One POST to `/3/device/{device}` on a fresh connection; the frames of its answer.
    func answer(port: Int, identity: APNsEmulatorIdentity, device: String) async throws -> [HTTP2Frame.FramePayload] {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)])
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                let tlsHandler = Result { try NIOSSLClientHandler(context: context, serverHostname: nil) }
                return channel.eventLoop.makeCompletedFuture(tlsHandler).flatMap { channel.pipeline.addHandler($0) }.flatMap {
                    channel.configureHTTP2Pipeline(mode: .client, inboundStreamInitializer: nil).map { _ in }
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        defer { channel.close(promise: nil) }
        let multiplexer = try await channel.pipeline.handler(type: HTTP2StreamMultiplexer.self).get()
        let done = channel.eventLoop.makePromise(of: [HTTP2Frame.FramePayload].self)
        let token = try TestKey.privateKey.signing.token(issuedAt: SharedClock().clock.now())  // the emulator's time
        let streamCreated = channel.eventLoop.makePromise(of: Channel.self)
        multiplexer.createStreamChannel(promise: streamCreated) { stream in
            stream.pipeline.addHandler(AnswerRecorder(done: done))
        }
        let stream = try await streamCreated.futureResult.get()
        let headers: HPACKHeaders = [
            ":method": "POST", ":scheme": "https", ":authority": "127.0.0.1", ":path": "/3/device/\(device)",
            "authorization": "bearer \(token)", "apns-topic": TestKey.bundleID, "apns-push-type": "alert",
        ]
        stream.write(HTTP2Frame.FramePayload.headers(.init(headers: headers)), promise: nil)
        let body = ByteBuffer(string: #"{"aps":{"alert":"hi"}}"#)
        try await stream.writeAndFlush(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(body), endStream: true))).get()
        return try await done.futureResult.get()
    }

    @Test("A 200 is one HEADERS frame with END_STREAM; an error is HEADERS, then one DATA frame with the reason and END_STREAM")
    func answerFrames() async throws {
        let identity = try APNsEmulatorIdentity.generate()
        try await withEmulatorAndClient(clock: SharedClock(), identity: identity) { _, _, _, port in
            let accepted = try await answer(port: port, identity: identity, device: String(repeating: "ab", count: 32))
            try #require(accepted.count == 1, "\(accepted)")
            guard case .headers(let headers) = accepted[0] else { throw FrameMismatch(accepted) }
            #expect(headers.endStream && headers.headers[":status"] == ["200"] && headers.headers["apns-id"].first?.count == 36)

            let refused = try await answer(port: port, identity: identity, device: "zz")
            try #require(refused.count == 2, "\(refused)")
            guard case .headers(let head) = refused[0], case .data(let reason) = refused[1], case .byteBuffer(let bytes) = reason.data else {
                throw FrameMismatch(refused)
            }
            #expect(!head.endStream && head.headers[":status"] == ["400"])
            #expect(reason.endStream && String(buffer: bytes) == #"{"reason":"BadDeviceToken"}"#)
        }
    }

    struct FrameMismatch: Error, CustomStringConvertible {
        let frames: [HTTP2Frame.FramePayload]
        init(_ frames: [HTTP2Frame.FramePayload]) { self.frames = frames }
        var description: String { "unexpected frames: \(frames)" }
    }
}
