import APNsEmulator
import ArgumentParser
import FCM
import FCMEmulator
import Foundation
import Logging
import PushServerSupport

@main
struct FCMEmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm-emulator",
        abstract: "A local, verifying FCM HTTP v1 API and OAuth 2 token endpoint on 127.0.0.1 (HTTP/2 and HTTP/1.1 over TLS).",
        discussion: EmulatorListenOptions.discussion + """

            Access tokens come from POST /token for assertions signed by the service account's key;
            point the account's token_uri at https://127.0.0.1:PORT/token, or keep Google's: either
            is taken as the assertion's audience.

            Example:
              fcm-emulator --port 0 --service-account service-account.json --certificate-out emulator.pem
            """
    )

    /// Usage errors exit 2, as `pushcore`'s do.
    static func main() async { await runExitingTwoOnUsageErrors() }

    @OptionGroup var listen: EmulatorListenOptions
    @Option(name: .customLong("project-id"), help: "The project messages are sent in; the service account's by default.")
    var projectID: String?
    @Option(name: .customLong("service-account"), help: "The service account's JSON key file, whose assertions are accepted.")
    var serviceAccount: String
    @Option(name: .customLong("token-lifetime"), help: "Seconds an access token lasts (expires_in).") var tokenLifetime: Int = 3600
    @Flag(help: "Serve no fault, token-state or revocation hook.") var demo = false
    @Flag(help: "Check the bearer token, then answer 200 to every send, parsing and recording nothing.") var benchmark = false

    func validate() throws {
        guard (1...86_400).contains(tokenLifetime) else { throw ValidationError("--token-lifetime must be 1 to 86400 seconds") }
    }

    func run() async throws {
        let account: FCMServiceAccount
        do {
            account = try FCMServiceAccount(contentsOfFile: serviceAccount)
        } catch {
            throw ValidationError("--service-account: \(error)")
        }
        let identity = try APNsEmulatorIdentity.generate()
        try listen.prepare(certificatePEM: identity.certificatePEM)
        let emulator = FCMEmulator(
            serviceAccount: account, projectID: projectID, accessTokenLifetime: .seconds(tokenLifetime), allowsFaultInjection: !demo,
            isBenchmark: benchmark)
        try await emulator.run(port: listen.port, identity: identity, onListening: EmulatorListenOptions.announce)
    }
}
