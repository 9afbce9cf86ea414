/// A string of a parsed document, read where it lies in the input: comparing and hashing it
/// decode escapes on the fly, and only ``string`` makes a `String`.
///
/// Non-escaping: it lives only as long as the view it came from (see ``JSONView``).
public struct JSONStringView: ~Escapable {
    @usableFromInline let value: UnsafeJSONValue

    /// `value` must be a string entry.
    @inlinable @_lifetime(immortal)
    package init(unchecked value: UnsafeJSONValue) {
        self.value = value
    }

    /// The decoded string.
    @inlinable public var string: String { value.string! }

    /// True when the input spells it with backslash escapes.
    @inlinable public var hasEscapes: Bool { value.stringHasEscapes }

    /// Offset of the opening quote in the input.
    @inlinable public var byteOffset: Int { value.byteOffset }

    /// Calls `body` with the bytes between the quotes as they are in the input (escapes not decoded).
    @inlinable
    public func withRawBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(value.contentBytes)
    }

    /// Calls `body` with each run of the decoded UTF-8 in order: one run, the raw bytes, when the
    /// string has no escapes; no allocation either way.
    @inlinable
    public func forEachDecodedRun(_ body: (UnsafeRawBufferPointer) -> Void) {
        if value.stringHasEscapes {
            PushJSON.forEachDecodedRun(value.contentBytes, body)
        } else {
            body(value.contentBytes)
        }
    }

    /// Feeds the decoded UTF-8 to `hasher`: equal strings (by `==`) hash alike, however they
    /// are escaped.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        forEachDecodedRun { hasher.combine(bytes: $0) }
        hasher.combine(0xFF as UInt8)
    }

    @inlinable
    public static func == (lhs: borrowing JSONStringView, rhs: StaticString) -> Bool {
        lhs.value.stringEquals(rhs)
    }

    @inlinable
    public static func == (lhs: borrowing JSONStringView, rhs: String) -> Bool {
        var rhs = rhs
        return rhs.withUTF8 { lhs.value.stringEquals(UnsafeRawBufferPointer($0)) }
    }

    /// Compares decoded content.
    @inlinable
    public static func == (lhs: borrowing JSONStringView, rhs: borrowing JSONStringView) -> Bool {
        lhs.value.sameString(as: rhs.value)
    }
}
