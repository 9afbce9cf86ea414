import Crypto
import Foundation
public import Hummingbird
public import HummingbirdCore
import HummingbirdHTTP2
public import Logging
import NIOCore
public import NIOSSL
public import PushAPNs
public import PushAPNsTokens
import PushServerSupport
import SwiftASN1
import Synchronization
import X509

/// A notification the emulator accepted, as APNs would have handed it to a device.
public struct APNsDelivery: Sendable, Hashable {
    /// 1, 2, 3, … in the order deliveries were accepted.
    public let sequence: Int
    /// The connection that carried it: 1, 2, 3, … in the order connections sent their first
    /// request, never reused, so a test sees a GOAWAY or a client's connections at work.
    public let connection: Int
    public let deviceToken: String
    /// The `apns-id` answered (the request's, or one the emulator made).
    public let apnsID: String
    public let topic: String
    public let pushType: APNsPushType
    public let priority: Int
    public let collapseID: String?
    public let expiration: Int?
    public let payload: [UInt8]
    /// The `iat` of the provider token that authorised it (tests see refreshes without seeing
    /// tokens); nil when a client certificate did.
    public let tokenIssuedAt: Int64?
    /// The broadcast channel it came on, for a broadcast to a subscribed device.
    public let channelID: String?
}

/// What the next requests answer instead of the real thing.
public enum APNsFault: Sendable, Hashable {
    /// This status and reason (`{"reason": …}`), with `Retry-After` when given.
    case status(Int, reason: String, retryAfter: String?)
    /// A delay, a GOAWAY, a dropped or a silenced connection.
    case connection(ConnectionFault)
}

/// A device token's state, as the emulator's tests set it; a well-formed token is active until then.
public enum APNsDeviceState: Sendable, Hashable {
    case active
    /// Answered 410 `Unregistered` with this `timestamp` (milliseconds since 1970).
    case unregistered(sinceMilliseconds: Int64)
    /// Answered 400 `BadDeviceToken` (a token of the other environment, say).
    case bad
}

/// A local, verifying stand-in for APNs' provider API: HTTP/2 over TLS on 127.0.0.1 with a
/// certificate made at start, checking what APNs checks — the provider token (signature, key,
/// team, age, refresh rate), the topic against the team's bundle ids and the push type's suffix,
/// priority, expiration, collapse id, `apns-id`, payload size per push type, JSON, and the device
/// token's form and state — and recording every notification it accepts.
///
/// Routes: `POST /3/device/{token}`; broadcast channels (iOS 18) on the same port, where APNs
/// has its management hosts: `POST|GET|DELETE /1/apps/{bundle}/channels` (`apns-channel-id`),
/// `GET /1/apps/{bundle}/all-channels`, and `POST /4/broadcasts/apps/{bundle}`, delivered to every
/// device subscribed to the channel. Test hooks, without authorisation: `POST|DELETE
/// /_emulator/subscriptions` (`{"channel": ID, "devices": [TOKEN, …]}`, as ActivityKit subscribes
/// a Live Activity), `GET|DELETE
/// /_emulator/deliveries` (`?since=N`), `PUT /_emulator/devices/{token}` (`{"state":"unregistered",
/// "since":MILLISECONDS}`, `{"state":"bad"}` or `{"state":"active"}`), `POST /_emulator/faults`
/// (`{"status":429,"reason":"TooManyRequests","retryAfter":"1","count":2}`,
/// `{"delayMilliseconds":500}`, `{"connection":"goAway","after":100}`, `{"connection":"drop"}` or
/// `{"connection":"silence"}`),
/// `GET /_emulator/requests`.
///
/// Authentication is by provider token, or, when the emulator has client-certificate roots, by a
/// client certificate that chains to one of them.
///
/// A body that is not JSON is answered 400 `BadPayload`: APNs documents no reason for it.
public final class APNsEmulator: Sendable {
    struct Storage {
        var deliveries: [APNsDelivery] = []
        var devices: [String: APNsDeviceState] = [:]
        /// The app (bundle id) each bound device token belongs to; a push on another app's topic
        /// is answered `DeviceTokenNotForTopic`. Unbound tokens belong to every app.
        var deviceApps: [String: String] = [:]
        var faults = FaultQueue<APNsFault>()
        var requests = 0
        /// Per connection and team: the token last accepted and when (emulator seconds) it
        /// replaced the one before. APNs judges the refresh rate on a connection, over all of a
        /// team's keys; a new connection starts afresh (it may reach another APNs host).
        var tokens: [TokenSlot: (token: String, since: Int64)] = [:]
        /// The open connections' numbers, and the last number given.
        var connectionNumbers: [ObjectIdentifier: Int] = [:]
        var connectionsSeen = 0
        /// Tokens whose signature verified, so that each is verified once (APNs, too, verifies a
        /// token once per connection rather than once per request); their age is checked every time.
        var verifiedTokens: [String: APNsProviderTokenClaims] = [:]
        /// Broadcast channels by id.
        var channels: [String: BroadcastChannel] = [:]
        /// In benchmark mode, the authorization each connection last had accepted.
        var benchmarkTokens: [ObjectIdentifier: String] = [:]

