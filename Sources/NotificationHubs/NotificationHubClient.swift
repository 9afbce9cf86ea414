public import AsyncHTTPClient
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
public import PushAPNs
public import PushFCM
import PushInternals
import PushJSON
public import PushSAS

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends APNs notifications through Azure Notification Hubs and manages installations, over one
/// shared, pooled `HTTPClient`. Safe to share between tasks.
///
/// Every request carries a SAS token from a `SASTokenCache` (one token per hub, refreshed before
/// it expires; dropped and re-minted once if the hub still answers 401). Refused requests throw a
/// typed ``NotificationHubError``; throttling and unavailability are retried by ``RetryPolicy``.
/// The SAS key and tokens are never logged.
public final class NotificationHubClient: Sendable {
    public let endpoint: HubEndpoint
    public let retryPolicy: RetryPolicy
    /// The deadline for one attempt, from connecting to the last byte of the answer.
    public let timeout: Duration
    private let tokens: SASTokenCache
    private let http: HTTPClient
    private let logger: Logger

    /// The largest answer body read (error details, installations).
    static let maximumResponseBody = 1 << 20

    /// - Parameters:
    ///   - connectionString: the hub's connection string (a rule with Send rights to send, Manage for installations).
    ///   - hubName: the hub inside the namespace.
    ///   - endpointOverride: where to send instead of the namespace (the hub emulator); tokens are signed for the namespace all the same.
    ///   - retryPolicy: what is retried (throttling, the service's 5xx) and how long it waits.
    ///   - timeout: each request's deadline, an attempt at a time.
    ///   - clock: the time tokens are minted against.
    ///   - httpClient: defaults to AsyncHTTPClient's process-wide shared client.
    ///   - logger: for retries and refusals; never a key or a token.
    /// - Throws: ``NotificationHubError`` `badRequest` for a malformed connection string or hub name.
    public init(
        connectionString: String, hubName: String, endpointOverride: String? = nil, retryPolicy: RetryPolicy = RetryPolicy(),
        timeout: Duration = .seconds(30), clock: SASClock = .system, httpClient: HTTPClient = .shared,
        logger: Logger = Logger(label: "pushcore.notification-hubs")
    ) throws(NotificationHubError) {
        let connection: ConnectionString
        do throws(SASError) {
            connection = try ConnectionString(connectionString)
        } catch {
            throw NotificationHubError(.badRequest, "connection string: \(error)")
        }
        endpoint = try HubEndpoint(connection: connection, hubName: hubName, endpointOverride: endpointOverride)
        self.retryPolicy = retryPolicy
        self.timeout = timeout
        tokens = SASTokenCache(signer: SASSigner(connection), clock: clock)
        http = httpClient
        self.logger = logger
    }

    // MARK: Sending
    //
    // Requests are built (payload encoded, tags and handles checked) once, before the first
    // attempt; each attempt only puts a current token into the `Authorization` header.

    /// Sends `payload` to a target: a tag, tags, an expression, or (by name only) everybody.
    /// - Parameters:
    ///   - payload: the APNs payload, encoded once before the first attempt.
    ///   - headers: the APNs headers; derived from the payload when nil.
    ///   - target: who gets it.
    @discardableResult
    public func send(_ payload: APNsPayload, headers: APNsHeaders? = nil, to target: SendTarget) async throws(NotificationHubError) -> SendResult {
        let request = try endpoint.sendRequest(payload, headers: headers ?? APNsHeaders(for: payload), to: target, authorization: "")
        return SendResult(headers: try await execute("send", request).headers)
    }

    /// Sends `payload` to one device token, without installations.
    @discardableResult
    public func send(
        _ payload: APNsPayload, headers: APNsHeaders? = nil, toDevice deviceHandle: String
    ) async throws(NotificationHubError) -> SendResult {
        let request = try endpoint.directSendRequest(
            payload, headers: headers ?? APNsHeaders(for: payload), deviceHandle: deviceHandle, authorization: "")
        return SendResult(headers: try await execute("direct send", request).headers)
    }

    /// Sends `payload` to many device tokens, 1000 per request; one result per request, in order.
    /// Every handle is checked before the first batch goes: a bad one anywhere sends nothing.
    @discardableResult
    public func send(
        _ payload: APNsPayload, headers: APNsHeaders? = nil, toDevices deviceHandles: [String]
    ) async throws(NotificationHubError) -> [SendResult] {
        let batches = try endpoint.batchDirectSendRequests(
            payload, headers: headers ?? APNsHeaders(for: payload), deviceHandles: deviceHandles, authorization: "")
        var results: [SendResult] = []
        for batch in batches {
            results.append(SendResult(headers: try await execute("batch direct send", batch).headers))
        }
        return results
    }

