import APNs
import APNsEmulator
import APNsTestSupport
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import MetricsTestKit
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PushAPNs
import PushAPNsTokens
import ServiceLifecycle
import Synchronization
import Testing

@Suite("APNs client against the emulator (HTTP/2, TLS)", .serialized)
struct APNsClientTests {
    @Test("1,000 devices: active, unregistered and malformed tokens each get their own result")
    func mixedDevices() async throws {
        let clock = SharedClock()
        try await withEmulatorAndClient(clock: clock) { emulator, client, cache, _ in
            var devices: [String] = []
            for index in 0..<1000 {
                switch index % 20 {
                case 7: devices.append("not-a-token-\(index)")
                case 13:
                    let token = deviceToken(index)
                    emulator.setState(.unregistered(sinceMilliseconds: 1_690_000_000_000 + Int64(index)), for: token)
                    devices.append(token)
                default: devices.append(deviceToken(index))
                }
            }
            let results = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: devices)
            #expect(results.count == 1000)
            var delivered = Set<String>()
            for (index, result) in results.enumerated() {
                #expect(result.deviceToken == devices[index])
                switch index % 20 {
                case 7: #expect(result.outcome == .rejected(status: 400, reason: .badDeviceToken, unregisteredSinceMilliseconds: nil))
                case 13:
                    #expect(
                        result.outcome
                            == .rejected(status: 410, reason: .unregistered, unregisteredSinceMilliseconds: 1_690_000_000_000 + Int64(index)))
                    #expect(result.unregisteredSince == Date(timeIntervalSince1970: 1_690_000_000 + Double(index) / 1000))
                default:
                    #expect(result.outcome == .delivered)
                    #expect(result.apnsID?.count == 36 && result.uniqueID?.count == 36)
                    delivered.insert(result.deviceToken)
                }
                #expect(result.attempts == 1)
            }
            #expect(delivered.count == 900)
            let deliveries = emulator.deliveries
            #expect(deliveries.count == 900)
            #expect(Set(deliveries.map(\.deviceToken)) == delivered)
            #expect(deliveries.allSatisfy { $0.payload == alertPayload && $0.pushType == .alert && $0.priority == 10 })
            #expect(cache.mintCount == 1)
        }
    }

    @Test("A new token on a connection within 20 minutes is refused; a new connection starts afresh")
    func tokenUpdateRate() async throws {
        let clock = SharedClock()
        let identity = try APNsEmulatorIdentity.generate()
        try await withEmulatorAndClient(clock: clock, identity: identity) { _, _, _, port in
            let trust = [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)]
            func client(_ cache: APNsTokenCache) -> APNsClient {
                APNsClient(
                    configuration: APNsClientConfiguration(
                        endpoint: "https://127.0.0.1:\(port)", authentication: .token(cache), trustRoots: trust,
                        requestTimeout: patientTimeout, connectTimeout: patientTimeout))
            }
            // A cache that re-mints after a minute, as a misbehaving provider would.
            let eager = APNsTokenCache(key: TestKey.privateKey.signing, refreshAge: 60, minimumMintInterval: 0, clock: clock.clock)
            let first = client(eager)
            let delivered = try await first.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(1)])
            clock.advance(120)
            let refused = try await first.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(2)])
            let second = client(APNsTokenCache(key: TestKey.privateKey.signing, clock: clock.clock))
            let elsewhere = try await second.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(3)])
            clock.advance(APNsEmulator.minimumTokenInterval)
            let later = try await first.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(4)])
            try await first.shutdown()
            try await second.shutdown()

            #expect(delivered[0].isDelivered)
            #expect(refused[0].outcome == .rejected(status: 429, reason: .tooManyProviderTokenUpdates, unregisteredSinceMilliseconds: nil))
            #expect(refused[0].attempts == 1)
            #expect(elsewhere[0].isDelivered)
            #expect(later[0].isDelivered)
        }
    }

    @Test("Connections open as requests come, up to the configured number, and each carries a fair share of the load")
    func connections() async throws {
        let identity = try APNsEmulatorIdentity.generate()
        try await withEmulatorAndClient(clock: SharedClock(), identity: identity) { emulator, _, cache, port in
            let metrics = TestMetrics()
            let client = APNsClient(
                configuration: APNsClientConfiguration(
                    endpoint: "https://127.0.0.1:\(port)", authentication: .token(cache),
                    trustRoots: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)], connections: 3,
                    requestTimeout: patientTimeout, connectTimeout: patientTimeout, metricsFactory: metrics))
            // Nothing is opened before the first request, which waits for the first connection;
            // the traffic then opens the others, one at a time, up to three.
            try await Task.sleep(for: .milliseconds(300))
            #expect((try? metrics.expectMeter("apns_connections_open"))?.values.isEmpty ?? true)
            let one = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(0)])
            #expect(one[0].isDelivered && emulator.deliveries.map(\.connection) == [1])
            emulator.reset()
            // Rounds of 1,000, 100 at a time: each connection takes a share.
            for round in 0..<3 {
                let results = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: (0..<1000).map(deviceToken))
                #expect(results.allSatisfy { $0.isDelivered })
                // The first round starts on one connection while the others open (slowly, under
                // the sanitizer): the shares are counted over the rounds after it.
                if round == 0 { emulator.reset() }
            }
            #expect(try metrics.expectMeter("apns_connections_open").values.max() == 3)
            try await client.shutdown()
            // A fair share: the busiest connection carries at most twice the quietest's load. Under
            // the sanitizer (a debug build) the event loops run at uneven speeds and a request goes
            // to the connection with the most free streams, so a slow one takes less (1,104 / 572 /
            // 324 seen): there each carries at least a tenth.
            let perConnection = Dictionary(grouping: emulator.deliveries, by: \.connection).mapValues(\.count)
            let (least, most) = (perConnection.values.min() ?? 0, perConnection.values.max() ?? 0)
            #if DEBUG
            #expect(perConnection.count == 3 && least * 10 >= emulator.deliveries.count, "\(perConnection)")
            #else
            #expect(perConnection.count == 3 && most <= 2 * least, "\(perConnection)")
            #endif
        }
    }

    @Test("A token that would change the request's path is not sent")
    func pathUnsafeTokens() async throws {
        try await withEmulatorAndClient(clock: SharedClock()) { emulator, client, _, _ in
            let devices = ["", "../../_emulator/deliveries", "ab/cd", "ab?x=1", "ab%2F", "ab cd", ".", String(repeating: "a", count: 513)]
            let results = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: devices)
            for result in results {
                #expect(result.outcome == .failed(.invalidDeviceToken, mayHaveBeenDelivered: false) && result.attempts == 0, "\(result)")
            }
            #expect(emulator.requestCount == 0)
        }
    }

    @Test("200 concurrent sends mint one token; 50 minutes later, one more")
    func tokenRefresh() async throws {
        let clock = SharedClock()
        try await withEmulatorAndClient(clock: clock) { emulator, client, cache, _ in
            let devices = (0..<200).map(deviceToken)
            let first = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: devices)
            #expect(first.allSatisfy { $0.isDelivered })
            #expect(cache.mintCount == 1)
            clock.advance(50 * 60)
            let second = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: devices)
            #expect(second.allSatisfy { $0.isDelivered })
            #expect(cache.mintCount == 2)
            let issuedAt = Set(emulator.deliveries.compactMap(\.tokenIssuedAt)).sorted()
            #expect(issuedAt == [Int64(1_700_000_000), Int64(1_700_003_000)])
        }
    }

    @Test("an expired token is re-minted once and the send succeeds")
    func expiredToken() async throws {
        let clock = SharedClock()
        // A cache that would keep its token for three hours: APNs has to tell it.
        try await withEmulatorAndClient(clock: clock, refreshAge: 3 * 3600) { emulator, client, cache, _ in
            _ = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(1)])
            clock.advance(61 * 60)
            let results = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: (0..<50).map(deviceToken))
            #expect(results.allSatisfy { $0.isDelivered })
            #expect(cache.mintCount == 2)
            #expect(results.map(\.attempts).max() == 2)
            let lastIssuedAt = emulator.deliveries.last?.tokenIssuedAt
            #expect(lastIssuedAt == Int64(1_700_003_660))
        }
    }

    @Test("429 with Retry-After is waited for; 400 is not retried")
    func retries() async throws {
        let clock = SharedClock()
        try await withEmulatorAndClient(clock: clock) { emulator, client, _, _ in
            emulator.inject([.status(429, reason: "TooManyRequests", retryAfter: "1")])
            let started = ContinuousClock.now
            let retried = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(1)])
            #expect(ContinuousClock.now - started >= .seconds(1))
            #expect(retried[0].isDelivered && retried[0].attempts == 2)

            // An HTTP-date two seconds ahead: a wait of one to two seconds, whole seconds being its grain.
            let date = httpDate(unixSeconds: Int64(Date().timeIntervalSince1970) + 2)
            emulator.inject([.status(503, reason: "ServiceUnavailable", retryAfter: date)])
            let dated = ContinuousClock.now
            let afterDate = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(5)])
            #expect(ContinuousClock.now - dated >= .milliseconds(900))
            #expect(afterDate[0].isDelivered && afterDate[0].attempts == 2)

            emulator.inject([
                .status(503, reason: "ServiceUnavailable", retryAfter: nil), .status(500, reason: "InternalServerError", retryAfter: nil),
            ])
            let twice = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(2)])
            #expect(twice[0].isDelivered && twice[0].attempts == 3)

            emulator.inject([.status(400, reason: "BadTopic", retryAfter: nil)])
            let refused = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(3)])
            #expect(refused[0].outcome == .rejected(status: 400, reason: .badTopic, unregisteredSinceMilliseconds: nil))
            #expect(refused[0].attempts == 1)

            emulator.inject(Array(repeating: .status(503, reason: "Shutdown", retryAfter: nil), count: 3))
            let exhausted = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(4)])
            #expect(exhausted[0].outcome == .rejected(status: 503, reason: .shutdown, unregisteredSinceMilliseconds: nil))
            #expect(exhausted[0].attempts == 3)
            #expect(emulator.deliveries.map(\.deviceToken) == [deviceToken(1), deviceToken(5), deviceToken(2)])
        }
    }

    @Test("GOAWAY mid-send: every device delivered once, the unprocessed streams sent again on a new connection")
    func goAwayMidSend() async throws {
        let clock = SharedClock()
        try await withEmulatorAndClient(clock: clock) { emulator, client, _, _ in
            // Three connections retire while up to 100 requests are in flight on each.
            emulator.inject([.connection(.goAway)], after: 150)
            emulator.inject([.connection(.goAway)], after: 300)
            emulator.inject([.connection(.goAway)], after: 300)
            let devices = (0..<1000).map(deviceToken)
            let results = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: devices)
            let delivered = emulator.deliveries.map(\.deviceToken)
            #expect(delivered.count == Set(delivered).count, "a notification was delivered twice")
            #expect(Set(delivered) == Set(devices))
            // The streams at or below each GOAWAY's last stream were answered; those above it were
            // not processed and went to the next connection. No device is left in doubt.
            let undelivered = results.filter { !$0.isDelivered }
            #expect(
                undelivered.isEmpty,
                "\(undelivered.prefix(3).map(\.outcome)); \(Set(undelivered.map(\.deviceToken)).intersection(delivered).count) of them delivered")
            #expect(Set(emulator.deliveries.map(\.connection)).count == 4)
            #expect(results.allSatisfy { $0.attempts == 1 })
        }
    }

    @Test("A cancelled send writes nothing more: the requests on streams are answered, the rest end unsent")
    func cancelledSend() async throws {
        try await withEmulatorAndClient(clock: SharedClock()) { emulator, client, _, _ in
            // The first 100 requests (all the send keeps in flight) are answered two seconds late.
            emulator.inject(Array(repeating: .connection(.delay(.seconds(2))), count: 100))
            let devices = (0..<1000).map(deviceToken)
            let send = Task { try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: devices) }
            while emulator.requestCount < 100 { try await Task.sleep(for: .milliseconds(10)) }
            send.cancel()
            let results = try await send.value
            #expect(results.count == 1000)
            #expect(results.prefix(100).allSatisfy { $0.isDelivered })
            #expect(results.dropFirst(100).allSatisfy { $0.outcome == .failed(.other("cancelled"), mayHaveBeenDelivered: false) })
            #expect(emulator.deliveries.count == 100 && emulator.requestCount == 100)
        }
    }

    @Test("a dropped connection: what was in flight may have been delivered and is not sent again")
    func droppedConnection() async throws {
        let clock = SharedClock()
        try await withEmulatorAndClient(clock: clock) { emulator, client, _, _ in
            _ = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(1)])
            emulator.inject([.connection(.dropConnection)])
            let dropped = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(2)])
            #expect(dropped[0].outcome == .failed(.connectionLost, mayHaveBeenDelivered: true))
            #expect(dropped[0].attempts == 1)
            // The next send opens a new connection.
            let next = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(3)])
            #expect(next[0].isDelivered)
            #expect(emulator.deliveries.map(\.deviceToken) == [deviceToken(1), deviceToken(3)])
            #expect(emulator.requestCount == 3)
        }
    }

    @Test("the emulator checks headers and payloads as APNs does")
    func emulatorChecks() async throws {
        let clock = SharedClock()
        try await withEmulatorAndClient(clock: clock) { emulator, client, _, _ in
            func reason(_ headers: APNsHeaders, _ payload: [UInt8] = alertPayload) async throws -> APNsRejectionReason? {
                let result = try await client.send(encodedPayload: payload, headers: headers, to: [deviceToken(9)])[0]
                if case .rejected(_, let reason, _) = result.outcome { return reason }
                return nil
            }
            let otherTopic = try await reason(APNsHeaders(pushType: .alert, topic: "com.example.other"))
            #expect(otherTopic == .topicDisallowed)
            let voipTopic = try await reason(APNsHeaders(pushType: .voip, topic: TestKey.bundleID + ".voip"))
            #expect(voipTopic == nil)
            let background = try await reason(
                APNsHeaders(pushType: .background, topic: TestKey.bundleID), Array(#"{"aps":{"content-available":1}}"#.utf8))
            #expect(background == nil)
            let notJSON = try await reason(alertHeaders, Array("{\"aps\":".utf8))
            #expect(notJSON == .other("BadPayload"))
            let large = Array(#"{"aps":{"alert":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 4090) + Array(#""}}"#.utf8)
            await #expect(throws: APNsClientError.self) {
                _ = try await client.send(encodedPayload: large, headers: alertHeaders, to: [deviceToken(1)])
            }
            let voip = APNsHeaders(pushType: .voip, topic: TestKey.bundleID + ".voip")
            let largeVoIP = try await reason(voip, large)
            #expect(largeVoIP == nil)
            #expect(emulator.deliveries.count == 3)
        }
    }

    @Test("HTTP/1.1 is refused with 505 before any fault applies; a connection fault then acts on the request's own HTTP/2 connection")
    func http1Refused() async throws {
        try await withEmulatorAndClient(clock: SharedClock()) { emulator, client, cache, port in
            emulator.inject([.connection(.dropConnection)])
            for index in 0..<3 {
                let status = try await sendRaw(port: port, token: try cache.token(), device: deviceToken(index), httpVersion: .http1Only)
                #expect(status == 505)
            }
            #expect(emulator.requestCount == 0 && emulator.deliveries.isEmpty)
            // The fault is still queued, for an HTTP/2 request: it drops that request's connection,
            // never the listener, and the next connection is served.
            let dropped = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(7)])
            #expect(dropped[0].outcome == .failed(.connectionLost, mayHaveBeenDelivered: true))
            let next = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(8)])
            #expect(next[0].isDelivered)
            #expect(try await sendRaw(port: port, token: try cache.token(), device: deviceToken(9)) == 200)
        }
    }

    @Test("A payload over the push type's limit, its length declared up front, is answered 413 with APNs' reason")
    func oversizePayload() async throws {
        try await withEmulatorAndClient(clock: SharedClock()) { emulator, _, cache, port in
            let large = Array(#"{"aps":{"alert":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 5000) + Array(#""}}"#.utf8)
            let (status, body) = try await sendRawReply(port: port, token: try cache.token(), device: deviceToken(1), payload: large)
            #expect(status == 413 && body == #"{"reason":"PayloadTooLarge"}"#, "\(body)")
            #expect(emulator.deliveries.isEmpty)
        }
    }

    @Test("HTTP/2 over TLS, and the certificate is trusted only when given")
    func transport() async throws {
        let clock = SharedClock()
        try await withEmulatorAndClient(clock: clock) { _, _, cache, port in
            let version = try await sendRaw(port: port, token: try cache.token(), device: deviceToken(1), returnVersion: true)
            #expect(version == 2)
            // A client without the emulator's certificate refuses the connection before sending anything.
            let untrusting = APNsClient(
                configuration: APNsClientConfiguration(
                    endpoint: "https://127.0.0.1:\(port)", authentication: .token(cache), connectTimeout: .seconds(1),
                    retry: APNsRetryPolicy(maximumAttempts: 1)))
            let results = try await untrusting.send(encodedPayload: alertPayload, headers: alertHeaders, to: [deviceToken(2)])
            try await untrusting.shutdown()
            guard case .failed(_, let mayHaveBeenDelivered) = results[0].outcome else {
                Issue.record("an untrusted certificate was accepted: \(results[0])")
                return
            }
            #expect(!mayHaveBeenDelivered)
        }
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
func httpDate(unixSeconds: Int64) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
}

/// One request outside the client: its status, or with `returnVersion` the HTTP major version.
func sendRaw(
    port: Int, token: String, device: String, returnVersion: Bool = false, httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic,
    payload: [UInt8] = alertPayload
) async throws -> Int {
    try await sendRawReply(port: port, token: token, device: device, returnVersion: returnVersion, httpVersion: httpVersion, payload: payload).0
}

/// ``sendRaw(port:token:device:returnVersion:httpVersion:payload:)`` with the answer's body.
func sendRawReply(
    port: Int, token: String, device: String, returnVersion: Bool = false, httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic,
    payload: [UInt8] = alertPayload
) async throws -> (Int, String) {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.certificateVerification = .none
    let http = patientHTTPClient(tls, httpVersion: httpVersion)
    var request = HTTPClientRequest(url: "https://127.0.0.1:\(port)/3/device/\(device)")
    request.method = .POST
    request.headers = ["authorization": "bearer \(token)", "apns-push-type": "alert", "apns-topic": TestKey.bundleID]
    request.body = .bytes(ByteBuffer(bytes: payload))
    // Shut down before it is released, whatever happens: AsyncHTTPClient traps on a client released running.
    let response: HTTPClientResponse
    let body: ByteBuffer
    do {
        response = try await http.execute(request, timeout: patientTimeout)
        body = try await response.body.collect(upTo: 1 << 16)
    } catch {
        try? await http.shutdown()
        throw error
    }
    try await http.shutdown()
    return (returnVersion ? Int(response.version.major) : Int(response.status.code), String(buffer: body))
}
