import APNs
import APNsEmulator
import APNsTestSupport
import Foundation
import HTTP2Transport
import Metrics
import MetricsTestKit
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushAPNsTokens
import PushTestSupport
import Synchronization
import Testing

/// The client's own HTTP/2 transport: PING health checks, the CONNECT proxy, metrics.
@Suite("APNs transport: PING, proxy, metrics", .serialized)
struct APNsTransportTests {
    /// A client of the emulator `withEmulatorAndClient` started, with other settings.
    func client(
        port: Int, identity: APNsEmulatorIdentity, cache: APNsTokenCache, proxy: APNsProxy? = nil, pingInterval: TimeAmount = .seconds(60),
        pingTimeout: TimeAmount = .seconds(10), metrics: TestMetrics? = nil
    ) throws -> APNsClient {
        APNsClient(
            configuration: APNsClientConfiguration(
                endpoint: "https://127.0.0.1:\(port)", authentication: .token(cache),
                trustRoots: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)],
                requestTimeout: patientTimeout, connectTimeout: patientTimeout, pingInterval: pingInterval, pingTimeout: pingTimeout,
                proxy: proxy, metricsFactory: metrics))
    }

    @Test("A connection that stops answering is found by PING and replaced; the send completes, and no device is sent twice")
    func silentConnection() async throws {
        let identity = try APNsEmulatorIdentity.generate()
        try await withEmulatorAndClient(clock: SharedClock(), identity: identity) { emulator, _, cache, port in
            let metrics = TestMetrics()
            // A PING timeout long enough that a connection slowed by a loaded machine (the sanitizer
            // run beside the rest of the suite) is not taken for a dead one.
            let client = try client(
                port: port, identity: identity, cache: cache, pingInterval: .milliseconds(200), pingTimeout: .seconds(8),
                metrics: metrics)
            defer { Task { try? await client.shutdown() } }
            emulator.inject([.connection(.silence)], after: 100)
            let devices = (0..<300).map(deviceToken)
            let results = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: devices)
            let delivered = emulator.deliveries
            #expect(delivered.count == Set(delivered.map(\.deviceToken)).count, "a notification was delivered twice")
            // What the silent connection had been written is in doubt; everything else arrived on the next connection.
            let inDoubt = results.filter { !$0.isDelivered }
            #expect(inDoubt.allSatisfy { $0.outcome == .failed(.timeout, mayHaveBeenDelivered: true) }, "\(inDoubt.prefix(3))")
            #expect(!inDoubt.isEmpty && inDoubt.count <= 100)
            #expect(Set(results.filter(\.isDelivered).map(\.deviceToken)) == Set(delivered.map(\.deviceToken)))
            #expect(Set(delivered.map(\.connection)).count == 2)
            #expect(try metrics.expectCounter("apns_pings_failed_total").totalValue == 1)

            let after = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(1000)])
            #expect(after[0].isDelivered)
        }
    }

    @Test("An idle connection answers its PINGs and stays")
    func idlePings() async throws {
        let identity = try APNsEmulatorIdentity.generate()
        try await withEmulatorAndClient(clock: SharedClock(), identity: identity) { emulator, _, cache, port in
            let metrics = TestMetrics()
            let client = try client(
                port: port, identity: identity, cache: cache, pingInterval: .milliseconds(200), pingTimeout: .seconds(30), metrics: metrics)
            defer { Task { try? await client.shutdown() } }
            _ = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(1)])
            let deadline = ContinuousClock.now + .seconds(30)
            while try metrics.expectCounter("apns_pings_total").totalValue < 5, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try metrics.expectCounter("apns_pings_total").totalValue >= 5)
            let later = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(2)])
            #expect(later[0].isDelivered)
            #expect(Set(emulator.deliveries.map(\.connection)).count == 1)
            #expect(try metrics.expectCounter("apns_pings_failed_total").totalValue == 0)
            #expect(try metrics.expectMeter("apns_connections_open").lastValue == 1)
        }
    }

    @Test("Sends go through an HTTP CONNECT proxy (tinyproxy) with Basic credentials; wrong ones fail naming the proxy")
    func throughProxy() async throws {
        let proxy = try TinyProxy.start(username: "pusher", password: "s3cret-proxy-pw")
        defer { proxy.stop() }
        let identity = try APNsEmulatorIdentity.generate()
        try await withEmulatorAndClient(clock: SharedClock(), identity: identity) { emulator, _, cache, port in
            let good = try client(
                port: port, identity: identity, cache: cache,
                proxy: APNsProxy(host: "127.0.0.1", port: proxy.port, username: "pusher", password: "s3cret-proxy-pw"))
            let results = try await good.send(encodedPayload: alertPayload, headers: alertHeaders, to: (0..<50).map(deviceToken))
            try await good.shutdown()
            #expect(results.allSatisfy { $0.isDelivered })
            #expect(emulator.deliveries.count == 50)
            #expect(proxy.log().contains("CONNECT"))

            let requestsBefore = emulator.requestCount
            let wrong = try client(
                port: port, identity: identity, cache: cache,
                proxy: APNsProxy(host: "127.0.0.1", port: proxy.port, username: "pusher", password: "not-the-password"))
            let refused = try await wrong.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(1), deviceToken(2)])
            try await wrong.shutdown()
            for result in refused {
                guard case .failed(.proxy(let problem), mayHaveBeenDelivered: false) = result.outcome else {
                    Issue.record("not a proxy failure: \(result.outcome)")
                    continue
                }
                // tinyproxy answers wrong credentials 401, missing ones 407.
                #expect(problem.hasPrefix("proxy 127.0.0.1:\(proxy.port) refused the tunnel: 40"), "\(problem)")
                #expect(!problem.contains("not-the-password") && !"\(result)".contains("not-the-password"))
            }
            #expect(emulator.requestCount == requestsBefore)

            // A proxy that is not there is named too.
            let closedPort = Int(try TCPListener.unusedPort())
            let absent = try client(port: port, identity: identity, cache: cache, proxy: APNsProxy(host: "127.0.0.1", port: closedPort))
            let unreachable = try await absent.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(3)])
            try await absent.shutdown()
            guard case .failed(.proxy(let problem), mayHaveBeenDelivered: false) = unreachable[0].outcome else {
                Issue.record("not a proxy failure: \(unreachable[0].outcome)")
                return
            }
            #expect(problem.hasPrefix("proxy 127.0.0.1:\(closedPort) "), "\(problem)")
        }
    }

    @Test("A proxy's status line with control characters and a bare CR is refused unread; a reason and an apns-id print as one column each")
    func peerWordsPrintSafely() async throws {
        // A proxy whose refusal tries to clear the screen, retitle the window and add a line.
        let answer = "HTTP/1.1 407 Denied\u{1b}[2J\u{1b}]0;owned\u{07}\rforged: delivered\r\nX: y\r\n\r\n"
        let proxy = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.pipeline.addHandler(CannedAnswer(answer: answer)) }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { proxy.close(promise: nil) }
        let identity = try APNsEmulatorIdentity.generate()
        try await withEmulatorAndClient(clock: SharedClock(), identity: identity) { _, _, cache, port in
            let refused = try client(
                port: port, identity: identity, cache: cache, proxy: APNsProxy(host: "127.0.0.1", port: proxy.localAddress!.port!))
            let results = try await refused.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(1)])
            try await refused.shutdown()
            guard case .failed(.proxy(let problem), mayHaveBeenDelivered: false) = results[0].outcome else {
                Issue.record("not a proxy failure: \(results[0].outcome)")
                return
            }
            // HTTP/1.1's parser refuses the status line outright: none of its words reach the message.
            #expect(problem.hasSuffix("did not answer CONNECT in HTTP/1.1") && !problem.contains("owned"), "\(problem)")
            #expect(!results[0].summary.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 0x20 } == true }))
            #expect(results[0].summary.hasPrefix("- proxy-127.0.0.1:") && !results[0].summary.contains("forged"))
        }

        // A server's reason and id with control characters and spaces: one column each, escaped.
        let rejected = APNsSendResult(
            deviceToken: "aa",
            outcome: .rejected(status: 400, reason: APNsRejectionReason("Bad\nDevice \u{1b}[31mToken"), unregisteredSinceMilliseconds: nil),
            apnsID: "id\r\n200 - forged", uniqueID: nil, attempts: 1)
        #expect(rejected.summary == #"400 Bad\u{a}Device-\u{1b}[31mToken id\u{d}\u{a}200---forged"#)
    }

    @Test("A server whose SETTINGS allow no stream: each request fails timeout at its deadline, never written, and its connection is replaced")
    func serverAllowingNoStreams() async throws {
        let identity = try APNsEmulatorIdentity.generate()
        var serverTLS = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)))
        serverTLS.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: serverTLS)
        let accepted = Mutex(0)
        // Legal HTTP/2: MAX_CONCURRENT_STREAMS 0, PINGs answered (by NIOHTTP2Handler itself).
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                accepted.withLock { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        NIOSSLServerHandler(context: context),
                        NIOHTTP2Handler(mode: .server, initialSettings: [HTTP2Setting(parameter: .maxConcurrentStreams, value: 0)]),
                    ])
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { server.close(promise: nil) }
        let client = APNsClient(
            configuration: APNsClientConfiguration(
                endpoint: "https://127.0.0.1:\(server.localAddress!.port!)",
                authentication: .token(APNsTokenCache(key: TestKey.privateKey.signing, clock: SharedClock().clock)),
                trustRoots: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)],
                requestTimeout: .seconds(1), connectTimeout: patientTimeout, pingInterval: .milliseconds(200)))
        // Raced against a limit far past the deadline: before, the send never returned.
        let results = try await withThrowingTaskGroup(of: [APNsSendResult]?.self) { group in
            group.addTask { try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(1), deviceToken(2)]) }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = try await group.next() ?? nil
            // A send still waiting ends once the client shuts down, so that the group can end.
            if first == nil { try await client.shutdown() }
            group.cancelAll()
            return first
        }
        let first = try #require(results, "the send was still waiting for a stream after 60 s")
        for result in first {
            #expect(result.outcome == .failed(.timeout, mayHaveBeenDelivered: false), "\(result.outcome)")
        }
        // The connection that offered nothing is closed once its requests expire; a later send opens
        // another. On a loaded machine (the sanitizer run) the first connection may still be in its
        // handshake at the one-second deadline, and then only the next expiry closes it: so send
        // again, each failing the same way, until the server has accepted a second connection.
        for _ in 0..<10 where accepted.withLock({ $0 }) < 2 {
            let again = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(3)])
            #expect(again[0].outcome == .failed(.timeout, mayHaveBeenDelivered: false))
        }
        #expect(accepted.withLock { $0 } >= 2)
        try await client.shutdown()
    }

    @Test(
        "HTTPS_PROXY and NO_PROXY are read as curl reads them (ports, addresses, CIDR ranges); a bad value is an error; the password is never shown")
    func proxyFromEnvironment() throws {
        let host = "https://api.push.apple.com"
        #expect(try APNsProxy.fromEnvironment(for: host, environment: [:]) == nil)
        let proxy = try APNsProxy.fromEnvironment(for: host, environment: ["HTTPS_PROXY": "http://user:p%40ss@proxy.internal:3128"])
        #expect(proxy == APNsProxy(host: "proxy.internal", port: 3128, username: "user", password: "p@ss"))
        #expect(!"\(proxy!)".contains("p@ss") && "\(proxy!)" == "proxy.internal:3128 (with credentials)")
        #expect(try APNsProxy.fromEnvironment(for: host, environment: ["https_proxy": "http://proxy.internal"])?.port == 80)
        for exempt in ["*", "apple.com", ".push.apple.com", "example.org, api.push.apple.com"] {
            #expect(try APNsProxy.fromEnvironment(for: host, environment: ["HTTPS_PROXY": "http://p:1", "NO_PROXY": exempt]) == nil)
        }
        #expect(try APNsProxy.fromEnvironment(for: host, environment: ["HTTPS_PROXY": "http://p:1", "NO_PROXY": "le.com"]) != nil)
        // Ports, addresses and CIDR ranges, as curl reads them; an empty variable hides nothing.
        let local = "https://127.0.0.1:8443"
        for (endpoint, entry, exempt) in [
            (host, "api.push.apple.com:443", true), (host, "api.push.apple.com:2197", false), (host, ".apple.com:443", true),
            (local, "127.0.0.0/8", true), (local, "10.0.0.0/8", false), (local, "127.0.0.1", true), (local, "127.0.0.1:8443", true),
            (local, "127.0.0.1:443", false), ("https://[::1]:8443", "::1/128", true), ("https://[::1]:8443", "[::1]:8443", true),
            ("https://[::1]:8443", "::1", true), ("https://[::1]:8443", "fe80::/10", false), (local, "127.0.0.0/33", false),
            (host, "17.0.0.0/8", false),
        ] {
            let proxy = try APNsProxy.fromEnvironment(for: endpoint, environment: ["HTTPS_PROXY": "http://p:1", "NO_PROXY": entry])
            #expect((proxy == nil) == exempt, "\(endpoint) with NO_PROXY=\(entry)")
        }
        #expect(try APNsProxy.fromEnvironment(for: host, environment: ["HTTPS_PROXY": "http://p:1", "NO_PROXY": "", "no_proxy": "*"]) == nil)
        #expect(try APNsProxy.fromEnvironment(for: host, environment: ["HTTPS_PROXY": "", "https_proxy": "http://p:1"])?.host == "p")
        for bad in ["socks5://p:1080", "http://", "http://p:0", "http://p:1/path", "p:1"] {
            #expect(throws: APNsProxyError.self, "\(bad)") { try APNsProxy.fromEnvironment(for: host, environment: ["HTTPS_PROXY": bad]) }
        }
    }

    @Test("Metrics: results by status and Apple's reason, retries, latency, connections, tokens minted")
    func metrics() async throws {
        let identity = try APNsEmulatorIdentity.generate()
        try await withEmulatorAndClient(clock: SharedClock(), identity: identity) { emulator, _, cache, port in
            let metrics = TestMetrics()
            let client = try client(port: port, identity: identity, cache: cache, metrics: metrics)
            emulator.setState(.unregistered(sinceMilliseconds: 1_700_000_000_000), for: deviceToken(7))
            emulator.inject([.status(429, reason: "TooManyRequests", retryAfter: nil)], after: 3)
            let results = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: (0..<10).map(deviceToken))
            try await client.shutdown()
            #expect(results.count(where: \.isDelivered) == 9)
            #expect(try metrics.expectCounter("apns_sends_total", [("status", "200"), ("reason", "none")]).totalValue == 9)
            #expect(try metrics.expectCounter("apns_sends_total", [("status", "410"), ("reason", "Unregistered")]).totalValue == 1)
            #expect(try metrics.expectCounter("apns_retries_total").totalValue == 1)
            #expect(try metrics.expectCounter("apns_provider_tokens_minted_total").totalValue == 1)
            #expect(try metrics.expectTimer("apns_request_duration_seconds").values.count == 11)
            #expect(try metrics.expectMeter("apns_connections_open").lastValue == 0)
        }
    }
}

