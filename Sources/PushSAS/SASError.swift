/// An error from parsing a connection string, minting a token or verifying one. Messages name
/// the part concerned and never contain a key or a signature.
public struct SASError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code. Later versions may add codes: match with a `default` case.
    public enum Code: String, Sendable {
        // Connection strings.
        case missingPart
        case emptyPart
        case duplicatePart
        case malformedPart
        case invalidEndpoint
        // Minting.
        case invalidExpiry
        // Verifying.
        case malformed
        case unknownKeyName
        case badSignature
        case expired
        case resourceMismatch
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
