/// An error from parsing a connection string, minting a token or verifying one. Messages name
/// the part concerned and never contain a key or a signature.
public struct SASError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code. Later versions may add codes without breaking a `switch` that has a
    /// `default` case; `rawValue` and `description` are its name.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Name: String {
            case missingPart, emptyPart, duplicatePart, malformedPart, invalidEndpoint, invalidExpiry, malformed, unknownKeyName, badSignature,
                expired, resourceMismatch
        }
        private let name: Name
        private init(_ name: Name) { self.name = name }
        public var rawValue: String { name.rawValue }
        public var description: String { name.rawValue }

        // Connection strings.
        public static let missingPart = Code(.missingPart)
        public static let emptyPart = Code(.emptyPart)
        public static let duplicatePart = Code(.duplicatePart)
        public static let malformedPart = Code(.malformedPart)
        public static let invalidEndpoint = Code(.invalidEndpoint)
        // Minting.
        public static let invalidExpiry = Code(.invalidExpiry)
        // Verifying.
        public static let malformed = Code(.malformed)
        public static let unknownKeyName = Code(.unknownKeyName)
        public static let badSignature = Code(.badSignature)
        public static let expired = Code(.expired)
        public static let resourceMismatch = Code(.resourceMismatch)
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
