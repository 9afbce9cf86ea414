import APNs
import Crypto
import Foundation
import NIOSSL
import PushAPNsTokens
import PushCore
import PushTestSupport
import Testing

@Suite("apns-emulator command")
struct APNsEmulatorCommandTests {
    @Test("It prints its address first, writes its certificate, and accepts what the client sends with the key it was given")
    func command() async throws {
        let signing = P256.Signing.PrivateKey()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-emulator-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let publicKeyPath = folder.appendingPathComponent("AuthKey.pub.pem").path
        let certificatePath = folder.appendingPathComponent("emulator.pem").path
        try signing.publicKey.pemRepresentation.write(toFile: publicKeyPath, atomically: true, encoding: .utf8)

        let (process, lines) = try await ServerProcess.start(
            PushCoreBinary.builtExecutable("apns-emulator"),
            [
                "--port", "0", "--team-id", "DEF123GHIJ", "--key-id", "ABC123DEFG", "--key-file", publicKeyPath, "--topic", "com.example.app",
                "--certificate-out", certificatePath,
            ], readingLines: 1)
        defer { process.terminate() }
        let first = lines.first ?? ""
        #expect(first.hasPrefix("listening on https://127.0.0.1:"))
        let endpoint = String(first.dropFirst("listening on ".count))

        let key = try APNsSigningKey(privateKey: signing, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let client = APNsClient(
            configuration: .init(
                endpoint: endpoint, authentication: .token(APNsTokenCache(key: key)),
                trustRoots: try NIOSSLCertificate.fromPEMFile(certificatePath), requestTimeout: patientTimeout, connectTimeout: patientTimeout))
        let payload = APNsPayload(aps: APNsAPS(alert: .text("Hi")))
        let results = try await client.send(
            payload, headers: APNsHeaders(for: payload, topic: "com.example.app"), to: [String(repeating: "ab", count: 32)])
        let wrongTopic = try await client.send(
            payload, headers: APNsHeaders(for: payload, topic: "com.example.other"), to: [String(repeating: "ab", count: 32)])
        try await client.shutdown()
        #expect(results[0].isDelivered)
        #expect(wrongTopic[0].outcome == .rejected(status: 400, reason: .topicDisallowed, unregisteredSinceMilliseconds: nil))
    }

    @Test("Usage errors exit 2", arguments: [["--team-id", "T"], ["--team-id", "T", "--key-id", "K", "--key-file", "/dev/null"]])
    func usage(arguments: [String]) throws {
        let result = try PushCoreBinary.run(arguments, executable: PushCoreBinary.builtExecutable("apns-emulator"))
        #expect(result.status == 2, "\(result.err)")
    }
}
