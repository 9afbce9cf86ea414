import APNsEmulator
import APNsTestSupport
import FCM
import FCMEmulator
import Foundation
import Logging
import MetricsTestKit
import NIOCore
import NIOSSL
import PushFCM
import ServiceLifecycle
import Synchronization
import Testing
import _CryptoExtras

/// A service account with a fresh 2048-bit key, as Google's key files hold one.
func makeServiceAccount(project: String = "demo-project", tokenURI: String = FCMServiceAccount.defaultTokenURI) throws -> FCMServiceAccount {
    try makeServiceAccountAndKey(project: project, tokenURI: tokenURI).account
}

func makeServiceAccountAndKey(
    project: String = "demo-project", tokenURI: String = FCMServiceAccount.defaultTokenURI
) throws -> (account: FCMServiceAccount, privateKeyPEM: String) {
    let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    let fields: [String: String] = [
        "type": "service_account", "project_id": project, "private_key_id": "key-1", "private_key": key.pemRepresentation,
        "client_email": "pusher@\(project).iam.gserviceaccount.com", "token_uri": tokenURI,
    ]
    return (try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: fields))), key.pemRepresentation)
}

/// A registration token of FCM's shape, distinct per index.
func registrationToken(_ index: Int) -> String {
    // `_` is no base-36 digit: padding cannot make two indices one token.
    "d" + String(index, radix: 36).padding(toLength: 10, withPad: "_", startingAt: 0) + ":APA91b" + String(repeating: "Q", count: 140)
}

let message = FCMMessage(notification: FCMNotification(title: "Sunset", body: "at the pier"), data: ["richId": "42"])

/// Every log line at trace level, with its metadata, for tests of what the client says.
final class TraceLogs: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }

    func logger() -> Logger {
        var logger = Logger(label: "fcm") { _ in Handler(logs: self) }
        logger.logLevel = .trace
        return logger
    }

    private struct Handler: LogHandler {
        let logs: TraceLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            logs.lines.withLock { $0.append("\(event.message) \(all)") }
        }
    }
}

