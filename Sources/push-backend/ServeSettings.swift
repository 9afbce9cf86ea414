import APNs
import APNsEmulator
import ArgumentParser
import FCM
import Foundation
import Logging
import NIOSSL
import PushAPNsTokens
import PushBackend
import PushCore
import ServiceLifecycle
import UnixSignals

/// What `serve` runs with, read from ``Settings`` and checked: a bad value is a usage error that
/// names its key, wherever it came from.
struct ServeSettings {
    struct Defaults {
        var sendBurst = BackendConfiguration.defaultSendQuota.burst
        var sendPerMinute = Int(BackendConfiguration.defaultSendQuota.perSecond * 60)
        var loginBurst = LoginLimits().perAddress.burst
        var registrationBurst = RegistrationLimits().rate.burst
        var registrationsPerMinute = Int(RegistrationLimits().rate.perSecond * 60)
        var maxDevicesPerUser = RegistrationLimits().maximumDevices
        var maxActivityTokensPerUser = RegistrationLimits().maximumActivityTokens
    }
    static let defaults = Defaults()

    /// Where pushes go.
    enum Delivery {
        /// The hub emulator, in this process.
        case hubEmulator
        case hub(HubSettings)
        /// The APNs emulator, in this process; and the FCM emulator beside it for direct delivery.
        case apnsEmulator(topic: String, checkDevice: String?, withFCM: Bool)
        case apns(APNsOptions)
        case direct(APNsOptions, FCMOptions)
    }

    /// FCM as the options name it; the service account's file is read when serving starts.
    struct FCMOptions {
        /// Nil: GOOGLE_APPLICATION_CREDENTIALS names it.
        var serviceAccountFile: String?
        var projectID: String?
        var endpoint: String
        var tokenURI: String?
        var caFile: String?
    }

    /// APNs as the options name it; the key file is read when serving starts.
    struct APNsOptions {
        var keyFile: String
        var keyID: String
        var teamID: String
        var topic: String
        var endpoint: String
        var caFile: String?
        var otherEndpoint: String?
        var checkDevice: String?
    }

    var configuration: BackendConfiguration
    var logLevel: Logger.Level
    var delivery: Delivery
    /// The Live Activity types' files: ContentState's, and ActivityAttributes' when given.
    var schemaFiles: (contentState: String, attributes: String?)?
    var metrics: (host: String, port: Int)?
    /// Where HTTPS's identity comes from; plain HTTP when nil.
    var tls: TLSSource?

    enum TLSSource {
        /// A certificate chain and its key, PEM files.
        case files(certificate: String, key: String)
        /// The demo's: made at start, its certificate written for clients to trust.
        case selfSigned(certificateOut: String)
    }

