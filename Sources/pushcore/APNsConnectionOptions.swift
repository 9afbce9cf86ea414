import APNs
import ArgumentParser
import Dispatch
import Logging
import NIOSSL
import PushAPNsTokens
import PushCore

/// How `send` and `channels` reach APNs: the signing key, the app, the environment and the limits.
struct APNsConnectionOptions: ParsableArguments {
    @OptionGroup var key: SigningKeyOptions
    @Option(help: "The app's bundle ID (apns-topic).") var topic: String
    @Flag(help: "Use the development environment (api.sandbox.push.apple.com).") var development = false
    @Option(help: "Use this endpoint instead, https://host[:port] (an emulator).") var endpoint: String?
    @Option(name: .customLong("ca-file"), help: "Trust the endpoint's certificate from this PEM file instead of the system's roots.")
    var caFile: String?
    @Option(name: .customLong("connect-timeout"), help: "Seconds to keep trying to connect (TCP and TLS).") var connectTimeout: Int = 10
    @Option(help: "Seconds to wait for each answer.") var timeout: Int = 10

    func validate() throws {
        if development && endpoint != nil { throw ValidationError("--development and --endpoint are exclusive") }
        if !(1...600).contains(connectTimeout) || !(1...600).contains(timeout) {
            throw ValidationError("--connect-timeout and --timeout take 1 to 600 seconds")
        }
    }

    /// A client for these options; nil after printing why the key or the certificate is unusable.
    /// Its log lines go to stderr: stdout holds the results.
    func makeClient(concurrency: Int = 100, connections: Int = 1) -> APNsClient? {
        guard let pem = key.readKeyFile() else { return nil }
        let signingKey: APNsSigningKey
        do throws(APNsTokenError) {
            signingKey = try APNsSigningKey(pemRepresentation: pem, keyID: key.keyID, teamID: key.teamID)
        } catch {
            Terminal.writeError(key.keyFile, code: error.code.rawValue, error.message)
            return nil
        }
        var trustRoots: [NIOSSLCertificate]?
        if let caFile {
            do {
                trustRoots = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                Terminal.writeError(caFile, code: "invalidCertificate", "not a readable PEM certificate")
                return nil
            }
        }
        let configuration = APNsClientConfiguration(
            endpoint: endpoint ?? (development ? APNsClientConfiguration.development : APNsClientConfiguration.production),
            authentication: .token(APNsTokenCache(key: signingKey)), trustRoots: trustRoots, maximumConcurrentRequests: concurrency,
            connections: connections, requestTimeout: .seconds(Int64(timeout)), connectTimeout: .seconds(Int64(connectTimeout)))
        return APNsClient(
            configuration: configuration, logger: Logger(label: "pushcore", factory: { label in StreamLogHandler.standardError(label: label) }))
    }
}

/// Runs `body` in a task and waits for it on this thread. The rest of `pushcore` is synchronous,
/// and exiting from inside an async `main` leaves its task's memory behind (LeakSanitizer
/// reports it); this thread is not one of the concurrency pool's, so waiting here blocks none.
func waitForTask(_ body: @escaping @Sendable () async throws -> Void) throws {
    final class Outcome: @unchecked Sendable {
        var error: (any Error)?
    }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            try await body()
        } catch {
            outcome.error = error
        }
        done.signal()
    }
    done.wait()
    if let error = outcome.error { throw error }
}
