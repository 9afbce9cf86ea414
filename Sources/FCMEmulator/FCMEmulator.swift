public import APNsEmulator
public import FCM
import Foundation
import HTTPTypes
public import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
public import Logging
import NIOCore
import NIOSSL
import PushFCM
import PushInternals
import PushJSON
import PushServerSupport
import ServiceLifecycle
import Synchronization

/// A message the emulator accepted, as FCM would have handed it on.
public struct FCMDelivery: Sendable, Hashable {
    /// 1, 2, 3, … in the order messages were accepted.
    public let sequence: Int
    /// `projects/{project}/messages/{sequence}`, as answered.
    public let name: String
    /// The registration token, `/topics/NAME`, or the condition.
    public let target: String
    /// The request's body as sent: `{"message": {…}}`.
    public let body: [UInt8]
    /// `2` or `1.1`: Firebase's SDKs use both.
    public let httpVersion: String
}

/// What the next `messages:send` requests answer instead of the real thing.
public enum FCMFault: Sendable, Hashable {
    /// This status with FCM's error body for it (429 `QUOTA_EXCEEDED`, 500 `INTERNAL`, 503
    /// `UNAVAILABLE`, …), with `Retry-After` when given.
    case status(Int, retryAfter: String?)
    /// A delay, a GOAWAY, a dropped or a silenced connection.
    case connection(ConnectionFault)
}

/// A registration token's state, as the emulator's tests set it; a well-formed token is active until then.
public enum FCMTokenState: Sendable, Hashable {
    case active
    /// Answered 404 `UNREGISTERED`.
    case unregistered
    /// Answered 403 `SENDER_ID_MISMATCH`.
    case senderIDMismatch
}

/// A local, verifying stand-in for FCM's HTTP v1 API and Google's OAuth 2 token endpoint, on one
/// TLS port that speaks HTTP/2 and HTTP/1.1 (ALPN), with a certificate made at start.
///
/// - `POST /token`: a service account's assertion (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`),
///   checked as Google checks it (RS256 by the account's key, `iss`, `aud` the token URI, a scope
///   that grants FCM, `iat`/`exp` an hour at most and current), answered `{"access_token",
///   "expires_in", "token_type": "Bearer"}`, or 400 `{"error": "invalid_grant", "error_description"}`.
/// - `POST /v1/projects/{project}/messages:send`: the bearer token, the project, the body (JSON,
///   PushFCM's lint, one target, 4,096 bytes of message), the token's form and state; answered
///   `{"name": "projects/{project}/messages/{n}"}` or Google's error body with an `FcmError` detail.
///   `validate_only` checks without delivering.
/// - Test hooks, without authorisation: `GET|DELETE /_emulator/deliveries` (`?since=N`), `GET
///   /_emulator/requests`, `GET /_emulator/token-requests`; and, unless faults are off (`--demo`),
///   `PUT /_emulator/tokens/{token}` (`{"state": "unregistered" | "senderIdMismatch" | "active"}`),
///   `POST /_emulator/revoke` (every access token given so far stops working), `POST
///   /_emulator/faults` (`{"status": 429, "retryAfter": "1", "count": 3}`, `{"delayMilliseconds": 500}`,
///   `{"connection": "goAway" | "drop" | "silence", "after": 100}`).
public final class FCMEmulator: Sendable {
    struct Storage {
        var deliveries: [FCMDelivery] = []
        var sequence = 0
        var tokenStates: [String: FCMTokenState] = [:]
        var faults = FaultQueue<FCMFault>()
        var requests = 0
        var tokenRequests = 0
        /// Access tokens given, and when each stops working.
        var accessTokens: [String: ContinuousClock.Instant] = [:]
    }

    public static let maximumQueuedFaults = 1000
    public static let maximumFaultDelay = Duration.seconds(300)
    static let maximumAccessTokens = 10_000
    static let maximumTokenStates = 100_000
    /// Scopes that let an access token send: FCM's own, and the broader ones Firebase Admin asks for.
    static let sendingScopes: Set<String> = [
        "https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/cloud-platform",
        "https://www.googleapis.com/auth/firebase",
    ]

