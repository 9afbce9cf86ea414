public import PushInternals

public struct StoreError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        /// The name or id is taken.
        case conflict
        /// The data directory cannot be created or opened.
        case unavailable
        /// The database was written by a newer version of this program.
        case schemaTooNew
        /// The engine failed a statement.
        case storage
        /// What the operation needs does not exist (the user an API key is for).
        case notFound
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
