/// An error from parsing a connection string, minting a token or verifying one. Messages name
/// the part concerned and never contain a key or a signature.
public struct SASError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code; new codes may be added without breaking clients.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Connection strings.
        public static let missingPart = Code("missingPart")
        public static let emptyPart = Code("emptyPart")
        public static let duplicatePart = Code("duplicatePart")
        public static let malformedPart = Code("malformedPart")
        public static let invalidEndpoint = Code("invalidEndpoint")
        // Minting.
        public static let invalidExpiry = Code("invalidExpiry")
        // Verifying.
        public static let malformed = Code("malformed")
        public static let unknownKeyName = Code("unknownKeyName")
        public static let badSignature = Code("badSignature")
        public static let expired = Code("expired")
        public static let resourceMismatch = Code("resourceMismatch")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