        var nextSequence: Int { (deliveries.last?.sequence ?? 0) + 1 }

        /// Keeps `delivery`, dropping the older half of what is kept when full.
        mutating func record(_ delivery: APNsDelivery, capacity: Int) {
            if deliveries.count >= capacity { deliveries.removeFirst(deliveries.count / 2) }
            deliveries.append(delivery)
        }
    }

    struct BroadcastChannel {
        let bundleID: String
        let storagePolicy: Int
        /// Subscribed device tokens (lowercase), in the order they subscribed.
        var subscribers: [String] = []
        var subscriberSet: Set<String> = []
    }

    struct TokenSlot: Hashable {
        let connection: Int
        let teamID: String
    }

    public static let maximumQueuedFaults = 1000
    /// The most requests a fault may wait for (`after`).
    public static let maximumRequestsBeforeFault = 1_000_000
    static let maximumVerifiedTokens = 256
    public static let maximumFaultDelay = Duration.seconds(300)
    /// APNs refuses a team's new token on a connection sooner than this after the last change.
    public static let minimumTokenInterval: Int64 = 20 * 60
    /// Channels an app may keep per environment, as on APNs.
    public static let maximumChannels = 10_000
    /// Devices subscribed to one channel, and to all channels together: the subscription hook
    /// holds a token per subscription, so an unbounded one is an unbounded heap.
    public static let maximumSubscribersPerChannel = 10_000
    public static let maximumSubscriptions = 100_000

    let verifier: APNsTokenVerifier
    let bundleIDs: Set<String>
    /// The roots that client certificates must chain to; empty when only tokens are accepted.
    let clientCertificateRoots: [NIOSSLCertificate]
    let clock: APNsTokenClock
    /// Whether answers carry `apns-unique-id`, as the development environment's do.
    public let isDevelopment: Bool
    public let deliveryCapacity: Int
    /// Whether the fault and device-state hooks are served: off where anyone who reaches the port
    /// could otherwise break sends or have the backend prune registrations (`serve --demo`).
    public let allowsFaultInjection: Bool
    /// Benchmark mode: a connection's token checked once, 200 to every well-formed send, nothing recorded.
    public let isBenchmark: Bool
    let state = Mutex(Storage())

