public import Foundation
import HTTPTypes
public import OpenAPIRuntime
import PushInternals
import PushJSON

#if canImport(OpenAPIURLSession)
import OpenAPIURLSession
#endif
#if canImport(OpenAPIAsyncHTTPClient)
import AsyncHTTPClient
import NIOCore
import NIOPosix
import OpenAPIAsyncHTTPClient
#endif

/// The app's side of `push-backend`'s API: register the device and its Live Activity tokens,
/// list notifications, fetch a secure body, download a rich notification's image.
///
/// Every call runs within the `timeout` it is given, waiting out a `Retry-After` that fits in
/// it and failing at once with ``PushClientError/throttled(retryAfter:)`` on one that does not.
/// Errors are ``PushClientError``s, which never hold a password, a secure body or a header.
public struct PushBackendClient: Sendable {
    let client: Client

    /// - Parameters:
    ///   - serverURL: The backend, `https://push.example.com` (the API's paths start with `/api`).
    ///   - credentials: Asked before each request.
    ///   - transport: By default URLSession on Apple platforms, and AsyncHTTPClient's shared client
    ///     on Linux, where URLSession cannot stream a download.
    public init(serverURL: URL, credentials: any PushCredentialStore, transport: (any ClientTransport)? = nil) {
        client = Client(
            serverURL: serverURL, transport: transport ?? Self.platformTransport(),
            middlewares: [ErrorMiddleware(), BasicAuthenticationMiddleware(store: credentials), ResumeHeaders.Middleware()])
    }

    /// A client that signs its requests with a bearer token: an API key, or an access token the
    /// app's own sign-in gives.
    /// - Parameters:
    ///   - serverURL: The backend, `https://push.example.com`.
    ///   - token: Asked before each request, with `false`; when the backend refuses the token (401),
    ///     asked once more with `true`, so that the app can renew it, and the request is sent again
    ///     with the new one (a request whose body can be read only once is not). Nil when nobody
    ///     is signed in: the call fails with ``PushClientError/unauthorized`` before sending.
    ///   - transport: As ``init(serverURL:credentials:transport:)`` takes it.
    public init(
        serverURL: URL, token: @escaping @Sendable (_ renewing: Bool) async throws -> String?, transport: (any ClientTransport)? = nil
    ) {
        client = Client(
            serverURL: serverURL, transport: transport ?? Self.platformTransport(),
            middlewares: [ErrorMiddleware(), BearerAuthenticationMiddleware(token: token), ResumeHeaders.Middleware()])
    }

    /// The transport used when none is given: URLSession on Apple platforms, AsyncHTTPClient's
    /// shared client on Linux.
    public static func platformTransport() -> any ClientTransport {
        #if canImport(OpenAPIURLSession)
        URLSessionTransport()
        #else
        AsyncHTTPClientTransport(configuration: .init(client: linuxClient, timeout: .seconds(60)))
        #endif
    }

    #if canImport(OpenAPIAsyncHTTPClient)
    /// AsyncHTTPClient's shared client retries a connection that fails until the request's own
    /// deadline: a backend that is down would answer `deadlineExceeded` only then. This one
    /// fails at once, as URLSession does, and the call maps the failure to ``PushClientError``.
    private static let linuxClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
    #endif

    // MARK: Registration

    /// Registers the device token APNs gave the app (its raw bytes, as
    /// `didRegisterForRemoteNotificationsWithDeviceToken` hands them over) for the signed-in user.
    /// Each registration of a token replaces the one before it, whose id then no longer exists:
    /// ``PushRegistrationKeeper`` registers only when the token or the user changed.
    /// - Returns: The registration, whose id ``unregisterDevice(registrationID:within:)`` takes.
    public func registerDevice(token: some Sequence<UInt8>, within timeout: Duration) async throws(PushClientError) -> PushRegistration {
        let hex = Self.hex(token)
        return try await run(within: timeout) {
            switch try await client.registerDevice(body: .json(.AppleDeviceRegistration(.init(deviceToken: hex)))) {
            case .created(let created):
                let registered = try created.body.json
                return PushRegistration(id: registered.id, deviceToken: hex, reachable: registered.reachable, reason: registered.reason)
            default: throw PushClientError.invalidResponse("registration answered without an id")
            }
        }
    }

    /// Deletes a registration this user made, when they sign out on this device.
    public func unregisterDevice(registrationID: String, within timeout: Duration) async throws(PushClientError) {
        guard PushMessage.isBackendID(registrationID) else { throw .notFound }
        try await run(within: timeout) {
            guard case .noContent = try await client.unregisterDevice(path: .init(id: registrationID)) else {
                throw PushClientError.invalidResponse("unregistration answered otherwise than 204")
            }
        }
    }

