import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OpenAPIHummingbird
import OpenAPIRuntime
import PushCore

/// The Hummingbird context of the request a generated handler serves. The generated server hands
/// a handler only the operation's input, so the caller and the logger travel in a task-local
/// value, set by ``RequestScope/Middleware`` around each generated route.
enum RequestScope {
    struct Current: Sendable {
        let context: BackendRequestContext
        /// The query, for the operations that refuse parameters they do not know.
        let query: String?
    }

    @TaskLocal static var current: Current?

    /// The authenticated caller: routes behind ``CallerAuthentication`` always have one.
    static var caller: Authenticator.User {
        get throws(APIError) {
            guard let current else { throw .unauthorized("send HTTP Basic credentials or an API key") }
            return try current.context.caller
        }
    }

    static var logger: Logger { current?.context.logger ?? Logger(label: "push-backend") }

    struct Middleware: RouterMiddleware {
        typealias Context = BackendRequestContext

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            try await RequestScope.$current.withValue(Current(context: context, query: request.uri.query)) { try await next(request, context) }
        }
    }
}

/// Registers each generated operation on the router group whose middleware it needs, chosen by
/// its path (`/api/register/{id}`, as the document spells it).
struct GroupedTransport: ServerTransport {
    let group: (String) -> RouterGroup<BackendRequestContext>

    func register(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method, path: String
    ) throws {
        group(path).register(handler, method: method, path: path)
    }
}

/// What every generated operation's request passes before the generated code reads it: the one
/// place where request bodies are held to what PushCore's parser takes.
///
/// - A body (every generated `POST` takes a JSON one, and no other method does) must be
///   `application/json` (415), at most ``BackendAPI/maximumRequestBody`` bytes (413), and pass
///   ``RequestBody/check(_:)``. The generated decoding then checks the shape: unknown keys, missing
///   ones, types.
/// - `Accept` is disregarded, as RFC 9110 §12.5.1 lets a server do: the generated code checks it
///   only once the handler has run, and a notification sent must not be answered 406.
struct ContractInput: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest, body requestBody: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.accept] = nil
        var body: HTTPBody?
        if request.method == .post {
            guard RequestBody.isJSON(request.headerFields[.contentType]) else {
                throw APIError(status: 415, code: .unsupportedMediaType, "send the body as application/json")
            }
            let bytes: [UInt8]
            do {
                bytes = try await [UInt8](collecting: requestBody ?? HTTPBody(), upTo: BackendAPI.maximumRequestBody)
            } catch {
                throw APIError(status: 413, code: .bodyTooLarge, "the body is over \(BackendAPI.maximumRequestBody) bytes")
            }
            try RequestBody.check(bytes)
            body = HTTPBody(bytes)
        }
        var (response, responseBody) = try await next(request, body, metadata)
        // The runtime writes a header's value as a URI component (`/` as `%2F`); `Location` is a
        // URI reference, and goes out as the handler wrote it.
        if let location = response.headerFields[.location] { response.headerFields[.location] = Self.percentDecoded(location) }
        return (response, responseBody)
    }

    /// `%2F` as `/`; a `%` not followed by two hex digits as it is.
    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                case (let high, let low) = (hexDigitValue(utf8.first!), hexDigitValue(utf8.dropFirst().first!)),
                high <= 15, low <= 15
            {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension APIError {
    /// What the generated server threw, as the API answers it: a refusal of ours as it is; a
    /// request the generated code could not read (it has no input yet) as a 400 naming the field
    /// of a body, or the query of an operation without one (its path's ids are strings).
    init(_ error: ServerError) {
        switch error.underlyingError {
        case let error as ServerError:
            self.init(error)
        case is APIError, is StoreError, is CancellationError:
            self.init(error.underlyingError)
        case let decoding as DecodingError where error.operationInput == nil && error.request.method == .post:
            self = .decoding(decoding)
        case let other where error.operationInput == nil:
            self = .badRequest(error.request.method == .post ? .invalidField : .invalidQuery, "the request is not what \(error.operationID) takes")
            detail = "\(type(of: other)): \(error.causeDescription)"
        default:
            self.init(error.underlyingError)
        }
    }

    /// A body of the right JSON but the wrong shape: `unknownField`, `missingField` or `invalidField`.
    static func decoding(_ error: DecodingError) -> APIError {
        switch error {
        case .keyNotFound(let key, let context) where context.debugDescription.contains("discriminator"):
            return .badRequest(.invalidField, "\(fieldPath(context.codingPath + [key])) has a value this operation does not take")
        case .keyNotFound(let key, let context):
            return .badRequest(.missingField, "\(fieldPath(context.codingPath + [key])) is required")
        case .typeMismatch(let type, let context):
            return .badRequest(.invalidField, "\(fieldPath(context.codingPath)) must be \(describe(type))")
        case .valueNotFound(let type, let context):
            return .badRequest(.invalidField, "\(fieldPath(context.codingPath)) must be \(describe(type))")
        case .dataCorrupted(let context) where context.debugDescription.hasPrefix("Additional properties are disabled"):
            return .badRequest(.unknownField, "unknown field \(fieldPath(context.codingPath).debugDescription)")
        case .dataCorrupted(let context):
            return .badRequest(.invalidField, "\(fieldPath(context.codingPath)) has a value this operation does not take")
        @unknown default:
            return .badRequest(.invalidField, "the body is not what this operation takes")
        }
    }

    /// `alert.title`, `notifications[2]`; `the body` for the top level.
    private static func fieldPath(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue { text += "[\(index)]" } else { text += text.isEmpty ? key.stringValue : ".\(key.stringValue)" }
        }
        return text.isEmpty ? "the body" : text
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type: "a whole number"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is OpenAPIObjectContainer.Type: "an object"
        default: "one of the forms the contract gives"
        }
    }
}
