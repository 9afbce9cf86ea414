import APNsEmulator
import ArgumentParser
import Foundation
import Logging
import NIOSSL
import PushAPNsTokens
import PushServerSupport

@main
struct APNsEmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-emulator",
        abstract: "A local, verifying APNs provider API on 127.0.0.1 (HTTP/2 over TLS), for tests and demos.",
        discussion: """
            Prints "listening on https://127.0.0.1:PORT" as its first line. Its certificate is made at
            start for 127.0.0.1 and localhost; --certificate-out writes it (PEM) for clients to trust.

            Example:
              apns-emulator --port 0 --team-id DEF123GHIJ --key-id ABC123DEFG --key-file AuthKey.pub.pem \\
                --topic com.example.app --certificate-out emulator.pem
            """
    )

    /// Usage errors exit 2, as `pushcore`'s do.
    static func main() async { await runExitingTwoOnUsageErrors() }

    @Option(help: "The port; 0 picks a free one.") var port: Int = 0
    @Option(name: .customLong("team-id"), help: "The team whose tokens are accepted.") var teamID: String
    @Option(name: .customLong("key-id"), help: "The signing key's id.") var keyID: String
    @Option(name: .customLong("key-file"), help: "The key's PEM: its public half, or the .p8 itself.") var keyFile: String
    @Option(help: "A bundle id the team may send to (repeatable).") var topic: [String] = []
    @Option(name: .customLong("certificate-out"), help: "Write the server's certificate (PEM) here.") var certificateOut: String?
    @Flag(help: "Answer as production does, without apns-unique-id.") var production = false
    @Option(
        name: .customLong("client-ca-file"),
        help: "Also take client certificates (certificate authentication) that chain to these PEM certificates.")
    var clientCAFile: String?
    @Flag(help: "Check each connection's provider token once, then answer 200 to every well-formed send, recording nothing.")
    var benchmark = false

    func validate() throws {
        guard !topic.isEmpty else { throw ValidationError("give at least one --topic") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    }

    func run() async throws {
        let key: APNsVerificationKey
        do {
            let pem = try String(contentsOfFile: keyFile, encoding: .utf8)
            key = try APNsVerificationKey(pemRepresentation: pem, keyID: keyID, teamID: teamID)
        } catch let error as APNsTokenError {
            throw ValidationError("\(keyFile): \(error)")
        } catch {
            throw ValidationError("\(keyFile): cannot be read")
        }
        let identity = try APNsEmulatorIdentity.generate()
        if let certificateOut { try identity.certificatePEM.write(toFile: certificateOut, atomically: true, encoding: .utf8) }
        // Logs go to stderr: stdout's first line is the address, for scripts to read.
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var clientRoots: [NIOSSLCertificate] = []
        if let clientCAFile {
            do {
                clientRoots = try NIOSSLCertificate.fromPEMFile(clientCAFile)
            } catch {
                throw ValidationError("\(clientCAFile): not a readable PEM certificate")
            }
        }
        let emulator = APNsEmulator(
            keys: [key], bundleIDs: topic, clientCertificateRoots: clientRoots, isDevelopment: !production, isBenchmark: benchmark)
        try await emulator.run(port: port, identity: identity) { port in
            print("listening on https://127.0.0.1:\(port)")
            fflush(nil)
        }
    }
}
