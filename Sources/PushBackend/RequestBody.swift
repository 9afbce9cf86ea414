import Hummingbird
import PushCore

/// Request bodies: JSON objects of known keys, read with PushCore's parser.
enum RequestBody {
    /// The body as a JSON object (at most ``BackendAPI/maximumRequestBody`` bytes).
    static func object(of request: inout Request) async throws(APIError) -> JSONValue {
        guard isJSON(request.headers[.contentType]) else {
            throw APIError(status: 415, code: .unsupportedMediaType, "send the body as application/json")
        }
        let bytes: [UInt8]
        do {
            bytes = Array(try await request.collectBody(upTo: BackendAPI.maximumRequestBody).readableBytesView)
        } catch {
            throw APIError(status: 413, code: .bodyTooLarge, "the body is over \(BackendAPI.maximumRequestBody) bytes")
        }
        var parser = JSONParser(options: JSONParser.Options(maximumDepth: 16, maximumInputSize: BackendAPI.maximumRequestBody))
        let document: JSONDocument
        do throws(JSONError) {
            document = try parser.parse(bytes)
        } catch {
            throw .badRequest(.invalidJSON, error.description)
        }
        guard document.root.kind == .object else { throw .badRequest(.invalidJSON, "the body is not a JSON object") }
        return document.root
    }

    /// Whether a `Content-Type` names exactly `application/json` (any case, parameters allowed).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let mediaType = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        return String(decoding: mediaType, as: UTF8.self).lowercased() == "application/json"
    }

    /// Refuses keys outside `allowed` (a misspelt optional key would otherwise be silently ignored) and repeated keys.
    static func allowKeys(_ allowed: Set<String>, in object: JSONValue) throws(APIError) {
        var seen: Set<String> = []
        for member in object.members {
            let key = member.key.string ?? ""
            guard allowed.contains(key) else {
                throw .badRequest(.unknownField, "unknown field \(key.debugDescription); expected \(allowed.sorted().joined(separator: ", "))")
            }
            guard seen.insert(key).inserted else { throw .badRequest(.duplicateField, "the field \(key) appears twice") }
        }
    }

    static func string(_ key: String, in object: JSONValue) throws(APIError) -> String {
        guard let value = try optionalString(key, in: object) else { throw .badRequest(.missingField, "\(key) is required") }
        return value
    }

    /// A number that is whole however it is written (`1700000000.0` and `1.7e9` are, as to JSON
    /// Schema), within what an `Int` holds; nil otherwise.
    static func wholeNumber(_ value: JSONValue) -> Int? {
        value.int ?? value.double.flatMap { $0.rounded() == $0 && abs($0) < 0x1p62 ? Int($0) : nil }
    }

    /// The string at `key`, refused when it holds U+0000: PostgreSQL cannot store one in text, and
    /// both engines must answer the same.
    static func optionalString(_ key: String, in object: JSONValue) throws(APIError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let string = value.string else { throw .badRequest(.invalidField, "\(key) must be a string") }
        guard !string.utf8.contains(0) else { throw .badRequest(.invalidField, "\(key) must not contain U+0000") }
        return string
    }
}

/// The body of `POST /api/notifications`:
/// `{"kind": "rich", "richType": "img", "message": "…", "resource": "logo.png", "to": "bob"}` or
/// `{"kind": "secure" | "secureAlert", "payload": "…", "placeholder": "…", "to": "bob"}`; `to`
/// defaults to the caller, `richType` to `img`, `resource` to the default embedded image, a secure
/// alert's `placeholder` to ``defaultPlaceholder``. Any may have `sendAt` (Unix milliseconds).
struct NotificationRequest {
    enum Content {
        /// `alert`: pushed as an alert the app's service extension completes, not a silent push.
        case rich(richType: String, resource: String?, message: String, alert: Bool)
        /// `placeholder`: pushed as an alert showing it until the app's service extension
        /// replaces it with the payload it fetches; nil for a silent push.
        case secure(payload: String, placeholder: String?)
    }

    /// What a secure alert shows when the app has no localized text for its `loc-key` and its
    /// extension could not fetch the payload: it must hold nothing secret.
    static let defaultPlaceholder = "You have a new message"
    /// A placeholder is a line of text: at most this many Unicode scalars (JSON Schema's count).
    static let maximumPlaceholder = 256

    /// The rich types served; `img` names an embedded image.
    static let richTypes: Set<String> = ["img"]
    /// A secure payload is stored and answered, never pushed; bounded all the same.
    static let maximumSecurePayload = 32 << 10

    let content: Content
    let to: String?
    /// When to push it, in Unix milliseconds; now when absent. Checked against the clock by the API.
    let sendAt: Int64?

    init(_ body: JSONValue) throws(APIError) {
        let kind = try RequestBody.string("kind", in: body)
        switch kind {
        case "rich", "richAlert":
            try RequestBody.allowKeys(["kind", "richType", "message", "resource", "to", "sendAt"], in: body)
            let richType = try RequestBody.optionalString("richType", in: body) ?? "img"
            guard Self.richTypes.contains(richType) else {
                throw .badRequest(.unsupportedRichType, "richType \(richType.debugDescription) is not served; use img")
            }
            content = .rich(
                richType: richType, resource: try RequestBody.optionalString("resource", in: body),
                message: try RequestBody.string("message", in: body), alert: kind == "richAlert")
        case "secure", "secureAlert":
            let alert = kind == "secureAlert"
            try RequestBody.allowKeys(alert ? ["kind", "payload", "placeholder", "to", "sendAt"] : ["kind", "payload", "to", "sendAt"], in: body)
            let payload = try RequestBody.string("payload", in: body)
            guard payload.utf8.count <= Self.maximumSecurePayload else {
                throw APIError(status: 413, code: .payloadTooLarge, "a secure payload is at most \(Self.maximumSecurePayload) bytes")
            }
            var placeholder: String?
            if alert {
                placeholder = try RequestBody.optionalString("placeholder", in: body) ?? Self.defaultPlaceholder
                guard let text = placeholder, !text.isEmpty, text.unicodeScalars.count <= Self.maximumPlaceholder else {
                    throw .badRequest(.invalidField, "placeholder must be 1 to \(Self.maximumPlaceholder) characters")
                }
            }
            content = .secure(payload: payload, placeholder: placeholder)
        default:
            throw .badRequest(.invalidField, "kind must be rich, richAlert, secure or secureAlert")
        }
        let to = try RequestBody.optionalString("to", in: body)
        if let to, !UserRecord.isValidName(to) {
            throw APIError(status: 422, code: .unknownRecipient, "there is no user named \(to.debugDescription)")
        }
        self.to = to
        if let value = body["sendAt"], !value.isNull {
            guard let milliseconds = RequestBody.wholeNumber(value), (1...9_999_999_999_999).contains(milliseconds) else {
                throw .badRequest(.invalidField, "sendAt must be a time in Unix milliseconds, a whole number from 1 to 9999999999999")
            }
            sendAt = Int64(milliseconds)
        } else {
            sendAt = nil
        }
    }
}
