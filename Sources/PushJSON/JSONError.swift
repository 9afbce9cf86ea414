public import PushInternals

/// An error from parsing JSON, or from writing a value JSON cannot express.
///
/// `code` is stable and safe to match on; `offset` is the byte offset in the input (0 for a value
/// being written). Line and column are not stored: compute them with ``location(in:)`` or
/// ``rendered(in:fileName:)`` when a message is shown.
public struct JSONError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        // Syntax (RFC 8259).
        case unexpectedByte, unexpectedEnd, invalidEscape, invalidUnicodeEscape, loneSurrogate, invalidUTF8, controlCharacterInString, trailingData
        /// A malformed number, or NaN or an infinity, which JSON cannot spell.
        case invalidNumber
        /// An object names a key twice (refused when checked, and always when written).
        case duplicateKey
        // Limits.
        case depthLimitExceeded, inputTooLarge
    }

    public let code: Code
    /// Byte offset in the input where the problem was found.
    public let offset: Int
    /// What went wrong, for people. Never contains secrets; may quote a key name.
    public let message: String

    public init(_ code: Code, at offset: Int, _ message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(code) at byte \(offset): \(message)" }

    /// Errors are equal when their code and offset are; the message is for people.
    public static func == (lhs: JSONError, rhs: JSONError) -> Bool {
        lhs.code == rhs.code && lhs.offset == rhs.offset
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(offset)
    }

    /// The 1-based line and column of ``offset`` in `input`. Columns count Unicode scalars, so a
    /// multi-byte character counts once; a line ends at `\n`.
    public func location(in input: some Collection<UInt8>) -> (line: Int, column: Int) {
        Self.location(ofByte: offset, in: input)
    }

    /// The 1-based line and column of byte `offset` in `input`, as ``location(in:)`` counts them;
    /// for positions reported by other errors about the same text.
    public static func location(ofByte offset: Int, in input: some Collection<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        var position = 0
        for byte in input {
            if position == offset { break }
            position += 1
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// `FILE: error: CODE at byte N (line L, column C): message`, the form the tools print.
    public func rendered(in input: some Collection<UInt8>, fileName: String) -> String {
        let (line, column) = location(in: input)
        return "\(fileName): error: \(code) at byte \(offset) (line \(line), column \(column)): \(message)"
    }
}
