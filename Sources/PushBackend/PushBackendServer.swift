public import APNs
public import FCM
import Hummingbird
public import Logging
import NIOCore
public import NIOSSL
import NotificationHubs
public import PushAPNsTokens
public import PushCore
public import PushInternals
import RichPushImages
public import ServiceLifecycle

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
    /// The other environment, asked before a token this one calls `BadDeviceToken` is deleted;
    /// without one such tokens are kept. Defaults to the other of Apple's two environments when
    /// ``endpoint`` is one of them.
    public var otherEnvironmentEndpoint: String?
    /// A device known to be registered for ``topic``: at start the backend sends it one background
    /// push and refuses to start unless APNs takes it.
    public var checkDevice: String?

    public init(
        signingKey: APNsSigningKey, topic: String, endpoint: String = APNsClientConfiguration.production, trustRoots: [NIOSSLCertificate]? = nil,
        liveActivity: APNsLiveActivitySchema? = nil, otherEnvironmentEndpoint: String? = nil, checkDevice: String? = nil
    ) {
        self.signingKey = signingKey
        self.topic = topic
        self.endpoint = endpoint
        self.trustRoots = trustRoots
        self.liveActivity = liveActivity
        self.otherEnvironmentEndpoint =
            otherEnvironmentEndpoint
            ?? [
                APNsClientConfiguration.production: APNsClientConfiguration.development,
                APNsClientConfiguration.development: APNsClientConfiguration.production,
            ][endpoint]
        self.checkDevice = checkDevice
    }
}

/// The APNs settings cannot work: the key does not sign, or the check device's push was refused
/// for a reason that blames the settings. The message names the setting to look at, never the key.
public struct APNsConfigurationError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        /// The key cannot sign a provider token.
        case keyCannotSign
        /// The check device's push could not be sent, or APNs did not answer it.
        case checkNotSent
        /// APNs refused the check device's push for a reason that blames the settings.
        case checkRefused
    }

    public let code: Code
    public let message: String

    public var description: String { message }
}

/// FCM straight from the backend, for Android devices beside APNs' Apple ones.
public struct FCMSettings: Sendable {
    /// The service account's key (never printed); its `token_uri` is where access tokens come from.
    public var serviceAccount: FCMServiceAccount
    /// The project messages are sent in; the service account's when nil.
    public var projectID: String?
    /// ``FCMClientConfiguration/production``, or an emulator.
    public var endpoint: String
    /// Roots to trust instead of the system's (an emulator's certificate), for the endpoint and
    /// the token URI alike.
    public var trustRoots: [NIOSSLCertificate]?

    public init(
        serviceAccount: FCMServiceAccount, projectID: String? = nil, endpoint: String = FCMClientConfiguration.production,
        trustRoots: [NIOSSLCertificate]? = nil
    ) {
        self.serviceAccount = serviceAccount
        self.projectID = projectID
        self.endpoint = endpoint
        self.trustRoots = trustRoots
    }
}

/// Where the backend's pushes go.
public enum PushDelivery: Sendable {
    case hub(HubSettings)
    /// Straight to APNs; Android registrations are kept, unreached.
    case apns(APNsSettings)
    /// Straight to APNs and to FCM: every registration is reached, without a hub.
    case direct(APNsSettings, FCMSettings)
}

/// What one user may register: device tokens and Live Activity tokens up to a number each, and
/// registrations of either at a rate. A person has a handful of devices; the caps keep one account
/// from turning each notification into thousands of pushes.
public struct RegistrationLimits: Sendable, Hashable {
    public var maximumDevices: Int
    public var maximumActivityTokens: Int
    /// Registrations of devices and activity tokens together, per user.
    public var rate: RateLimit

    /// 100 devices, 100 activity tokens, 20 registrations at once and then one every 6 s.
    public init(maximumDevices: Int = 100, maximumActivityTokens: Int = 100, rate: RateLimit = RateLimit(burst: 20, perSecond: 1.0 / 6)) {
        self.maximumDevices = maximumDevices
        self.maximumActivityTokens = maximumActivityTokens
        self.rate = rate
    }
}

