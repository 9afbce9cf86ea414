import ArgumentParser
import Configuration
import Foundation
import Logging
import PushBackend
import PushServerSupport

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
        subcommands: [Serve.self, User.self, APIKeyCommand.self]
    )

    /// Usage errors exit 2, as `pushcore`'s do.
    static func main() async { await runExitingTwoOnUsageErrors() }
}

/// Where the data lives, an option group every command shares: SQLite in a data directory, or
/// PostgreSQL by URL; and the config file that may say so instead.
struct DataDirectory: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Where the SQLite database lives, created on first use (default ./push-backend-data).")
    var path: String?
    @Option(
        name: .customLong("database-url"),
        help: """
            PostgreSQL instead of SQLite: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]. \
            A password given here is visible to every local user in `ps`; PUSH_BACKEND_DATABASE_URL or the config file is not.
            """)
    var databaseURL: String?
    @Option(
        name: .customLong("config-file"),
        help: "A JSON file of settings (or PUSH_BACKEND_CONFIG_FILE); the command line and the environment win over it.")
    var configFile: String?

    /// The keys of these options; the store's settings.
    static let keys: Set<String> = ["dataDir", "database.url"]

    /// The options given, by settings key.
    var commandLine: [String: ConfigContent] {
        var given: [String: ConfigContent] = [:]
        given["dataDir"] = path.map(ConfigContent.string)
        given["database.url"] = databaseURL.map(ConfigContent.string)
        return given
    }

    /// The store these options, the environment and the config file name, every value read checked;
    /// and the settings, for what else a user command reads.
    func store() async throws -> (StoreLocation, Settings) {
        let settings = try await Settings(commandLine: commandLine, configFile: configFile, knownKeys: Self.keys.union(Serve.keys))
        let store = StoreLocation(settings)
        try settings.checkTypes()
        return (store, settings)
    }
}

/// The store the settings name.
struct StoreLocation {
    var dataDirectory: String
    var databaseURL: String?

    init(_ settings: Settings) {
        dataDirectory = settings.string("dataDir", default: "./push-backend-data")
        databaseURL = settings.string("database.url")
    }

    /// Opens the chosen store.
    func open(logger: Logger) async throws(StoreError) -> any BackendStore {
        if let databaseURL { return try await PostgresBackendStore.open(url: databaseURL, logger: logger) }
        return try await SQLiteBackendStore.open(dataDirectory: dataDirectory, logger: logger)
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serves the API; prints \"listening on http://HOST:PORT\" (https with TLS) as its first line.",
        discussion: """
            Every option may also come from the environment or from the JSON file --config-file names
            (the command line wins, then the environment, then the file): --max-connections is
            PUSH_BACKEND_MAX_CONNECTIONS or "maxConnections", and the database, hub, APNs and metrics
            options sit one level down: --hub-connection-string is PUSH_BACKEND_HUB_CONNECTION_STRING
            or {"hub": {"connectionString": …}}. --print-config lists what serve would use and where
            each value came from, secrets redacted, and exits.

            Without a hub (or with --demo) it starts the hub emulator in-process on loopback and prints
            "hub emulator on http://127.0.0.1:PORT" as its second line; GET /_emulator/deliveries there
            shows every push.

            --delivery apns sends straight to APNs with a provider token (--apns-key-file,
            --apns-key-id, --apns-team-id, --apns-topic), prunes the registrations APNs calls dead, and
            serves the Live Activity and channel routes. With --demo it starts the APNs emulator
            in-process instead and prints "apns emulator on https://127.0.0.1:PORT" as its second line.
            --delivery direct sends to Apple devices as --delivery apns does and to Android devices
            straight to FCM (--fcm-service-account, or GOOGLE_APPLICATION_CREDENTIALS), without a hub;
            with --demo it starts both emulators in-process, the FCM one's address as a third line.
            --content-state-schema (and --attributes-schema) declare the app's Live Activity types,
            as for `pushcore lint`; pushes that would not decode are refused before sending.
            --metrics-port serves Prometheus metrics on a port of their own and prints
            "metrics on http://HOST:PORT" after those lines.
            --tls-certificate and --tls-key serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN); with --demo,
            --tls-certificate-out makes a certificate for 127.0.0.1 and localhost and writes it there.
            Without TLS, with Basic on, on an address other than loopback, it warns: passwords would
            cross the network in the clear.
            SIGTERM or SIGINT stops it gracefully.

            Examples:
              push-backend serve --data-dir ./data --port 0 --demo
              push-backend serve --data-dir ./data --host 0.0.0.0 --tls-certificate fullchain.pem --tls-key privkey.pem
              push-backend serve --delivery apns --apns-key-file AuthKey.p8 --apns-key-id ABC123DEFG \\
                --apns-team-id DEF123GHIJ --apns-topic com.example.app --apns-development
              PUSH_BACKEND_HUB_CONNECTION_STRING='Endpoint=sb://…' push-backend serve --config-file backend.json
            """
    )

