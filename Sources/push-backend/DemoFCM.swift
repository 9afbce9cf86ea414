import APNsEmulator
import FCM
import FCMEmulator
import Foundation
import Logging
import NIOSSL
import PushBackend
import ServiceLifecycle
import Synchronization
import _CryptoExtras

/// `serve --demo --delivery direct`'s FCM: the emulator on a free loopback port with a fresh
/// certificate, accepting the assertions of a service account made for this run, whose token URI
/// is the emulator's own. Its `/_emulator/deliveries` hook shows the Android pushes; the fault and
/// token-state hooks are off, since anyone who reaches the port could otherwise break sends or have
/// the backend prune registrations.
final class DemoFCM: Sendable {
    static let projectID = "pushcore-demo"

    let service: any Service
    private let account: FCMServiceAccount
    private let certificate: NIOSSLCertificate
    private let listening: AsyncStream<Int>
    private let boundPort: BoundPort

    init(logger: Logger) throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let fields = [
            "type": "service_account", "project_id": Self.projectID, "private_key_id": "demo-key", "private_key": key.pemRepresentation,
            "client_email": "push-backend@\(Self.projectID).iam.gserviceaccount.com", "token_uri": FCMServiceAccount.defaultTokenURI,
        ]
        account = try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: fields)))
        let identity = try APNsEmulatorIdentity.generate()
        certificate = try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)
        let emulator = FCMEmulator(serviceAccount: account, allowsFaultInjection: false)
        let (listening, continuation) = AsyncStream.makeStream(of: Int.self)
        let boundPort = BoundPort()
        self.listening = listening
        self.boundPort = boundPort
        service = try emulator.application(port: 0, identity: identity, logger: logger) { port in
            boundPort.value.withLock { $0 = port }
            continuation.yield(port)
            continuation.finish()
        }
    }

    /// The emulator's port once it listens.
    var port: Int? { boundPort.value.withLock { $0 } }

    /// The FCM settings of the emulator, once it listens; the backend waits for them.
    func settings() async throws -> FCMSettings {
        for await port in listening {
            var account = account
            account.tokenURI = "https://127.0.0.1:\(port)/token"
            return FCMSettings(serviceAccount: account, endpoint: "https://127.0.0.1:\(port)", trustRoots: [certificate])
        }
        throw CancellationError()
    }
}