    init(_ settings: Settings) throws {
        let store = StoreLocation(settings)
        let host = settings.string("host", default: "127.0.0.1")
        let port = settings.int("port", default: 8080)
        let deliveryName = settings.string("delivery", default: "hub")
        let demo = settings.bool("demo")
        let hubConnectionString = settings.string("hub.connectionString")
        let hubName = settings.string("hub.name")
        let hubEndpoint = settings.string("hub.endpoint")
        let apnsKeyFile = settings.string("apns.keyFile")
        let apnsKeyID = settings.string("apns.keyId")
        let apnsTeamID = settings.string("apns.teamId")
        let apnsTopic = settings.string("apns.topic")
        let apnsDevelopment = settings.bool("apns.development")
        let apnsEndpoint = settings.string("apns.endpoint")
        let apnsCAFile = settings.string("apns.caFile")
        let apnsOtherEndpoint = settings.string("apns.otherEndpoint")
        let apnsCheckDevice = settings.string("apns.checkDevice")
        let fcmServiceAccount = settings.string("fcm.serviceAccount")
        let fcmProjectID = settings.string("fcm.projectId")
        let fcmEndpoint = settings.string("fcm.endpoint")
        let fcmTokenURI = settings.string("fcm.tokenUri")
        let fcmCAFile = settings.string("fcm.caFile")
        let contentStateSchema = settings.string("contentStateSchema")
        let attributesSchema = settings.string("attributesSchema")
        let level = settings.string("logLevel", default: "info")
        let idleTimeout = settings.int("idleTimeout", default: 30)
        let requestHeadTimeout = settings.int("requestHeadTimeout", default: 10)
        let requestBodyTimeout = settings.int("requestBodyTimeout", default: 30)
        let writeTimeout = settings.int("writeTimeout", default: 30)
        let maxConnections = settings.int("maxConnections", default: 4096)
        let maxConnectionsPerAddress = settings.int("maxConnectionsPerAddress", default: 256)
        let sendBurst = settings.int("sendBurst", default: Self.defaults.sendBurst)
        let sendPerMinute = settings.int("sendPerMinute", default: Self.defaults.sendPerMinute)
        let loginBurst = settings.int("loginBurst", default: Self.defaults.loginBurst)
        let registrationBurst = settings.int("registrationBurst", default: Self.defaults.registrationBurst)
        let registrationsPerMinute = settings.int("registrationsPerMinute", default: Self.defaults.registrationsPerMinute)
        let trustedProxies = settings.strings("trustedProxies")
        let maxDevicesPerUser = settings.int("maxDevicesPerUser", default: Self.defaults.maxDevicesPerUser)
        let maxActivityTokensPerUser = settings.int("maxActivityTokensPerUser", default: Self.defaults.maxActivityTokensPerUser)
        let retentionDays = settings.int("retentionDays", default: 30)
        let maxImageBytes = settings.int("images.maxBytes", default: ImageLimits().maximumBytes)
        let maxImagesPerUser = settings.int("images.maxPerUser", default: ImageLimits().maximumImagesPerUser)
        let maxImageBytesPerUser = settings.int("images.maxBytesPerUser", default: ImageLimits().maximumBytesPerUser)
        let metricsPort = settings.int("metrics.port")
        let metricsHost = settings.string("metrics.host", default: "127.0.0.1")
        let tlsCertificate = settings.string("tls.certificate")
        let tlsKey = settings.string("tls.key")
        let tlsCertificateOut = settings.string("tls.certificateOut")
        let basicAuth = settings.bool("auth.basic", default: true)
        let apiKeys = settings.bool("auth.apiKeys", default: true)
        let jwksURL = settings.string("auth.tokens.jwksUrl")
        let jwksFile = settings.string("auth.tokens.jwksFile")
        let tokenIssuer = settings.string("auth.tokens.issuer")
        let tokenAudience = settings.string("auth.tokens.audience")
        let tokenUserClaim = settings.string("auth.tokens.userClaim", default: "sub")
        try settings.checkTypes()

        guard let logLevel = Logger.Level(rawValue: level) else { throw ValidationError("logLevel: unknown level \(level)") }
        guard (0...65_535).contains(port) else { throw ValidationError("port must be 0 to 65535") }
        if let metricsPort {
            guard (0...65_535).contains(metricsPort) else { throw ValidationError("metrics.port must be 0 to 65535") }
            guard metricsPort == 0 || metricsPort != port else { throw ValidationError("metrics.port must differ from port") }
        }
        guard [idleTimeout, requestHeadTimeout, requestBodyTimeout, writeTimeout].allSatisfy({ (1...3600).contains($0) }) else {
            throw ValidationError("idleTimeout, requestHeadTimeout, requestBodyTimeout and writeTimeout are 1 to 3600 seconds")
        }
        guard (1...1_000_000).contains(maxConnections), (1...1_000_000).contains(maxConnectionsPerAddress) else {
            throw ValidationError("maxConnections and maxConnectionsPerAddress are 1 to 1000000")
        }
        guard (1...100_000).contains(loginBurst) else { throw ValidationError("loginBurst is 1 to 100000") }
        guard (1...100_000).contains(sendBurst), (1...100_000).contains(sendPerMinute) else {
            throw ValidationError("sendBurst and sendPerMinute are 1 to 100000")
        }
        guard (1...100_000).contains(registrationBurst), (1...100_000).contains(registrationsPerMinute) else {
            throw ValidationError("registrationBurst and registrationsPerMinute are 1 to 100000")
        }
        guard (1...100_000).contains(maxDevicesPerUser), (1...100_000).contains(maxActivityTokensPerUser) else {
            throw ValidationError("maxDevicesPerUser and maxActivityTokensPerUser are 1 to 100000")
        }
        if let bad = trustedProxies.first(where: { !NetworkAddress.isIPAddress($0) }) {
            throw ValidationError("trustedProxies takes IP addresses, not \(bad)")
        }
        guard (1...36_500).contains(retentionDays) else { throw ValidationError("retentionDays is 1 to 36500") }
        guard (1...1 << 30).contains(maxImageBytes), (0...1_000_000).contains(maxImagesPerUser),
            (0...1 << 40).contains(maxImageBytesPerUser)
        else { throw ValidationError("images.maxBytes is 1 to 2^30, images.maxPerUser 0 to 1000000, images.maxBytesPerUser 0 to 2^40") }
        if attributesSchema != nil && contentStateSchema == nil { throw ValidationError("attributesSchema needs contentStateSchema") }
        let identityTokens = try Self.identityTokens(
            jwksURL: jwksURL, jwksFile: jwksFile, issuer: tokenIssuer, audience: tokenAudience, userClaim: tokenUserClaim)
        guard basicAuth || apiKeys || identityTokens != nil else {
            throw ValidationError("auth.basic and auth.apiKeys are both off and no identity provider is configured: nobody could sign in")
        }
        switch (tlsCertificate, tlsKey, tlsCertificateOut) {
        case (let certificate?, let key?, nil): tls = .files(certificate: certificate, key: key)
        case (nil, nil, let out?) where demo: tls = .selfSigned(certificateOut: out)
        case (nil, nil, nil): tls = nil
        case (_, _, .some): throw ValidationError("tls.certificateOut is for --demo without tls.certificate and tls.key")
        default: throw ValidationError("give both tls.certificate and tls.key, or neither")
        }

        switch (deliveryName, demo) {
        case ("hub", true):
            delivery = .hubEmulator
        case ("hub", false):
            switch (hubConnectionString, hubName) {
            case (let connectionString?, let name?):
                delivery = .hub(HubSettings(connectionString: connectionString, hubName: name, endpoint: hubEndpoint))
            case (nil, nil):
                delivery = .hubEmulator
            default:
                throw ValidationError("give both a hub connection string and a hub name, or neither (demo mode)")
            }
        case ("apns", true), ("direct", true):
            delivery = .apnsEmulator(topic: apnsTopic ?? DemoAPNs.defaultTopic, checkDevice: apnsCheckDevice, withFCM: deliveryName == "direct")
        case ("apns", false), ("direct", false):
            guard let apnsKeyFile, let apnsKeyID, let apnsTeamID, let apnsTopic else {
                throw ValidationError("delivery \(deliveryName) needs apns.keyFile, apns.keyId, apns.teamId and apns.topic (or demo)")
            }
            if apnsDevelopment && apnsEndpoint != nil { throw ValidationError("apns.development and apns.endpoint are exclusive") }
            let apns = APNsOptions(
                keyFile: apnsKeyFile, keyID: apnsKeyID, teamID: apnsTeamID, topic: apnsTopic,
                endpoint: apnsEndpoint ?? (apnsDevelopment ? APNsClientConfiguration.development : APNsClientConfiguration.production),
                caFile: apnsCAFile, otherEndpoint: apnsOtherEndpoint, checkDevice: apnsCheckDevice)
            if deliveryName == "apns" {
                delivery = .apns(apns)
            } else {
                if let fcmEndpoint, !fcmEndpoint.hasPrefix("https://") { throw ValidationError("fcm.endpoint is an https URL") }
                if let fcmTokenURI, !fcmTokenURI.hasPrefix("https://") { throw ValidationError("fcm.tokenUri is an https URL") }
                delivery = .direct(
                    apns,
                    FCMOptions(
                        serviceAccountFile: fcmServiceAccount, projectID: fcmProjectID, endpoint: fcmEndpoint ?? FCMClientConfiguration.production,
                        tokenURI: fcmTokenURI, caFile: fcmCAFile))
            }
        default:
            throw ValidationError("delivery is hub, apns or direct")
        }
        if deliveryName != "direct" || demo,
            let given = [
                ("fcm.serviceAccount", fcmServiceAccount), ("fcm.projectId", fcmProjectID), ("fcm.endpoint", fcmEndpoint),
                ("fcm.tokenUri", fcmTokenURI), ("fcm.caFile", fcmCAFile),
            ].first(where: { $0.1 != nil })
        {
            throw ValidationError("\(given.0) goes with delivery direct, without demo")
        }

        self.logLevel = logLevel
        schemaFiles = contentStateSchema.map { ($0, attributesSchema) }
        metrics = metricsPort.map { (metricsHost, $0) }
        configuration = BackendConfiguration(
            dataDirectory: store.dataDirectory, databaseURL: store.databaseURL, host: host, port: port,
            server: ServerLimits(
                idleTimeout: .seconds(idleTimeout), requestHeadTimeout: .seconds(requestHeadTimeout),
                requestBodyTimeout: .seconds(requestBodyTimeout), maximumConnections: maxConnections,
                maximumConnectionsPerAddress: maxConnectionsPerAddress, writeTimeout: .seconds(writeTimeout)),
            logins: LoginLimits(
                perAddress: RateLimit(burst: loginBurst, perSecond: LoginLimits().perAddress.perSecond),
                perUser: RateLimit(burst: loginBurst, perSecond: LoginLimits().perUser.perSecond), trustedProxies: Set(trustedProxies)),
            sendQuota: RateLimit(burst: sendBurst, perSecond: Double(sendPerMinute) / 60),
            registrations: RegistrationLimits(
                maximumDevices: maxDevicesPerUser, maximumActivityTokens: maxActivityTokensPerUser,
                rate: RateLimit(burst: registrationBurst, perSecond: Double(registrationsPerMinute) / 60)),
            retention: .seconds(retentionDays * 24 * 3600))
        configuration.authentication = AuthenticationSchemes().union(basicAuth ? .basic : []).union(apiKeys ? .apiKeys : [])
            .union(identityTokens != nil ? .identityTokens : [])
        configuration.identityTokens = identityTokens
        configuration.images.maximumBytes = maxImageBytes
        configuration.images.maximumImagesPerUser = maxImagesPerUser
        configuration.images.maximumBytesPerUser = maxImageBytesPerUser
    }