    @OptionGroup var dataDirectory: DataDirectory
    @Option(help: "The address to bind (default 127.0.0.1).") var host: String?
    @Option(help: "The port; 0 picks a free one (default 8080).") var port: Int?
    @Option(name: .customLong("hub-connection-string"), help: "The hub's connection string (a rule with Send and Manage rights).")
    var hubConnectionString: String?
    @Option(name: .customLong("hub-name"), help: "The hub inside the namespace.") var hubName: String?
    @Option(name: .customLong("hub-endpoint"), help: "Send to this address instead of the namespace (an emulator).")
    var hubEndpoint: String?
    @Flag(
        inversion: .prefixedNo,
        help: "Use in-process emulators (the hub's, or APNs' and FCM's with --delivery apns or direct) even when one is configured (default off).")
    var demo: Bool?
    @Option(help: "hub (Azure Notification Hubs, the default), apns (straight to APNs) or direct (straight to APNs and FCM).")
    var delivery: String?
    @Option(name: .customLong("apns-key-file"), help: "The provider token's signing key (.p8).") var apnsKeyFile: String?
    @Option(name: .customLong("apns-key-id"), help: "The key's 10-character id.") var apnsKeyID: String?
    @Option(name: .customLong("apns-team-id"), help: "The team's 10-character id.") var apnsTeamID: String?
    @Option(name: .customLong("apns-topic"), help: "The app's bundle ID.") var apnsTopic: String?
    @Flag(name: .customLong("apns-development"), inversion: .prefixedNo, help: "Send to APNs' development environment (default off).")
    var apnsDevelopment: Bool?
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
    @Option(
        name: .customLong("fcm-service-account"),
        help: "With --delivery direct: the service account's JSON key file (default GOOGLE_APPLICATION_CREDENTIALS).")
    var fcmServiceAccount: String?
    @Option(name: .customLong("fcm-project-id"), help: "The project messages are sent in; the service account's by default.")
    var fcmProjectID: String?
    @Option(name: .customLong("fcm-endpoint"), help: "Send to this FCM address instead (an emulator), https://host[:port].")
    var fcmEndpoint: String?
    @Option(name: .customLong("fcm-token-uri"), help: "Where access tokens come from, instead of the service account's token_uri.")
    var fcmTokenURI: String?
    @Option(name: .customLong("fcm-ca-file"), help: "Trust the FCM endpoint's (and token URI's) certificate from this PEM file.")
    var fcmCAFile: String?
    @Option(name: .customLong("content-state-schema"), help: "The app's Live Activity ContentState fields and types, a JSON file.")
    var contentStateSchema: String?
    @Option(name: .customLong("attributes-schema"), help: "The app's ActivityAttributes fields and types, a JSON file.")
    var attributesSchema: String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info (the default), notice, warning, error or critical.")
    var logLevel: String?
    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may sit idle before it is closed (default 30).")
    var idleTimeout: Int?
    @Option(name: .customLong("request-head-timeout"), help: "Seconds a request head may take once its first byte arrived (default 10).")
    var requestHeadTimeout: Int?
    @Option(name: .customLong("request-body-timeout"), help: "Seconds a request body may take once its head arrived (default 30).")
    var requestBodyTimeout: Int?
    @Option(
        name: .customLong("write-timeout"),
        help: "Seconds a response may make no progress while the client reads none of it before the connection is closed (default 30).")
    var writeTimeout: Int?
    @Option(
        name: .customLong("max-connections"), help: "Connections served at once, lowered to fit the file descriptor limit (default 4096).")
    var maxConnections: Int?
    @Option(
        name: .customLong("max-connections-per-address"),
        help: "Connections one client address may hold; a --trusted-proxy has no limit (default 256).")
    var maxConnectionsPerAddress: Int?
    @Option(
        name: .customLong("send-burst"),
        help: "Pushes a user may cause at once; a notification costs one per device it reaches (default \(ServeSettings.defaults.sendBurst)).")
    var sendBurst: Int?
    @Option(
        name: .customLong("send-per-minute"),
        help: "Notifications a user may create per minute after the burst (default \(ServeSettings.defaults.sendPerMinute)).")
    var sendPerMinute: Int?
    @Option(
        name: .customLong("registration-burst"),
        help: "Registrations of devices and activity tokens a user may make at once (default \(ServeSettings.defaults.registrationBurst)).")
    var registrationBurst: Int?
    @Option(
        name: .customLong("registrations-per-minute"),
        help: "Registrations a user may make per minute after the burst (default \(ServeSettings.defaults.registrationsPerMinute)).")
    var registrationsPerMinute: Int?
    @Option(
        name: .customLong("login-burst"),
        help: """
            Password checks one client address, and one user name from one network, may start at once; then one a second, \
            and one a name every ten seconds (default \(ServeSettings.defaults.loginBurst)).
            """)
    var loginBurst: Int?
    @Option(
        name: .customLong("trusted-proxy"),
        help: "A proxy's address (repeatable): requests from it are budgeted by the client its X-Forwarded-For names.")
    var trustedProxies: [String] = []
    @Option(
        name: .customLong("max-devices-per-user"),
        help: "Device tokens one user may register (default \(ServeSettings.defaults.maxDevicesPerUser)).")
    var maxDevicesPerUser: Int?
    @Option(
        name: .customLong("max-activity-tokens-per-user"),
        help: "Live Activity tokens one user may register (default \(ServeSettings.defaults.maxActivityTokensPerUser)).")
    var maxActivityTokensPerUser: Int?
    @Option(
        name: .customLong("max-image-bytes"), help: "An uploaded image's size at most (default \(ImageLimits().maximumBytes), iOS's limit).")
    var maxImageBytes: Int?
    @Option(
        name: .customLong("max-images-per-user"), help: "Uploaded images one user may hold (default \(ImageLimits().maximumImagesPerUser)).")
    var maxImagesPerUser: Int?
    @Option(
        name: .customLong("max-image-bytes-per-user"),
        help: "Bytes of uploaded images one user may hold (default \(ImageLimits().maximumBytesPerUser)).")
    var maxImageBytesPerUser: Int?
    @Option(name: .customLong("retention-days"), help: "Days notifications are kept; older ones are deleted every hour (default 30).")
    var retentionDays: Int?
    @Option(
        name: .customLong("metrics-port"),
        help: "Serve Prometheus metrics at GET /metrics on this port of --host (0 picks a free one); off when not given.")
    var metricsPort: Int?
    @Option(
        name: .customLong("metrics-host"),
        help: "The address the metrics port binds: loopback (the default) unless a scraper elsewhere needs it.")
    var metricsHost: String?
    @Option(
        name: .customLong("tls-certificate"),
        help: "Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this certificate chain, a PEM file; with --tls-key.")
    var tlsCertificate: String?
    @Option(name: .customLong("tls-key"), help: "The certificate's private key, a PEM file.") var tlsKey: String?
    @Option(
        name: .customLong("tls-certificate-out"),
        help: "With --demo and no certificate: serve HTTPS with one made at start for 127.0.0.1 and localhost, written here (PEM).")
    var tlsCertificateOut: String?
    @Flag(name: .customLong("basic-auth"), inversion: .prefixedNo, help: "Take users' passwords with HTTP Basic (default on).")
    var basicAuth: Bool?
    @Flag(name: .customLong("api-keys"), inversion: .prefixedNo, help: "Take API keys as bearer tokens (default on).")
    var apiKeys: Bool?
    @Option(
        name: .customLong("jwks-url"),
        help:
            "Take apps' identity tokens (OpenID Connect JWTs, RS256 or ES256) signed by the keys of this JWK Set (https); with --token-issuer and --token-audience."
    )
    var jwksURL: String?
    @Option(name: .customLong("jwks-file"), help: "As --jwks-url, the JWK Set read from this file.") var jwksFile: String?
    @Option(name: .customLong("token-issuer"), help: "The iss identity tokens must carry.") var tokenIssuer: String?
    @Option(name: .customLong("token-audience"), help: "What identity tokens' aud must name (the app's client id).")
    var tokenAudience: String?
    @Option(name: .customLong("token-user-claim"), help: "The claim that names the user (default sub).") var tokenUserClaim: String?
    @Flag(name: .customLong("print-config"), help: "Print the settings serve would use, where each came from, secrets redacted; then exit.")
    var printConfig = false

