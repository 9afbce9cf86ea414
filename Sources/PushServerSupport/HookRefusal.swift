package import HTTPTypes
package import Hummingbird
import NIOCore
import PushJSON

/// How an emulator's test hook (`/_emulator/…`) refuses a request: its status and
/// `{"error": "…"}`. Shared by both emulators, whose hooks answer alike.
package struct HookRefusal: HTTPResponseError {
    package let status: HTTPResponse.Status
    package let message: String

    package init(_ status: Int, _ message: String) {
        self.status = .init(code: status)
        self.message = message
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var json: [UInt8] = []
        try? JSON.object([JSONMember("error", .string(message))]).write(into: &json)
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}

/// Answers a request no route takes: 404 under `/_emulator`, otherwise what the emulated service
/// answers for a path or method it does not serve.
package struct UnroutedRequestGate<Context: RequestContext>: RouterMiddleware {
    let refusal: @Sendable (Request) -> any Error

    package init(refusal: @escaping @Sendable (Request) -> any Error) {
        self.refusal = refusal
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            if request.uri.path.hasPrefix("/_emulator") { throw HookRefusal(404, "no such test hook") }
            throw refusal(request)
        }
    }
}

extension Request {
    /// The body, at most `limit` bytes; nil when there were more (declared up front or counted).
    package func collectBytes(upTo limit: Int) async throws -> [UInt8]? {
        var request = self
        do {
            return Array(try await request.collectBody(upTo: limit).readableBytesView)
        } catch is NIOTooManyBytesError {
            return nil
        } catch let error as HTTPError where error.status == .contentTooLarge {
            return nil
        }
    }

    /// A test hook's body, at most `limit` bytes; a longer one is refused 413.
    package func hookBody(upTo limit: Int) async throws -> [UInt8] {
        guard let bytes = try await collectBytes(upTo: limit) else { throw HookRefusal(413, "the body is too large") }
        return bytes
    }
}

extension Response {
    /// JSON bytes as an answer.
    package static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
