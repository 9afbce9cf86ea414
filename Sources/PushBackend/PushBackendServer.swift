import HubEmulator
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
    /// nil: start the hub emulator in-process on loopback (demo mode).
    public var hub: HubSettings?
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
        dataDirectory: String, host: String = "127.0.0.1", port: Int = 8080, hub: HubSettings? = nil, defaultImage: String = "pushcore-logo.png",
        server: ServerLimits = ServerLimits(), logins: LoginLimits = LoginLimits(), sendQuota: RateLimit = Self.defaultSendQuota,
        retention: Duration = Self.defaultRetention, retentionSweepInterval: Duration = .seconds(3600)
    ) {
        self.dataDirectory = dataDirectory
        self.host = host
        self.port = port
        self.hub = hub
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

/// The request context: Hummingbird's, with the client's address (the budget of password checks is per address).
struct BackendRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The address without its port: one budget per host.
    var client: String { remoteAddress?.ipAddress ?? "unknown" }
}

/// The addresses a started backend reports.
public struct BackendAddresses: Sendable {
    public let port: Int
    /// The in-process hub emulator's port in demo mode (its `/_emulator/deliveries` shows what was pushed).
    public let emulatorPort: Int?
}

/// Runs the reference backend until cancelled or, with `handlingSignals`, until SIGTERM or SIGINT;
/// then stops accepting, lets requests in flight finish, and closes the database.
public enum PushBackendServer {
    /// The hub the demo mode emulates.
    public static let demoHubName = "pushcore-demo"

    public static func run(
        _ configuration: BackendConfiguration, handlingSignals: Bool = false, logger: Logger = Logger(label: "push-backend"),
        onListening: @escaping @Sendable (BackendAddresses) async -> Void
    ) async throws {
        let store = try await SQLiteBackendStore.open(dataDirectory: configuration.dataDirectory, logger: logger)
        let authenticator = Authenticator(store: store, limits: configuration.logins)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                let hub: HubSettings
                var demoHub: ServiceGroup?
                var emulatorPort: Int?
                if let configured = configuration.hub {
                    hub = configured
                } else {
                    let (settings, services, port) = try await startDemoHub(in: &group, logger: logger)
                    (hub, demoHub, emulatorPort) = (settings, services, port)
                    logger.notice("demo mode: pushes go to the hub emulator", metadata: ["emulator": "\(settings.endpoint ?? "")"])
                }
                let listeningEmulatorPort = emulatorPort
                let client = try NotificationHubClient(
                    connectionString: hub.connectionString, hubName: hub.hubName, endpointOverride: hub.endpoint, logger: logger)
                _ = try RichPushImages.registry.resource(named: configuration.defaultImage)
                let api = BackendAPI(
                    store: store, authenticator: authenticator, hub: client, images: RichPushImages.registry,
                    defaultImage: configuration.defaultImage, sendQuota: configuration.sendQuota, logger: logger)
                let maximumConnections = configuration.server.effectiveMaximumConnections()
                if maximumConnections < configuration.server.maximumConnections {
                    logger.notice("connection cap lowered to fit the file descriptor limit", metadata: ["connections": "\(maximumConnections)"])
                }
                let application = Application(
                    responder: CallbackResponder<BackendRequestContext> { request, context in await api.respond(to: request, client: context.client) },
                    server: .http1(limits: configuration.server),
                    configuration: ApplicationConfiguration(
                        address: .hostname(configuration.host, port: configuration.port), serverName: "push-backend",
                        availableConnectionsDelegate: ConnectionCap(maximum: maximumConnections, logger: logger)),
                    onServerRunning: { channel in
                        await onListening(BackendAddresses(port: channel.localAddress?.port ?? configuration.port, emulatorPort: listeningEmulatorPort))
                    },
                    logger: logger
                )
                group.addTask {
                    await sweepExpiredNotifications(store, retention: configuration.retention, every: configuration.retentionSweepInterval, logger: logger)
                }
                do {
                    if handlingSignals {
                        try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
                    } else {
                        try await application.run()
                    }
                } catch {
                    await demoHub?.triggerGracefulShutdown()
                    throw error
                }
                // The emulator last: requests still in flight may have been sending to it.
                await demoHub?.triggerGracefulShutdown()
                group.cancelAll()  // the sweep
                try await group.waitForAll()
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

    /// Starts an emulated namespace with a fresh random key in its own service group (so that it
    /// shuts down gracefully after the backend), and waits until it listens.
    private static func startDemoHub(
        in group: inout ThrowingTaskGroup<Void, any Error>, logger: Logger
    ) async throws -> (HubSettings, ServiceGroup, port: Int) {
        var generator = SystemRandomNumberGenerator()
        let key = (0..<4).map { _ in String(generator.next() as UInt64, radix: 36) }.joined()
        let connectionString =
            "Endpoint=sb://pushcore-demo.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey=\(key)"
        // No fault injection: anyone who can reach the emulator's port could otherwise break sends.
        let emulator = HubEmulator(
            hubs: [EmulatedHub(name: demoHubName, connection: try ConnectionString(connectionString))], allowsFaultInjection: false)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var emulatorLogger = logger
        emulatorLogger[metadataKey: "component"] = "hub-emulator"
        let services = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [emulator.application(port: 0, logger: emulatorLogger) { port in continuation.yield(port) }], logger: emulatorLogger))
        group.addTask {
            defer { continuation.finish() }  // an emulator that fails to start ends the wait below
            try await services.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        return (HubSettings(connectionString: connectionString, hubName: demoHubName, endpoint: "http://127.0.0.1:\(port)"), services, port)
    }
}
