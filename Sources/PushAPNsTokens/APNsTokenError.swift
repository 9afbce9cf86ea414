public import PushInternals

/// An error from loading a signing key, minting a provider token or verifying one. Messages name
/// the part concerned and never contain a key, a token or a signature.
public struct APNsTokenError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        // Keys.
        case invalidKey, invalidKeyID, invalidTeamID
        // Minting.
        case invalidIssuedAt, signingFailed
        // Verifying, in the order they are checked.
        case malformed, unsupportedAlgorithm, unknownKeyID, teamMismatch, badSignature, expired, issuedInFuture
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
