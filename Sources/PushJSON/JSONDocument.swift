/// A parsed JSON text: the input bytes and a tape of their tokens. Values are read through
/// ``JSONValue`` views, or through ``UnsafeJSONValue`` inside ``withUnsafeRoot(_:)``; strings
/// and numbers stay byte ranges of the input until asked for.
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

/// A value inside a ``JSONDocument``, read straight from the tape and the input: no reference
/// counting, no copies. Valid only inside the ``JSONDocument/withUnsafeRoot(_:)`` call it came
/// from (or ``JSONValue/withUnsafeValue(_:)``).
@usableFromInline
package struct UnsafeJSONValue {
    @usableFromInline let entries: UnsafePointer<TapeEntry>
    @usableFromInline let input: UnsafePointer<UInt8>
    @usableFromInline let index: Int

    @inlinable
    init(entries: UnsafeMutablePointer<TapeEntry>, input: UnsafePointer<UInt8>, index: Int) {
        self.entries = UnsafePointer(entries)
        self.input = input
        self.index = index
    }

    @inlinable
    init(entries: UnsafePointer<TapeEntry>, input: UnsafePointer<UInt8>, index: Int) {
        self.entries = entries
        self.input = input
        self.index = index
    }

    // Safe: views are only made for indices of recorded entries.
    @inlinable var entry: TapeEntry { entries[index] }

    @inlinable
    package var kind: JSONValue.Kind { JSONValue.Kind(entry.kind) }

    /// Offset of the value's first byte in the input (a string's opening quote).
    @inlinable
    package var byteOffset: Int {
        let entry = self.entry
        return Int(entry.offset) - (entry.kind == .string ? 1 : 0)
    }

    /// The bytes of the value in the input, brackets and quotes included.
    @inlinable
    package var byteRange: Range<Int> {
        let entry = self.entry
        switch entry.kind {
        case .object, .array:
            return Int(entry.offset)..<(Int(entries[Int(entry.link) - 1].offset) + 1)
        case .string:
            return (Int(entry.offset) - 1)..<(Int(entry.offset) + Int(entry.length) + 1)
        default:
            return Int(entry.offset)..<(Int(entry.offset) + Int(entry.length))
        }
    }

    @inlinable
    var contentBytes: UnsafeRawBufferPointer {
        let entry = self.entry
        return UnsafeRawBufferPointer(start: input + Int(entry.offset), count: Int(entry.length))
    }

    // MARK: Scalars

    @inlinable package var isNull: Bool { entry.kind == .null }

    @inlinable
    package var bool: Bool? {
        switch entry.kind {
        case .true: return true
        case .false: return false
        default: return nil
        }
    }

    /// The decoded string, or `nil` when this is not a string.
    @inlinable
    package var string: String? {
        let entry = self.entry
        guard entry.kind == .string else { return nil }
        if entry.flags & TapeEntry.stringHasEscapes == 0 {
            return makeString(validatedUTF8: contentBytes, isASCII: entry.flags & TapeEntry.stringHasNonASCII == 0)
        }
        return decodeEscapedString(contentBytes)
    }

    /// True for a string spelled with backslash escapes in the input.
    @inlinable package var stringHasEscapes: Bool { entry.flags & TapeEntry.stringHasEscapes != 0 }

    /// The string's bytes as they appear in the input (between the quotes, escapes not
    /// decoded), or `nil` when this is not a string.
    @inlinable
    package var rawStringBytes: UnsafeRawBufferPointer? {
        entry.kind == .string ? contentBytes : nil
    }

    /// Compares the decoded string with `other`; no allocation unless it has escapes.
    @inlinable
    package func stringEquals(_ other: StaticString) -> Bool {
        stringEquals(UnsafeRawBufferPointer(start: other.utf8Start, count: other.utf8CodeUnitCount))
    }

    /// Compares the decoded string with UTF-8 bytes; no allocation unless it has escapes.
    @inlinable
    package func stringEquals(_ other: UnsafeRawBufferPointer) -> Bool {
        let entry = self.entry
        guard entry.kind == .string else { return false }
        if entry.flags & TapeEntry.stringHasEscapes != 0 {
            return string.map { $0.utf8.elementsEqual(other) } ?? false
        }
        return bytesEqual(contentBytes, other)
    }

    /// True when both are strings with the same decoded content.
    @inlinable
    package func sameString(as other: UnsafeJSONValue) -> Bool {
        if !stringHasEscapes && !other.stringHasEscapes {
            return entry.kind == .string && other.entry.kind == .string && bytesEqual(contentBytes, other.contentBytes)
        }
        return string == other.string
    }

    /// The number as spelled in the input, or `nil` when this is not a number.
    @inlinable
    package var numberSpelling: String? {
        entry.kind == .number ? makeString(validatedUTF8: contentBytes, isASCII: true) : nil
    }

    /// True for a number spelled without fraction or exponent.
    @inlinable
    package var isIntegerSpelling: Bool {
        let entry = self.entry
        return entry.kind == .number
            && entry.flags & (TapeEntry.numberHasFraction | TapeEntry.numberHasExponent) == 0
    }

    /// The value as an `Int` when it is an integer spelling (no fraction, no exponent) that fits.
    @inlinable
    package var int: Int? {
        guard isIntegerSpelling else { return nil }
        return parseInteger(contentBytes)
    }

    /// The number as the nearest `Double` (infinite when out of range), or `nil` when this is
    /// not a number.
    @inlinable
    package var double: Double? {
        guard entry.kind == .number else { return nil }
        return correctlyRoundedDouble(contentBytes)
    }

    // MARK: Containers

    /// Elements of an array or members of an object; 0 for scalars.
    @inlinable
    package var count: Int {
        let entry = self.entry
        return entry.kind == .object || entry.kind == .array ? Int(entry.length) : 0
    }

    /// The index of the entry after this value and everything inside it.
    @inlinable
    var nextSiblingIndex: Int {
        let entry = self.entry
        return entry.kind == .object || entry.kind == .array ? Int(entry.link) : index + 1
    }

    /// The elements of an array, in document order; empty for anything else.
    @inlinable @inline(__always)
    package var elements: Elements {
        let entry = self.entry
        let end = entry.kind == .array ? Int(entry.link) - 1 : index + 1
        return Elements(entries: entries, input: input, first: index + 1, end: end)
    }

    /// The members of an object in document order, duplicates included; empty for anything else.
    @inlinable @inline(__always)
    package var members: Members {
        let entry = self.entry
        let end = entry.kind == .object ? Int(entry.link) - 1 : index + 1
        return Members(entries: entries, input: input, first: index + 1, end: end)
    }

    /// Every value nested inside this one, depth first in document order, object keys included
    /// (as strings whose ``isObjectKey`` is true); empty for scalars. It walks the tape straight
    /// through, so a reader that needs no structure (a checksum, a search for one string, a
    /// statistics pass) visits any depth the parser accepts at the same cost per value and
    /// without recursion.
    @inlinable @inline(__always)
    package var descendants: Descendants {
        let entry = self.entry
        let end = entry.kind == .object || entry.kind == .array ? Int(entry.link) - 1 : index + 1
        return Descendants(entries: entries, input: input, first: index + 1, end: end)
    }

    /// True for a string that is an object's key rather than a value.
    @inlinable
    package var isObjectKey: Bool { entry.flags & TapeEntry.isKey != 0 }

    /// The first member named `key`, or `nil` (also when this is not an object).
    @inlinable
    package subscript(key: StaticString) -> UnsafeJSONValue? {
        for member in members where member.key.stringEquals(key) { return member.value }
        return nil
    }

    @usableFromInline package struct Member {
        @usableFromInline package let key: UnsafeJSONValue
        @usableFromInline package let value: UnsafeJSONValue

        @inlinable
        init(key: UnsafeJSONValue, value: UnsafeJSONValue) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline package struct Elements: Sequence, IteratorProtocol {
        @usableFromInline let entries: UnsafePointer<TapeEntry>
        @usableFromInline let input: UnsafePointer<UInt8>
        @usableFromInline var nextIndex: Int
        @usableFromInline let end: Int

        @inlinable
        init(entries: UnsafePointer<TapeEntry>, input: UnsafePointer<UInt8>, first: Int, end: Int) {
            self.entries = entries
            self.input = input
            self.nextIndex = first
            self.end = end
        }

        @inlinable
        package mutating func next() -> UnsafeJSONValue? {
            guard nextIndex < end else { return nil }
            let value = UnsafeJSONValue(entries: entries, input: input, index: nextIndex)
            nextIndex = value.nextSiblingIndex
            return value
        }
    }

    /// The entries of an ``Elements`` range stepped one by one instead of sibling by sibling,
    /// as ``Members`` reads them in pairs.
    @usableFromInline package struct Descendants: Sequence, IteratorProtocol {
        @usableFromInline var entries: Elements

        @inlinable
        init(entries: UnsafePointer<TapeEntry>, input: UnsafePointer<UInt8>, first: Int, end: Int) {
            self.entries = Elements(entries: entries, input: input, first: first, end: end)
        }

        @inlinable
        package mutating func next() -> UnsafeJSONValue? {
            while entries.nextIndex < entries.end {
                let index = entries.nextIndex
                entries.nextIndex &+= 1
                // Closing brackets are entries of the tape, not values.
                let kind = entries.entries[index].kind
                if kind != .objectEnd && kind != .arrayEnd {
                    return UnsafeJSONValue(entries: entries.entries, input: entries.input, index: index)
                }
            }
            return nil
        }
    }

    /// An object's entries are its keys and values in turn, so members are elements read in
    /// pairs.
    @usableFromInline package struct Members: Sequence, IteratorProtocol {
        @usableFromInline var entries: Elements

        @inlinable
        init(entries: UnsafePointer<TapeEntry>, input: UnsafePointer<UInt8>, first: Int, end: Int) {
            self.entries = Elements(entries: entries, input: input, first: first, end: end)
        }

        @inlinable
        package mutating func next() -> Member? {
            guard let key = entries.next(), let value = entries.next() else { return nil }
            return Member(key: key, value: value)
        }
    }
}

/// A value inside a ``JSONDocument``. Cheap to copy; keeps the document alive, so it may be
/// stored and passed around freely. Each read goes through ``UnsafeJSONValue``; for tight loops
/// over many values use ``JSONDocument/withUnsafeRoot(_:)``, which skips the reference counting.
public struct JSONValue: Sendable {
    public enum Kind: Sendable, Hashable {
        case object, array, string, number, bool, null

        @inlinable
        init(_ kind: JSONKind) {
            switch kind {
            case .object, .objectEnd: self = .object
            case .array, .arrayEnd: self = .array
            case .string: self = .string
            case .number: self = .number
            case .true, .false: self = .bool
            case .null: self = .null
            }
        }
    }

    @usableFromInline let storage: JSONTapeStorage
    @usableFromInline let index: Int

    @inlinable
    init(storage: JSONTapeStorage, index: Int) {
        self.storage = storage
        self.index = index
    }

    /// Calls `body` with the unsafe view of this value, valid only inside `body`.
    @inlinable
    package func withUnsafeValue<Result, Failure: Error>(
        _ body: (UnsafeJSONValue) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withUnsafeValue(at: index, body)
    }

    @inlinable public var kind: Kind { Kind(storage.entries[index].kind) }
    @inlinable public var byteOffset: Int { withUnsafeValue { $0.byteOffset } }
    @inlinable public var byteRange: Range<Int> { withUnsafeValue { $0.byteRange } }
    @inlinable public var isNull: Bool { withUnsafeValue { $0.isNull } }
    @inlinable public var bool: Bool? { withUnsafeValue { $0.bool } }
    @inlinable public var string: String? { withUnsafeValue { $0.string } }
    @inlinable public var stringHasEscapes: Bool { withUnsafeValue { $0.stringHasEscapes } }
    @inlinable public var numberSpelling: String? { withUnsafeValue { $0.numberSpelling } }
    @inlinable public var isIntegerSpelling: Bool { withUnsafeValue { $0.isIntegerSpelling } }
    @inlinable public var int: Int? { withUnsafeValue { $0.int } }
    @inlinable public var double: Double? { withUnsafeValue { $0.double } }
    @inlinable public var count: Int { withUnsafeValue { $0.count } }

    /// Calls `body` with the string's bytes as they appear in the input (between the quotes,
    /// escapes not decoded). Returns `nil` when this is not a string.
    @inlinable
    public func withRawStringBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result? {
        try withUnsafeValue { value in try value.rawStringBytes.map(body) }
    }

    /// Compares the decoded string with `other`; no allocation unless it has escapes.
    @inlinable
    public func stringEquals(_ other: StaticString) -> Bool { withUnsafeValue { $0.stringEquals(other) } }

    /// Compares the decoded string with `other`; no allocation unless it has escapes.
    public func stringEquals(_ other: String) -> Bool {
        var other = other
        return other.withUTF8 { utf8 in withUnsafeValue { $0.stringEquals(UnsafeRawBufferPointer(utf8)) } }
    }

    /// The elements of an array, in document order; empty for anything else.
    @inlinable
    public var elements: Elements {
        withUnsafeValue { value in
            let elements = value.elements
            return Elements(storage: storage, first: elements.nextIndex, end: elements.end)
        }
    }

    /// The members of an object, in document order, duplicates included; empty for anything else.
    @inlinable
    public var members: Members {
        withUnsafeValue { value in
            let members = value.members
            return Members(storage: storage, first: members.entries.nextIndex, end: members.entries.end)
        }
    }

    public struct Member: Sendable {
        /// The key, a string value.
        public let key: JSONValue
        public let value: JSONValue

        @inlinable
        init(key: JSONValue, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    public struct Elements: Sequence, IteratorProtocol, Sendable {
        @usableFromInline let storage: JSONTapeStorage
        @usableFromInline var nextIndex: Int
        @usableFromInline let end: Int

        @inlinable
        init(storage: JSONTapeStorage, first: Int, end: Int) {
            self.storage = storage
            self.nextIndex = first
            self.end = end
        }

        @inlinable
        public mutating func next() -> JSONValue? {
            guard nextIndex < end else { return nil }
            let value = JSONValue(storage: storage, index: nextIndex)
            nextIndex = value.withUnsafeValue { $0.nextSiblingIndex }
            return value
        }
    }

    /// Every value nested inside this one, depth first in document order, object keys included
    /// (as strings whose ``isObjectKey`` is true); empty for scalars. A walk straight along the
    /// tape: any depth the parser accepts, without recursion.
    @inlinable
    public var descendants: Descendants {
        withUnsafeValue { value in
            let descendants = value.descendants
            return Descendants(storage: storage, first: descendants.entries.nextIndex, end: descendants.entries.end)
        }
    }

    /// True for a string that is an object's key rather than a value.
    @inlinable public var isObjectKey: Bool { withUnsafeValue { $0.isObjectKey } }

    /// The values under one value, entry by entry (see ``descendants``).
    public struct Descendants: Sequence, IteratorProtocol, Sendable {
        @usableFromInline let storage: JSONTapeStorage
        @usableFromInline var nextIndex: Int
        @usableFromInline let end: Int

        @inlinable
        init(storage: JSONTapeStorage, first: Int, end: Int) {
            self.storage = storage
            self.nextIndex = first
            self.end = end
        }

        @inlinable
        public mutating func next() -> JSONValue? {
            while nextIndex < end {
                let index = nextIndex
                nextIndex &+= 1
                // Closing brackets are entries of the tape, not values.
                let kind = storage.entries[index].kind
                if kind != .objectEnd && kind != .arrayEnd { return JSONValue(storage: storage, index: index) }
            }
            return nil
        }
    }

    /// Members are elements read in pairs (see ``UnsafeJSONValue/Members``).
    public struct Members: Sequence, IteratorProtocol, Sendable {
        @usableFromInline var entries: Elements

        @inlinable
        init(storage: JSONTapeStorage, first: Int, end: Int) {
            self.entries = Elements(storage: storage, first: first, end: end)
        }

        @inlinable
        public mutating func next() -> Member? {
            guard let key = entries.next(), let value = entries.next() else { return nil }
            return Member(key: key, value: value)
        }
    }

    /// The first member named `key`, or `nil` (also when this is not an object).
    @inlinable
    public subscript(key: StaticString) -> JSONValue? {
        withUnsafeValue { $0[key] }.map { JSONValue(storage: storage, index: $0.index) }
    }

    /// The first member named `key`, or `nil` (also when this is not an object).
    public subscript(key: String) -> JSONValue? {
        var key = key
        let found = key.withUTF8 { utf8 in
            withUnsafeValue { value in value.members.first { $0.key.stringEquals(UnsafeRawBufferPointer(utf8)) }?.value.index }
        }
        return found.map { JSONValue(storage: storage, index: $0) }
    }

    /// The element at `position`, or `nil` when out of range or not an array.
    public subscript(position: Int) -> JSONValue? {
        guard position >= 0 else { return nil }
        let found = withUnsafeValue { value in value.elements.dropFirst(position).first { _ in true }?.index }
        return found.map { JSONValue(storage: storage, index: $0) }
    }
}

@inlinable
package func bytesEqual(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    guard lhs.count == rhs.count else { return false }
    for index in 0..<lhs.count where lhs[index] != rhs[index] { return false }
    return true
}

/// Parses an integer spelling the scanner already validated; `nil` on overflow.
@inlinable
func parseInteger(_ spelling: UnsafeRawBufferPointer) -> Int? {
    var index = 0
    let negative = spelling[0] == ASCII.minus
    if negative { index = 1 }
    var value = 0
    while index < spelling.count {
        let digit = Int(spelling[index] &- ASCII.zero)
        let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
        let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
        if overflow1 || overflow2 { return nil }
        value = next
        index += 1
    }
    return value
}

/// A `String` holding a copy of UTF-8 that the scanner has already validated. The standard
/// library's `String(decoding:)` would check every byte again (a sixth of the instructions of
/// decoding the corpus); `UTF8Span(unchecked:)` is its documented way to say the check was done.
/// Older Apple systems, which lack it, take the checking path.
@usableFromInline
func makeString(validatedUTF8 bytes: UnsafeRawBufferPointer, isASCII: Bool) -> String {
    #if compiler(>=6.2)
    if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
        let span = Span<UInt8>(_unsafeBytes: bytes)
        return String(copying: UTF8Span(unchecked: span, isKnownASCII: isASCII))
    }
    #endif
    return String(decoding: bytes, as: UTF8.self)
}

/// Decodes the content of a string that contains escapes. The scanner validated it, so every
/// escape is well formed, surrogates come in pairs, and the decoded bytes are valid UTF-8.
@usableFromInline
func decodeEscapedString(_ raw: UnsafeRawBufferPointer) -> String {
    // Decoded text is never longer than its escaped spelling.
    withUnsafeTemporaryAllocation(byteCount: raw.count, alignment: 1) { output in
        var written = 0
        var combinedBits: UInt8 = 0
        forEachDecodedRun(raw) { run in
            for byte in run {
                output[written] = byte
                combinedBits |= byte
                written += 1
            }
        }
        return makeString(validatedUTF8: UnsafeRawBufferPointer(rebasing: output[..<written]), isASCII: combinedBits < 0x80)
    }
}

/// Calls `body` with consecutive runs of decoded UTF-8 from a validated string content.
@usableFromInline
func forEachDecodedRun(_ raw: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
    var runStart = 0
    var index = 0
    var scalarBytes: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
    while index < raw.count {
        guard raw[index] == ASCII.backslash else {
            index += 1
            continue
        }
        if runStart < index { body(UnsafeRawBufferPointer(rebasing: raw[runStart..<index])) }
        let escaped = raw[index + 1]
        var scalar: UInt32
        switch escaped {
        case UInt8(ascii: "b"): scalar = 0x08
        case UInt8(ascii: "f"): scalar = 0x0C
        case UInt8(ascii: "n"): scalar = 0x0A
        case UInt8(ascii: "r"): scalar = 0x0D
        case UInt8(ascii: "t"): scalar = 0x09
        case ASCII.lowerU:
            scalar = hexValue(raw, at: index + 2)
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                let low = hexValue(raw, at: index + 8)
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                index += 6
            }
            index += 4
        default: scalar = UInt32(escaped)
        }
        index += 2
        let length = withUnsafeMutableBytes(of: &scalarBytes) { buffer in
            encodeUTF8(scalar, into: buffer)
        }
        withUnsafeBytes(of: &scalarBytes) { body(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
        runStart = index
    }
    if runStart < raw.count { body(UnsafeRawBufferPointer(rebasing: raw[runStart..<raw.count])) }
}

@usableFromInline
func hexValue(_ raw: UnsafeRawBufferPointer, at index: Int) -> UInt32 {
    var value: UInt32 = 0
    for offset in index..<(index + 4) { value = value << 4 | UInt32(hexDigitValue(raw[offset])) }
    return value
}

@usableFromInline
func encodeUTF8(_ scalar: UInt32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
    switch scalar {
    case 0..<0x80:
        buffer[0] = UInt8(scalar)
        return 1
    case 0x80..<0x800:
        buffer[0] = UInt8(0xC0 | scalar >> 6)
        buffer[1] = UInt8(0x80 | scalar & 0x3F)
        return 2
    case 0x800..<0x10000:
        buffer[0] = UInt8(0xE0 | scalar >> 12)
        buffer[1] = UInt8(0x80 | scalar >> 6 & 0x3F)
        buffer[2] = UInt8(0x80 | scalar & 0x3F)
        return 3
    default:
        buffer[0] = UInt8(0xF0 | scalar >> 18)
        buffer[1] = UInt8(0x80 | scalar >> 12 & 0x3F)
        buffer[2] = UInt8(0x80 | scalar >> 6 & 0x3F)
        buffer[3] = UInt8(0x80 | scalar & 0x3F)
        return 4
    }
}