    /// Sends an FCM v1 message to a target's `fcmv1` installations: a tag, tags, an expression,
    /// or everybody.
    @discardableResult
    public func send(_ message: FCMMessage, to target: SendTarget) async throws(NotificationHubError) -> SendResult {
        let request = try endpoint.sendRequest(message, to: target, authorization: "")
        return SendResult(headers: try await execute("send", request).headers)
    }

    /// Sends an FCM v1 message to one FCM registration token, without installations.
    @discardableResult
    public func send(_ message: FCMMessage, toDevice deviceHandle: String) async throws(NotificationHubError) -> SendResult {
        let request = try endpoint.directSendRequest(message, deviceHandle: deviceHandle, authorization: "")
        return SendResult(headers: try await execute("direct send", request).headers)
    }

    /// Sends an FCM v1 message to many FCM registration tokens, 1000 per request; one result per
    /// request, in order. Every token is checked before the first batch goes.
    @discardableResult
    public func send(_ message: FCMMessage, toDevices deviceHandles: [String]) async throws(NotificationHubError) -> [SendResult] {
        var results: [SendResult] = []
        for batch in try endpoint.batchDirectSendRequests(message, deviceHandles: deviceHandles, authorization: "") {
            results.append(SendResult(headers: try await execute("batch direct send", batch).headers))
        }
        return results
    }

    /// A template send: the hub puts `properties` into each template of the target's
    /// installations, whatever their platform, and sends each device its own payload.
    @discardableResult
    public func send(templateProperties properties: [String: String], to target: SendTarget) async throws(NotificationHubError) -> SendResult {
        let request = try endpoint.templateSendRequest(properties: properties, to: target, authorization: "")
        return SendResult(headers: try await execute("template send", request).headers)
    }

    // MARK: Test sends

    /// Sends `payload` as a test send: the hub reaches a few of the target's devices (ten) and
    /// says what became of each.
    public func testSend(
        _ payload: APNsPayload, headers: APNsHeaders? = nil, to target: SendTarget
    ) async throws(NotificationHubError)
        -> TestSendOutcome
    {
        try await testSend(endpoint.sendRequest(payload, headers: headers ?? APNsHeaders(for: payload), to: target, authorization: ""))
    }

    /// An FCM v1 message as a test send.
    public func testSend(_ message: FCMMessage, to target: SendTarget) async throws(NotificationHubError) -> TestSendOutcome {
        try await testSend(endpoint.sendRequest(message, to: target, authorization: ""))
    }

    /// A template send as a test send.
    public func testSend(
        templateProperties properties: [String: String], to target: SendTarget
    ) async throws(NotificationHubError)
        -> TestSendOutcome
    {
        try await testSend(endpoint.templateSendRequest(properties: properties, to: target, authorization: ""))
    }

    private func testSend(_ send: HubRequest) async throws(NotificationHubError) -> TestSendOutcome {
        try TestSendOutcome(xml: try await execute("test send", endpoint.testSendRequest(send)).body)
    }

    // MARK: Scheduled sends and outcomes

    /// Schedules `payload` for a target: the hub holds it until `unixSeconds` and finds the
    /// target's devices then. The result's `scheduledNotificationID` cancels it.
    @discardableResult
    public func schedule(
        _ payload: APNsPayload, headers: APNsHeaders? = nil, at unixSeconds: Int64, to target: SendTarget
    ) async throws(NotificationHubError) -> SendResult {
        let send = try endpoint.sendRequest(payload, headers: headers ?? APNsHeaders(for: payload), to: target, authorization: "")
        return SendResult(headers: try await execute("schedule", endpoint.scheduledSendRequest(send, at: unixSeconds)).headers)
    }

    /// Schedules an FCM v1 message for a target's `fcmv1` installations.
    @discardableResult
    public func schedule(_ message: FCMMessage, at unixSeconds: Int64, to target: SendTarget) async throws(NotificationHubError) -> SendResult {
        let send = try endpoint.sendRequest(message, to: target, authorization: "")
        return SendResult(headers: try await execute("schedule", endpoint.scheduledSendRequest(send, at: unixSeconds)).headers)
    }

    /// Schedules a template send.
    @discardableResult
    public func schedule(
        templateProperties properties: [String: String], at unixSeconds: Int64, to target: SendTarget
    ) async throws(NotificationHubError) -> SendResult {
        let send = try endpoint.templateSendRequest(properties: properties, to: target, authorization: "")
        return SendResult(headers: try await execute("schedule", endpoint.scheduledSendRequest(send, at: unixSeconds)).headers)
    }

    /// Cancels a scheduled send that has not gone yet.
    /// - Throws: `notFound` when there is none waiting under that id.
    public func cancelScheduled(id: String) async throws(NotificationHubError) {
        _ = try await execute("cancel scheduled", endpoint.cancelScheduledRequest(id: id, authorization: ""))
    }

