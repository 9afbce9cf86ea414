import APNs
import FCM
import HTTP2Transport
package import Hummingbird
package import Logging
import Metrics
import NotificationHubs
import PushAPNsTokens
import PushCore
import RichPushImages
import ServiceLifecycle

/// The backend as one Hummingbird application: the store, the authenticator and the delivery it
/// opens, the router, and the services that run beside the server, the retention sweep and the
/// closing of what the application opened once the server has stopped. `push-backend serve` runs
/// it (through ``PushBackendService``), and the tests drive the same application.
package func buildApplication(
    _ configuration: BackendConfiguration, delivery: PushDelivery, logger: Logger,
    onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    _ = try RichPushImages.registry.resource(named: configuration.defaultImage)
    let store =
        if let url = configuration.databaseURL {
            InstrumentedStore(base: try await PostgresBackendStore.open(url: url, logger: logger), system: "postgresql")
        } else {
            InstrumentedStore(base: try await SQLiteBackendStore.open(dataDirectory: configuration.dataDirectory, logger: logger), system: "sqlite")
        }
    let identityTokens = configuration.identityTokens.map { IdentityTokenVerifier($0, logger: logger) }
    var resources = BackendResources(
        store: store,
        authenticator: Authenticator(
            store: store, limits: configuration.logins, schemes: configuration.authentication, identityTokens: identityTokens),
        logger: logger)
    do {
        identityTokens?.start()
        let deliverer = try await resources.openDelivery(delivery, metricsFactory: MetricsSystem.factory)
        let api = BackendAPI(
            store: store, authenticator: resources.authenticator, delivery: deliverer, images: RichPushImages.registry,
            defaultImage: configuration.defaultImage, sendQuota: configuration.sendQuota, registrationLimits: configuration.registrations,
            imageLimits: configuration.images)
        let maximumConnections = configuration.server.effectiveMaximumConnections()
        if maximumConnections < configuration.server.maximumConnections {
            logger.notice("connection cap lowered to fit the file descriptor limit", metadata: ["connections": "\(maximumConnections)"])
        }
        let connections = ConnectionRegistry(
            maximum: maximumConnections, maximumPerAddress: configuration.server.maximumConnectionsPerAddress,
            unlimited: configuration.logins.trustedProxies)
        // The delivery queue's worker, where the server sends straight to APNs (and FCM).
        let worker = deliverer.apns.map { DeliveryWorker(store: store, delivery: $0, logger: logger) }
        // Services stop in the reverse of this order, after the server: the worker, the sweep, then the store.
        return Application(
            router: try api.router(),
            server: try configuration.tls.map { try .https(limits: configuration.server, connections: connections, tls: $0) }
                ?? .http1(limits: configuration.server, connections: connections),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "push-backend",
                availableConnectionsDelegate: ConnectionCap(maximum: maximumConnections, logger: logger)),
            services: [
                resources,
                RetentionSweep(
                    store: store, retention: configuration.retention, imageGrace: configuration.images.unreferencedGrace,
                    interval: configuration.retentionSweepInterval, logger: logger),
            ] + (worker.map { [DeliveryWorkerService(worker: $0)] } ?? []),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
    } catch {
        await resources.close()
        throw error
    }
}

/// What the application opened and closes once the server has stopped: the store, the
/// authenticator's password-checking threads, and the APNs and FCM clients.
struct BackendResources: Service {
    let store: any BackendStore
    let authenticator: Authenticator
    let logger: Logger
    private(set) var apnsClients: [APNsClient] = []
    private(set) var fcmClients: [FCMClient] = []

    init(store: any BackendStore, authenticator: Authenticator, logger: Logger) {
        self.store = store
        self.authenticator = authenticator
        self.logger = logger
    }

