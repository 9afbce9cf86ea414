/// An error from parsing, decoding, linting or encoding JSON and APNs payloads.
///
/// `code` is stable and safe to match on; `offset` is the byte offset in the input (or, for
/// encoding errors, the encoded size). Line and column are not stored: compute them with
/// ``location(in:)`` or ``rendered(in:fileName:)`` when a message is shown.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code. New codes may be added without breaking clients that match on the
    /// existing ones.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Syntax (RFC 8259).
        public static let unexpectedByte = Code("unexpectedByte")
        public static let unexpectedEnd = Code("unexpectedEnd")
        public static let invalidEscape = Code("invalidEscape")
        public static let invalidUnicodeEscape = Code("invalidUnicodeEscape")
        public static let loneSurrogate = Code("loneSurrogate")
        public static let invalidUTF8 = Code("invalidUTF8")
        public static let controlCharacterInString = Code("controlCharacterInString")
        public static let invalidNumber = Code("invalidNumber")
        public static let trailingData = Code("trailingData")
        // Limits.
        public static let depthLimitExceeded = Code("depthLimitExceeded")
        public static let inputTooLarge = Code("inputTooLarge")
        // APNs rules and the typed model.
        public static let duplicateKey = Code("duplicateKey")
        public static let typeMismatch = Code("typeMismatch")
        public static let invalidValue = Code("invalidValue")
        public static let missingKey = Code("missingKey")
        public static let payloadTooLarge = Code("payloadTooLarge")
        public static let cannotFit = Code("cannotFit")
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