    /// What became of a send, by the `notificationID` of its result (Standard tier hubs).
    public func notificationDetails(id: String) async throws(NotificationHubError) -> NotificationDetails {
        let response = try await execute("notification details", endpoint.notificationDetailsRequest(id: id, authorization: ""))
        return try NotificationDetails(xml: response.body)
    }

    // MARK: Installations

    /// Creates the installation, or replaces the one with the same id.
    public func createOrUpdate(_ installation: Installation) async throws(NotificationHubError) {
        _ = try await execute("put installation", endpoint.putInstallationRequest(installation, authorization: ""))
    }

    /// Applies JSON Patch operations to an installation.
    public func patchInstallation(id: String, _ operations: [InstallationPatch]) async throws(NotificationHubError) {
        _ = try await execute("patch installation", endpoint.patchInstallationRequest(id: id, operations, authorization: ""))
    }

    /// The installation with this id.
    /// - Throws: `notFound` when there is none.
    public func installation(id: String) async throws(NotificationHubError) -> Installation {
        let response = try await execute("get installation", endpoint.getInstallationRequest(id: id, authorization: ""))
        return try Installation(json: response.body)
    }

    /// Deletes the installation with this id (deleting one that does not exist succeeds).
    public func deleteInstallation(id: String) async throws(NotificationHubError) {
        _ = try await execute("delete installation", endpoint.deleteInstallationRequest(id: id, authorization: ""))
    }

    // MARK: Transport

    struct Answer {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: [UInt8]
    }

    /// Sends `unsigned` with a current token, retrying as the policy says.
    private func execute(_ operation: String, _ unsigned: HubRequest) async throws(NotificationHubError) -> Answer {
        let clock = ContinuousClock()
        let start = clock.now
        var random = SystemRandomNumberGenerator()
        var attempt = 0
        var refreshedToken = false
        while true {
            attempt += 1
            let authorization: String
            do throws(SASError) {
                authorization = try tokens.token(for: endpoint.tokenResource)
            } catch {
                throw NotificationHubError(.unauthorized, "cannot sign a token: \(error.message)")
            }
            let request = try unsigned.authorized(authorization)
            let outcome: RetryPolicy.Outcome
            let failure: NotificationHubError
            do {
                let answer = try await perform(request)
                if (200..<300).contains(answer.status) {
                    logger.debug("\(operation) succeeded", metadata: ["status": "\(answer.status)", "attempt": "\(attempt)"])
                    return answer
                }
                let retryAfter = answer.headers.first { $0.name.lowercased() == "retry-after" }
                    .flatMap { RetryAfter.parse($0.value, now: SASClock.system.now()) }
                let trackingID = answer.headers.first { $0.name.lowercased() == "trackingid" }?.value
                failure = NotificationHubError(status: answer.status, body: answer.body, trackingID: trackingID, retryAfter: retryAfter)
                if answer.status == 401 && !refreshedToken {
                    // The hub may see the token as expired (clock skew) or signed with a rotated key:
                    // mint a fresh one and try once more.
                    refreshedToken = true
                    tokens.removeAll()
                    logger.info("\(operation): 401, retrying once with a fresh token", metadata: ["tracking-id": "\(trackingID ?? "-")"])
                    continue
                }
                outcome = .response(status: answer.status, retryAfter: retryAfter)
            } catch {
                let notSent = Self.failedBeforeSending(error)
                failure = NotificationHubError(
                    .transportFailed, "\(operation): \(notSent ? "could not connect" : "no answer (the request may have been delivered)"): \(error)")
                // Idempotent requests may always be repeated; a POST only if it never left.
                outcome = notSent || request.isIdempotent ? .notSent : .unknown
            }
            guard let delay = retryPolicy.delay(afterAttempt: attempt, elapsed: clock.now - start, outcome: outcome, using: &random) else {
                logger.warning(
                    "\(operation) failed",
                    metadata: ["error": "\(failure.code)", "attempt": "\(attempt)", "tracking-id": "\(failure.trackingID ?? "-")"])
                throw failure
            }
            logger.info("\(operation): retrying", metadata: ["error": "\(failure.code)", "attempt": "\(attempt)", "delay": "\(delay)"])
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw failure  // cancelled while waiting
            }
        }
    }

    private func perform(_ request: HubRequest) async throws -> Answer {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        if !request.body.isEmpty { outgoing.body = .bytes(ByteBuffer(bytes: request.body)) }
        let response = try await http.execute(outgoing, timeout: TimeAmount(timeout), logger: nil)
        let body = try await response.body.collect(upTo: Self.maximumResponseBody)
        return Answer(
            status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
            body: Array(body.readableBytesView))
    }

    /// Whether the request certainly never reached the hub (the connection was never made).
    static func failedBeforeSending(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError {
            return [.connectTimeout, .getConnectionFromPoolTimeout, .tlsHandshakeTimeout].contains(error)
        }
        if error is NIOConnectionError { return true }
        if let error = error as? IOError { return error.errnoCode == ECONNREFUSED }
        return false
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