/// Its description and mirror name the database without its password, which must never reach a
/// log line (the service group logs its services at debug level).
public struct BackendConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
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
    /// Each notification costs one per device it reaches.
    public var sendQuota: RateLimit
    /// Devices and activity tokens per user, and how fast they may be registered.
    public var registrations: RegistrationLimits
    /// How long notifications are kept; older ones are deleted by a sweep every ``retentionSweepInterval``.
    public var retention: Duration
    public var retentionSweepInterval: Duration
    /// HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this certificate and key; plain HTTP/1.1 when nil.
    public var tls: TLSConfiguration?
    /// The ways callers may sign in: Basic and API keys unless one is switched off, and identity
    /// tokens when ``identityTokens`` is set.
    public var authentication: AuthenticationSchemes = .all
    /// The identity provider whose tokens apps sign in with; none when nil.
    public var identityTokens: IdentityTokenSettings?
    /// Uploaded images: their size, each user's share, how long an unused one is kept.
    public var images = ImageLimits()

    public init(
        dataDirectory: String, databaseURL: String? = nil, host: String = "127.0.0.1", port: Int = 8080,
        defaultImage: String = "pushcore-logo.png",
        server: ServerLimits = ServerLimits(), logins: LoginLimits = LoginLimits(), sendQuota: RateLimit = Self.defaultSendQuota,
        registrations: RegistrationLimits = RegistrationLimits(),
        retention: Duration = Self.defaultRetention, retentionSweepInterval: Duration = .seconds(3600), tls: TLSConfiguration? = nil
    ) {
        self.dataDirectory = dataDirectory
        self.databaseURL = databaseURL
        self.host = host
        self.port = port
        self.defaultImage = defaultImage
        self.server = server
        self.logins = logins
        self.sendQuota = sendQuota
        self.registrations = registrations
        self.retention = retention
        self.retentionSweepInterval = retentionSweepInterval
        self.tls = tls
    }

    public var description: String {
        "BackendConfiguration(dataDirectory: \(dataDirectory), databaseURL: \(redactedDatabaseURL ?? "nil"), host: \(host), port: \(port), tls: \(tls != nil))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "dataDirectory": dataDirectory, "databaseURL": redactedDatabaseURL as Any, "host": host, "port": port, "server": server,
                "logins": logins, "sendQuota": sendQuota, "retention": retention, "tls": tls != nil,
                "identityTokens": identityTokens as Any,
            ], displayStyle: .struct)
    }

    /// ``databaseURL`` without its password (nor its query).
    var redactedDatabaseURL: String? { databaseURL.map(PostgresBackendStore.redacted) }

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
public struct PushBackendService: Service, CustomStringConvertible {
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

    public var description: String { "PushBackendService(\(configuration))" }

    public func run() async throws {
        let application = try await buildApplication(configuration, delivery: try await delivery(), logger: logger, onListening: onListening)
        try await application.run()
        logger.notice("stopped")
    }

    /// Refuses to start with APNs settings that cannot work: the key must sign, and the check
    /// device, when given, must take a background push (or be known to APNs as uninstalled).
    package static func checkAPNs(_ apns: DirectAPNs, tokens: APNsTokenCache, device: String?, logger: Logger) async throws(APNsConfigurationError) {
        do throws(APNsTokenError) {
            _ = try tokens.token()
        } catch {
            throw APNsConfigurationError(code: .keyCannotSign, message: "the APNs key cannot sign a provider token: \(error.message)")
        }
        guard let device else { return }
        let headers = APNsHeaders(for: DirectAPNs.probe, topic: apns.topic)
        let result: APNsSendResult
        do throws(APNsClientError) {
            result = try await apns.client.send(DirectAPNs.probe, headers: headers, to: [device])[0]
        } catch {
            throw APNsConfigurationError(code: .checkNotSent, message: "the check device's push could not be sent: \(error.message)")
        }
        let shortened = APNsClient.shortened(device)
        switch result.outcome {
        case .delivered:
            logger.notice("APNs settings checked: the check device took a background push", metadata: ["device": "\(shortened)"])
        case .rejected(_, .unregistered, _), .rejected(_, .expiredToken, _):
            // APNs knows the token for this topic and environment: the settings are right, the app is gone.
            logger.warning("APNs settings checked, but the check device's app is no longer installed", metadata: ["device": "\(shortened)"])
        case .rejected(_, .badDeviceToken, _):
            let other = await apns.secondOpinions(on: [result])[0]
            if other?.isDelivered == true {
                throw APNsConfigurationError(
                    code: .checkRefused,
                    message:
                        "APNs answered BadDeviceToken for the check device \(shortened), and the other environment took it: the server points at the wrong environment (--apns-development)"
                )
            }
            guard apns.otherEnvironment != nil else {
                throw APNsConfigurationError(
                    code: .checkRefused,
                    message: "APNs answered BadDeviceToken for the check device \(shortened), and no other environment is configured to ask")
            }
            throw APNsConfigurationError(
                code: .checkRefused,
                message:
                    "APNs answered BadDeviceToken for the check device \(shortened) in this environment and the other: it is not a token of this app")
        case .rejected(let status, let reason, _):
            throw APNsConfigurationError(
                code: .checkRefused,
                message: "APNs refused the check device's push with \(status) \(reason): check the topic (\(apns.topic)), key id and team id")
        case .failed(let failure, _):
            throw APNsConfigurationError(code: .checkNotSent, message: "APNs did not answer the check device's push (\(failure)): check the endpoint")
        }
    }
}
