import APNsEmulator
import Crypto
import Logging
import NIOSSL
import PushAPNs
import PushAPNsTokens
import PushBackend
import ServiceLifecycle
import Synchronization

/// `serve --demo --delivery apns`'s APNs: an emulator on a free loopback port with a fresh
/// certificate, accepting the tokens of a signing key made for this run, as a service beside the
/// backend, and a twin of it for the other environment, which the backend asks before it prunes a
/// token the first calls bad. Their test hooks (`/_emulator/deliveries`,
/// `/_emulator/subscriptions`) are how a demo sees pushes and subscribes devices to channels; the
/// fault and device-state hooks are off, since anyone who reaches the ports could otherwise break
/// sends or have the backend prune registrations.
final class DemoAPNs: Sendable {
    static let defaultTopic = "com.example.pushcore.demo"

    let services: [any Service]
    let topic: String
    private let signingKey: APNsSigningKey
    private let certificate: NIOSSLCertificate
    /// The development emulator's port, then the production twin's.
    private let listening: AsyncStream<(Int, Int)>
    private let boundPort: BoundPort

    init(topic: String, logger: Logger) throws {
        self.topic = topic
        let key = P256.Signing.PrivateKey()
        signingKey = try APNsSigningKey(privateKey: key, keyID: "DEMOKEY001", teamID: "DEMOTEAM01")
        let verification = try APNsVerificationKey(publicKey: key.publicKey, keyID: "DEMOKEY001", teamID: "DEMOTEAM01")
        let identity = try APNsEmulatorIdentity.generate()
        certificate = try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)
        let development = APNsEmulator(keys: [verification], bundleIDs: [topic], isDevelopment: true, allowsFaultInjection: false)
        let production = APNsEmulator(keys: [verification], bundleIDs: [topic], isDevelopment: false, allowsFaultInjection: false)
        let (listening, continuation) = AsyncStream.makeStream(of: (Int, Int).self)
        self.listening = listening
        let boundPort = BoundPort()
        self.boundPort = boundPort
        let ports = Mutex<(development: Int?, production: Int?)>((nil, nil))
        @Sendable func bound(development: Int?, production: Int?) {
            let both = ports.withLock { ports -> (Int, Int)? in
                ports.development = development ?? ports.development
                ports.production = production ?? ports.production
                guard let development = ports.development, let production = ports.production else { return nil }
                return (development, production)
            }
            guard let both else { return }
            boundPort.value.withLock { $0 = both.0 }
            continuation.yield(both)
            continuation.finish()
        }
        services = [
            try development.application(port: 0, identity: identity, logger: logger, connectionCap: demoConnectionCap(logger)) {
                bound(development: $0, production: nil)
            },
            try production.application(port: 0, identity: identity, logger: logger, connectionCap: demoConnectionCap(logger)) {
                bound(development: nil, production: $0)
            },
        ]
    }

    /// The development emulator's port once both listen.
    var port: Int? { boundPort.value.withLock { $0 } }

    /// The APNs settings of the emulators, once both listen; the backend waits for them.
    func settings(liveActivity: APNsLiveActivitySchema?, checkDevice: String?) async throws -> APNsSettings {
        for await (development, production) in listening {
            return APNsSettings(
                signingKey: signingKey, topic: topic, endpoint: "https://127.0.0.1:\(development)", trustRoots: [certificate],
                liveActivity: liveActivity, otherEnvironmentEndpoint: "https://127.0.0.1:\(production)", checkDevice: checkDevice)
        }
        throw CancellationError()
    }
}
