import APNs
import Hummingbird
import Logging
import NIOCore
import NIOSSL
import NotificationHubs
import PushAPNsTokens
import PushCore
import RichPushImages
import ServiceLifecycle

/// Where the backend sends its pushes.
public struct HubSettings: Sendable, Hashable {
    public var connectionString: String
    public var hubName: String
    /// Another address for the namespace (a hub emulator); tokens are still signed for the namespace.
    public var endpoint: String?

    public init(connectionString: String, hubName: String, endpoint: String? = nil) {
        self.connectionString = connectionString
        self.hubName = hubName
        self.endpoint = endpoint
    }
}

/// APNs straight from the backend, instead of a hub.
public struct APNsSettings: Sendable {
    /// The provider token's key (never printed).
    public var signingKey: APNsSigningKey
    /// The app's bundle ID.
    public var topic: String
    /// ``APNsClientConfiguration/production``, ``APNsClientConfiguration/development``, or an emulator.
    public var endpoint: String
    /// Roots to trust instead of the system's (an emulator's certificate).
    public var trustRoots: [NIOSSLCertificate]?
    /// The app's Live Activity types; pushes that would not decode are refused before sending.
    public var liveActivity: APNsLiveActivitySchema?

    public init(
        signingKey: APNsSigningKey, topic: String, endpoint: String = APNsClientConfiguration.production, trustRoots: [NIOSSLCertificate]? = nil,
        liveActivity: APNsLiveActivitySchema? = nil
    ) {
        self.signingKey = signingKey
        self.topic = topic
        self.endpoint = endpoint
        self.trustRoots = trustRoots
        self.liveActivity = liveActivity
    }
}

/// Where the backend's pushes go.
public enum PushDelivery: Sendable {
    case hub(HubSettings)
    case apns(APNsSettings)
}

