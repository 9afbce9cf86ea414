import APNsEmulator
import Foundation
import NIOSSL
import PushBackend
import PushTestSupport
import Testing

/// `serve` over TLS: HTTP/2 and HTTP/1.1 by ALPN, as curl sees them, with the connection limits
/// kept on both.
@Suite("push-backend over TLS")
struct TLSTests {
    static let curlPath = ["/usr/bin/curl", "/bin/curl", "/usr/local/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A backend on sockets serving HTTPS with a fresh self-signed identity, whose certificate
    /// (PEM) is in the file `body` gets.
    func withHTTPSBackend(
        requestHeadTimeout: Duration = .seconds(10),
        _ body: @Sendable (_ backend: Backend, _ base: String, _ certificate: String) async throws -> Void
    ) async throws {
        let identity = try APNsEmulatorIdentity.generate()
        let certificateFile = try temporaryDirectory() + "/backend.pem"
        try identity.certificatePEM.write(toFile: certificateFile, atomically: true, encoding: .utf8)
        let tls = identity.serverTLSConfiguration()
        try await withBackend(
            overSockets: true,
            configure: {
                $0.tls = tls
                $0.server = ServerLimits(idleTimeout: .seconds(30), requestHeadTimeout: requestHeadTimeout)
            }
        ) { backend in
            try await body(backend, "https://127.0.0.1:\(backend.port)", certificateFile)
        }
    }

    /// `curl` with the backend's certificate trusted; each transfer's HTTP version, status and
    /// whether it opened a connection, one line each.
    func curl(_ arguments: [String], trusting certificate: String) async throws -> [String] {
        let curl = try #require(Self.curlPath)
        let result = try await PushCoreBinary.run(
            ["--silent", "--show-error", "--cacert", certificate, "--write-out", "%{http_version} %{http_code} %{num_connects}\n"] + arguments,
            executable: URL(fileURLWithPath: curl))
        #expect(result.status == 0, "curl: \(result.err)")
        return result.out.split(separator: "\n").map(String.init).filter { $0.first?.isNumber == true }
    }

    @Test("HTTP/2 and HTTP/1.1 by ALPN with curl: the probes, Basic authentication, a registration", .enabled(if: curlPath != nil))
    func alpn() async throws {
        try await withHTTPSBackend { _, base, certificate in
            #expect(try await curl(["--http2", "-o", "/dev/null", "\(base)/health"], trusting: certificate) == ["2 200 1"])
            #expect(try await curl(["--http1.1", "-o", "/dev/null", "\(base)/health"], trusting: certificate) == ["1.1 200 1"])
            // No ALPN at all: HTTP/1.1.
            #expect(try await curl(["--http1.1", "--no-alpn", "-o", "/dev/null", "\(base)/ready"], trusting: certificate) == ["1.1 200 1"])
            #expect(try await curl(["--http2", "-o", "/dev/null", "\(base)/api/notifications"], trusting: certificate) == ["2 401 1"])
            #expect(
                try await curl(["--http2", "-u", "alice:alice-pw", "-o", "/dev/null", "\(base)/api/notifications"], trusting: certificate)
                    == ["2 200 1"])
            let token = String(repeating: "7a", count: 32)
            #expect(
                try await curl(
                    [
                        "--http2", "-u", "alice:alice-pw", "-H", "Content-Type: application/json", "--data", #"{"deviceToken": "\#(token)"}"#,
                        "-o", "/dev/null", "\(base)/api/register",
                    ], trusting: certificate) == ["2 201 1"])
            // A client that does not trust the certificate gets no answer.
            let untrusted = try await PushCoreBinary.run(
                ["--silent", "\(base)/health"], executable: URL(fileURLWithPath: try #require(Self.curlPath)))
            #expect(untrusted.status == 60, "curl: \(untrusted.err)")
        }
    }

    @Test(
        "A connection outlives the request head timeout between requests, on HTTP/2 and HTTP/1.1; a handshake that stalls is closed at it",
        .enabled(if: curlPath != nil))
    func deadlines() async throws {
        try await withHTTPSBackend(requestHeadTimeout: .seconds(1)) { backend, base, certificate in
            // Two transfers two seconds apart on one connection: the second opens none.
            for version in ["--http2", "--http1.1"] {
                let lines = try await curl(
                    [version, "--rate", "30/m", "-o", "/dev/null", "-o", "/dev/null", "\(base)/health", "\(base)/health"], trusting: certificate)
                #expect(lines.map { $0.split(separator: " ").last } == ["1", "0"], "\(version): \(lines)")
            }
            // The first bytes of a ClientHello, and nothing more: closed at the head's deadline,
            // not the idle timeout's 30 seconds.
            let stalled = try RawConnection(port: backend.port)
            try stalled.send("\u{16}\u{03}\u{01}\u{00}")
            let started = ContinuousClock.now
            let closed = try await stalled.closed(within: .seconds(10)).closed
            #expect(closed && ContinuousClock.now - started < .seconds(5), "a stalled handshake was held open")
        }
    }

    @Test("Basic over plain HTTP on a non-loopback address is warned about at start; not over TLS, nor with Basic off")
    func plainHTTPWarning() async throws {
        let binary = PushCoreBinary.builtExecutable("push-backend")
        let directory = try temporaryDirectory()
        let warning = "serving Basic authentication over plain HTTP on a non-loopback address"
        // 192.0.2.1 (TEST-NET-1) is no address of this machine: serve warns, then cannot bind.
        let serve = ["serve", "--demo", "--host", "192.0.2.1", "--port", "0", "--data-dir", directory, "--log-level", "warning"]
        let plain = try await PushCoreBinary.run(serve, executable: binary)
        #expect(plain.status == 1 && plain.err.contains(warning), "\(plain.err)")
        let tls = try await PushCoreBinary.run(serve + ["--tls-certificate-out", directory + "/backend.pem"], executable: binary)
        #expect(tls.status == 1 && !tls.err.contains(warning) && tls.err.contains("Cannot assign requested address"), "\(tls.err)")
        // Without Basic there is no password to expose.
        let keysOnly = try await PushCoreBinary.run(serve + ["--no-basic-auth"], executable: binary)
        #expect(keysOnly.status == 1 && !keysOnly.err.contains(warning), "\(keysOnly.err)")
        for host in ["127.0.0.1", "127.3.4.5", "::1", "localhost"] { #expect(NetworkAddress.isLoopback(host), "\(host)") }
        for host in ["0.0.0.0", "10.0.0.1", "::", "::2", "example.com"] { #expect(!NetworkAddress.isLoopback(host), "\(host)") }
    }

    @Test("A certificate or key serve cannot read stops it with the file's name, and none of the key's bytes")
    func unreadableIdentity() async throws {
        let binary = PushCoreBinary.builtExecutable("push-backend")
        let directory = try temporaryDirectory()
        let identity = try APNsEmulatorIdentity.generate()
        try identity.certificatePEM.write(toFile: directory + "/backend.pem", atomically: true, encoding: .utf8)
        try "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n".write(
            toFile: directory + "/key.pem", atomically: true, encoding: .utf8)
        let serve = ["serve", "--demo", "--port", "0", "--data-dir", directory, "--log-level", "warning"]
        let badKey = try await PushCoreBinary.run(
            serve + ["--tls-certificate", directory + "/backend.pem", "--tls-key", directory + "/key.pem"], executable: binary)
        #expect(badKey.status == 1 && badKey.err.contains("key.pem is not a readable PEM private key"), "\(badKey.err)")
        #expect(!badKey.err.contains("c2VjcmV0"))
        let missing = try await PushCoreBinary.run(
            serve + ["--tls-certificate", directory + "/none.pem", "--tls-key", directory + "/key.pem"], executable: binary)
        #expect(missing.status == 1 && missing.err.contains("none.pem is not a readable PEM certificate"), "\(missing.err)")
    }
}
