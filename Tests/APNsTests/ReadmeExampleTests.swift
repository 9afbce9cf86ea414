import APNs
import APNsEmulator
import APNsTestSupport
import Crypto
import NIOSSL
import PushAPNsTokens
import PushCore
import Testing

@Suite("README APNs example")
struct ReadmeExampleTests {
    /// The README's lines, with the emulator's address and certificate in place of APNs' and the
    /// system clock on both sides.
    @Test("sends to APNs in a few lines")
    func sendToAPNs() async throws {
        let signing = P256.Signing.PrivateKey()
        let p8Text = signing.pemRepresentation
        let identity = try APNsEmulatorIdentity.generate()
        let emulator = APNsEmulator(
            keys: [try APNsVerificationKey(publicKey: signing.publicKey, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")], bundleIDs: ["com.example.app"])
        let unregistered = String(repeating: "0f0e0d0c", count: 8)
        emulator.setState(.unregistered(sinceMilliseconds: 1_700_000_000_000), for: unregistered)
        let deviceTokens = [String(repeating: "ab", count: 32), unregistered]
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await emulator.run(port: 0, identity: identity) { continuation.yield($0) } }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let endpoint = "https://127.0.0.1:\(port)"  // APNsClientConfiguration.development in the README
            let roots = [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)]

            let key = try APNsSigningKey(pemRepresentation: p8Text, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
            let apns = APNsClient(configuration: .init(endpoint: endpoint, authentication: .token(APNsTokenCache(key: key)), trustRoots: roots))
            let payload = APNsPayload(aps: APNsAPS(alert: .fields(APNsAlertFields(title: "Hello", body: "From PushCore"))))
            let results = try await apns.send(payload, headers: APNsHeaders(for: payload, topic: "com.example.app"), to: deviceTokens)
            var printed: [String] = []
            for result in results where !result.isDelivered { printed.append(String(describing: result)) }

            try await apns.shutdown()
            group.cancelAll()
            #expect(results[0].isDelivered)
            #expect(printed.count == 1)
            #expect(printed.first?.hasPrefix("0f0e0d0c…(64) 410 Unregistered ") == true)
            #expect(emulator.deliveries.map(\.payload) == [try payload.encoded()])
        }
    }
}