    /// - Parameters:
    ///   - keys: The keys whose tokens are accepted, with their key and team ids.
    ///   - bundleIDs: The topics the team may send to (each also with its push types' suffixes).
    ///   - clientCertificateRoots: When given, a client may present a certificate that chains to one
    ///     of them instead of sending provider tokens (certificate-based authentication).
    ///   - allowsFaultInjection: Serve `POST /_emulator/faults` and `PUT /_emulator/devices/{token}`.
    ///   - isBenchmark: Check a connection's provider token once (and again when it changes), then
    ///     answer 200 to every request with a push type, a topic, a well-formed device token and a
    ///     body of the allowed size, recording nothing and applying no fault: a server that costs
    ///     little, so that a benchmark measures the client.
    public init(
        keys: [APNsVerificationKey], bundleIDs: [String], clientCertificateRoots: [NIOSSLCertificate] = [], clock: APNsTokenClock = .system,
        isDevelopment: Bool = true, deliveryCapacity: Int = 100_000, allowsFaultInjection: Bool = true, isBenchmark: Bool = false
    ) {
        self.allowsFaultInjection = allowsFaultInjection
        self.isBenchmark = isBenchmark
        self.clientCertificateRoots = clientCertificateRoots
        verifier = APNsTokenVerifier(keys: keys, maximumAge: 60 * 60, clockSkew: 60)
        self.bundleIDs = Set(bundleIDs)
        self.clock = clock
        self.isDevelopment = isDevelopment
        self.deliveryCapacity = max(deliveryCapacity, 1)
    }

    /// Serves on 127.0.0.1 until the task is cancelled.
    /// - Parameters:
    ///   - port: 0 picks a free port.
    ///   - identity: The server's certificate and key; ``APNsEmulatorIdentity/generate()`` makes one.
    ///   - onListening: called with the bound port once the server accepts connections.
    public func run(
        port: Int = 0, identity: APNsEmulatorIdentity, logger: Logger = Logger(label: "apns-emulator"),
        onListening: @escaping @Sendable (Int) async -> Void
    ) async throws {
        try await application(port: port, identity: identity, logger: logger, onListening: onListening).run()
    }

    /// How long a connection without a request in progress stays open.
    public static let idleTimeout = Duration.seconds(30)

    /// The server as a service, for a `ServiceGroup`.
    /// - Parameter connectionCap: Decides when to stop accepting connections (a process that
    ///   serves other things caps each of its listeners).
    public func application(
        port: Int = 0, identity: APNsEmulatorIdentity, logger: Logger = Logger(label: "apns-emulator"),
        connectionCap: (any AvailableConnectionsDelegate)? = nil, onListening: @escaping @Sendable (Int) async -> Void
    ) throws -> some ApplicationProtocol {
        var tls = identity.serverTLSConfiguration()
        if !clientCertificateRoots.isEmpty {
            // Asked for, and verified when presented: token clients present none.
            tls.certificateVerification = .optionalVerification
            tls.trustRoots = .certificates(clientCertificateRoots)
        }
        return try EmulatorConnectionFaults.application(
            router: router(), tls: tls, serverName: "apns-emulator", port: port, connectionCap: connectionCap, logger: logger,
            onListening: onListening)
    }

    // MARK: In-process access (what the HTTP test hooks do)

    /// The deliveries kept, oldest first.
    public var deliveries: [APNsDelivery] { deliveries(since: 0) }

    public func deliveries(since sequence: Int) -> [APNsDelivery] {
        state.withLock { $0.deliveries.filter { $0.sequence > sequence } }
    }

    public var requestCount: Int { state.withLock { $0.requests } }

    /// Queues `faults`, one per request, the first after `requests` more requests pass untouched.
    public func inject(_ faults: [APNsFault], after requests: Int = 0) {
        state.withLock { _ = $0.faults.enqueue(faults, after: requests) }
    }

    public func setState(_ deviceState: APNsDeviceState, for deviceToken: String) {
        state.withLock { $0.devices[deviceToken.lowercased()] = deviceState }
    }

    /// Binds device tokens to one app, as APNs binds a token to the app that asked for it: a push
    /// to them on any other of the team's topics is answered `DeviceTokenNotForTopic`.
    public func bind(_ deviceTokens: [String], toApp bundleID: String) {
        state.withLock { storage in
            for token in deviceTokens { storage.deviceApps[token.lowercased()] = bundleID }
        }
    }

