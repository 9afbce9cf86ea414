/// A parsed JSON text: the input bytes and a tape of their tokens. Values are read through
/// ``JSONValue`` views (the package's own code also through `UnsafeJSONValue` inside
/// `withUnsafeRoot(_:)`); strings and numbers stay byte ranges of the input until asked for.
public struct JSONDocument: Sendable {
    @usableFromInline let storage: JSONTapeStorage

    @usableFromInline
    init(storage: JSONTapeStorage) {
        self.storage = storage
    }

    /// The top-level value.
    @inlinable
    public var root: JSONValue { JSONValue(storage: storage, index: 0) }

    /// Calls `body` with a view of the top-level value that reads without reference counting.
    /// Like the pointer of `withUnsafeBytes`, the view and every value reached from it are valid
    /// only inside `body` and must not escape it.
    @inlinable
    package func withUnsafeRoot<Result, Failure: Error>(
        _ body: (UnsafeJSONValue) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withUnsafeValue(at: 0, body)
    }

    /// The bytes that were parsed.
    public var bytes: [UInt8] { storage.input }

    /// Number of tokens recorded (every scalar, and each container's start and end).
    public var tokenCount: Int { storage.count }
}

extension JSONTapeStorage {
    @inlinable
    func withUnsafeValue<Result, Failure: Error>(
        at index: Int, _ body: (UnsafeJSONValue) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try input.withUnsafeBufferPointer { (input) throws(Failure) -> Result in
            // A document is never empty: the parser refuses empty input.
            try body(UnsafeJSONValue(entries: entries, input: input.baseAddress!, index: index))
        }
    }
}