/// An emulator on a free port and a client of it that trusts its certificate, for `body`.
func withFCM<R: Sendable>(
    lifetime: Duration = .seconds(3600), account: FCMServiceAccount? = nil, logger: Logger = Logger(label: "fcm"),
    configure: @Sendable (inout FCMClientConfiguration) -> Void = { _ in },
    _ body: @Sendable (FCMEmulator, FCMClient) async throws -> R
) async throws -> R {
    let account = try account ?? makeServiceAccount()
    let identity = try APNsEmulatorIdentity.generate()
    let emulator = FCMEmulator(serviceAccount: account, accessTokenLifetime: lifetime)
    return try await withServer(label: "fcm-emulator", { try emulator.application(port: 0, identity: identity, onListening: $0) }) { port in
        // The token URI Google's file names, served by the emulator: the client asks the same origin.
        var local = account
        local.tokenURI = "https://127.0.0.1:\(port)/token"
        var configuration = FCMClientConfiguration(
            endpoint: "https://127.0.0.1:\(port)", serviceAccount: local,
            trustRoots: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)],
            requestTimeout: .seconds(60), connectTimeout: .seconds(60),
            retry: FCMRetryPolicy(baseDelay: .milliseconds(10)))
        configure(&configuration)
        let client = FCMClient(configuration: configuration, logger: logger)
        do {
            let result = try await body(emulator, client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

@Suite("FCM client against the emulator (HTTP/2, TLS, OAuth 2)", .serialized)
struct FCMClientTests {
    @Test("1,000 tokens through three GOAWAYs: each token answered once, nothing sent twice; the metrics count it")
    func goAways() async throws {
        let metrics = TestMetrics()
        try await withFCM(configure: { $0.metricsFactory = metrics }) { emulator, client in
            emulator.inject([.connection(.goAway)], after: 150)
            emulator.inject([.connection(.goAway)], after: 300)
            emulator.inject([.connection(.goAway)], after: 300)
            let tokens = (0..<1000).map(registrationToken)
            let results = try await client.send(message, to: tokens)
            #expect(results.map(\.target) == tokens)
            #expect(results.allSatisfy { $0.isDelivered }, "\(results.filter { !$0.isDelivered }.prefix(3))")
            #expect(results.allSatisfy { $0.attempts == 1 }, "a resend after a GOAWAY counted as an attempt")
            let delivered = emulator.deliveries.map(\.target)
            #expect(delivered.count == 1000 && Set(delivered) == Set(tokens))
            #expect(Set(results.compactMap(\.messageName)).count == 1000)
            let body = try #require(emulator.deliveries.first?.body)
            let document = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
            let sent = try #require(document?["message"] as? [String: Any])
            #expect(sent["token"] as? String != nil && (sent["data"] as? [String: String]) == ["richId": "42"])
            #expect(try metrics.expectCounter("fcm_sends_total", [("status", "200"), ("code", "none")]).totalValue == 1000)
            #expect(try metrics.expectCounter("fcm_goaways_total").totalValue == 3)
            #expect(try metrics.expectCounter("fcm_access_tokens_fetched_total").totalValue == 1)
            #expect(try metrics.expectMeter("fcm_connections_open").lastValue ?? 0 >= 1)
        }
    }

    @Test("A connection that stops answering is found by PING and replaced; what it held is reported, not resent")
    func silentConnection() async throws {
        try await withFCM(configure: {
            $0.pingInterval = .milliseconds(200); $0.pingTimeout = .seconds(8)
        }) { emulator, client in
            emulator.inject([.connection(.silence)], after: 100)
            let tokens = (0..<300).map(registrationToken)
            let results = try await client.send(message, to: tokens)
            let delivered = emulator.deliveries.map(\.target)
            #expect(delivered.count == Set(delivered).count, "a message was delivered twice")
            let inDoubt = results.filter { !$0.isDelivered }
            #expect(!inDoubt.isEmpty && inDoubt.count <= 100)
            #expect(inDoubt.allSatisfy { $0.outcome == .failed(.timeout, mayHaveBeenDelivered: true) }, "\(inDoubt.prefix(3))")
            #expect(Set(results.filter(\.isDelivered).map(\.target)) == Set(delivered))
            let after = try await client.send(message, to: [registrationToken(1000)])
            #expect(after[0].isDelivered)
        }
    }

    @Test("An access token that expires is renewed once for 50 sends waiting on it")
    func renewalUnderContention() async throws {
        // Long enough that a loaded machine (the sanitizer run) sends 50 within one token's life.
        try await withFCM(lifetime: .seconds(6)) { emulator, client in
            let first = try await client.send(message, to: [registrationToken(0)])
            #expect(first[0].isDelivered)
            let before = emulator.tokenRequestCount
            try await Task.sleep(for: .milliseconds(6200))
            let results = try await client.send(message, to: (1...50).map(registrationToken))
            #expect(results.allSatisfy { $0.isDelivered })
            #expect(emulator.tokenRequestCount == before + 1)
        }
    }

    @Test("A revoked access token: the 401 fetches one new token, and the sends go through")
    func revokedToken() async throws {
        try await withFCM { emulator, client in
            let first = try await client.send(message, to: [registrationToken(0)])
            #expect(first[0].isDelivered)
            emulator.revokeAccessTokens()
            let results = try await client.send(message, to: (1...20).map(registrationToken))
            #expect(results.allSatisfy { $0.isDelivered }, "\(results.filter { !$0.isDelivered }.prefix(2))")
            #expect(emulator.tokenRequestCount == 2)
            #expect(results.contains { $0.attempts == 2 })
        }
    }

    @Test("A burst of 429s with Retry-After is waited out; the budget and the deadline hold")
    func quotaBurst() async throws {
        try await withFCM { emulator, client in
            emulator.inject(Array(repeating: .status(429, retryAfter: "1"), count: 5))
            let started = ContinuousClock.now
            let results = try await client.send(message, to: (0..<5).map(registrationToken))
            #expect(results.allSatisfy { $0.isDelivered }, "\(results.prefix(2))")
            #expect(results.allSatisfy { $0.attempts == 2 })
            #expect(ContinuousClock.now - started >= .seconds(1))

            // A Retry-After past the policy's ceiling is not waited for: the refusal is the result.
            emulator.inject([.status(429, retryAfter: "3600")])
            let refused = try await client.send(message, to: [registrationToken(9)])
            #expect(refused[0].outcome == .rejected(status: 429, code: .quotaExceeded, message: "Quota exceeded for the project's sending rate."))
        }
    }

    @Test("UNREGISTERED and SENDER_ID_MISMATCH reach the token policy as deletions; the rest keep")
    func tokenPolicy() async throws {
        try await withFCM { emulator, client in
            emulator.setState(.unregistered, for: registrationToken(1))
            emulator.setState(.senderIDMismatch, for: registrationToken(2))
            let results = try await client.send(message, to: [registrationToken(0), registrationToken(1), registrationToken(2), "not a token"])
            let policy = FCMTokenPolicy()
            #expect(results.map { policy.action(for: $0) } == [.keep, .delete(.unregistered), .delete(.senderIDMismatch), .delete(.malformed)])
            #expect(results[1].status == 404 && results[2].status == 403)
            #expect(results[3].attempts == 0 && emulator.requestCount == 3)
        }
    }

    @Test("Topics and conditions are one request each; a message FCM would refuse is never sent")
    func topicsAndRules() async throws {
        try await withFCM { emulator, client in
            let topic = try await client.send(message, toTopic: "news")
            let condition = try await client.send(message, toCondition: "'news' in topics && 'eu' in topics")
            #expect(topic.isDelivered && condition.isDelivered)
            #expect(emulator.deliveries.map(\.target) == ["/topics/news", "'news' in topics && 'eu' in topics"])
            var reserved = message
            reserved.data = ["from": "x"]
            await #expect(throws: FCMClientError.self) { try await client.send(reserved, to: [registrationToken(0)]) }
            var large = message
            large.data = ["blob": String(repeating: "a", count: 5000)]
            let error = await #expect(throws: FCMClientError.self) { try await client.send(large, to: [registrationToken(0)]) }
            #expect(error?.code == .payloadTooLarge)
            await #expect(throws: FCMClientError.self) { try await client.send(message, toTopic: "/topics/news") }
            #expect(emulator.requestCount == 2)
        }
    }

    @Test("Neither the private key nor an access token reaches a log line at trace level")
    func secretsStayOutOfLogs() async throws {
        let logs = TraceLogs()
        let (account, privateKeyPEM) = try makeServiceAccountAndKey()
        // A line of the key's base64, well inside it.
        let keyLine = try #require(privateKeyPEM.split(separator: "\n").dropFirst(5).first)
        try await withFCM(account: account, logger: logs.logger()) { emulator, client in
            emulator.inject([.status(503, retryAfter: nil)])
            _ = try await client.send(message, to: (0..<5).map(registrationToken))
            let first = emulator.issuedAccessTokens
            emulator.revokeAccessTokens()
            _ = try await client.send(message, to: [registrationToken(7)])
            let issued = first + emulator.issuedAccessTokens
            #expect(issued.count == 2)
            let lines = logs.all
            #expect(!lines.isEmpty)
            for line in lines {
                #expect(!issued.contains { line.contains($0) }, "\(line)")
                #expect(!line.contains("PRIVATE KEY") && !line.contains(keyLine), "\(line)")
                #expect(!line.contains(registrationToken(7)), "\(line)")
            }
            #expect(!"\(account)".contains("PRIVATE") && !"\(account)".contains(keyLine))
        }
    }
}
