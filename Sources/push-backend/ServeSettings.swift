import APNs
import ArgumentParser
import Logging
import NIOSSL
import PushAPNsTokens
import PushBackend
import PushCore
import ServiceLifecycle
import UnixSignals

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `serve` runs with, read from ``Settings`` and checked: a bad value is a usage error that
/// names its key, wherever it came from.
struct ServeSettings {
    struct Defaults {
        var sendBurst = BackendConfiguration.defaultSendQuota.burst
        var sendPerMinute = Int(BackendConfiguration.defaultSendQuota.perSecond * 60)
        var loginBurst = LoginLimits().perAddress.burst
        var maxDevicesPerUser = RegistrationLimits().maximumDevices
        var maxActivityTokensPerUser = RegistrationLimits().maximumActivityTokens
    }
    static let defaults = Defaults()

    var store: StoreLocation
    var host: String
    var port: Int
    var delivery: String
    var demo: Bool
    var hubConnectionString: String?
    var hubName: String?
    var hubEndpoint: String?
    var apnsKeyFile: String?
    var apnsKeyID: String?
    var apnsTeamID: String?
    var apnsTopic: String?
    var apnsDevelopment: Bool
    var apnsEndpoint: String?
    var apnsCAFile: String?
    var apnsOtherEndpoint: String?
    var apnsCheckDevice: String?
    var contentStateSchema: String?
    var attributesSchema: String?
    var logLevel: Logger.Level
    var idleTimeout: Int
    var requestHeadTimeout: Int
    var requestBodyTimeout: Int
    var maxConnections: Int
    var maxConnectionsPerAddress: Int
    var sendBurst: Int
    var sendPerMinute: Int
    var loginBurst: Int
    var trustedProxies: [String]
    var maxDevicesPerUser: Int
    var maxActivityTokensPerUser: Int
    var retentionDays: Int
    var metricsPort: Int?
    var metricsHost: String

    init(_ settings: Settings) throws {
        store = StoreLocation(settings)
        host = settings.string("host", default: "127.0.0.1")
        port = settings.int("port", default: 8080)
        delivery = settings.string("delivery", default: "hub")
        demo = settings.bool("demo")
        hubConnectionString = settings.string("hub.connectionString")
        hubName = settings.string("hub.name")
        hubEndpoint = settings.string("hub.endpoint")
        apnsKeyFile = settings.string("apns.keyFile")
        apnsKeyID = settings.string("apns.keyId")
        apnsTeamID = settings.string("apns.teamId")
        apnsTopic = settings.string("apns.topic")
        apnsDevelopment = settings.bool("apns.development")
        apnsEndpoint = settings.string("apns.endpoint")
        apnsCAFile = settings.string("apns.caFile")
        apnsOtherEndpoint = settings.string("apns.otherEndpoint")
        apnsCheckDevice = settings.string("apns.checkDevice")
        contentStateSchema = settings.string("contentStateSchema")
        attributesSchema = settings.string("attributesSchema")
        let level = settings.string("logLevel", default: "info")
        idleTimeout = settings.int("idleTimeout", default: 30)
        requestHeadTimeout = settings.int("requestHeadTimeout", default: 10)
        requestBodyTimeout = settings.int("requestBodyTimeout", default: 30)
        maxConnections = settings.int("maxConnections", default: 4096)
        maxConnectionsPerAddress = settings.int("maxConnectionsPerAddress", default: 256)
        sendBurst = settings.int("sendBurst", default: Self.defaults.sendBurst)
        sendPerMinute = settings.int("sendPerMinute", default: Self.defaults.sendPerMinute)
        loginBurst = settings.int("loginBurst", default: Self.defaults.loginBurst)
        trustedProxies = settings.strings("trustedProxies")
        maxDevicesPerUser = settings.int("maxDevicesPerUser", default: Self.defaults.maxDevicesPerUser)
        maxActivityTokensPerUser = settings.int("maxActivityTokensPerUser", default: Self.defaults.maxActivityTokensPerUser)
        retentionDays = settings.int("retentionDays", default: 30)
        metricsPort = settings.int("metrics.port")
        metricsHost = settings.string("metrics.host", default: "127.0.0.1")
        try settings.checkTypes()

        guard let logLevel = Logger.Level(rawValue: level) else { throw ValidationError("logLevel: unknown level \(level)") }
        self.logLevel = logLevel
        try check()
    }

