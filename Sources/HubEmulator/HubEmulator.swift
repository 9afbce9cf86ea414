public import Hummingbird
public import HummingbirdCore
public import Logging
import NIOCore
public import NotificationHubs
public import PushCore
import PushServerSupport
import Synchronization

/// One hub the emulator plays: its name, and the connection string whose namespace and key it answers for.
public struct EmulatedHub: Sendable {
    public let name: String
    public let connection: ConnectionString

    public init(name: String, connection: ConnectionString) {
        self.name = name
        self.connection = connection
    }
}

/// A notification the emulator would have handed to APNs or FCM.
public struct Delivery: Sendable, Hashable {
    /// 1, 2, 3, … in the order deliveries were recorded; what `?since=` counts from.
    public let sequence: Int
    public let hub: String
    public let notificationID: String
    /// Whose service it went to: `apns` for a send in the `apple` format, `fcmv1` for one in `fcmv1`.
    public let platform: Installation.Platform
    public let deviceHandle: String
    /// The APNs headers as sent (`apns-push-type`, …), names lowercased; none for FCM.
    public let apnsHeaders: [String: String]
    public let payload: [UInt8]
    /// When the SAS token that authorised it expires: tests see tokens being refreshed without seeing tokens.
    public let tokenExpiry: Int64
}

/// A request to a hub, as the emulator received it.
public struct HubRequestRecord: Sendable, Hashable {
    public let method: String
    /// The path and, after `?`, the query, as sent.
    public let target: String
    /// Every header but `Authorization`, names lowercased; repeated ones joined with `, `.
    public let headers: [String: String]
    public let body: [UInt8]
}

/// What became of one send: how many devices each platform was handed, and the templates that
/// could not be sent (a template send's expansion that was not JSON, or that the platform refuses).
public struct NotificationOutcome: Sendable, Hashable {
    public struct Failure: Sendable, Hashable {
        public let installationID: String
        public let template: String
        public let platform: Installation.Platform
        /// The outcome's name in the hub's counts: `InvalidNotificationSize` or `InvalidNotificationFormat`.
        public let outcome: String
        /// Why, as the platform would say it (the size and limit, a lint code, …).
        public let reason: String
    }

    /// On the emulator's clock, in Unix seconds.
    public var enqueueTime: Int64
    /// The platforms of the devices the send reached or tried to.
    public var targetPlatforms: Set<Installation.Platform> = []
    public var delivered: [Installation.Platform: Int]
    public var failures: [Failure]
}

/// A send as the hub received it, before its devices are found (now, or when a scheduled one is due).
struct Dispatch: Sendable {
    enum Content: Sendable {
        case native(Installation.Platform, payload: [UInt8], apnsHeaders: [String: String])
        /// A template send's properties.
        case template(TemplateExpansion.Properties)
    }

    var content: Content
    /// The tags' expression; nil for everybody (or for a direct send).
    var expression: TagExpression?
    /// The device handles of a direct or batch send.
    var handles: [String]? = nil
    var tokenExpiry: Int64
    /// A test send (`?test`): a few devices, each one's result in the answer.
    var isTest = false

    /// Whether the send's tags reach the installation: by its tags, `$InstallationId:{id}`, and
    /// the tags of the template being sent.
    func reaches(_ installation: Installation, withTags templateTags: [String] = []) -> Bool {
        guard let expression else { return true }
        // The hub's own tags: every installation has its id's, and its user's when it has one.
        let systemTags = ["$InstallationId:{\(installation.installationID)}"] + (installation.userID.map { ["$UserId:{\($0)}"] } ?? [])
        return expression.matches(Set(installation.tags + templateTags + systemTags))
    }
}

/// A send held until the emulator's clock reaches `due`.
struct ScheduledSend: Sendable {
    let id: String
    let hub: String
    /// Unix seconds.
    let due: Int64
    let dispatch: Dispatch
}

