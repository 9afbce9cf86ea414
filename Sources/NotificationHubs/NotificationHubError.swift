public import PushInternals

/// An error from the Notification Hubs client: a refused request (with the hub's tracking id), a
/// transport failure, or input refused before anything was sent.
public struct NotificationHubError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        // Refused before sending.
        /// A tag longer than 120 characters, with a character outside `A-Z a-z 0-9 _ @ # . : -`, or starting with `$`.
        case invalidTag
        /// A tag expression that does not parse.
        case invalidTagExpression
        /// More than 20 tags in an expression of only `||`, or more than 6 in any other.
        case tooManyTags
        // Answers from the hub.
        /// 400: the hub refused the request as malformed.
        case badRequest
        /// 401: an invalid signature or an expired token.
        case unauthorized
        /// 403 without `Retry-After`: the key lacks the right (Send, Listen, Manage).
        case forbidden
        /// 429, or 403 with `Retry-After`: quota or rate exceeded.
        case throttled
        /// 404: no such hub, installation or notification.
        case notFound
        /// 413: the payload is over the platform's limit.
        case payloadTooLarge
        /// 5xx.
        case serverError
        /// Another status the client does not expect.
        case unexpectedStatus
        // No answer.
        /// The connection failed or the answer did not come in time; `status` is nil. The message
        /// says whether the request may have reached the hub.
        case transportFailed
    }

    public let code: Code
    /// The HTTP status, when the hub answered.
    public let status: Int?
    /// The hub's `TrackingId`, for support requests.
    public let trackingID: String?
    /// The hub's `<Detail>` text, or a message of the client's own.
    public let message: String
    /// How long the hub asked to wait, for throttling answers.
    public let retryAfter: Duration?
    /// The service's own code, from its XML body's `<Code>` (usually the HTTP status, sometimes a
    /// finer one such as 40000), when it gave one.
    public private(set) var serviceCode: Int?

    public init(_ code: Code, status: Int? = nil, trackingID: String? = nil, retryAfter: Duration? = nil, _ message: String) {
        self.code = code
        self.status = status
        self.trackingID = trackingID
        self.retryAfter = retryAfter
        self.message = message
    }

    /// The error for a refused request, from its status, its `Retry-After` and its XML body
    /// (`<Error><Code>…</Code><Detail>…</Detail></Error>`).
    public init(status: Int, body: [UInt8], trackingID: String?, retryAfter: Duration?) {
        let code: Code
        switch status {
        case 400: code = .badRequest
        case 401: code = .unauthorized
        case 403: code = retryAfter == nil ? .forbidden : .throttled
        case 404: code = .notFound
        case 413: code = .payloadTooLarge
        case 429: code = .throttled
        case 500...599: code = .serverError
        default: code = .unexpectedStatus
        }
        let text = String(decoding: body.prefix(16 << 10), as: UTF8.self)
        let detail = xmlElementText("Detail", in: text) ?? (text.isEmpty ? "HTTP \(status)" : String(text.prefix(512)))
        self.init(code, status: status, trackingID: trackingID ?? trackingIDInDetail(detail), retryAfter: retryAfter, detail)
        serviceCode = xmlElementText("Code", in: text).flatMap { Int($0.trimmingPrefix(" ")) }
    }

    public var description: String {
        var text = "\(code)"
        if let status { text += " (HTTP \(status))" }
        text += ": \(message)"
        if let trackingID { text += " [TrackingId: \(trackingID)]" }
        return text
    }
}

/// The text of the first `<name>…</name>` element, entities decoded; nil when absent.
func xmlElementText(_ name: String, in text: String) -> String? {
    guard let open = text.firstRange(of: "<\(name)>"),
        let close = text[open.upperBound...].firstRange(of: "</\(name)>")
    else {
        return nil
    }
    // `&amp;` last, so that `&amp;lt;` becomes `&lt;`, not `<`.
    return String(text[open.upperBound..<close.lowerBound])
        .replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
        .replacing("&apos;", with: "'").replacing("&amp;", with: "&")
}

/// Azure puts `TrackingId:…` inside its error details when no header carries it.
private func trackingIDInDetail(_ detail: String) -> String? {
    guard let marker = detail.firstRange(of: "TrackingId:") else { return nil }
    let rest = detail[marker.upperBound...]
    let id = rest.prefix { $0 != "," && $0 != " " && $0 != "<" && $0 != "\n" }
    return id.isEmpty ? nil : String(id)
}