    /// The identity provider, when a JWK Set is given: one source, an issuer and an audience.
    private static func identityTokens(
        jwksURL: String?, jwksFile: String?, issuer: String?, audience: String?, userClaim: String
    ) throws -> IdentityTokenSettings? {
        let source: IdentityTokenSettings.KeySource
        switch (jwksURL, jwksFile) {
        case (nil, nil):
            guard issuer == nil, audience == nil else {
                throw ValidationError("auth.tokens.issuer and audience need auth.tokens.jwksUrl or jwksFile")
            }
            return nil
        case (let url?, nil):
            guard let parsed = URL(string: url), let host = parsed.host,
                parsed.scheme == "https" || (parsed.scheme == "http" && NetworkAddress.isLoopback(host))
            else { throw ValidationError("auth.tokens.jwksUrl is an https URL (http only to a loopback address)") }
            source = .url(url)
        case (nil, let file?): source = .file(file)
        default: throw ValidationError("give auth.tokens.jwksUrl or auth.tokens.jwksFile, not both")
        }
        guard let issuer, !issuer.isEmpty, let audience, !audience.isEmpty else {
            throw ValidationError("identity tokens need auth.tokens.issuer and auth.tokens.audience")
        }
        guard !userClaim.isEmpty else { throw ValidationError("auth.tokens.userClaim is empty") }
        return IdentityTokenSettings(keys: source, issuer: issuer, audience: audience, userClaim: userClaim)
    }

