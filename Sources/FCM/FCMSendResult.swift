public import HTTP2Transport
import PushInternals
import PushJSON

/// FCM's error codes (`google.firebase.fcm.v1.FcmError`'s `errorCode`), or, where an answer
/// carries none, its canonical status (`UNAUTHENTICATED`, `PERMISSION_DENIED`, …) as ``other(_:)``.
public enum FCMErrorCode: Hashable, Sendable, CustomStringConvertible {
    case unspecified
    /// The message or the token is malformed (the answer's message says which).
    case invalidArgument
    /// The token is no longer valid: the app was uninstalled, or the token expired or was deleted.
    case unregistered
    /// The token belongs to another sender's project.
    case senderIDMismatch
    /// The project's, or the device's, sending rate was passed.
    case quotaExceeded
    case unavailable
    case `internal`
    /// APNs or Web Push refused the credentials FCM holds for this app.
    case thirdPartyAuthError
    /// A code this version does not know, or the canonical status when no FCM code came.
    case other(String)

    static let known: [String: FCMErrorCode] = [
        "UNSPECIFIED_ERROR": .unspecified, "INVALID_ARGUMENT": .invalidArgument, "UNREGISTERED": .unregistered,
        "SENDER_ID_MISMATCH": .senderIDMismatch, "QUOTA_EXCEEDED": .quotaExceeded, "UNAVAILABLE": .unavailable, "INTERNAL": .internal,
        "THIRD_PARTY_AUTH_ERROR": .thirdPartyAuthError,
    ]

    public init(_ text: String) {
        self = Self.known[text] ?? .other(text)
    }

    /// The code as FCM spells it.
    public var rawValue: String {
        if case .other(let text) = self { return text }
        return Self.known.first { $0.value == self }!.key
    }

    public var description: String { rawValue }
}

/// What happened to one token's (or a topic's, or a condition's) message.
public enum FCMSendOutcome: Hashable, Sendable {
    /// FCM accepted it; `name` is `projects/{project}/messages/{id}`.
    case delivered(name: String)
    /// FCM answered with an error: its HTTP status, its code and its message (the server's words,
    /// escaped when printed).
    case rejected(status: Int, code: FCMErrorCode, message: String)
    /// No answer came. `mayHaveBeenDelivered` is false only when the request was never written.
    case failed(FCMTransportFailure, mayHaveBeenDelivered: Bool)
}

extension FCMSendOutcome {
    /// How `fcm_sends_total` labels it: the status (`none` unanswered), FCM's code (`other` for one
    /// this version does not name, `none` delivered or unanswered).
    var metricLabels: (status: String, reason: String) {
        switch self {
        case .delivered: ("200", "none")
        case .rejected(let status, .other, _): (String(status), "other")
        case .rejected(let status, let code, _): (String(status), code.rawValue)
        case .failed: ("none", "none")
        }
    }
}

/// Why a request got no answer.
public typealias FCMTransportFailure = TransportFailure

/// One target's result of a send.
public struct FCMSendResult: Hashable, Sendable, CustomStringConvertible {
    /// The registration token, `/topics/NAME`, or the condition.
    public let target: String
    public let outcome: FCMSendOutcome
    /// Requests made for it (retries included).
    public let attempts: Int

    public init(target: String, outcome: FCMSendOutcome, attempts: Int = 1) {
        self.target = target
        self.outcome = outcome
        self.attempts = attempts
    }

    public var isDelivered: Bool {
        if case .delivered = outcome { return true }
        return false
    }

    /// The message's name when FCM accepted it.
    public var messageName: String? {
        if case .delivered(let name) = outcome { return name }
        return nil
    }

    /// The status FCM answered, if any.
    public var status: Int? {
        switch outcome {
        case .delivered: 200
        case .rejected(let status, _, _): status
        case .failed: nil
        }
    }

    /// `TARGET STATUS CODE NAME` with the token shortened.
    public var description: String {
        "\(FCMClient.shortened(target)) \(summary)"
    }

    /// `STATUS CODE NAME`: `200 - projects/p/messages/1`, `404 UNREGISTERED -`, `- timeout -`. The
    /// server's words are one column each with control characters escaped, so that a printed line
    /// cannot be split, forged or turned into terminal commands.
    public var summary: String {
        switch outcome {
        case .delivered(let name): "200 - \(Self.column(name))"
        case .rejected(let status, let code, _): "\(status) \(Self.column(code.rawValue)) -"
        case .failed(let failure, _): "- \(Self.column(failure.description)) -"
        }
    }

    private static func column(_ text: String) -> String {
        String(escapingControls(text).map { $0 == " " ? "-" : $0 })
    }
}

/// Google's error body: `{"error": {"code", "message", "status", "details": [{"@type":
/// "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": …}]}}`.
func parseFCMError(_ bytes: [UInt8]) -> (code: FCMErrorCode?, message: String) {
    var parser = JSONParser()
    guard let document = try? parser.parse(bytes), let error = document.root["error"], error.kind == .object else { return (nil, "") }
    let message = String((error["message"]?.string ?? "").prefix(500))
    if let details = error["details"], details.kind == .array {
        for detail in details.elements where detail["@type"]?.string == "type.googleapis.com/google.firebase.fcm.v1.FcmError" {
            if let code = detail["errorCode"]?.string { return (FCMErrorCode(code), message) }
        }
    }
    return (error["status"]?.string.map(FCMErrorCode.init), message)
}