/// What the next requests to a hub route answer instead of the real thing.
public enum Fault: Sendable, Hashable {
    /// This status, with `Retry-After` when given (seconds or an HTTP-date).
    case status(Int, retryAfter: String?)
    /// Answer only after this delay (longer than the client's timeout), then handle the request normally.
    case delay(Duration)
}

/// A local stand-in for an Azure Notification Hubs namespace, on 127.0.0.1: the REST routes a
/// backend uses, every request's SAS token verified by PushCore's verifier, payloads linted (APNs
/// payloads in the `apple` format, FCM v1 messages in `fcmv1`), tags resolved against the stored
/// installations of the format's platform, and every delivery recorded.
///
/// Routes: `POST /{hub}/messages` (tags in `ServiceBusNotification-Tags`, or none for a
/// broadcast), `POST /{hub}/messages?direct`, `POST /{hub}/messages/$batch?direct`,
/// `PUT|PATCH|GET|DELETE /{hub}/installations/{id}`. Test hooks, without authorisation:
/// `GET|DELETE /_emulator/deliveries` (the latest ``deliveryCapacity``, oldest first; `?since=N`
/// for those after sequence N), `POST /_emulator/faults` (`{"status":429,"retryAfter":"1","count":2}`
/// or `{"delaySeconds":3,"count":1}`) and `POST /_emulator/clock` (`{"advanceSeconds":N}`), both
/// off when built with `allowsFaultInjection: false`, `GET /_emulator/requests` (the number of hub
/// requests received).
public final class HubEmulator: Sendable {
    struct Storage {
        var installations: [String: [String: Installation]] = [:]
        /// A ring: the oldest are dropped beyond ``HubEmulator/deliveryCapacity``.
        var deliveries: [Delivery] = []
        var firstDelivery = 0
        var lastSequence = 0
        var faults = FaultQueue<Fault>()
        var requests = 0
        /// The latest ``HubEmulator/requestLogCapacity`` hub requests, oldest first.
        var requestLog: [HubRequestRecord] = []
        var notifications = 0
        /// By `hub/notificationID`.
        var outcomes: [String: NotificationOutcome] = [:]
        /// By `hub/id`.
        var scheduled: [String: ScheduledSend] = [:]
        var scheduledCount = 0
        /// Added to the clock for scheduled sends and outcome times (`POST /_emulator/clock`).
        var clockOffset: Int64 = 0
    }

    /// Deliveries kept; older ones are forgotten (their sequence numbers are not reused).
    public let deliveryCapacity: Int
    /// Whether `POST /_emulator/faults` is served (in-process ``inject(_:)`` always works).
    public let allowsFaultInjection: Bool
    /// Faults queued at most; a request for more is refused.
    public static let maximumQueuedFaults = 1000
    /// The longest delay a fault may ask for.
    public static let maximumFaultDelay = Duration.seconds(300)

    let hubs: [String: EmulatedHub]
    let verifiers: [String: SASVerifier]
    let clock: SASClock
    let state = Mutex(Storage())

    public init(hubs: [EmulatedHub], clock: SASClock = .system, deliveryCapacity: Int = 10_000, allowsFaultInjection: Bool = true) {
        precondition(deliveryCapacity >= 1, "the emulator keeps at least one delivery")
        self.deliveryCapacity = deliveryCapacity
        self.allowsFaultInjection = allowsFaultInjection
        var byName: [String: EmulatedHub] = [:]
        var verifiers: [String: SASVerifier] = [:]
        for hub in hubs {
            byName[hub.name] = hub
            verifiers[hub.name] = SASVerifier(hub.connection)
        }
        self.hubs = byName
        self.verifiers = verifiers
        self.clock = clock
    }

    /// Serves until the task is cancelled.
    /// - Parameters:
    ///   - port: 0 picks a free port.
    ///   - onListening: called with the bound port once the server accepts connections.
    public func run(port: Int = 0, logger: Logger = Logger(label: "hub-emulator"), onListening: @escaping @Sendable (Int) async -> Void) async throws
    {
        try await application(port: port, logger: logger, onListening: onListening).run()
    }

