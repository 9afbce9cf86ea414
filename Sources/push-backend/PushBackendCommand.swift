import APNs
import ArgumentParser
import Foundation
import HubEmulator
import Logging
import NIOSSL
import PushAPNsTokens
import PushBackend
import PushCore
import PushServerSupport
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct PushBackendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-backend",
        abstract: "The reference backend of the rich-push and secure-push flows.",
        discussion: """
            Example (offline, with the hub emulator in-process):
              push-backend user add alice --data-dir ./data      # password from stdin
              push-backend serve --data-dir ./data --demo --port 8080
            Example (offline, straight to an in-process APNs emulator, with Live Activities):
              push-backend serve --data-dir ./data --demo --delivery apns --content-state-schema state.json
            """,
        subcommands: [Serve.self, User.self]
    )

    /// Usage errors exit 2, as `pushcore`'s do.
    static func main() async { await runExitingTwoOnUsageErrors() }
}

/// Where the data lives, an option group every command shares: SQLite in a data directory, or
/// PostgreSQL by URL.
struct DataDirectory: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Where the SQLite database lives (created on first use).")
    var path: String = environment("PUSH_BACKEND_DATA_DIR") ?? "./push-backend-data"
    @Option(
        name: .customLong("database-url"),
        help: """
            PostgreSQL instead of SQLite: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]. \
            A password given here is visible to every local user in `ps`; PUSH_BACKEND_DATABASE_URL is not.
            """)
    var databaseURLOption: String?

    /// `--database-url`, else `PUSH_BACKEND_DATABASE_URL`.
    var databaseURL: String? { databaseURLOption ?? environment("PUSH_BACKEND_DATABASE_URL") }

    /// Opens the chosen store.
    func open(logger: Logger) async throws(StoreError) -> any BackendStore {
        if let databaseURL { return try await PostgresBackendStore.open(url: databaseURL, logger: logger) }
        return try await SQLiteBackendStore.open(dataDirectory: path, logger: logger)
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serves the API; prints \"listening on http://HOST:PORT\" as its first line.",
        discussion: """
            Without a hub (or with --demo) it starts the hub emulator in-process on loopback and prints
            "hub emulator on http://127.0.0.1:PORT" as its second line; GET /_emulator/deliveries there
            shows every push. Hub settings may also come from PUSH_BACKEND_HUB_CONNECTION_STRING,
            PUSH_BACKEND_HUB_NAME and PUSH_BACKEND_HUB_ENDPOINT.

            --delivery apns sends straight to APNs with a provider token (--apns-key-file,
            --apns-key-id, --apns-team-id, --apns-topic, or PUSH_BACKEND_APNS_KEY_FILE, _KEY_ID,
            _TEAM_ID, _TOPIC), prunes the registrations APNs calls dead, and serves the Live
            Activity and channel routes. With --demo it starts the APNs emulator in-process instead
            and prints "apns emulator on https://127.0.0.1:PORT" as its second line.
            --content-state-schema (and --attributes-schema) declare the app's Live Activity types,
            as for `pushcore lint`; pushes that would not decode are refused before sending.
            --metrics-port serves Prometheus metrics on a port of their own and prints
            "metrics on http://HOST:PORT" after those lines.
            SIGTERM or SIGINT stops it gracefully.

            Examples:
              push-backend serve --data-dir ./data --port 0 --demo
              push-backend serve --delivery apns --apns-key-file AuthKey.p8 --apns-key-id ABC123DEFG \\
                --apns-team-id DEF123GHIJ --apns-topic com.example.app --apns-development
            """
    )

    @OptionGroup var dataDirectory: DataDirectory
    @Option(help: "The address to bind.") var host = "127.0.0.1"
    @Option(help: "The port; 0 picks a free one.") var port = 8080
    @Option(name: .customLong("hub-connection-string"), help: "The hub's connection string (a rule with Send and Manage rights).")
    var hubConnectionString: String?
    @Option(name: .customLong("hub-name"), help: "The hub inside the namespace.") var hubName: String?
    @Option(name: .customLong("hub-endpoint"), help: "Send to this address instead of the namespace (an emulator).")
    var hubEndpoint: String?
    @Flag(help: "Use an in-process emulator (the hub's, or APNs' with --delivery apns) even when one is configured.") var demo = false
    @Option(help: "hub (Azure Notification Hubs) or apns (straight to APNs).") var delivery = "hub"
    @Option(name: .customLong("apns-key-file"), help: "The provider token's signing key (.p8).") var apnsKeyFile: String?
    @Option(name: .customLong("apns-key-id"), help: "The key's 10-character id.") var apnsKeyID: String?
    @Option(name: .customLong("apns-team-id"), help: "The team's 10-character id.") var apnsTeamID: String?
    @Option(name: .customLong("apns-topic"), help: "The app's bundle ID.") var apnsTopic: String?
    @Flag(name: .customLong("apns-development"), help: "Send to APNs' development environment.") var apnsDevelopment = false
    @Option(name: .customLong("apns-endpoint"), help: "Send to this APNs address instead (an emulator), https://host[:port].")
    var apnsEndpoint: String?
    @Option(name: .customLong("apns-ca-file"), help: "Trust the APNs endpoint's certificate from this PEM file.") var apnsCAFile: String?
    @Option(
        name: .customLong("apns-other-endpoint"),
        help:
            "The other environment, asked before a token APNs calls BadDeviceToken is pruned (default: the other of Apple's two; none with --apns-endpoint)."
    )
    var apnsOtherEndpoint: String?
    @Option(
        name: .customLong("apns-check-device"),
        help: "At start, send this known device one background push and refuse to start unless APNs takes it.")
    var apnsCheckDevice: String?
    @Option(name: .customLong("content-state-schema"), help: "The app's Live Activity ContentState fields and types, a JSON file.")
    var contentStateSchema: String?
    @Option(name: .customLong("attributes-schema"), help: "The app's ActivityAttributes fields and types, a JSON file.")
    var attributesSchema: String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"
    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may sit idle before it is closed.")
    var idleTimeout: Int = 30
    @Option(name: .customLong("request-head-timeout"), help: "Seconds a request head may take once its first byte arrived.")
    var requestHeadTimeout: Int = 10
    @Option(name: .customLong("request-body-timeout"), help: "Seconds a request body may take once its head arrived.")
    var requestBodyTimeout: Int = 30
    @Option(name: .customLong("max-connections"), help: "Connections served at once (lowered to fit the file descriptor limit).")
    var maxConnections: Int = 4096
    @Option(name: .customLong("max-connections-per-address"), help: "Connections one client address may hold (a --trusted-proxy has no limit).")
    var maxConnectionsPerAddress: Int = 256
    @Option(name: .customLong("send-burst"), help: "Pushes a user may cause at once (a notification costs one per device it reaches).")
    var sendBurst: Int = BackendConfiguration.defaultSendQuota.burst
    @Option(name: .customLong("send-per-minute"), help: "Notifications a user may create per minute after the burst.")
    var sendPerMinute: Int = Int(BackendConfiguration.defaultSendQuota.perSecond * 60)
    @Option(
        name: .customLong("login-burst"),
        help: """
            Password checks one client address, and one user name from one network, may start at once; then one a second, \
            and one a name every ten seconds.
            """)
    var loginBurst: Int = LoginLimits().perAddress.burst
    @Option(
        name: .customLong("trusted-proxy"),
        help: "A proxy's address (repeatable): requests from it are budgeted by the client its X-Forwarded-For names.")
    var trustedProxies: [String] = []
    @Option(name: .customLong("max-devices-per-user"), help: "Device tokens one user may register.")
    var maxDevicesPerUser: Int = RegistrationLimits().maximumDevices
    @Option(name: .customLong("max-activity-tokens-per-user"), help: "Live Activity tokens one user may register.")
    var maxActivityTokensPerUser: Int = RegistrationLimits().maximumActivityTokens
    @Option(name: .customLong("retention-days"), help: "Days notifications are kept; older ones are deleted every hour.")
    var retentionDays: Int = 30
    @Option(
        name: .customLong("metrics-port"),
        help: "Serve Prometheus metrics at GET /metrics on this port of --host (0 picks a free one); off when not given.")
    var metricsPort: Int?
    @Option(name: .customLong("metrics-host"), help: "The address the metrics port binds: loopback unless a scraper elsewhere needs it.")
    var metricsHost = "127.0.0.1"

    /// How long SIGTERM waits for requests in flight.
    static let gracefulShutdownSeconds: Int64 = 20

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        if let metricsPort {
            guard (0...65_535).contains(metricsPort) else { throw ValidationError("--metrics-port must be 0 to 65535") }
            guard metricsPort == 0 || metricsPort != port else { throw ValidationError("--metrics-port must differ from --port") }
        }
        guard (1...3600).contains(idleTimeout), (1...3600).contains(requestHeadTimeout), (1...3600).contains(requestBodyTimeout) else {
            throw ValidationError("--idle-timeout, --request-head-timeout and --request-body-timeout are 1 to 3600 seconds")
        }
        guard (1...1_000_000).contains(maxConnections), (1...1_000_000).contains(maxConnectionsPerAddress) else {
            throw ValidationError("--max-connections and --max-connections-per-address are 1 to 1000000")
        }
        guard (1...100_000).contains(loginBurst) else { throw ValidationError("--login-burst is 1 to 100000") }
        guard (1...100_000).contains(sendBurst), (1...100_000).contains(sendPerMinute) else {
            throw ValidationError("--send-burst and --send-per-minute are 1 to 100000")
        }
        guard (1...100_000).contains(maxDevicesPerUser), (1...100_000).contains(maxActivityTokensPerUser) else {
            throw ValidationError("--max-devices-per-user and --max-activity-tokens-per-user are 1 to 100000")
        }
        if let bad = trustedProxies.first(where: { !NetworkAddress.isIPAddress($0) }) {
            throw ValidationError("--trusted-proxy takes an IP address, not \(bad)")
        }
        guard (1...36_500).contains(retentionDays) else { throw ValidationError("--retention-days is 1 to 36500") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level: unknown level \(logLevel)") }
        guard delivery == "hub" || delivery == "apns" else { throw ValidationError("--delivery is hub or apns") }
        if delivery == "hub" {
            let hub = resolvedHub
            if !demo && (hub.connectionString == nil) != (hub.name == nil) {
                throw ValidationError("give both a hub connection string and a hub name, or neither (demo mode)")
            }
        } else if !demo {
            let apns = resolvedAPNs
            guard apns.keyFile != nil, apns.keyID != nil, apns.teamID != nil, apns.topic != nil else {
                throw ValidationError("--delivery apns needs --apns-key-file, --apns-key-id, --apns-team-id and --apns-topic (or --demo)")
            }
            if apnsDevelopment && apnsEndpoint != nil { throw ValidationError("--apns-development and --apns-endpoint are exclusive") }
        }
        if attributesSchema != nil && contentStateSchema == nil { throw ValidationError("--attributes-schema needs --content-state-schema") }
    }

    private var resolvedAPNs: (keyFile: String?, keyID: String?, teamID: String?, topic: String?) {
        (
            apnsKeyFile ?? environment("PUSH_BACKEND_APNS_KEY_FILE"), apnsKeyID ?? environment("PUSH_BACKEND_APNS_KEY_ID"),
            apnsTeamID ?? environment("PUSH_BACKEND_APNS_TEAM_ID"), apnsTopic ?? environment("PUSH_BACKEND_APNS_TOPIC")
        )
    }

    /// The declared Live Activity types, when given.
    private func liveActivitySchema() throws -> APNsLiveActivitySchema? {
        guard let contentStateSchema else { return nil }
        func read(_ path: String) throws -> APNsFieldSchema {
            guard let data = FileManager.default.contents(atPath: path) else { throw fail("cannot read \(path)") }
            do throws(APNsFieldSchema.ParseError) {
                return try APNsFieldSchema(json: Array(data))
            } catch {
                throw fail("\(path): \(error)")
            }
        }
        return APNsLiveActivitySchema(contentState: try read(contentStateSchema), attributes: try attributesSchema.map(read))
    }

    /// APNs settings from the options; the key file is read here and never printed.
    private func apnsSettings(liveActivity: APNsLiveActivitySchema?) throws -> APNsSettings {
        let apns = resolvedAPNs
        guard let keyFile = apns.keyFile, let keyID = apns.keyID, let teamID = apns.teamID, let topic = apns.topic else {
            throw fail("APNs delivery needs a key file, key id, team id and topic")
        }
        guard let data = FileManager.default.contents(atPath: keyFile), data.count <= 16 << 10 else {
            throw fail("cannot read the key file \(keyFile)")
        }
        let key: APNsSigningKey
        do throws(APNsTokenError) {
            key = try APNsSigningKey(pemRepresentation: String(decoding: data, as: UTF8.self), keyID: keyID, teamID: teamID)
        } catch {
            throw fail("\(keyFile): \(error.message)")
        }
        var trustRoots: [NIOSSLCertificate]?
        if let apnsCAFile {
            guard let roots = try? NIOSSLCertificate.fromPEMFile(apnsCAFile) else { throw fail("\(apnsCAFile) is not a readable PEM certificate") }
            trustRoots = roots
        }
        let endpoint = apnsEndpoint ?? (apnsDevelopment ? APNsClientConfiguration.development : APNsClientConfiguration.production)
        return APNsSettings(
            signingKey: key, topic: topic, endpoint: endpoint, trustRoots: trustRoots, liveActivity: liveActivity,
            otherEnvironmentEndpoint: apnsOtherEndpoint, checkDevice: apnsCheckDevice)
    }

    private var resolvedHub: (connectionString: String?, name: String?, endpoint: String?) {
        (
            hubConnectionString ?? environment("PUSH_BACKEND_HUB_CONNECTION_STRING"),
            hubName ?? environment("PUSH_BACKEND_HUB_NAME"),
            hubEndpoint ?? environment("PUSH_BACKEND_HUB_ENDPOINT")
        )
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        // Logs go to stderr: stdout's first lines are addresses, for scripts to read.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let hub = resolvedHub
        let configuration = BackendConfiguration(
            dataDirectory: dataDirectory.path, databaseURL: dataDirectory.databaseURL, host: host, port: port,
            server: ServerLimits(
                idleTimeout: .seconds(idleTimeout), requestHeadTimeout: .seconds(requestHeadTimeout),
                requestBodyTimeout: .seconds(requestBodyTimeout), maximumConnections: maxConnections,
                maximumConnectionsPerAddress: maxConnectionsPerAddress),
            logins: LoginLimits(
                perAddress: RateLimit(burst: loginBurst, perSecond: LoginLimits().perAddress.perSecond),
                perUser: RateLimit(burst: loginBurst, perSecond: LoginLimits().perUser.perSecond), trustedProxies: Set(trustedProxies)),
            sendQuota: RateLimit(burst: sendBurst, perSecond: Double(sendPerMinute) / 60),
            registrations: RegistrationLimits(maximumDevices: maxDevicesPerUser, maximumActivityTokens: maxActivityTokensPerUser),
            retention: .seconds(retentionDays * 24 * 3600))
        var services: [any Service] = []
        var metrics: MetricsEndpoint?
        if let metricsPort {
            let endpoint = MetricsEndpoint(host: metricsHost, port: metricsPort, logger: Logger(label: "push-backend"))
            services.append(endpoint.service)
            metrics = endpoint
        }
        // stdout's lines, in this order, are what scripts read: the API, an emulator, the metrics.
        let (host, metricsHost) = (self.host, self.metricsHost)
        let announce: @Sendable (_ port: Int, _ emulator: String?) async -> Void = { [metrics] port, emulator in
            print("listening on http://\(host):\(port)")
            if let emulator { print(emulator) }
            if let port = await metrics?.port() { print("metrics on http://\(metricsHost):\(port)") }
            fflush(nil)  // stdout is a pipe when scripts read it
        }
        let backend: PushBackendService
        let liveActivity = try liveActivitySchema()
        if delivery == "apns" && !demo {
            let settings = try apnsSettings(liveActivity: liveActivity)
            backend = PushBackendService(configuration, delivery: { .apns(settings) }) { port in await announce(port, nil) }
        } else if delivery == "apns" {
            var emulatorLogger = Logger(label: "apns-emulator")
            emulatorLogger[metadataKey: "component"] = "apns-emulator"
            let demoAPNs = try DemoAPNs(topic: resolvedAPNs.topic ?? DemoAPNs.defaultTopic, logger: emulatorLogger)
            services.append(contentsOf: demoAPNs.services)
            Logger(label: "push-backend").notice("demo mode: pushes go to the APNs emulator", metadata: ["topic": "\(demoAPNs.topic)"])
            let checkDevice = apnsCheckDevice
            backend = PushBackendService(
                configuration, delivery: { .apns(try await demoAPNs.settings(liveActivity: liveActivity, checkDevice: checkDevice)) }
            ) { port in
                await announce(port, demoAPNs.port.map { "apns emulator on https://127.0.0.1:\($0)" })
            }
        } else if !demo, let connectionString = hub.connectionString, let name = hub.name {
            let settings = HubSettings(connectionString: connectionString, hubName: name, endpoint: hub.endpoint)
            backend = PushBackendService(configuration, hub: settings) { port in await announce(port, nil) }
        } else {
            var emulatorLogger = Logger(label: "hub-emulator")
            emulatorLogger[metadataKey: "component"] = "hub-emulator"
            let demoHub = try DemoHub(logger: emulatorLogger)
            services.append(demoHub.service)
            Logger(label: "push-backend").notice("demo mode: pushes go to the hub emulator")
            backend = PushBackendService(configuration, delivery: { .hub(try await demoHub.settings()) }) { port in
                await announce(port, demoHub.port.map { "hub emulator on http://127.0.0.1:\($0)" })
            }
        }
        // The backend last, so that it stops first: requests in flight may still send to the emulator.
        services.append(backend)
        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "push-backend"))
        // A request that never finishes (a body trickling in, an emulator answering late) must not
        // hold the process: past this, what is still running is cancelled.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(Self.gracefulShutdownSeconds)
        groupConfiguration.maximumCancellationDuration = .seconds(5)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            try await group.run()
        } catch let error as StoreError {
            throw fail("\(error)")
        } catch let error as APNsConfigurationError {
            throw fail("\(error)")
        }
    }
}