    /// The declared Live Activity types, when given.
    private func liveActivitySchema() throws -> APNsLiveActivitySchema? {
        guard let schemaFiles else { return nil }
        func read(_ path: String) throws -> APNsFieldSchema {
            guard let data = FileManager.default.contents(atPath: path) else { throw fail("cannot read \(path)") }
            do throws(APNsFieldSchema.ParseError) {
                return try APNsFieldSchema(json: Array(data))
            } catch {
                throw fail("\(path): \(error)")
            }
        }
        return APNsLiveActivitySchema(contentState: try read(schemaFiles.contentState), attributes: try schemaFiles.attributes.map(read))
    }

    /// APNs settings; the key file is read here and never printed.
    private static func apnsSettings(_ apns: APNsOptions, liveActivity: APNsLiveActivitySchema?) throws -> APNsSettings {
        guard let data = FileManager.default.contents(atPath: apns.keyFile), data.count <= 16 << 10 else {
            throw fail("cannot read the key file \(apns.keyFile)")
        }
        let key: APNsSigningKey
        do throws(APNsTokenError) {
            key = try APNsSigningKey(pemRepresentation: String(decoding: data, as: UTF8.self), keyID: apns.keyID, teamID: apns.teamID)
        } catch {
            throw fail("\(apns.keyFile): \(error.message)")
        }
        return APNsSettings(
            signingKey: key, topic: apns.topic, endpoint: apns.endpoint, trustRoots: try trustRoots(apns.caFile), liveActivity: liveActivity,
            otherEnvironmentEndpoint: apns.otherEndpoint, checkDevice: apns.checkDevice)
    }

