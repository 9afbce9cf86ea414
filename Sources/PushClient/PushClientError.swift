public import Foundation

/// Why a ``PushBackendClient`` call failed, as an app acts on it. Descriptions never hold a
/// password, a secure body or a credential header. Later versions may add cases: a `switch` in an
/// app needs a `default` case.
@nonexhaustive
public enum PushClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No credentials, or the backend refused them: ask the user to sign in again.
    case unauthorized
    /// No such notification or registration, or not this user's, or gone: nothing to show.
    case notFound
    /// The backend asks to wait `retryAfter` before asking again, and that is past the deadline
    /// (a shorter wait is waited out within it).
    case throttled(retryAfter: Duration)
    /// The image is larger than the caller's limit (its length, when the backend said it).
    case tooLarge(limit: Int, length: Int?)
    /// The content is not what was asked for: an image other than PNG, JPEG or GIF, or an image
    /// where a secure body was expected, or the reverse.
    case unsupportedType(String)
    /// The downloaded bytes are not the image the backend described in `Repr-Digest`.
    case digestMismatch
    /// The deadline the caller gave passed first (or the platform's own request timeout).
    case deadlineExceeded
    /// The call's task was cancelled (an extension's time running out, a view going away).
    case cancelled
    /// The credential store could not be read: a Keychain item before the device's first unlock.
    case credentialsUnavailable
    /// The device has no network connection.
    case offline
    /// The backend could not be reached: refused, not found by DNS, unreachable, or its TLS
    /// handshake failed. Answered at once, not at the deadline.
    case cannotConnect
    /// The connection dropped during the call, more often than it was resumed.
    case connectionLost
    /// The transport failed otherwise.
    case transport(String)
    /// The backend refused the request otherwise: its status and error code.
    case refused(status: Int, code: String)
    /// The backend answered something the contract does not allow.
    case invalidResponse(String)

    public var description: String {
        switch self {
        case .unauthorized: "unauthorized: sign in again"
        case .notFound: "not found"
        case .throttled(let wait): "throttled: the backend asks to wait \(wait), past the deadline"
        case .tooLarge(let limit, let length): "too large: \(length.map { "\($0) bytes, " } ?? "")more than the limit of \(limit) bytes"
        case .unsupportedType(let type): "unsupported content type \(type)"
        case .digestMismatch: "the download does not match the backend's Repr-Digest"
        case .deadlineExceeded: "deadline exceeded"
        case .cancelled: "cancelled"
        case .credentialsUnavailable: "credentials unavailable: the store could not be read"
        case .offline: "offline"
        case .cannotConnect: "cannot connect to the backend"
        case .connectionLost: "the connection was lost"
        case .transport(let detail): "transport: \(detail)"
        case .refused(let status, let code): "refused: \(status) \(code)"
        case .invalidResponse(let detail): "invalid response: \(detail)"
        }
    }
}

extension PushClientError: LocalizedError {
    /// A sentence an app can show as it stands: short, in the user's terms, never a server's
    /// words, a password or a secure body.
    public var errorDescription: String? {
        switch self {
        case .unauthorized: "Sign in again to see your notifications."
        case .notFound: "This notification is no longer available."
        case .throttled: "The server is busy. Try again in a moment."
        case .tooLarge: "The image is too large to show."
        case .unsupportedType: "This notification has content the app cannot show."
        case .digestMismatch: "The image did not arrive intact."
        case .deadlineExceeded: "The server took too long to answer."
        case .cancelled: "The request was cancelled."
        case .credentialsUnavailable: "Unlock your device to load this notification."
        case .offline: "You are offline. Check your connection."
        case .cannotConnect: "The server cannot be reached right now."
        case .connectionLost: "The connection was lost. Try again."
        case .transport: "The notification could not be loaded."
        case .refused: "The server refused the request."
        case .invalidResponse: "The server answered in a way the app does not understand."
        }
    }
}
