import HubEmulator
import Hummingbird
import Logging
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

    public init(dataDirectory: String, host: String = "127.0.0.1", port: Int = 8080, hub: HubSettings? = nil, defaultImage: String = "pushcore-logo.png") {
        self.dataDirectory = dataDirectory
        self.host = host
        self.port = port
        self.hub = hub
        self.defaultImage = defaultImage
    }
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
        let authenticator = Authenticator(store: store)
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
                    defaultImage: configuration.defaultImage, logger: logger)
                let application = Application(
                    responder: CallbackResponder<BasicRequestContext> { request, _ in await api.respond(to: request) },
                    configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "push-backend"),
                    onServerRunning: { channel in
                        await onListening(BackendAddresses(port: channel.localAddress?.port ?? configuration.port, emulatorPort: listeningEmulatorPort))
                    },
                    logger: logger
                )
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

    /// Starts an emulated namespace with a fresh random key in its own service group (so that it
    /// shuts down gracefully after the backend), and waits until it listens.
    private static func startDemoHub(
        in group: inout ThrowingTaskGroup<Void, any Error>, logger: Logger
    ) async throws -> (HubSettings, ServiceGroup, port: Int) {
        var generator = SystemRandomNumberGenerator()
        let key = (0..<4).map { _ in String(generator.next() as UInt64, radix: 36) }.joined()
        let connectionString =
            "Endpoint=sb://pushcore-demo.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey=\(key)"
        let emulator = HubEmulator(hubs: [EmulatedHub(name: demoHubName, connection: try ConnectionString(connectionString))])
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
