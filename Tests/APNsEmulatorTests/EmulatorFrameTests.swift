import APNs
import APNsEmulator
import APNsTestSupport
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
        let streamCreated = channel.eventLoop.makePromise(of: (any Channel).self)
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

    /// Every frame a connection receives, and its end.
    final class ConnectionRecorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTP2Frame
        let frames = Mutex<[HTTP2Frame]>([])

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            frames.withLock { $0.append(frame) }
        }
    }

    @Test("A GOAWAY names the last stream taken and carries {\"reason\":…}; the streams up to it are answered, then the connection closes")
    func goAwayFrames() async throws {
        let identity = try APNsEmulatorIdentity.generate()
        try await withEmulatorAndClient(clock: SharedClock(), identity: identity) { emulator, _, _, port in
            emulator.inject([.connection(.goAway)], after: 1)
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)])
            tls.applicationProtocols = ["h2"]
            let context = try NIOSSLContext(configuration: tls)
            let recorder = ConnectionRecorder()
            // Frames at the connection's level, no multiplexer: the client's own view of the wire.
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            try NIOSSLClientHandler(context: context, serverHostname: nil), NIOHTTP2Handler(mode: .client), recorder,
                        ])
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
            let token = try TestKey.privateKey.signing.token(issuedAt: SharedClock().clock.now())
            // Five requests in one flush: the second retires the connection.
            let streamIDs = [1, 3, 5, 7, 9].map { HTTP2StreamID($0) }
            try await channel.eventLoop.submit {
                for (index, streamID) in streamIDs.enumerated() {
                    let headers: HPACKHeaders = [
                        ":method": "POST", ":scheme": "https", ":authority": "127.0.0.1", ":path": "/3/device/\(deviceToken(index))",
                        "authorization": "bearer \(token)", "apns-topic": TestKey.bundleID, "apns-push-type": "alert",
                    ]
                    channel.write(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers))), promise: nil)
                    let body = ByteBuffer(string: #"{"aps":{"alert":"hi"}}"#)
                    channel.write(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
                }
                channel.flush()
            }.get()
            // The emulator closes the connection once the streams up to the last are answered.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await channel.closeFuture.get() }
                group.addTask {
                    try await Task.sleep(for: .seconds(30))
                    channel.close(promise: nil)
                    throw FrameMismatch([])
                }
                try await group.next()
                group.cancelAll()
            }
            let frames = recorder.frames.withLock { $0 }
            let goAways = frames.compactMap { frame -> (HTTP2StreamID, HTTP2ErrorCode, String)? in
                guard case .goAway(let last, let code, let data) = frame.payload else { return nil }
                return (last, code, data.map { String(buffer: $0) } ?? "")
            }
            try #require(goAways.count == 1, "\(frames)")
            let (last, code, debugData) = goAways[0]
            #expect(code == .noError && debugData == #"{"reason":"Shutdown"}"#)
            #expect(last >= 3 && last <= 9)
            // Every stream up to the last is answered 200 and delivered; none above it is either.
            let answered = Set(
                frames.compactMap { frame -> HTTP2StreamID? in
                    guard case .headers(let headers) = frame.payload, headers.headers[":status"] == ["200"] else { return nil }
                    return frame.streamID
                })
            #expect(answered == Set(streamIDs.filter { $0 <= last }))
            #expect(emulator.deliveries.count == answered.count)
        }
    }

    struct FrameMismatch: Error, CustomStringConvertible {
        let frames: [HTTP2Frame.FramePayload]
        init(_ frames: [HTTP2Frame.FramePayload]) { self.frames = frames }
        var description: String { "unexpected frames: \(frames)" }
    }
}
