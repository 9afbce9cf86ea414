import APNsEmulator
import Crypto
import Logging
import NIOSSL
import PushAPNs
import PushAPNsTokens
import PushBackend
import ServiceLifecycle

/// `serve --demo --delivery apns`'s APNs: an emulator on a free loopback port with a fresh
/// certificate, accepting the tokens of a signing key made for this run, as a service beside the
/// backend. Its test hooks (`/_emulator/deliveries`, `/_emulator/subscriptions`) are how a demo
/// sees pushes and subscribes devices to channels.
final class DemoAPNs: Sendable {
    static let defaultTopic = "com.example.pushcore.demo"

    let service: any Service
    let topic: String
    private let signingKey: APNsSigningKey
    private let certificate: NIOSSLCertificate
    private let listening: AsyncStream<Int>
    private let boundPort: BoundPort

    init(topic: String, logger: Logger) throws {
        self.topic = topic
        let key = P256.Signing.PrivateKey()
        signingKey = try APNsSigningKey(privateKey: key, keyID: "DEMOKEY001", teamID: "DEMOTEAM01")
        let verification = try APNsVerificationKey(publicKey: key.publicKey, keyID: "DEMOKEY001", teamID: "DEMOTEAM01")
        let identity = try APNsEmulatorIdentity.generate()
        certificate = try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)
        let emulator = APNsEmulator(keys: [verification], bundleIDs: [topic])
        let (listening, continuation) = AsyncStream.makeStream(of: Int.self)
        self.listening = listening
        let boundPort = BoundPort()
        self.boundPort = boundPort
        service = try emulator.application(port: 0, identity: identity, logger: logger) { port in
            boundPort.value.withLock { $0 = port }
            continuation.yield(port)
            continuation.finish()
        }
    }

    /// The emulator's port once it listens.
    var port: Int? { boundPort.value.withLock { $0 } }

    /// The APNs settings of the emulator, once it listens; the backend waits for them.
    func settings(liveActivity: APNsLiveActivitySchema?) async throws -> APNsSettings {
        for await port in listening {
            return APNsSettings(
                signingKey: signingKey, topic: topic, endpoint: "https://127.0.0.1:\(port)", trustRoots: [certificate], liveActivity: liveActivity)
        }
        throw CancellationError()
    }
}
