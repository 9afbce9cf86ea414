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
    /// The deadline the caller gave passed first.
    case deadlineExceeded
    /// The backend could not be reached, or the connection failed more often than retried.
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
        case .transport(let detail): "transport: \(detail)"
        case .refused(let status, let code): "refused: \(status) \(code)"
        case .invalidResponse(let detail): "invalid response: \(detail)"
        }
    }
}