public struct BackendConfiguration: Sendable {
    public var dataDirectory: String
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`: PostgreSQL instead of SQLite in ``dataDirectory``.
    public var databaseURL: String?
    public var host: String
    /// 0 picks a free port.
    public var port: Int
    /// The image a rich notification shows when it names none.
    public var defaultImage: String
    /// Idle timeout, request head deadline, connection cap.
    public var server: ServerLimits
    /// Budgets of password checks per client address and per user name.
    public var logins: LoginLimits
    /// Notifications each user may create: a burst, then a steady rate (429 `rateLimited` beyond).
    public var sendQuota: RateLimit
    /// How long notifications are kept; older ones are deleted by a sweep every ``retentionSweepInterval``.
    public var retention: Duration
    public var retentionSweepInterval: Duration

    public init(
        dataDirectory: String, databaseURL: String? = nil, host: String = "127.0.0.1", port: Int = 8080,
        defaultImage: String = "pushcore-logo.png",
        server: ServerLimits = ServerLimits(), logins: LoginLimits = LoginLimits(), sendQuota: RateLimit = Self.defaultSendQuota,
        retention: Duration = Self.defaultRetention, retentionSweepInterval: Duration = .seconds(3600)
    ) {
        self.dataDirectory = dataDirectory
        self.databaseURL = databaseURL
        self.host = host
        self.port = port
        self.defaultImage = defaultImage
        self.server = server
        self.logins = logins
        self.sendQuota = sendQuota
        self.retention = retention
        self.retentionSweepInterval = retentionSweepInterval
    }

    /// 30 at once, then one a second.
    public static let defaultSendQuota = RateLimit(burst: 30, perSecond: 1)
    /// 30 days.
    public static let defaultRetention = Duration.seconds(30 * 24 * 3600)
}

/// The reference backend as a service: it opens the store, serves until its service group shuts
/// down (or its task is cancelled), lets requests in flight finish, and closes the database.
///
/// The delivery may be given late: the demo wiring in `push-backend` starts an emulator in the
/// same service group and hands its address over once the emulator listens.
public struct PushBackendService: Service {
    let configuration: BackendConfiguration
    let delivery: @Sendable () async throws -> PushDelivery
    let logger: Logger
    let onListening: @Sendable (_ port: Int) async -> Void

    public init(
        _ configuration: BackendConfiguration, hub: HubSettings, logger: Logger = Logger(label: "push-backend"),
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) {
        self.init(configuration, delivery: { .hub(hub) }, logger: logger, onListening: onListening)
    }

    public init(
        _ configuration: BackendConfiguration, delivery: @escaping @Sendable () async throws -> PushDelivery,
        logger: Logger = Logger(label: "push-backend"), onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.delivery = delivery
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let (configuration, logger, onListening) = (self.configuration, self.logger, self.onListening)
        _ = try RichPushImages.registry.resource(named: configuration.defaultImage)
        let store =
            if let url = configuration.databaseURL {
                InstrumentedStore(base: try await PostgresBackendStore.open(url: url, logger: logger), system: "postgresql")
            } else {
                InstrumentedStore(
                    base: try await SQLiteBackendStore.open(dataDirectory: configuration.dataDirectory, logger: logger), system: "sqlite")
            }
        let authenticator = Authenticator(store: store, limits: configuration.logins)
        var apnsClient: APNsClient?
        do {
            let sender: PushSender
            switch try await delivery() {
            case .hub(let hub):
                sender = .hub(
                    try NotificationHubClient(
                        connectionString: hub.connectionString, hubName: hub.hubName, endpointOverride: hub.endpoint, logger: logger))
            case .apns(let settings):
                let client = APNsClient(
                    configuration: APNsClientConfiguration(
                        endpoint: settings.endpoint, authentication: .token(APNsTokenCache(key: settings.signingKey)), trustRoots: settings.trustRoots
                    ),
                    logger: logger)
                apnsClient = client
                sender = .apns(DirectAPNs(client: client, topic: settings.topic, liveActivity: settings.liveActivity))
            }
            let api = BackendAPI(
                store: store, authenticator: authenticator, sender: sender, images: RichPushImages.registry,
                defaultImage: configuration.defaultImage, sendQuota: configuration.sendQuota)
            let maximumConnections = configuration.server.effectiveMaximumConnections()
            if maximumConnections < configuration.server.maximumConnections {
                logger.notice("connection cap lowered to fit the file descriptor limit", metadata: ["connections": "\(maximumConnections)"])
            }
            let application = Application(
                router: api.router(),
                server: .http1(limits: configuration.server),
                configuration: ApplicationConfiguration(
                    address: .hostname(configuration.host, port: configuration.port), serverName: "push-backend",
                    availableConnectionsDelegate: ConnectionCap(maximum: maximumConnections, logger: logger)),
                onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
                logger: logger
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await Self.sweepExpiredNotifications(
                        store, retention: configuration.retention, every: configuration.retentionSweepInterval, logger: logger)
                }
                try await application.run()
                group.cancelAll()  // the sweep
            }
        } catch {
            try? await apnsClient?.shutdown()
            await authenticator.shutdown()
            await store.close()
            throw error
        }
        try? await apnsClient?.shutdown()
        await authenticator.shutdown()
        await store.close()
        logger.notice("stopped")
    }

    /// Deletes notifications older than `retention`, now and then every `interval`, until cancelled.
    static func sweepExpiredNotifications(_ store: any BackendStore, retention: Duration, every interval: Duration, logger: Logger) async {
        let retentionMilliseconds = retention.components.seconds * 1000 + retention.components.attoseconds / 1_000_000_000_000_000
        while !Task.isCancelled {
            do {
                let deleted = try await store.deleteNotifications(createdBefore: unixMilliseconds() - retentionMilliseconds)
                if deleted > 0 { logger.info("deleted notifications past their retention", metadata: ["count": "\(deleted)"]) }
            } catch {
                logger.error("retention sweep failed: \(error)")
            }
            try? await Task.sleep(for: interval)
        }
    }
}
