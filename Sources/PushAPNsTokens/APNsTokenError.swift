// Re-exported: a user of this module reads its error codes (`rawValue`, `description`)
// without importing the module that declares them.
@_exported public import PushErrorCodes

/// An error from loading a signing key, minting a provider token or verifying one. Messages name
/// the part concerned and never contain a key, a token or a signature.
public struct APNsTokenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The names of ``Code``'s values; match on codes, not on these.
    public enum CodeName: String, ErrorCodeName {
        case invalidKey, invalidKeyID, invalidTeamID, invalidIssuedAt, signingFailed, malformed, unsupportedAlgorithm, unknownKeyID, teamMismatch,
            badSignature, expired, issuedInFuture
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

extension ErrorCode<APNsTokenError.CodeName> {
    // Keys.
    public static let invalidKey = Self(.invalidKey)
    public static let invalidKeyID = Self(.invalidKeyID)
    public static let invalidTeamID = Self(.invalidTeamID)
    // Minting.
    public static let invalidIssuedAt = Self(.invalidIssuedAt)
    public static let signingFailed = Self(.signingFailed)
    // Verifying, in the order they are checked.
    public static let malformed = Self(.malformed)
    public static let unsupportedAlgorithm = Self(.unsupportedAlgorithm)
    public static let unknownKeyID = Self(.unknownKeyID)
    public static let teamMismatch = Self(.teamMismatch)
    public static let badSignature = Self(.badSignature)
    public static let expired = Self(.expired)
    public static let issuedInFuture = Self(.issuedInFuture)
}