/// Debian's tinyproxy (installed by `make deps`) in the foreground, on a free port, with Basic
/// credentials, allowing CONNECT to any port.
struct TinyProxy {
    let process: Process
    let port: Int
    let folder: URL

    static func start(username: String, password: String) throws -> TinyProxy {
        let candidates = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/opt/homebrew/bin/tinyproxy", "/usr/local/bin/tinyproxy"]
        guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TinyProxyMissing()
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tinyproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for _ in 0..<5 {
            let socket = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
            let port = socket.localAddress!.port!
            try socket.close().wait()
            let configuration = """
                Port \(port)
                Listen 127.0.0.1
                Timeout 60
                MaxClients 100
                Allow 127.0.0.1
                BasicAuth \(username) \(password)
                LogLevel Connect
                LogFile "\(folder.path)/tinyproxy.log"

                """
            try configuration.write(to: folder.appendingPathComponent("tinyproxy.conf"), atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["-d", "-c", folder.appendingPathComponent("tinyproxy.conf").path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.runOneAtATime()
            // Listening once a connection is taken; a port someone else took meanwhile ends the process.
            for _ in 0..<100 where process.isRunning {
                if (try? ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).wait())
                    .map({ $0.close(promise: nil) }) != nil
                {
                    return TinyProxy(process: process, port: port, folder: folder)
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            process.terminate()
            process.waitUntilExit()
        }
        throw TinyProxyMissing()
    }

    func log() -> String {
        (try? String(contentsOf: folder.appendingPathComponent("tinyproxy.log"), encoding: .utf8)) ?? ""
    }

    func stop() {
        // SIGTERM has tinyproxy wait out its open tunnels.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }

    struct TinyProxyMissing: Error, CustomStringConvertible {
        var description: String { "tinyproxy did not start (make deps installs it)" }
    }
}

/// Answers the first bytes a client sends with `answer`, then closes.
private final class CannedAnswer: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let answer: String

    init(answer: String) { self.answer = answer }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer))).whenComplete { _ in loopBound.value.close(promise: nil) }
    }
}
