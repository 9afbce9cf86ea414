// What the APNs client, emulator and backend tests share: a key, a clock, an emulator with a client.
package import APNs
package import APNsEmulator
package import AsyncHTTPClient
import Crypto
import Logging
package import NIOCore
import NIOPosix
package import NIOSSL
package import PushAPNs
package import PushAPNsTokens
package import ServiceLifecycle
package import Synchronization

/// A clock the client's token cache and the emulator share, moved by the test.
package final class SharedClock: Sendable {
    package init() {}
    package let seconds = Atomic<Int64>(1_700_000_000)
    package var clock: APNsTokenClock { APNsTokenClock { [self] in seconds.load(ordering: .relaxed) } }
    package func advance(_ delta: Int64) { seconds.add(delta, ordering: .relaxed) }
}

package enum TestKey {
    package static let privateKey = P256Key.make()
    package static let keyID = "TESTKEY001"
    package static let teamID = "TEAM123456"
    package static let bundleID = "com.example.pushcore"
}

/// One P-256 key for the whole suite, made with the signing key's own type.
package enum P256Key {
    package static func make() -> APNsSigningKeyPair {
        let key = try! APNsSigningKey(privateKey: .init(), keyID: "TESTKEY001", teamID: "TEAM123456")
        return APNsSigningKeyPair(
            signing: key, verification: try! APNsVerificationKey(publicKey: key.publicKey, keyID: "TESTKEY001", teamID: "TEAM123456"))
    }
}

package struct APNsSigningKeyPair: Sendable {
    package let signing: APNsSigningKey
    package let verification: APNsVerificationKey
}

/// How long the tests' clients wait to connect and for each answer. These tests are about which
/// answer a request gets, not when: under ASan on two busy cores, some of 200 sends went unanswered
/// for over the 10 s default, and a request that timed out kept a token the test expected deleted.
/// Tests of timeouts set their own.
package let patientTimeout: TimeAmount = .seconds(60)

/// `patientTimeout` as the options of `pushcore send` and `pushcore channels`.
package let patientTimeoutOptions = ["--timeout", "--connect-timeout"].flatMap { [$0, "\(patientTimeout.nanoseconds / 1_000_000_000)"] }

/// An HTTP client for a test's own requests to an emulator, as patient as the APNs clients.
package func patientHTTPClient(_ tls: TLSConfiguration, httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic) -> HTTPClient {
    var configuration = HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: patientTimeout, read: patientTimeout))
    configuration.httpVersion = httpVersion
    return HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: configuration)
}

/// Runs the server `makeService` builds on a free port (it calls back with the port once
/// listening), gives `body` the port, and stops the server gracefully however `body` ends: the
/// emulators' tests all start theirs this way.
package func withServer<R: Sendable>(
    label: String, _ makeService: (_ onListening: @escaping @Sendable (Int) async -> Void) throws -> some Service,
    _ body: (Int) async throws -> R
) async throws -> R {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    // Stopped gracefully: cancelling a Hummingbird server whose accepted connections are still
    // being set up can trap inside NIO ("Deinited NIOAsyncWriter without calling finish()").
    let service = ServiceGroup(
        services: [try makeService { continuation.yield($0) }], logger: Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() }))
    return try await withThrowingTaskGroup(of: R?.self) { group in
        group.addTask {
            try await service.run()
            return nil
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        do {
            let result = try await body(port)
            await service.triggerGracefulShutdown()
            return result
        } catch {
            await service.triggerGracefulShutdown()
            throw error
        }
    }
}

/// An emulator on a free port with a fresh certificate, and a client that trusts it, for `body`.
package func withEmulatorAndClient<R: Sendable>(
    clock: SharedClock, refreshAge: Int64 = 50 * 60, retry: APNsRetryPolicy = APNsRetryPolicy(baseDelay: .milliseconds(10)),
    identity: APNsEmulatorIdentity? = nil, _ body: @Sendable (APNsEmulator, APNsClient, APNsTokenCache, Int) async throws -> R
) async throws -> R {
    let identity = try identity ?? APNsEmulatorIdentity.generate()
    let emulator = APNsEmulator(keys: [TestKey.privateKey.verification], bundleIDs: [TestKey.bundleID], clock: clock.clock)
    return try await withServer(label: "apns-emulator", { try emulator.application(port: 0, identity: identity, onListening: $0) }) { port in
        let cache = APNsTokenCache(key: TestKey.privateKey.signing, refreshAge: refreshAge, clock: clock.clock)
        let client = APNsClient(
            configuration: APNsClientConfiguration(
                endpoint: "https://127.0.0.1:\(port)", authentication: .token(cache),
                trustRoots: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)],
                requestTimeout: patientTimeout, connectTimeout: patientTimeout, retry: retry))
        do {
            let result = try await body(emulator, client, cache, port)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

package func deviceToken(_ index: Int) -> String {
    let hex = String(index, radix: 16)
    return String(repeating: "0", count: 64 - hex.count) + hex
}

package let alertHeaders = APNsHeaders(pushType: .alert, topic: TestKey.bundleID)
package let alertPayload = Array(#"{"aps":{"alert":{"title":"Hello","body":"From PushCore"}}}"#.utf8)