    /// How long SIGTERM waits for requests in flight.
    static let gracefulShutdownSeconds: Int64 = 20

    /// Each option's settings key, by type; `keys` and `commandLine` both come from these.
    static let stringOptions: [(key: String, option: any KeyPath<Serve, String?> & Sendable)] = [
        ("host", \.host), ("delivery", \.delivery), ("hub.connectionString", \.hubConnectionString), ("hub.name", \.hubName),
        ("hub.endpoint", \.hubEndpoint), ("apns.keyFile", \.apnsKeyFile), ("apns.keyId", \.apnsKeyID), ("apns.teamId", \.apnsTeamID),
        ("apns.topic", \.apnsTopic), ("apns.endpoint", \.apnsEndpoint), ("apns.caFile", \.apnsCAFile),
        ("apns.otherEndpoint", \.apnsOtherEndpoint), ("apns.checkDevice", \.apnsCheckDevice), ("fcm.serviceAccount", \.fcmServiceAccount),
        ("fcm.projectId", \.fcmProjectID), ("fcm.endpoint", \.fcmEndpoint), ("fcm.tokenUri", \.fcmTokenURI), ("fcm.caFile", \.fcmCAFile),
        ("contentStateSchema", \.contentStateSchema),
        ("attributesSchema", \.attributesSchema), ("logLevel", \.logLevel), ("metrics.host", \.metricsHost),
        ("tls.certificate", \.tlsCertificate), ("tls.key", \.tlsKey), ("tls.certificateOut", \.tlsCertificateOut),
        ("auth.tokens.jwksUrl", \.jwksURL), ("auth.tokens.jwksFile", \.jwksFile), ("auth.tokens.issuer", \.tokenIssuer),
        ("auth.tokens.audience", \.tokenAudience), ("auth.tokens.userClaim", \.tokenUserClaim),
    ]
    static let intOptions: [(key: String, option: any KeyPath<Serve, Int?> & Sendable)] = [
        ("port", \.port), ("idleTimeout", \.idleTimeout), ("requestHeadTimeout", \.requestHeadTimeout),
        ("requestBodyTimeout", \.requestBodyTimeout), ("writeTimeout", \.writeTimeout), ("maxConnections", \.maxConnections),
        ("maxConnectionsPerAddress", \.maxConnectionsPerAddress), ("sendBurst", \.sendBurst), ("sendPerMinute", \.sendPerMinute),
        ("registrationBurst", \.registrationBurst), ("registrationsPerMinute", \.registrationsPerMinute),
        ("loginBurst", \.loginBurst), ("maxDevicesPerUser", \.maxDevicesPerUser), ("maxActivityTokensPerUser", \.maxActivityTokensPerUser),
        ("retentionDays", \.retentionDays), ("metrics.port", \.metricsPort), ("images.maxBytes", \.maxImageBytes),
        ("images.maxPerUser", \.maxImagesPerUser), ("images.maxBytesPerUser", \.maxImageBytesPerUser),
    ]
    static let boolOptions: [(key: String, option: any KeyPath<Serve, Bool?> & Sendable)] = [
        ("demo", \.demo), ("apns.development", \.apnsDevelopment), ("auth.basic", \.basicAuth), ("auth.apiKeys", \.apiKeys),
    ]

