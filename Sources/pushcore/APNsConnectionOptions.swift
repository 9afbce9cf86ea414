import APNs
import ArgumentParser
import Dispatch
import HTTP2Transport
import Logging
import NIOCore
import NIOSSL
import PushAPNsTokens
import PushCore

/// How `send` and `channels` reach APNs: the signing key or a client certificate, the app, the
/// environment and the limits.
struct APNsConnectionOptions: ParsableArguments {
    @OptionGroup var key: SigningKeyOptions
    @Option(
        help: "A client certificate chain (PEM) to authenticate with instead of a signing key; its key in --private-key.")
    var certificate: String?
    @Option(name: .customLong("private-key"), help: "The client certificate's private key (PEM).") var privateKey: String?
    @Option(help: "A client identity in a PKCS#12 (.p12) file instead; its password in APNS_PKCS12_PASSWORD.") var pkcs12: String?
    @Option(name: .customLong("topic"), help: "The app's bundle ID (apns-topic); or APNS_TOPIC. With send --fcm, the FCM topic to send to.")
    var topicFlag: String?
    @Flag(help: "Use the development environment (api.sandbox.push.apple.com).") var development = false
    @Option(help: "Use this endpoint instead, https://host[:port] (an emulator).") var endpoint: String?
    @Option(name: .customLong("ca-file"), help: "Trust the endpoint's certificate from this PEM file instead of the system's roots.")
    var caFile: String?
    @Option(name: .customLong("connect-timeout"), help: "Seconds to keep trying to connect (TCP and TLS).") var connectTimeout: Int = 10
    @Option(help: "Seconds to wait for each answer.") var timeout: Int = 10
    @Option(help: "Tunnel through this HTTP proxy, http://[user:password@]host[:port]; or HTTPS_PROXY (NO_PROXY exempts hosts).")
    var proxy: String?

    /// The topic, from its flag or the environment.
    var topic: String { topicFlag ?? environment("APNS_TOPIC") ?? "" }

    /// What every command checks; the credentials are each command's to ask for
    /// (``requireAPNsCredentials()``): `send --fcm` reaches FCM with these options and none of APNs'.
    func validate() throws {
        if development && endpoint != nil { throw ValidationError("--development and --endpoint are exclusive") }
        if !(1...600).contains(connectTimeout) || !(1...600).contains(timeout) {
            throw ValidationError("--connect-timeout and --timeout take 1 to 600 seconds")
        }
        if let proxy {
            do throws(APNsProxyError) {
                _ = try APNsProxy(url: proxy)
            } catch {
                throw ValidationError("--proxy: \(error)")
            }
        }
    }

    /// A topic, and a signing key or a client certificate: what an APNs request needs.
    func requireAPNsCredentials() throws {
        if topic.isEmpty { throw ValidationError("give --topic (or set APNS_TOPIC)") }
        switch (certificate != nil || privateKey != nil, pkcs12 != nil) {
        case (true, true): throw ValidationError("--certificate with --private-key, or --pkcs12: not both")
        case (true, false):
            if certificate == nil || privateKey == nil { throw ValidationError("--certificate and --private-key go together") }
        case (false, true): break
        case (false, false): try key.requireAll()
        }
    }

    /// The roots `--ca-file` names, or nil for the system's; `.failure` after printing why the file is unusable.
    func trustRoots() -> Result<[NIOSSLCertificate]?, CommandFailure> {
        guard let caFile else { return .success(nil) }
        do {
            return .success(try NIOSSLCertificate.fromPEMFile(caFile))
        } catch {
            Terminal.writeError(caFile, code: "invalidCertificate", "not a readable PEM certificate")
            return .failure(.invalid)
        }
    }

    /// The proxy `--proxy` names, or `HTTPS_PROXY` for `endpoint`; `.failure` after printing why it is unusable.
    func proxy(for endpoint: String) -> Result<HTTPProxy?, CommandFailure> {
        do throws(HTTPProxyError) {
            if let url = proxy { return .success(try HTTPProxy(url: url)) }
            return .success(try HTTPProxy.fromEnvironment(for: endpoint))
        } catch {
            Terminal.writeError("HTTPS_PROXY", code: "invalidProxy", error.message)
            return .failure(.invalid)
        }
    }

    /// A client for these options; nil after printing why the key or the certificate is unusable.
    /// Its log lines go to stderr: stdout holds the results.
    func makeClient(concurrency: Int = 100, connections: Int = 1) -> APNsClient? {
        guard let authentication = makeAuthentication() else { return nil }
        guard case .success(let trustRoots) = trustRoots() else { return nil }
        let endpoint = endpoint ?? (development ? APNsClientConfiguration.development : APNsClientConfiguration.production)
        guard case .success(let proxy) = proxy(for: endpoint) else { return nil }
        let configuration = APNsClientConfiguration(
            endpoint: endpoint, authentication: authentication, trustRoots: trustRoots, maximumConcurrentRequests: concurrency,
            connections: connections, requestTimeout: .seconds(Int64(timeout)), connectTimeout: .seconds(Int64(connectTimeout)), proxy: proxy)
        return APNsClient(
            configuration: configuration, logger: Logger(label: "pushcore", factory: { label in StreamLogHandler.standardError(label: label) }))
    }
}

extension APNsConnectionOptions {
    /// A provider token from the signing key, or the client certificate; nil after printing why
    /// it is unusable (never the key, the certificate's key or the password).
    func makeAuthentication() -> APNsClientConfiguration.Authentication? {
        if let pkcs12 {
            do {
                return try .certificate(pkcs12Path: pkcs12, password: environment("APNS_PKCS12_PASSWORD") ?? "")
            } catch {
                Terminal.writeError(pkcs12, code: "invalidCertificate", "not a PKCS#12 file that APNS_PKCS12_PASSWORD opens")
                return nil
            }
        }
        if let certificate, let privateKey {
            let chain: [NIOSSLCertificate]
            do {
                chain = try NIOSSLCertificate.fromPEMFile(certificate)
                guard !chain.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
            } catch {
                Terminal.writeError(certificate, code: "invalidCertificate", "not a readable PEM certificate")
                return nil
            }
            do {
                return .certificate(chain: chain, privateKey: try NIOSSLPrivateKey(file: privateKey, format: .pem))
            } catch {
                Terminal.writeError(privateKey, code: "invalidKey", "not a readable PEM private key")
                return nil
            }
        }
        guard let pem = key.readKeyFile() else { return nil }
        do throws(APNsTokenError) {
            return .token(APNsTokenCache(key: try APNsSigningKey(pemRepresentation: pem, keyID: key.keyID, teamID: key.teamID)))
        } catch {
            Terminal.writeError(key.keyFile, code: error.code.rawValue, error.message)
            return nil
        }
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
