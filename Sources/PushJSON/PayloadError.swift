/// The shape of an error in a push payload checked against a service's rules (APNs, FCM): the
/// key's path, where it is in the bytes, and for a payload over its limit, the size and the limit.
/// Described as `code at byte OFFSET: message`; equal when everything but the message is, since
/// the message is for people.
public protocol PayloadError: CodedError {
    /// The key concerned as a dotted path from the root, such as `aps.alert.title`; `""` for the
    /// payload as a whole.
    var path: String { get }
    /// Byte offset of the key or value concerned in a payload read from bytes; for a payload over
    /// its limit, the first byte past it. Nil for a model being encoded.
    var offset: Int? { get }
    /// The payload's size in bytes, when it is over its limit.
    var size: Int? { get }
    /// The limit in bytes that ``size`` was measured against.
    var limit: Int? { get }
}

extension PayloadError {
    public var description: String {
        if let offset { "\(code) at byte \(offset): \(message)" } else { "\(code): \(message)" }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.offset == rhs.offset && lhs.size == rhs.size && lhs.limit == rhs.limit
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(path)
        hasher.combine(offset)
    }

    /// The 1-based line and column of ``offset`` in the payload's bytes.
    public func location(in input: some Collection<UInt8>) -> (line: Int, column: Int) {
        JSONError.location(ofByte: offset ?? 0, in: input)
    }
}

/// A payload error with one service's codes: what ``PayloadError`` describes, stored. Each
/// service names it (`APNsPayloadError`, `FCMMessageError`) with its own ``ErrorCode``.
public struct CodedPayloadError<ServiceCode: ErrorCode>: PayloadError {
    public typealias Code = ServiceCode

    public let code: Code
    public let path: String
    public let offset: Int?
    public let size: Int?
    public let limit: Int?
    /// What went wrong, for people.
    public let message: String

    public init(_ code: Code, path: String, offset: Int? = nil, size: Int? = nil, limit: Int? = nil, _ message: String) {
        self.code = code
        self.path = path
        self.offset = offset
        self.size = size
        self.limit = limit
        self.message = message
    }
}

/// One finding of a linter (``PayloadError``s of one service): an error (the service would refuse
/// the payload, or the app could not read it) or a warning (it is accepted, but probably not what
/// was meant).
public struct PayloadDiagnostic<Failure: PayloadError>: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error, warning
    }

    public let severity: Severity
    /// What was found, with the key's path and its byte offset in the payload.
    public let error: Failure

    public init(_ severity: Severity, _ error: Failure) {
        self.severity = severity
        self.error = error
    }

    public var code: Failure.Code { error.code }
    /// Byte offset of the key or value concerned (for a payload over its limit, the first byte past it).
    public var offset: Int { error.offset ?? 0 }
    public var message: String { error.message }

    /// The 1-based line and column of ``offset`` in the payload's bytes.
    public func location(in input: some Collection<UInt8>) -> (line: Int, column: Int) {
        JSONError.location(ofByte: offset, in: input)
    }

    public var description: String { "\(severity): \(code) at byte \(offset): \(message)" }
}