    /// Every key `serve` reads (and so every key a config file may hold).
    static let keys = Set(stringOptions.map(\.key) + intOptions.map(\.key) + boolOptions.map(\.key) + ["trustedProxies"])

    /// The options given, by settings key.
    var commandLine: [String: ConfigContent] {
        var given = dataDirectory.commandLine
        for (key, option) in Self.stringOptions { given[key] = self[keyPath: option].map(ConfigContent.string) }
        for (key, option) in Self.intOptions { given[key] = self[keyPath: option].map(ConfigContent.int) }
        for (key, option) in Self.boolOptions { given[key] = self[keyPath: option].map(ConfigContent.bool) }
        if !trustedProxies.isEmpty { given["trustedProxies"] = .stringArray(trustedProxies) }
        return given
    }

    func run() async throws {
        let sources = try await Settings(
            commandLine: commandLine, configFile: dataDirectory.configFile, knownKeys: Self.keys.union(DataDirectory.keys))
        let settings = try ServeSettings(sources)
        if printConfig {
            for line in sources.lines() { print("\(line.key) = \(line.value)  (\(line.source))") }
            return
        }
        try await settings.serve()
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
            let (location, settings) = try await dataDirectory.store()
            let password = try readPassword(settings)
            let record = UserRecord(name: name, passwordHash: PasswordHash(hashing: password).encoded, role: UserRole(rawValue: role) ?? .user)
            try await withStore(location) { store throws(StoreError) in try await store.addUser(record) }
            print("added \(name) (\(role))")
        }

