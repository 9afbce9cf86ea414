import APNs
import APNsEmulator
import APNsTestSupport
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PushAPNs
import PushTestSupport
import Testing

/// A certificate authority and a client identity signed by it, made with the `openssl` command as
/// Apple's would look: the bundle id as the subject's UID.
struct ClientIdentityFiles {
    let folder: URL
    var path: (String) -> String { { folder.appendingPathComponent($0).path } }

    static func make(password: String) throws -> ClientIdentityFiles {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let files = ClientIdentityFiles(folder: folder)
        for (prefix, subject) in [("ca", "/CN=PushCore Test CA"), ("other-ca", "/CN=Someone Else's CA")] {
            try openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", subject,
                "-keyout", files.path("\(prefix).key"), "-out", files.path("\(prefix).pem"),
            ])
        }
        for (prefix, ca) in [("client", "ca"), ("stranger", "other-ca")] {
            try openssl([
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-subj", "/UID=\(TestKey.bundleID)/CN=Apple Push Services: \(TestKey.bundleID)",
                "-keyout", files.path("\(prefix).key"), "-out", files.path("\(prefix).csr"),
            ])
            try openssl([
                "x509", "-req", "-in", files.path("\(prefix).csr"), "-CA", files.path("\(ca).pem"), "-CAkey", files.path("\(ca).key"),
                "-CAcreateserial", "-days", "1", "-out", files.path("\(prefix).pem"),
            ])
        }
        try openssl([
            "pkcs12", "-export", "-inkey", files.path("client.key"), "-in", files.path("client.pem"), "-passout", "pass:\(password)",
            "-out", files.path("client.p12"),
        ])
        return files
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.runOneAtATime()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw OpenSSLFailed(arguments: arguments.prefix(2).joined(separator: " ")) }
    }

    struct OpenSSLFailed: Error { let arguments: String }
}

@Suite("APNs certificate authentication against the emulator", .serialized)
struct CertificateAuthenticationTests {
    /// An emulator that trusts `files`' CA for client certificates, and its port and certificate.
    func withEmulator(
        _ files: ClientIdentityFiles, _ body: @Sendable (APNsEmulator, Int, NIOSSLCertificate) async throws -> Void
    ) async throws {
        let identity = try APNsEmulatorIdentity.generate()
        let emulator = APNsEmulator(
            keys: [TestKey.privateKey.verification], bundleIDs: [TestKey.bundleID],
            clientCertificateRoots: try NIOSSLCertificate.fromPEMFile(files.path("ca.pem")))
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await emulator.run(port: 0, identity: identity) { continuation.yield($0) } }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            defer { group.cancelAll() }
            try await body(emulator, port, try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem))
        }
    }

    func send(
        port: Int, trusting root: NIOSSLCertificate, authentication: APNsClientConfiguration.Authentication, device: String,
        connectTimeout: TimeAmount = patientTimeout
    ) async throws -> APNsSendResult {
        let client = APNsClient(
            configuration: APNsClientConfiguration(
                endpoint: "https://127.0.0.1:\(port)", authentication: authentication, trustRoots: [root], requestTimeout: patientTimeout,
                connectTimeout: connectTimeout,
                retry: APNsRetryPolicy(maximumAttempts: 1)))
        let results: [APNsSendResult]
        do {
            results = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: [device])
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return results[0]
    }

    /// A request with neither a client certificate nor a provider token, which the client cannot make.
    func sendWithoutCredential(port: Int, trusting root: NIOSSLCertificate, device: String) async throws -> (UInt, String) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([root])
        let http = patientHTTPClient(tls)
        do {
            var request = HTTPClientRequest(url: "https://127.0.0.1:\(port)/3/device/\(device)")
            request.method = .POST
            request.headers.add(name: "apns-topic", value: TestKey.bundleID)
            request.body = .bytes(alertPayload)
            let response = try await http.execute(request, timeout: patientTimeout)
            let body = try await response.body.collect(upTo: 4096)
            try await http.shutdown()
            return (response.status.code, String(buffer: body))
        } catch {
            try await http.shutdown()
            throw error
        }
    }

    @Test("a PEM identity and a PKCS#12 identity are accepted; a stranger's certificate and no credential are not")
    func identities() async throws {
        let files = try ClientIdentityFiles.make(password: "correct horse")
        defer { files.remove() }
        try await withEmulator(files) { emulator, port, root in
            let pem = APNsClientConfiguration.Authentication.certificate(
                chain: try NIOSSLCertificate.fromPEMFile(files.path("client.pem")),
                privateKey: try NIOSSLPrivateKey(file: files.path("client.key"), format: .pem))
            let byPEM = try await send(port: port, trusting: root, authentication: pem, device: deviceToken(1))
            #expect(byPEM.isDelivered)

            let p12 = try APNsClientConfiguration.Authentication.certificate(pkcs12Path: files.path("client.p12"), password: "correct horse")
            let byPKCS12 = try await send(port: port, trusting: root, authentication: p12, device: deviceToken(2))
            #expect(byPKCS12.isDelivered)

            let stranger = APNsClientConfiguration.Authentication.certificate(
                chain: try NIOSSLCertificate.fromPEMFile(files.path("stranger.pem")),
                privateKey: try NIOSSLPrivateKey(file: files.path("stranger.key"), format: .pem))
            let byStranger = try await send(
                port: port, trusting: root, authentication: stranger, device: deviceToken(3),
                // AsyncHTTPClient tries the refused handshake again until the connect timeout.
                connectTimeout: .seconds(2))
            // Refused in the handshake, so never written; AsyncHTTPClient keeps trying until the
            // connect timeout, and a handshake still in progress then (a loaded machine) is a timeout.
            #expect(
                byStranger.outcome == .failed(.tls, mayHaveBeenDelivered: false)
                    || byStranger.outcome == .failed(.timeout, mayHaveBeenDelivered: false), "\(byStranger)")

            let (status, reason) = try await sendWithoutCredential(port: port, trusting: root, device: deviceToken(4))
            #expect(status == 403 && reason.contains("MissingProviderToken"), "\(status) \(reason)")

            let deliveries = emulator.deliveries
            #expect(deliveries.map(\.deviceToken) == [deviceToken(1), deviceToken(2)])
            #expect(deliveries.allSatisfy { $0.tokenIssuedAt == nil })
        }
    }

    @Test("a wrong PKCS#12 password is a clear error that does not contain the password")
    func wrongPassword() throws {
        let files = try ClientIdentityFiles.make(password: "correct horse")
        defer { files.remove() }
        do {
            _ = try APNsClientConfiguration.Authentication.certificate(pkcs12Path: files.path("client.p12"), password: "battery staple")
            Issue.record("a wrong password was accepted")
        } catch {
            #expect(!String(describing: error).contains("battery"))
        }
    }
}