    /// The server as a service, for a `ServiceGroup` that shuts it down gracefully with others.
    /// - Parameter connectionCap: Decides when to stop accepting connections (a process that
    ///   serves other things caps each of its listeners).
    public func application(
        port: Int = 0, logger: Logger = Logger(label: "hub-emulator"), connectionCap: (any AvailableConnectionsDelegate)? = nil,
        onListening: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol {
        Application(
            router: router(),
            // A silent connection does not hold a socket for ever (also in `push-backend --demo`).
            server: .http1(configuration: .init(idleTimeout: .seconds(30))),
            configuration: ApplicationConfiguration(
                address: .hostname("127.0.0.1", port: port), serverName: "hub-emulator", availableConnectionsDelegate: connectionCap),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    // MARK: In-process access (what the HTTP test hooks return)

    /// What became of a send, by the id in its `Location`.
    public func outcome(of notificationID: String, in hub: String) -> NotificationOutcome? {
        releaseDueSends()
        return state.withLock { $0.outcomes[hub + "/" + notificationID] }
    }

    /// Moves the clock that scheduled sends wait for, and delivers those that are due.
    public func advanceClock(by duration: Duration) {
        state.withLock { $0.clockOffset += duration.components.seconds }
        releaseDueSends()
    }

    /// The emulator's time in Unix seconds: the clock it was given, moved by ``advanceClock(by:)``.
    func now() -> Int64 { clock.now() + state.withLock { $0.clockOffset } }

    /// The scheduled sends still waiting, by hub and id.
    public var scheduledSendCount: Int {
        releaseDueSends()
        return state.withLock { $0.scheduled.count }
    }

    /// The deliveries kept, oldest first.
    public var deliveries: [Delivery] { deliveries(since: 0) }

    /// The deliveries kept whose sequence is above `sequence`, oldest first.
    public func deliveries(since sequence: Int) -> [Delivery] {
        releaseDueSends()
        return state.withLock { storage in
            let ordered = storage.deliveries[storage.firstDelivery...] + storage.deliveries[..<storage.firstDelivery]
            return ordered.filter { $0.sequence > sequence }
        }
    }

    public var requestCount: Int { state.withLock { $0.requests } }

    /// Hub requests kept for ``requestLog``; older ones are forgotten.
    static let requestLogCapacity = 1000

    /// The latest hub requests as they arrived (without their `Authorization`), oldest first:
    /// what tests compare a client's requests with.
    public var requestLog: [HubRequestRecord] { state.withLock { $0.requestLog } }
    public func inject(_ faults: [Fault]) { state.withLock { _ = $0.faults.enqueue(faults, after: 0) } }
    /// Forgets deliveries, faults and counts; installations stay, and sequence numbers go on.
    public func reset() {
        state.withLock {
            $0 = Storage(
                installations: $0.installations, lastSequence: $0.lastSequence, scheduled: $0.scheduled, scheduledCount: $0.scheduledCount,
                clockOffset: $0.clockOffset)
        }
    }

    /// Records a delivery in the ring.
    func record(_ make: (Int) -> Delivery, in storage: inout Storage) {
        storage.lastSequence += 1
        let delivery = make(storage.lastSequence)
        if storage.deliveries.count < deliveryCapacity {
            storage.deliveries.append(delivery)
        } else {
            storage.deliveries[storage.firstDelivery] = delivery
            storage.firstDelivery = (storage.firstDelivery + 1) % deliveryCapacity
        }
    }
    public func installations(in hub: String) -> [Installation] { state.withLock { Array(($0.installations[hub] ?? [:]).values) } }
}

extension HubEmulator: RecordingEmulator {}

extension HubEmulator: FaultInjectingEmulator {
    package func queue(_ faults: [Fault], after requests: Int) -> Bool {
        state.withLock { $0.faults.enqueue(faults, after: requests, limit: Self.maximumQueuedFaults) }
    }
}
