package import HTTPTypes
package import Hummingbird
import NotificationHubs
import PushCore

/// Every refusal the API makes: an HTTP status and a stable code, answered as
/// `{"error": {"code": "…", "message": "…"}}`.
package struct APIError: HTTPResponseError, Hashable, Sendable, CustomStringConvertible {
    /// The `code` of an error body; `rawValue` is how the body spells it.
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        case activityGone, apnsDeliveryRequired, apnsRejected, apnsUnavailable, bodyTooLarge, channelGone, conflict, contentStateMismatch,
            duplicateField, forbidden, hubError, identityProviderUnavailable, internalError, invalidDeviceToken, invalidField,
            invalidImage, invalidJSON, invalidPayload, invalidQuery, invalidToken, loginBusy, methodNotAllowed, missingField, notFound,
            payloadTooLarge, rateLimited, registrationContended, resourceGone, scheduleTooFar, schedulingUnavailable, storageUnavailable,
            tooManyActivityTokens, tooManyDevices, tooManyImages, tooManyLogins, unauthorized, unknownField, unknownRecipient,
            unknownResource, unsupportedMediaType, unsupportedRichType, wrongActivityKind

        package var description: String { rawValue }
    }

    package let status: HTTPResponse.Status
    package let code: Code
    package let message: String
    package var headers: [(String, String)] = []
    /// For the log only: what failed behind a 5xx, which the client is not told.
    package var detail: String?

    package init(status: HTTPResponse.Status, code: Code, _ message: String, headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    package var description: String { "\(status.code) \(code): \(message)" }

    /// The JSON answer, with the refusal's headers (HEAD: its length, no body).
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        response(isHead: request.method == .head)
    }

    package static func == (lhs: APIError, rhs: APIError) -> Bool {
        lhs.status == rhs.status && lhs.code == rhs.code && lhs.message == rhs.message
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(code)
    }

    /// A 401 that offers the schemes the server takes, one `WWW-Authenticate` field each.
    static func unauthorized(_ message: String, offering schemes: AuthenticationSchemes = .all) -> APIError {
        var challenges: [(String, String)] = []
        if schemes.contains(.basic) { challenges.append(("WWW-Authenticate", #"Basic realm="push-backend", charset="UTF-8""#)) }
        if !schemes.isDisjoint(with: [.apiKeys, .identityTokens]) { challenges.append(("WWW-Authenticate", #"Bearer realm="push-backend""#)) }
        return APIError(status: 401, code: .unauthorized, message, headers: challenges)
    }

    /// Also what a notification or registration of someone else's gets: no hint that it exists.
    static func notFound(_ message: String = "no such resource") -> APIError {
        APIError(status: 404, code: .notFound, message)
    }

    static func badRequest(_ code: Code, _ message: String) -> APIError {
        APIError(status: 400, code: code, message)
    }

    /// Beyond a client address's or a user name's budget of password checks.
    static func tooManyLogins(retryAfter wait: Duration) -> APIError {
        APIError(
            status: 429, code: .tooManyLogins, "too many failed logins; try again later", headers: [("Retry-After", String(wait.retryAfterSeconds))])
    }

    /// The identity provider's keys cannot be fetched, so a token cannot be judged.
    static func identityProviderUnavailable(_ message: String) -> APIError {
        APIError(status: 503, code: .identityProviderUnavailable, message, headers: [("Retry-After", "60")])
    }

    /// Live Activities and channels, asked of a server that sends through a hub.
    static let apnsDeliveryRequired = APIError(
        status: 501, code: .apnsDeliveryRequired, "Live Activities and channels need APNs delivery; this server sends through a hub")

    /// The password checks already waiting fill the queue.
    static let loginBusy = APIError(status: 503, code: .loginBusy, "too many logins are being checked; try again", headers: [("Retry-After", "1")])

    /// The engine's own text goes to the log only: bodies carry our codes and messages.
    package static func storage(_ error: StoreError) -> APIError {
        var refusal =
            error.code == .conflict
            ? APIError(status: 409, code: .conflict, "the request conflicts with what is stored; try again")
            : APIError(status: 503, code: .storageUnavailable, "the database failed; try again")
        refusal.detail = error.description
        return refusal
    }

    static func hub(_ error: NotificationHubError) -> APIError {
        var refusal = APIError(status: 502, code: .hubError, "Notification Hubs refused the request (\(error.code))")
        refusal.detail = error.description
        return refusal
    }

    /// The body, built by PushCore's writer.
    package var body: [UInt8] {
        var bytes: [UInt8] = []
        try? JSON.object([JSONMember("error", .object([JSONMember("code", .string(code.rawValue)), JSONMember("message", .string(message))]))])
            .write(into: &bytes)
        return bytes
    }
}