    /// FCM settings; the service account's file is read here and never printed.
    private static func fcmSettings(_ fcm: FCMOptions) throws -> FCMSettings {
        var found: FCMServiceAccount?
        do throws(FCMCredentialsError) {
            if let file = fcm.serviceAccountFile {
                found = try FCMServiceAccount(contentsOfFile: file)
            } else {
                found = try FCMServiceAccount.fromEnvironment()
            }
        } catch {
            throw fail("the FCM service account: \(error.message)")
        }
        guard var account = found else { throw fail("delivery direct needs fcm.serviceAccount or GOOGLE_APPLICATION_CREDENTIALS") }
        if let tokenURI = fcm.tokenURI { account.tokenURI = tokenURI }
        return FCMSettings(serviceAccount: account, projectID: fcm.projectID, endpoint: fcm.endpoint, trustRoots: try trustRoots(fcm.caFile))
    }

    /// The certificates of a `caFile` option, which a client trusts instead of the system's roots.
    private static func trustRoots(_ caFile: String?) throws -> [NIOSSLCertificate]? {
        guard let caFile else { return nil }
        guard let roots = try? NIOSSLCertificate.fromPEMFile(caFile) else { throw fail("\(caFile) is not a readable PEM certificate") }
        return roots
    }

    /// HTTPS's configuration; the key is read here and never printed.
    private func tlsConfiguration() throws -> TLSConfiguration? {
        switch tls {
        case nil:
            return nil
        case .files(let certificateFile, let keyFile):
            guard let chain = try? NIOSSLCertificate.fromPEMFile(certificateFile), !chain.isEmpty else {
                throw fail("\(certificateFile) is not a readable PEM certificate")
            }
            guard let key = try? NIOSSLPrivateKey(file: keyFile, format: .pem) else { throw fail("\(keyFile) is not a readable PEM private key") }
            return .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        case .selfSigned(let certificateOut):
            let identity = try APNsEmulatorIdentity.generate()
            do {
                try identity.certificatePEM.write(toFile: certificateOut, atomically: true, encoding: .utf8)
            } catch {
                throw fail("cannot write \(certificateOut)")
            }
            return identity.serverTLSConfiguration()
        }
    }

