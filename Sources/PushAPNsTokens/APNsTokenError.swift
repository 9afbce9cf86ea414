/// An error from loading a signing key, minting a provider token or verifying one. Messages name
/// the part concerned and never contain a key, a token or a signature.
public struct APNsTokenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code, `rawValue` and `description` its name. Later versions may add codes:
    /// a `switch` over one outside this package needs a `default` case.
    @nonexhaustive
    public enum Code: String, Hashable, Sendable, CustomStringConvertible {
        // Keys.
        case invalidKey, invalidKeyID, invalidTeamID
        // Minting.
        case invalidIssuedAt, signingFailed
        // Verifying, in the order they are checked.
        case malformed, unsupportedAlgorithm, unknownKeyID, teamMismatch, badSignature, expired, issuedInFuture

        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