        /// The environment variable, else the first line of stdin (its line ending dropped).
        private func readPassword(_ settings: Settings) throws -> String {
            if let password = settings.string("password") {
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
            let removed = try await withStore(try await dataDirectory.store().0) { store throws(StoreError) in
                try await store.removeUser(named: name)
            }
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
            let users = try await withStore(try await dataDirectory.store().0) { store throws(StoreError) in try await store.users() }
            for user in users { print("\(user.name)\t\(user.role.rawValue)") }
        }
    }
}

struct APIKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apikey",
        abstract: "Manages API keys: credentials a sending service sends as `Authorization: Bearer KEY`, acting as their owner.",
        subcommands: [Add.self, Revoke.self, List.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Adds an API key for OWNER and prints it, once: only its hash is kept.",
            discussion: """
                The key acts as OWNER, with their role and budgets. An owner who is not a user yet is
                added with --role (user by default) and no password: they sign in with keys only.
                The key is the only line on stdout.

                Example:
                  KEY=$(push-backend apikey add billing --role sender --data-dir ./data)
                  curl -H "Authorization: Bearer $KEY" …/api/notifications
                """
        )

        @Argument(help: "The user the key acts as; 1 to 64 of A-Z a-z 0-9 . _ -") var owner: String
        @Option(help: "user or sender, for an owner added now; an existing owner's role must match.") var role: String?
        @OptionGroup var dataDirectory: DataDirectory

        func validate() throws {
            guard UserRecord.isValidName(owner) else { throw ValidationError("a user name is 1 to 64 of A-Z a-z 0-9 . _ -") }
            guard role.map({ UserRole(rawValue: $0) != nil }) ?? true else { throw ValidationError("--role is user or sender") }
        }

        func run() async throws {
            let (owner, role) = (self.owner, role.flatMap(UserRole.init(rawValue:)))
            let (text, record) = APIKey.generate(owner: owner)
            let ownerRole = try await withStore(try await dataDirectory.store().0) { store throws(StoreError) -> UserRole? in
                if let user = try await store.user(named: owner) {
                    guard role == nil || role == user.role else { return nil }
                    try await store.addAPIKey(record)
                    return user.role
                }
                // A stored hash that parses as none: no password ever matches it.
                try await store.addUser(UserRecord(name: owner, passwordHash: UserRecord.noPassword, role: role ?? .user))
                try await store.addAPIKey(record)
                return role ?? .user
            }
            guard let ownerRole else { throw fail("\(owner) is a user with another role; their keys act with it") }
            print(text)
            writeError("added API key \(record.id) for \(owner) (\(ownerRole.rawValue)); it is shown only now\n")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revokes an API key by its id (the 16 hex digits after pck_); the next request with it is refused.",
            discussion: "Example:\n  push-backend apikey revoke 3f9a0c1b2d4e5f60 --data-dir ./data"
        )

        @Argument var id: String
        @OptionGroup var dataDirectory: DataDirectory

        func run() async throws {
            let id = self.id
            let removed = try await withStore(try await dataDirectory.store().0) { store throws(StoreError) in try await store.removeAPIKey(id: id) }
            guard removed else { throw fail("no API key \(id)") }
            print("revoked \(id)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lists the API keys: id, owner and when each was made (never the key).",
            discussion: "Example:\n  push-backend apikey list --data-dir ./data"
        )

        @OptionGroup var dataDirectory: DataDirectory

        func run() async throws {
            let keys = try await withStore(try await dataDirectory.store().0) { store throws(StoreError) in try await store.apiKeys() }
            for key in keys {
                let created = Date(timeIntervalSince1970: Double(key.createdAt) / 1000).formatted(.iso8601)
                print("\(key.id)\t\(key.owner)\t\(created)")
            }
        }
    }
}

/// Opens the store, runs `body`, closes it; store errors become a one-line failure.
private func withStore<Result>(_ data: StoreLocation, _ body: (any BackendStore) async throws(StoreError) -> Result) async throws -> Result {
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

func writeError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}
