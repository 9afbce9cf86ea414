/// An error from parsing a connection string, minting a token or verifying one. Messages name
/// the part concerned and never contain a key or a signature.
public struct SASError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code, `rawValue` and `description` its name. Later versions may add codes:
    /// a `switch` over one outside this package needs a `default` case.
    @nonexhaustive
    public enum Code: String, Hashable, Sendable, CustomStringConvertible {
        // Connection strings.
        case missingPart, emptyPart, duplicatePart, malformedPart, invalidEndpoint
        // Minting.
        case invalidExpiry
        // Verifying.
        case malformed, unknownKeyName, badSignature, expired, resourceMismatch

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