    /// What an ActivityKit push token is for.
    public enum ActivityTokenKind: String, Sendable {
        /// The app's push-to-start token: the backend may start an activity with it.
        case pushToStart
        /// One running activity's own token: the backend updates and ends it with it.
        case activity
    }

    /// Registers an ActivityKit push token (its raw bytes) for the signed-in user.
    /// - Returns: Its id, for ``deleteActivityToken(id:within:)``.
    public func registerActivityToken(
        _ token: some Sequence<UInt8>, kind: ActivityTokenKind, within timeout: Duration
    ) async throws(PushClientError) -> String {
        let hex = Self.hex(token)
        let kind: Components.Schemas.ActivityRegistration.KindPayload = kind == .pushToStart ? .pushToStart : .activity
        return try await run(within: timeout) {
            switch try await client.registerActivityToken(body: .json(.init(token: hex, kind: kind))) {
            case .created(let created): try created.body.json.id
            default: throw PushClientError.invalidResponse("registration answered without an id")
            }
        }
    }

    /// Deletes an activity token this user registered, once the activity ended.
    public func deleteActivityToken(id: String, within timeout: Duration) async throws(PushClientError) {
        guard PushMessage.isBackendID(id) else { throw .notFound }
        try await run(within: timeout) {
            guard case .noContent = try await client.deleteActivityToken(path: .init(id: id)) else {
                throw PushClientError.invalidResponse("deletion answered otherwise than 204")
            }
        }
    }

    // MARK: Notifications

    /// One of the user's notifications, as the backend lists them.
    public struct NotificationSummary: Sendable, Hashable {
        public enum Kind: String, Sendable { case rich, secure }
        public let id: String
        public let kind: Kind
        public let from: String
        /// Unix time in milliseconds.
        public let createdAt: Int
        public let read: Bool
        /// A rich notification's text.
        public let message: String?
    }

    /// The user's notifications, newest first.
    public func notifications(limit: Int = 100, within timeout: Duration) async throws(PushClientError) -> [NotificationSummary] {
        try await run(within: timeout) {
            switch try await client.listNotifications(query: .init(limit: limit)) {
            case .ok(let ok):
                try ok.body.json.notifications.map {
                    NotificationSummary(
                        id: $0.id, kind: $0.kind == .rich ? .rich : .secure, from: $0.from, createdAt: $0.createdAt, read: $0.read,
                        message: $0.message)
                }
            default: throw PushClientError.invalidResponse("the list answered otherwise than 200")
            }
        }
    }

    /// A secure notification's text, fetched over the authenticated connection.
    public func secureBody(id: String, within timeout: Duration) async throws(PushClientError) -> String {
        guard PushMessage.isBackendID(id) else { throw .notFound }
        return try await run(within: timeout) {
            switch try await client.fetchNotification(path: .init(id: id)) {
            case .ok(let ok):
                guard case .json(let content) = ok.body else { throw PushClientError.unsupportedType("an image, not a secure body") }
                return content.payload
            default: throw PushClientError.invalidResponse("a secure body answered otherwise than 200")
            }
        }
    }

    /// Marks a notification read, once the user has seen it (fetching its image or secure body
    /// does not: an extension fetches before anyone looks). Marking it again changes nothing.
    public func markRead(id: String, within timeout: Duration) async throws(PushClientError) {
        guard PushMessage.isBackendID(id) else { throw .notFound }
        try await run(within: timeout) {
            guard case .noContent = try await client.markNotificationRead(path: .init(id: id)) else {
                throw PushClientError.invalidResponse("marking read answered otherwise than 204")
            }
        }
    }

    // MARK: Running a call

