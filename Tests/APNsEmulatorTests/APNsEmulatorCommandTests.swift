import APNs
import APNsTestSupport
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PushAPNsTokens
import PushCore
import PushTestSupport
import Synchronization
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
        #expect(results[0].isDelivered)
        #expect(wrongTopic[0].outcome == .rejected(status: 400, reason: .topicDisallowed, unregisteredSinceMilliseconds: nil))

        // A request held by a long delay fault does not hold SIGTERM.
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificatePath))
        let http = patientHTTPClient(tls)
        var fault = HTTPClientRequest(url: endpoint + "/_emulator/faults")
        fault.method = .POST
        fault.body = .bytes(ByteBuffer(string: #"{"delayMilliseconds":300000}"#))
        let queued = try await http.execute(fault, timeout: patientTimeout).status
        try await http.shutdown()
        #expect(queued == .noContent)
        final class Answered: Sendable { let value = Mutex(false) }
        let answered = Answered()
        let held = Task {
            _ = try await client.send(payload, headers: APNsHeaders(for: payload, topic: "com.example.app"), to: [String(repeating: "cd", count: 32)])
            answered.value.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(answered.value.withLock { $0 } == false)  // the delay holds it
        let stopping = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        while process.isRunning && ContinuousClock.now - stopping < .seconds(30) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!process.isRunning, "SIGTERM waited for a 300 s delay")
        _ = try? await held.value
        try await client.shutdown()
    }

    @Test("Usage errors exit 2", arguments: [["--team-id", "T"], ["--team-id", "T", "--key-id", "K", "--key-file", "/dev/null"]])
    func usage(arguments: [String]) async throws {
        let result = try await PushCoreBinary.run(arguments, executable: PushCoreBinary.builtExecutable("apns-emulator"))
        #expect(result.status == 2, "\(result.err)")
    }
}