    let account: FCMServiceAccount
    public let projectID: String
    /// How long an access token lasts (`expires_in`).
    public let accessTokenLifetime: Duration
    public let deliveryCapacity: Int
    /// Whether the fault, token-state and revocation hooks are served.
    public let allowsFaultInjection: Bool
    /// Benchmark mode: the bearer token checked, 200 to every send, nothing parsed or recorded.
    public let isBenchmark: Bool
    let state = Mutex(Storage())
    let benchmarkSequence = Atomic<Int>(0)

    /// - Parameters:
    ///   - serviceAccount: The account whose assertions are accepted (its public key checks them).
    ///   - projectID: The project messages are sent in; the account's by default.
    public init(
        serviceAccount: FCMServiceAccount, projectID: String? = nil, accessTokenLifetime: Duration = .seconds(3600),
        deliveryCapacity: Int = 100_000, allowsFaultInjection: Bool = true, isBenchmark: Bool = false
    ) {
        account = serviceAccount
        self.projectID = projectID ?? serviceAccount.projectID
        self.accessTokenLifetime = max(accessTokenLifetime, .seconds(1))
        self.deliveryCapacity = max(deliveryCapacity, 1)
        self.allowsFaultInjection = allowsFaultInjection
        self.isBenchmark = isBenchmark
    }

    /// How long a connection without a request in progress stays open.
    public static let idleTimeout = APNsEmulator.idleTimeout

    /// Serves on 127.0.0.1 until the task is cancelled.
    public func run(
        port: Int = 0, identity: APNsEmulatorIdentity, logger: Logger = Logger(label: "fcm-emulator"),
        onListening: @escaping @Sendable (Int) async -> Void
    ) async throws {
        try await application(port: port, identity: identity, logger: logger, onListening: onListening).run()
    }

    /// The server as a service, for a `ServiceGroup`.
    public func application(
        port: Int = 0, identity: APNsEmulatorIdentity, logger: Logger = Logger(label: "fcm-emulator"),
        onListening: @escaping @Sendable (Int) async -> Void
    ) throws -> some ApplicationProtocol {
        try EmulatorConnectionFaults.application(
            router: router(), tls: identity.serverTLSConfiguration(), serverName: "fcm-emulator", port: port, logger: logger,
            onListening: onListening)
    }

    // MARK: In-process access (what the HTTP test hooks do)

    public var deliveries: [FCMDelivery] { deliveries(since: 0) }

    public func deliveries(since sequence: Int) -> [FCMDelivery] {
        state.withLock { $0.deliveries.filter { $0.sequence > sequence } }
    }

    /// The access tokens given that still work, for tests that look for them where they must not be.
    package var issuedAccessTokens: [String] { state.withLock { Array($0.accessTokens.keys) } }

    /// `messages:send` requests received, answered or not.
    public var requestCount: Int { state.withLock { $0.requests } }
    /// Requests to `/token`, granted or not.
    public var tokenRequestCount: Int { state.withLock { $0.tokenRequests } }

    /// Queues `faults`, one per request, the first after `requests` more requests pass untouched.
    public func inject(_ faults: [FCMFault], after requests: Int = 0) {
        state.withLock { _ = $0.faults.enqueue(faults, after: requests) }
    }

    public func setState(_ tokenState: FCMTokenState, for token: String) {
        state.withLock { storage in
            if tokenState == .active {
                storage.tokenStates[token] = nil
            } else if storage.tokenStates.count < Self.maximumTokenStates || storage.tokenStates[token] != nil {
                storage.tokenStates[token] = tokenState
            }
        }
    }

    /// Every access token given so far stops working, as when a key is disabled: the next request
    /// with one is answered 401.
    public func revokeAccessTokens() {
        state.withLock { $0.accessTokens = [:] }
    }

    /// Forgets deliveries, faults and the request counts; token states and access tokens stay.
    public func reset() {
        state.withLock { storage in
            storage.deliveries = []
            storage.faults.removeAll()
            storage.requests = 0
            storage.tokenRequests = 0
        }
    }
}

extension FCMEmulator: RecordingEmulator {}

extension FCMEmulator: FaultInjectingEmulator {
    package func queue(_ faults: [FCMFault], after requests: Int) -> Bool {
        state.withLock { $0.faults.enqueue(faults, after: requests, limit: Self.maximumQueuedFaults) }
    }
}