    func serve() async throws {
        var configuration = configuration
        configuration.tls = try tlsConfiguration()
        let level = logLevel
        // Logs go to stderr: stdout's first lines are addresses, for scripts to read.
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        var services: [any Service] = []
        var metricsEndpoint: MetricsEndpoint?
        if let metrics {
            let endpoint = MetricsEndpoint(host: metrics.host, port: metrics.port, logger: Logger(label: "push-backend"))
            services.append(endpoint.service)
            metricsEndpoint = endpoint
        }
        // stdout's lines, in this order, are what scripts read: the API, an emulator, the metrics.
        let (host, metricsHost) = (configuration.host, metrics?.host ?? "")
        let scheme = configuration.tls == nil ? "http" : "https"
        if configuration.tls == nil && configuration.authentication.contains(.basic) && !NetworkAddress.isLoopback(host) {
            Logger(label: "push-backend").warning(
                "serving Basic authentication over plain HTTP on a non-loopback address: passwords cross the network in the clear; give tls.certificate and tls.key, or put a TLS proxy in front",
                metadata: ["host": "\(host)"])
        }
        let announce: @Sendable (_ port: Int, _ emulator: String?) async -> Void = { [metricsEndpoint] port, emulator in
            print("listening on \(scheme)://\(host):\(port)")
            if let emulator { print(emulator) }
            if let port = await metricsEndpoint?.port() { print("metrics on http://\(metricsHost):\(port)") }
            fflush(nil)  // stdout is a pipe when scripts read it
        }
        let backend: PushBackendService
        let liveActivity = try liveActivitySchema()
        switch delivery {
        case .apns(let options):
            let settings = try Self.apnsSettings(options, liveActivity: liveActivity)
            backend = PushBackendService(configuration, delivery: { .apns(settings) }) { port in await announce(port, nil) }
        case .direct(let apns, let fcm):
            let settings = (try Self.apnsSettings(apns, liveActivity: liveActivity), try Self.fcmSettings(fcm))
            backend = PushBackendService(configuration, delivery: { .direct(settings.0, settings.1) }) { port in await announce(port, nil) }
        case .apnsEmulator(let topic, let checkDevice, let withFCM):
            var emulatorLogger = Logger(label: "apns-emulator")
            emulatorLogger[metadataKey: "component"] = "apns-emulator"
            let demoAPNs = try DemoAPNs(topic: topic, logger: emulatorLogger)
            services.append(contentsOf: demoAPNs.services)
            var fcmLogger = Logger(label: "fcm-emulator")
            fcmLogger[metadataKey: "component"] = "fcm-emulator"
            let demoFCM = withFCM ? try DemoFCM(logger: fcmLogger) : nil
            if let demoFCM { services.append(demoFCM.service) }
            Logger(label: "push-backend").notice(
                withFCM ? "demo mode: pushes go to the APNs and FCM emulators" : "demo mode: pushes go to the APNs emulator",
                metadata: ["topic": "\(demoAPNs.topic)"])
            backend = PushBackendService(
                configuration,
                delivery: {
                    let apns = try await demoAPNs.settings(liveActivity: liveActivity, checkDevice: checkDevice)
                    guard let demoFCM else { return .apns(apns) }
                    return .direct(apns, try await demoFCM.settings())
                }
            ) { port in
                let emulators = [
                    demoAPNs.port.map { "apns emulator on https://127.0.0.1:\($0)" }, demoFCM?.port.map { "fcm emulator on https://127.0.0.1:\($0)" },
                ]
                await announce(port, emulators.compactMap { $0 }.joined(separator: "\n"))
            }
        case .hub(let settings):
            backend = PushBackendService(configuration, hub: settings) { port in await announce(port, nil) }
        case .hubEmulator:
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