    /// The delivery with its clients, checked (APNs settings that cannot work refuse to start).
    mutating func openDelivery(_ delivery: PushDelivery, metricsFactory: any MetricsFactory) async throws -> any PushDeliverer {
        switch delivery {
        case .hub(let hub):
            let client = try NotificationHubClient(
                connectionString: hub.connectionString, hubName: hub.hubName, endpointOverride: hub.endpoint, logger: logger)
            return HubDelivery(hub: client, store: store)
        case .apns(let settings):
            return DirectDelivery(try await openAPNs(settings), store: store, metricsFactory: metricsFactory)
        case .direct(let apnsSettings, let fcmSettings):
            let apns = try await openAPNs(apnsSettings)
            let fcm = FCMClient(
                configuration: FCMClientConfiguration(
                    endpoint: fcmSettings.endpoint, serviceAccount: fcmSettings.serviceAccount, projectID: fcmSettings.projectID,
                    trustRoots: fcmSettings.trustRoots, proxy: try FCMProxy.fromEnvironment(for: fcmSettings.endpoint),
                    metricsFactory: metricsFactory),
                logger: logger)
            fcmClients.append(fcm)
            return DirectDelivery(apns, fcm: fcm, store: store, metricsFactory: metricsFactory)
        }
    }

    /// The APNs clients of both environments, checked (settings that cannot work refuse to start).
    private mutating func openAPNs(_ settings: APNsSettings) async throws -> DirectAPNs {
        // One token cache for both environments: a provider token is good in either.
        let tokens = APNsTokenCache(key: settings.signingKey)
        func client(_ endpoint: String) throws -> APNsClient {
            let client = APNsClient(
                configuration: APNsClientConfiguration(
                    endpoint: endpoint, authentication: .token(tokens), trustRoots: settings.trustRoots,
                    proxy: try APNsProxy.fromEnvironment(for: endpoint)),
                logger: logger)
            apnsClients.append(client)
            return client
        }
        let apns = DirectAPNs(
            client: try client(settings.endpoint), otherEnvironment: try settings.otherEnvironmentEndpoint.map(client), topic: settings.topic,
            liveActivity: settings.liveActivity)
        try await PushBackendService.checkAPNs(apns, tokens: tokens, device: settings.checkDevice, logger: logger)
        return apns
    }

    /// Waits for the application to shut down, then closes.
    func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    func close() async {
        for client in apnsClients { try? await client.shutdown() }
        for client in fcmClients { try? await client.shutdown() }
        await authenticator.shutdown()
        await store.close()
    }
}

/// Deletes notifications older than the retention, then the uploaded images no notification names
/// any more (past their grace period, or abandoned mid-upload), now and then every interval, until
/// the application shuts down.
struct RetentionSweep: Service {
    /// Notifications one statement deletes: a backlog of a million goes in short statements, with
    /// requests served between them.
    static let batch = 1000

    let store: any BackendStore
    let retention: Duration
    let imageGrace: Duration
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown { await sweep() }
    }

    func sweep() async {
        while !Task.isCancelled {
            let now = unixMilliseconds()
            let notifications = await inBatches { () async throws(StoreError) in
                try await store.deleteNotifications(pastBefore: now - retention.wholeMilliseconds, limit: Self.batch)
            }
            if notifications > 0 { logger.info("deleted notifications past their retention", metadata: ["count": "\(notifications)"]) }
            let images = await inBatches { () async throws(StoreError) in
                try await store.deleteUnusedImages(
                    unreferencedBefore: now - imageGrace.wholeMilliseconds, incompleteBefore: now - BackendAPI.abandonedUploadAge.wholeMilliseconds,
                    limit: Self.batch)
            }
            if images > 0 { logger.info("deleted uploaded images no notification names", metadata: ["count": "\(images)"]) }
            try? await Task.sleep(for: interval)
        }
    }

    /// Runs `delete` until it deletes less than a batch; how many it deleted.
    private func inBatches(_ delete: () async throws(StoreError) -> Int) async -> Int {
        var deleted = 0
        do {
            while !Task.isCancelled {
                let batch = try await delete()
                deleted += batch
                if batch < Self.batch { break }
                await Task.yield()
            }
        } catch {
            logger.error("retention sweep failed: \(error)")
        }
        return deleted
    }
}
