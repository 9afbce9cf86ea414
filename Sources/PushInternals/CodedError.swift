/// A stable error code of the package: `rawValue` and `description` are its name. Each is a
/// `@nonexhaustive` enum, so later versions may add codes and a `switch` over one outside the
/// package needs a `default` case.
public protocol ErrorCode: RawRepresentable<String>, Hashable, Sendable, CustomStringConvertible {}

extension ErrorCode {
    public var description: String { rawValue }
}

/// The shape of every public error of the package: a stable code to match on and a message for
/// people, which never holds a key, a password, a token or a secure payload. Equal when their
/// stored properties are, unless the error says otherwise (a parse error compares where, not how
/// it is worded). Described as `code: message` unless the error has more to say first.
public protocol CodedError: Error, Hashable, Sendable, CustomStringConvertible {
    associatedtype Code: ErrorCode
    var code: Code { get }
    var message: String { get }
}

extension CodedError {
    public var description: String { "\(code): \(message)" }
}
