import Hummingbird
import Logging
import NIOCore
import NotificationHubs
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

public struct BackendConfiguration: Sendable {
    public var dataDirectory: String
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
        dataDirectory: String, host: String = "127.0.0.1", port: Int = 8080, defaultImage: String = "pushcore-logo.png",
        server: ServerLimits = ServerLimits(), logins: LoginLimits = LoginLimits(), sendQuota: RateLimit = Self.defaultSendQuota,
        retention: Duration = Self.defaultRetention, retentionSweepInterval: Duration = .seconds(3600)
    ) {
        self.dataDirectory = dataDirectory
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
/// The hub may be given late: the demo wiring in `push-backend` starts a hub emulator in the same
/// service group and hands its address over once the emulator listens.
public struct PushBackendService: Service {
    let configuration: BackendConfiguration
    let hub: @Sendable () async throws -> HubSettings
    let logger: Logger
    let onListening: @Sendable (_ port: Int) async -> Void

    public init(
        _ configuration: BackendConfiguration, hub: HubSettings, logger: Logger = Logger(label: "push-backend"),
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) {
        self.init(configuration, hub: { hub }, logger: logger, onListening: onListening)
    }

    public init(
        _ configuration: BackendConfiguration, hub: @escaping @Sendable () async throws -> HubSettings,
        logger: Logger = Logger(label: "push-backend"), onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.hub = hub
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let (configuration, logger, onListening) = (self.configuration, self.logger, self.onListening)
        _ = try RichPushImages.registry.resource(named: configuration.defaultImage)
        let store = try await SQLiteBackendStore.open(dataDirectory: configuration.dataDirectory, logger: logger)
        let authenticator = Authenticator(store: store, limits: configuration.logins)
        do {
            let hub = try await self.hub()
            let client = try NotificationHubClient(
                connectionString: hub.connectionString, hubName: hub.hubName, endpointOverride: hub.endpoint, logger: logger)
            let api = BackendAPI(
                store: store, authenticator: authenticator, hub: client, images: RichPushImages.registry,
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
            await authenticator.shutdown()
            await store.close()
            throw error
        }
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
