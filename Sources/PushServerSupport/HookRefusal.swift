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
