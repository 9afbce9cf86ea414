public import PushInternals

/// An error from parsing a connection string, minting a token or verifying one. Messages name
/// the part concerned and never contain a key or a signature.
public struct SASError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        // Connection strings.
        case missingPart, emptyPart, duplicatePart, malformedPart, invalidEndpoint
        // Minting.
        case invalidExpiry
        // Verifying.
        case malformed, unknownKeyName, badSignature, expired, resourceMismatch
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
