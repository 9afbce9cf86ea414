/// An error from loading a signing key, minting a provider token or verifying one. Messages name
/// the part concerned and never contain a key, a token or a signature.
public struct APNsTokenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code. Later versions may add codes without breaking a `switch` that has a
    /// `default` case; `rawValue` and `description` are its name.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Name: String {
            case invalidKey, invalidKeyID, invalidTeamID, invalidIssuedAt, signingFailed, malformed, unsupportedAlgorithm, unknownKeyID, teamMismatch,
                badSignature, expired, issuedInFuture
        }
        private let name: Name
        private init(_ name: Name) { self.name = name }
        public var rawValue: String { name.rawValue }
        public var description: String { name.rawValue }

        // Keys.
        public static let invalidKey = Code(.invalidKey)
        public static let invalidKeyID = Code(.invalidKeyID)
        public static let invalidTeamID = Code(.invalidTeamID)
        // Minting.
        public static let invalidIssuedAt = Code(.invalidIssuedAt)
        public static let signingFailed = Code(.signingFailed)
        // Verifying, in the order they are checked.
        public static let malformed = Code(.malformed)
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        public static let unknownKeyID = Code(.unknownKeyID)
        public static let teamMismatch = Code(.teamMismatch)
        public static let badSignature = Code(.badSignature)
        public static let expired = Code(.expired)
        public static let issuedInFuture = Code(.issuedInFuture)
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