    private func check() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("port must be 0 to 65535") }
        if let metricsPort {
            guard (0...65_535).contains(metricsPort) else { throw ValidationError("metrics.port must be 0 to 65535") }
            guard metricsPort == 0 || metricsPort != port else { throw ValidationError("metrics.port must differ from port") }
        }
        guard (1...3600).contains(idleTimeout), (1...3600).contains(requestHeadTimeout), (1...3600).contains(requestBodyTimeout) else {
            throw ValidationError("idleTimeout, requestHeadTimeout and requestBodyTimeout are 1 to 3600 seconds")
        }
        guard (1...1_000_000).contains(maxConnections), (1...1_000_000).contains(maxConnectionsPerAddress) else {
            throw ValidationError("maxConnections and maxConnectionsPerAddress are 1 to 1000000")
        }
        guard (1...100_000).contains(loginBurst) else { throw ValidationError("loginBurst is 1 to 100000") }
        guard (1...100_000).contains(sendBurst), (1...100_000).contains(sendPerMinute) else {
            throw ValidationError("sendBurst and sendPerMinute are 1 to 100000")
        }
        guard (1...100_000).contains(maxDevicesPerUser), (1...100_000).contains(maxActivityTokensPerUser) else {
            throw ValidationError("maxDevicesPerUser and maxActivityTokensPerUser are 1 to 100000")
        }
        if let bad = trustedProxies.first(where: { !NetworkAddress.isIPAddress($0) }) {
            throw ValidationError("trustedProxies takes IP addresses, not \(bad)")
        }
        guard (1...36_500).contains(retentionDays) else { throw ValidationError("retentionDays is 1 to 36500") }
        guard delivery == "hub" || delivery == "apns" else { throw ValidationError("delivery is hub or apns") }
        if delivery == "hub" {
            if !demo && (hubConnectionString == nil) != (hubName == nil) {
                throw ValidationError("give both a hub connection string and a hub name, or neither (demo mode)")
            }
        } else if !demo {
            guard apnsKeyFile != nil, apnsKeyID != nil, apnsTeamID != nil, apnsTopic != nil else {
                throw ValidationError("delivery apns needs apns.keyFile, apns.keyId, apns.teamId and apns.topic (or demo)")
            }
            if apnsDevelopment && apnsEndpoint != nil { throw ValidationError("apns.development and apns.endpoint are exclusive") }
        }
        if attributesSchema != nil && contentStateSchema == nil { throw ValidationError("attributesSchema needs contentStateSchema") }
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

    /// APNs settings; the key file is read here and never printed.
    private func apnsSettings(liveActivity: APNsLiveActivitySchema?) throws -> APNsSettings {
        guard let keyFile = apnsKeyFile, let keyID = apnsKeyID, let teamID = apnsTeamID, let topic = apnsTopic else {
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

    func serve() async throws {
        let level = logLevel
        // Logs go to stderr: stdout's first lines are addresses, for scripts to read.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let configuration = BackendConfiguration(
            dataDirectory: store.dataDirectory, databaseURL: store.databaseURL, host: host, port: port,
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
            let demoAPNs = try DemoAPNs(topic: apnsTopic ?? DemoAPNs.defaultTopic, logger: emulatorLogger)
            services.append(contentsOf: demoAPNs.services)
            Logger(label: "push-backend").notice("demo mode: pushes go to the APNs emulator", metadata: ["topic": "\(demoAPNs.topic)"])
            let checkDevice = apnsCheckDevice
            backend = PushBackendService(
                configuration, delivery: { .apns(try await demoAPNs.settings(liveActivity: liveActivity, checkDevice: checkDevice)) }
            ) { port in
                await announce(port, demoAPNs.port.map { "apns emulator on https://127.0.0.1:\($0)" })
            }
        } else if !demo, let hubConnectionString, let hubName {
            let settings = HubSettings(connectionString: hubConnectionString, hubName: hubName, endpoint: hubEndpoint)
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
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(Serve.gracefulShutdownSeconds)
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