    /// Subscribes devices to a channel, as ActivityKit does for a Live Activity that asks for one.
    /// All of them or, past ``maximumSubscribersPerChannel`` or ``maximumSubscriptions``, none.
    /// - Returns: False when there is no such channel.
    /// - Throws: ``SubscriptionLimitExceeded`` when the devices would pass a limit.
    @discardableResult
    public func subscribe(_ deviceTokens: [String], to channelID: String) throws(SubscriptionLimitExceeded) -> Bool {
        try state.withLock { storage throws(SubscriptionLimitExceeded) in
            guard var channel = storage.channels[channelID] else { return false }
            let joining = Set(deviceTokens.map { $0.lowercased() }).subtracting(channel.subscriberSet)
            let total = storage.channels.values.reduce(0) { $0 + $1.subscribers.count }
            guard channel.subscribers.count + joining.count <= Self.maximumSubscribersPerChannel,
                total + joining.count <= Self.maximumSubscriptions
            else { throw SubscriptionLimitExceeded() }
            for token in deviceTokens.map({ $0.lowercased() }) where channel.subscriberSet.insert(token).inserted {
                channel.subscribers.append(token)
            }
            storage.channels[channelID] = channel
            return true
        }
    }

    /// Ends devices' subscriptions to a channel (their Live Activity ended).
    @discardableResult
    public func unsubscribe(_ deviceTokens: [String], from channelID: String) -> Bool {
        state.withLock { storage in
            guard var channel = storage.channels[channelID] else { return false }
            let leaving = Set(deviceTokens.map { $0.lowercased() })
            channel.subscribers.removeAll { leaving.contains($0) }
            channel.subscriberSet.subtract(leaving)
            storage.channels[channelID] = channel
            return true
        }
    }

    /// The ids of the channels that exist, in no particular order.
    public var channelIDs: [String] { state.withLock { Array($0.channels.keys) } }

    /// Forgets deliveries, faults and the request count; device states, channels and tokens stay.
    public func reset() {
        state.withLock { storage in
            storage.deliveries = []
            storage.faults.removeAll()
            storage.requests = 0
        }
    }
}

/// The emulator's TLS identity: a self-signed certificate for `127.0.0.1` and `localhost` and its key.
public struct APNsEmulatorIdentity: Sendable {
    public let certificatePEM: String
    /// For tests that stand up a server of their own with the same identity.
    package let privateKeyPEM: String
    let certificate: NIOSSLCertificate
    let privateKey: NIOSSLPrivateKey

    public init(certificatePEM: String, privateKeyPEM: String) throws {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
        certificate = try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)
        privateKey = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
    }

    /// The server side of this identity: its certificate and key, for a TLS listener.
    package func serverTLSConfiguration() -> TLSConfiguration {
        .makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(privateKey))
    }

    /// A new P-256 key and a self-signed certificate for it, valid for a day (from a minute ago, for
    /// clocks a little behind), for `localhost` and `127.0.0.1`; made with swift-certificates.
    public static func generate() throws -> APNsEmulatorIdentity {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now - 60, notValidAfter: now + 24 * 3600, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        return try APNsEmulatorIdentity(certificatePEM: certificate.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
    }
}

/// A subscription past ``APNsEmulator/maximumSubscribersPerChannel`` or
/// ``APNsEmulator/maximumSubscriptions``.
public struct SubscriptionLimitExceeded: Error, Sendable, CustomStringConvertible {
    public var description: String {
        "at most \(APNsEmulator.maximumSubscribersPerChannel) devices a channel and \(APNsEmulator.maximumSubscriptions) in all"
    }
}

extension APNsEmulator: RecordingEmulator {}

extension APNsEmulator: FaultInjectingEmulator {
    package func queue(_ faults: [APNsFault], after requests: Int) -> Bool {
        state.withLock { $0.faults.enqueue(faults, after: requests, limit: Self.maximumQueuedFaults) }
    }
}
