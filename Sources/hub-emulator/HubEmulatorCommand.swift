import ArgumentParser
import Foundation
import HubEmulator
import Logging
import PushCore
import PushServerSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct HubEmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub-emulator",
        abstract: "A local Azure Notification Hubs namespace on 127.0.0.1, for tests and demos.",
        discussion: """
            Prints "listening on http://127.0.0.1:PORT" as its first line. Point clients at that
            address (an endpoint override); they sign tokens exactly as for Azure.

            Example:
              hub-emulator --port 0 --hub my-hub --connection-string "$PUSHCORE_CONNECTION_STRING"
            """
    )

    /// Usage errors exit 2, as `pushcore`'s do.
    static func main() async { await runExitingTwoOnUsageErrors() }

    @Option(help: "The port; 0 picks a free one.") var port: Int = 0
    @Option(help: "A hub name (repeatable, paired in order with --connection-string).") var hub: [String] = []
    @Option(name: .customLong("connection-string"), help: "The connection string of the hub named at the same position.")
    var connectionString: [String] = []

    func validate() throws {
        guard !hub.isEmpty, hub.count == connectionString.count else {
            throw ValidationError("give one --connection-string for each --hub")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    }

    func run() async throws {
        var hubs: [EmulatedHub] = []
        for (name, text) in zip(hub, connectionString) {
            do throws(SASError) {
                hubs.append(EmulatedHub(name: name, connection: try ConnectionString(text)))
            } catch {
                throw ValidationError("connection string for \(name): \(error)")
            }
        }
        // Logs go to stderr: stdout's first line is the address, for scripts to read.
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        let emulator = HubEmulator(hubs: hubs)
        try await emulator.run(port: port) { port in
            print("listening on http://127.0.0.1:\(port)")
            fflush(nil)  // every stream; stdout is a pipe when scripts read it
        }
    }
}
