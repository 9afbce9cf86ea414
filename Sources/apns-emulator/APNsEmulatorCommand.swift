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
        discussion: EmulatorListenOptions.discussion + """


            Example:
              apns-emulator --port 0 --team-id DEF123GHIJ --key-id ABC123DEFG --key-file AuthKey.pub.pem \\
                --topic com.example.app --certificate-out emulator.pem
            """
    )

    /// Usage errors exit 2, as `pushcore`'s do.
    static func main() async { await runExitingTwoOnUsageErrors() }

    @OptionGroup var listen: EmulatorListenOptions
    @Option(name: .customLong("team-id"), help: "The team whose tokens are accepted.") var teamID: String
    @Option(name: .customLong("key-id"), help: "The signing key's id.") var keyID: String
    @Option(name: .customLong("key-file"), help: "The key's PEM: its public half, or the .p8 itself.") var keyFile: String
    @Option(help: "A bundle id the team may send to (repeatable).") var topic: [String] = []
    @Flag(help: "Answer as production does, without apns-unique-id.") var production = false
    @Option(
        name: .customLong("client-ca-file"),
        help: "Also take client certificates (certificate authentication) that chain to these PEM certificates.")
    var clientCAFile: String?
    @Flag(help: "Check each connection's provider token once, then answer 200 to every well-formed send, recording nothing.")
    var benchmark = false

    func validate() throws {
        guard !topic.isEmpty else { throw ValidationError("give at least one --topic") }
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
        try listen.prepare(certificatePEM: identity.certificatePEM)
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
        try await emulator.run(port: listen.port, identity: identity, onListening: EmulatorListenOptions.announce)
    }
}