    /// Runs `attempt` until it succeeds, fails otherwise than throttled, or the deadline passes;
    /// a throttled attempt is tried again after the wait the backend asked for, if that fits.
    func run<Result: Sendable>(
        within timeout: Duration, _ attempt: @escaping @Sendable () async throws -> Result
    ) async throws(PushClientError) -> Result {
        let deadline = ContinuousClock.now + timeout
        do {
            return try await withThrowingTaskGroup(of: Result?.self) { group in
                group.addTask {
                    while true {
                        do {
                            return try await attempt()
                        } catch {
                            guard case .throttled(let wait) = Self.mapped(error), ContinuousClock.now + wait < deadline else { throw error }
                            try await Task.sleep(for: wait)
                        }
                    }
                }
                group.addTask {
                    try await Task.sleep(until: deadline, clock: .continuous)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else { throw PushClientError.deadlineExceeded }
                return result
            }
        } catch {
            throw ContinuousClock.now >= deadline ? .deadlineExceeded : Self.mapped(error)
        }
    }

    /// Any error as a ``PushClientError``. A generated client's error holds the request, headers
    /// included: only its underlying error's own text is kept.
    package static func mapped(_ error: any Error) -> PushClientError {
        switch error {
        case let error as PushClientError: return error
        case let error as ClientError: return mapped(error.underlyingError)
        case is CancellationError: return .cancelled
        case is DecodingError: return .invalidResponse("a body does not match the API's contract")
        case let error as URLError: return mapped(error.code) ?? .transport("URLError \(error.code.rawValue)")
        default:
            #if canImport(OpenAPIAsyncHTTPClient)
            if let mapped = mappedFromNIO(error) { return mapped }
            #endif
            return .transport(String(describing: error))
        }
    }

    /// URLSession's failures an app acts on differently.
    static func mapped(_ code: URLError.Code) -> PushClientError? {
        switch code {
        case .cancelled: .cancelled
        case .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff, .callIsActive: .offline
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .secureConnectionFailed, .serverCertificateUntrusted,
            .serverCertificateHasBadDate, .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            .cannotConnect
        case .networkConnectionLost: .connectionLost
        case .timedOut: .deadlineExceeded
        default: nil
        }
    }

    #if canImport(OpenAPIAsyncHTTPClient)
    /// AsyncHTTPClient's and NIO's failures, the same way.
    static func mappedFromNIO(_ error: any Error) -> PushClientError? {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .cancelled: return .cancelled
            case .connectTimeout, .socksHandshakeTimeout, .tlsHandshakeTimeout: return .cannotConnect
            case .remoteConnectionClosed, .bodyLengthMismatch: return .connectionLost
            case .readTimeout, .writeTimeout, .deadlineExceeded: return .deadlineExceeded
            default: return nil
            }
        case is NIOConnectionError: return .cannotConnect
        case let error as IOError:
            switch error.errnoCode {
            case ENETUNREACH, ENETDOWN: return .offline
            case ECONNREFUSED, EHOSTUNREACH, ETIMEDOUT, EADDRNOTAVAIL: return .cannotConnect
            case ECONNRESET, EPIPE, ECONNABORTED: return .connectionLost
            default: return nil
            }
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return .cannotConnect
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed: return .connectionLost
            default: return nil
            }
        default: return nil
        }
    }
    #endif

    /// Bytes in lowercase hex, as the backend takes tokens.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.lowercase(Array(bytes)) }
}

/// Turns the backend's refusals into ``PushClientError``s before the generated code decodes them,
/// so that a code a newer backend adds, or a status the contract does not list, is still acted
/// on by its status. A 416 passes: the image download handles it.
struct ErrorMiddleware: ClientMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        let status = response.status.code
        if operationID == "fetchNotification", status == 200 || status == 206 {
            // What a notification attachment takes, or a secure body; anything else is refused
            // by name rather than as the generated code's decoding failure.
            let mediaType = response.headerFields[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard let mediaType, Self.fetchedTypes.contains(mediaType) else {
                throw PushClientError.unsupportedType(mediaType ?? "no content type")
            }
        }
        guard status >= 400, status != 416 else { return (response, responseBody) }
        let retryAfter = response.headerFields[.retryAfter].flatMap { RetryAfter.parse($0, now: Int64(Date().timeIntervalSince1970)) }
        switch status {
        case 401: throw PushClientError.unauthorized
        case 404, 410: throw PushClientError.notFound
        case 429: throw PushClientError.throttled(retryAfter: retryAfter ?? .seconds(1))
        case 503 where retryAfter != nil: throw PushClientError.throttled(retryAfter: retryAfter ?? .seconds(1))
        default: throw PushClientError.refused(status: status, code: await Self.code(in: responseBody))
        }
    }

    static let fetchedTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "application/json"]

    /// The error code in `{"error": {"code": …}}`, read from at most 64 KiB.
    static func code(in body: HTTPBody?) async -> String {
        guard let body, let bytes = try? await [UInt8](collecting: body, upTo: 64 << 10) else { return "unknown" }
        var parser = JSONParser()
        guard let document = try? parser.parse(bytes), let code = document.root["error"]?["code"]?.string else { return "unknown" }
        return code
    }
}
