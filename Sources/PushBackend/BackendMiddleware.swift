import HTTPTypes
package import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore
import NotificationHubs
import OpenAPIRuntime
import PushCore

/// The request context: Hummingbird's, the caller once authentication has found them, the
/// client's address (password checks are budgeted per address), and the request's record for its
/// log line.
package struct BackendRequestContext: AuthRequestContext {
    package var coreContext: CoreRequestContextStorage
    package var identity: Authenticator.User?
    let remoteAddress: SocketAddress?
    /// Shared by the middleware that logs the request and the one that authenticates it, which
    /// sees a copy of the context.
    let record = RequestRecord()

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The address without its port: one budget per host.
    var client: String { remoteAddress?.ipAddress ?? "unknown" }

    /// The authenticated caller; routes behind ``CallerAuthentication`` always have one.
    var caller: Authenticator.User {
        get throws(APIError) {
            guard let identity else { throw .unauthorized("send HTTP Basic credentials or an API key") }
            return identity
        }
    }
}

/// What the log line of a request needs to know from deeper in the chain: written by the
/// authenticating middleware and read by the logging one once the rest of the chain has returned,
/// both on the request's own task, one after the other, so it needs no lock.
final class RequestRecord: @unchecked Sendable {
    var user: String?
}

/// Authentication through ``Authenticator`` (Basic, an API key or an identity token): puts the
/// caller in the context, or refuses the request (401 with `WWW-Authenticate`, 429 beyond a login
/// budget, 503 when the password checks are queued full or a token's keys cannot be fetched).
struct CallerAuthentication: AuthenticatorMiddleware {
    typealias Context = BackendRequestContext
    let authenticator: Authenticator

    func authenticate(request: Request, context: Context) async throws -> Authenticator.User? {
        let client = authenticator.clientAddress(
            peer: context.client, forwardedFor: request.headers[values: .xForwardedFor], forwarded: request.headers[values: .forwarded])
        let user = try await authenticator.authenticate(authorization: request.headers[.authorization], client: client)
        context.record.user = user.name
        return user
    }
}

/// The outermost middleware: gives each request an id (in its log metadata and its
/// `X-Request-Id`), turns every error into the API's JSON error answer, and logs one line per
/// request: never the `Authorization` header, a password, a token or a secure payload, only the
/// method, the path, the status, the user and the time taken.
struct RequestLogging: RouterMiddleware {
    typealias Context = BackendRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let clock = ContinuousClock()
        let started = clock.now
        let requestID = randomHex(bytes: 8)
        var context = context
        context.logger[metadataKey: "request-id"] = "\(requestID)"
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let refusal = APIError(error)
            if let detail = refusal.detail { context.logger.log(level: refusal.status.code >= 500 ? .error : .notice, "\(refusal.code): \(detail)") }
            response = refusal.response(isHead: request.method == .head)
        }
        response.headers[.requestID] = requestID
        let elapsed = (clock.now - started).components
        let milliseconds = Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15
        let status = response.status.code
        context.logger.info(
            "\(request.method.rawValue) \(request.uri.path) \(status)",
            metadata: ["user": "\(context.record.user ?? "-")", "status": "\(status)", "latency-ms": "\(milliseconds)"])
        return response
    }
}

/// A path with an empty segment (`/api//notifications`, a trailing `/`) names no resource here;
/// the router alone would read it as the path without the empty segment.
struct ExactPaths: RouterMiddleware {
    typealias Context = BackendRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard !path.contains("//"), path == "/" || !path.hasSuffix("/") else { throw APIError.notFound() }
        return try await next(request, context)
    }
}

/// Answers a method a path does not take with 405 and `Allow`, whatever the method (`QUERY`, an
/// extension method, or a usual one), before authentication. It looks only at requests the router
/// found no route for, so the requests it serves pay nothing for it.
struct AllowedMethods: RouterMiddleware {
    typealias Context = BackendRequestContext
    /// Each path's segments (`{name}` matches any one segment) and the methods it takes.
    private let routes: [(segments: [Substring], methods: [HTTPRequest.Method], allow: String)]

    /// The routes the router holds, as `Router.routes` lists them: a path and a method each.
    init(_ routes: [Router<Context>.RouteDescription]) {
        var paths: [String] = []
        var methods: [String: [HTTPRequest.Method]] = [:]
        for route in routes {
            let path = route.path.description
            if methods[path] == nil { paths.append(path) }
            methods[path, default: []].append(route.method)
        }
        self.routes = paths.map { path in
            let allowed = methods[path]!
            return (path.split(separator: "/"), allowed, allowed.map(\.rawValue).joined(separator: ", "))
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let segments = request.uri.path.split(separator: "/")
            let route = routes.first { route in
                route.segments.count == segments.count && zip(route.segments, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
            }
            guard let route, !route.methods.contains(request.method) else { throw error }
            throw APIError(
                status: 405, code: .methodNotAllowed, "\(request.method.rawValue) is not allowed here", headers: [("Allow", route.allow)])
        }
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-Id")!
}

extension APIError {
    /// Any error as the API answers it: store and hub failures mapped once, here; a path no route
    /// matches is 404.
    init(_ error: any Error) {
        switch error {
        case let refusal as APIError: self = refusal
        case let error as ServerError: self.init(error)
        case let error as StoreError: self = .storage(error)
        case let error as NotificationHubError: self = .hub(error)
        case let error as HTTPError where error.status == .notFound: self = .notFound()
        default:
            self = APIError(status: 500, code: .internalError, "the request failed; try again")
            detail = "\(error)"
        }
    }

    /// `{"error": {"code": …, "message": …}}` with the refusal's headers.
    func response(isHead: Bool = false) -> Response {
        Response.json(status.code, body, headers: headers, isHead: isHead)
    }
}

extension Response {
    /// A JSON answer with its length (HEAD included: no body, the GET body's length).
    static func json(_ status: Int, _ value: JSON, headers: [(String, String)] = [], isHead: Bool = false) -> Response {
        var bytes: [UInt8] = []
        try? value.write(into: &bytes)  // values built here hold valid strings and unique keys
        return json(status, bytes, headers: headers, isHead: isHead)
    }

    static func json(_ status: Int, _ bytes: [UInt8], headers: [(String, String)] = [], isHead: Bool = false) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        fields.append(headers)
        fields[.contentLength] = String(bytes.count)
        return Response(
            status: .init(code: status), headers: fields, body: isHead ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension HTTPFields {
    mutating func append(_ headers: [(String, String)]) {
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { append(HTTPField(name: name, value: value)) }
        }
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let forwarded = HTTPField.Name("Forwarded")!
}
