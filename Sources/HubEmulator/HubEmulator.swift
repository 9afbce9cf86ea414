import Hummingbird
import Logging
import NIOCore
import NotificationHubs
import PushCore
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

/// A notification the emulator would have handed to APNs.
public struct Delivery: Sendable, Hashable {
    public let hub: String
    public let notificationID: String
    public let deviceHandle: String
    /// The APNs headers as sent (`apns-push-type`, …), names lowercased.
    public let apnsHeaders: [String: String]
    public let payload: [UInt8]
    /// When the SAS token that authorised it expires: tests see tokens being refreshed without seeing tokens.
    public let tokenExpiry: Int64
}

/// What the next requests to a hub route answer instead of the real thing.
public enum Fault: Sendable, Hashable {
    /// This status, with `Retry-After` when given (seconds or an HTTP-date).
    case status(Int, retryAfter: String?)
    /// Answer only after this delay (longer than the client's timeout), then handle the request normally.
    case delay(Duration)
}

/// A local stand-in for an Azure Notification Hubs namespace, on 127.0.0.1: the REST routes a
/// backend uses, every request's SAS token verified by PushCore's verifier, payloads linted, tags
/// resolved against stored installations, and every delivery recorded.
///
/// Routes: `POST /{hub}/messages/` (tags in `ServiceBusNotification-Tags`, or none for a
/// broadcast), `POST /{hub}/messages/?direct`, `POST /{hub}/messages/$batch?direct`,
/// `PUT|PATCH|GET|DELETE /{hub}/installations/{id}`. Test hooks, without authorisation:
/// `GET|DELETE /_emulator/deliveries`, `POST /_emulator/faults` (`{"status":429,"retryAfter":"1","count":2}`
/// or `{"delaySeconds":3,"count":1}`), `GET /_emulator/requests` (the number of hub requests received).
public final class HubEmulator: Sendable {
    struct Storage {
        var installations: [String: [String: Installation]] = [:]
        var deliveries: [Delivery] = []
        var faults: [Fault] = []
        var requests = 0
        var sequence = 0
    }

    let hubs: [String: EmulatedHub]
    let verifiers: [String: SASVerifier]
    let clock: SASClock
    let state = Mutex(Storage())

    public init(hubs: [EmulatedHub], clock: SASClock = .system) {
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
    public func run(port: Int = 0, logger: Logger = Logger(label: "hub-emulator"), onListening: @escaping @Sendable (Int) async -> Void) async throws {
        try await application(port: port, logger: logger, onListening: onListening).run()
    }

    /// The server as a service, for a `ServiceGroup` that shuts it down gracefully with others.
    public func application(
        port: Int = 0, logger: Logger = Logger(label: "hub-emulator"), onListening: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol {
        Application(
            responder: CallbackResponder<BasicRequestContext> { request, _ in try await self.respond(to: request) },
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: "hub-emulator"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    // MARK: In-process access (what the HTTP test hooks return)

    public var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    public var requestCount: Int { state.withLock { $0.requests } }
    public func inject(_ faults: [Fault]) { state.withLock { $0.faults += faults } }
    public func reset() { state.withLock { $0 = Storage(installations: $0.installations) } }
    public func installations(in hub: String) -> [Installation] { state.withLock { Array(($0.installations[hub] ?? [:]).values) } }
}
