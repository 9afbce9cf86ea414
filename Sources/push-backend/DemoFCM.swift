import APNsEmulator
import FCM
import FCMEmulator
import Foundation
import Logging
import NIOSSL
import PushBackend
import ServiceLifecycle
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
    private let boundPort = BoundPort()

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
        service = try emulator.application(port: 0, identity: identity, logger: logger, onListening: boundPort.bound)
    }

    /// The emulator's port once it listens.
    var port: Int? { boundPort.port }

    /// The FCM settings of the emulator, once it listens; the backend waits for them.
    func settings() async throws -> FCMSettings {
        let port = try await boundPort.listening()
        var account = account
        account.tokenURI = "https://127.0.0.1:\(port)/token"
        return FCMSettings(serviceAccount: account, endpoint: "https://127.0.0.1:\(port)", trustRoots: [certificate])
    }
}
