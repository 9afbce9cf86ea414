// Re-exported: a user of this module reads its error codes (`rawValue`, `description`)
// without importing the module that declares them.
@_exported public import PushErrorCodes

/// An error from parsing a connection string, minting a token or verifying one. Messages name
/// the part concerned and never contain a key or a signature.
public struct SASError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The names of ``Code``'s values; match on codes, not on these.
    public enum CodeName: String, ErrorCodeName {
        case missingPart, emptyPart, duplicatePart, malformedPart, invalidEndpoint, invalidExpiry, malformed, unknownKeyName, badSignature,
            expired, resourceMismatch
    }

    /// A stable error code. Later versions may add codes without breaking a `switch` that has a
    /// `default` case; `rawValue` and `description` are its name.
    public typealias Code = ErrorCode<CodeName>

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

extension ErrorCode<SASError.CodeName> {
    // Connection strings.
    public static let missingPart = Self(.missingPart)
    public static let emptyPart = Self(.emptyPart)
    public static let duplicatePart = Self(.duplicatePart)
    public static let malformedPart = Self(.malformedPart)
    public static let invalidEndpoint = Self(.invalidEndpoint)
    // Minting.
    public static let invalidExpiry = Self(.invalidExpiry)
    // Verifying.
    public static let malformed = Self(.malformed)
    public static let unknownKeyName = Self(.unknownKeyName)
    public static let badSignature = Self(.badSignature)
    public static let expired = Self(.expired)
    public static let resourceMismatch = Self(.resourceMismatch)
}
