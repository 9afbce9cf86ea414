/// An error from loading a signing key, minting a provider token or verifying one. Messages name
/// the part concerned and never contain a key, a token or a signature.
public struct APNsTokenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code. Later versions may add codes: match with a `default` case.
    public enum Code: String, Sendable {
        // Keys.
        case invalidKey
        case invalidKeyID
        case invalidTeamID
        // Minting.
        case invalidIssuedAt
        case signingFailed
        // Verifying, in the order they are checked.
        case malformed
        case unsupportedAlgorithm
        case unknownKeyID
        case teamMismatch
        case badSignature
        case expired
        case issuedInFuture
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