struct User: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manages the users who may sign in.",
        subcommands: [Add.self, Remove.self, List.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Adds a user. The password comes from PUSH_BACKEND_PASSWORD or stdin, never from the command line.",
            discussion: """
                Example:
                  printf '%s\\n' "$PASSWORD" | push-backend user add alice --data-dir ./data
                  PUSH_BACKEND_PASSWORD=… push-backend user add news --role sender --data-dir ./data
                """
        )

        @Argument(help: "1 to 64 of A-Z a-z 0-9 . _ -") var name: String
        @Option(help: "user (notifies themselves) or sender (notifies anybody).") var role: String = "user"
        @OptionGroup var dataDirectory: DataDirectory

        func validate() throws {
            guard UserRecord.isValidName(name) else { throw ValidationError("a user name is 1 to 64 of A-Z a-z 0-9 . _ -") }
            guard UserRole(rawValue: role) != nil else { throw ValidationError("--role is user or sender") }
        }

        func run() async throws {
            let password = try readPassword()
            let record = UserRecord(name: name, passwordHash: PasswordHash(hashing: password).encoded, role: UserRole(rawValue: role) ?? .user)
            try await withStore(dataDirectory) { store throws(StoreError) in try await store.addUser(record) }
            print("added \(name) (\(role))")
        }

        /// The environment variable, else the first line of stdin (its line ending dropped).
        private func readPassword() throws -> String {
            if let password = environment("PUSH_BACKEND_PASSWORD") {
                guard !password.isEmpty else { throw fail("PUSH_BACKEND_PASSWORD is empty") }
                return password
            }
            if isatty(STDIN_FILENO) != 0 { writeError("password for \(name): ") }
            guard var line = readLine(strippingNewline: true) else {
                throw fail("no password: set PUSH_BACKEND_PASSWORD or write it to stdin")
            }
            if line.hasSuffix("\r") { line.removeLast() }
            guard !line.isEmpty else { throw fail("the password is empty") }
            guard line.utf8.count <= 1024 else { throw fail("the password is over 1024 bytes") }
            return line
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Removes a user with their notifications and registrations (their hub installations stay until the devices unregister).",
            discussion: "Example:\n  push-backend user remove alice --data-dir ./data"
        )

        @Argument var name: String
        @OptionGroup var dataDirectory: DataDirectory

        func run() async throws {
            let name = self.name
            let removed = try await withStore(dataDirectory) { store throws(StoreError) in try await store.removeUser(named: name) }
            guard removed else { throw fail("no user named \(name)") }
            print("removed \(name)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lists the users and their roles.",
            discussion: "Example:\n  push-backend user list --data-dir ./data"
        )

        @OptionGroup var dataDirectory: DataDirectory

        func run() async throws {
            let users = try await withStore(dataDirectory) { store throws(StoreError) in try await store.users() }
            for user in users { print("\(user.name)\t\(user.role.rawValue)") }
        }
    }
}

/// Opens the store, runs `body`, closes it; store errors become a one-line failure.
private func withStore<Result>(_ data: DataDirectory, _ body: (any BackendStore) async throws(StoreError) -> Result) async throws -> Result {
    let store: any BackendStore
    do {
        store = try await data.open(logger: Logger(label: "push-backend", factory: { _ in SwiftLogNoOpLogHandler() }))
    } catch {
        throw fail("\(error)")
    }
    do throws(StoreError) {
        let result = try await body(store)
        await store.close()
        return result
    } catch {
        await store.close()
        throw fail("\(error)")
    }
}

/// Writes `push-backend: error: MESSAGE` to stderr; the command then exits with status 1.
func fail(_ message: String) -> ExitCode {
    writeError("push-backend: error: \(message)\n")
    return .failure
}

func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

func writeError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}
