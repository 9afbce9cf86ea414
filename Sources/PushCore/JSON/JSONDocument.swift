/// A parsed JSON text: the input bytes and a tape of their tokens. Values are read through
/// ``JSONValue`` views; strings and numbers stay byte ranges of the input until asked for.
public struct JSONDocument: Sendable {
    @usableFromInline let storage: JSONTapeStorage

    @usableFromInline
    init(storage: JSONTapeStorage) {
        self.storage = storage
    }

    /// The top-level value.
    @inlinable
    public var root: JSONValue { JSONValue(storage: storage, index: 0) }

    /// The bytes that were parsed.
    public var bytes: [UInt8] { storage.input }

    /// Number of tokens recorded (every scalar, and each container's start and end).
    public var tokenCount: Int { storage.count }
}

/// A view of one value inside a ``JSONDocument``. Cheap to copy; keeps the document alive.
public struct JSONValue: Sendable {
    public enum Kind: Sendable, Hashable {
        case object, array, string, number, bool, null
    }

    @usableFromInline let storage: JSONTapeStorage
    @usableFromInline let index: Int

    @inlinable
    init(storage: JSONTapeStorage, index: Int) {
        self.storage = storage
        self.index = index
    }

    @inlinable
    var entry: TapeEntry {
        // Safe: views are only made for indices below `storage.count`.
        storage.entries[index]
    }

    @inlinable
    public var kind: Kind {
        switch entry.kind {
        case .object, .objectEnd: return .object
        case .array, .arrayEnd: return .array
        case .string: return .string
        case .number: return .number
        case .true, .false: return .bool
        case .null: return .null
        }
    }

    /// Offset of the value's first byte in the input (a string's opening quote).
    @inlinable
    public var byteOffset: Int {
        let entry = self.entry
        return Int(entry.offset) - (entry.kind == .string ? 1 : 0)
    }

    /// The bytes of the value in the input, brackets and quotes included.
    public var byteRange: Range<Int> {
        let entry = self.entry
        switch entry.kind {
        case .object, .array:
            let end = storage.entries[Int(entry.link) - 1]
            return Int(entry.offset)..<(Int(end.offset) + 1)
        case .string:
            return (Int(entry.offset) - 1)..<(Int(entry.offset) + Int(entry.length) + 1)
        default:
            return Int(entry.offset)..<(Int(entry.offset) + Int(entry.length))
        }
    }

    // MARK: Scalars

    @inlinable public var isNull: Bool { entry.kind == .null }

    @inlinable
    public var bool: Bool? {
        switch entry.kind {
        case .true: return true
        case .false: return false
        default: return nil
        }
    }

    /// The decoded string, or `nil` when this is not a string.
    public var string: String? {
        let entry = self.entry
        guard entry.kind == .string else { return nil }
        return storage.input.withUnsafeBytes { input in
            let raw = UnsafeRawBufferPointer(rebasing: input[Int(entry.offset)..<Int(entry.offset + entry.length)])
            if entry.flags & TapeEntry.stringHasEscapes == 0 {
                return String(decoding: raw, as: UTF8.self)
            }
            return decodeEscapedString(raw)
        }
    }

    /// True for a string spelled with backslash escapes in the input.
    @inlinable public var stringHasEscapes: Bool { entry.flags & TapeEntry.stringHasEscapes != 0 }

    /// Calls `body` with the string's bytes as they appear in the input (between the quotes,
    /// escapes not decoded). Returns `nil` when this is not a string.
    @inlinable
    public func withRawStringBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result? {
        let entry = self.entry
        guard entry.kind == .string else { return nil }
        return try storage.input.withUnsafeBytes { input in
            try body(UnsafeRawBufferPointer(rebasing: input[Int(entry.offset)..<Int(entry.offset + entry.length)]))
        }
    }

    /// Compares the decoded string with `other` without allocating when it has no escapes.
    @inlinable
    public func stringEquals(_ other: StaticString) -> Bool {
        rawStringEquals(UnsafeRawBufferPointer(start: other.utf8Start, count: other.utf8CodeUnitCount))
    }

    /// Compares the decoded string with `other` without allocating when it has no escapes.
    public func stringEquals(_ other: String) -> Bool {
        var other = other
        return other.withUTF8 { rawStringEquals(UnsafeRawBufferPointer($0)) }
    }

    @inlinable
    func rawStringEquals(_ other: UnsafeRawBufferPointer) -> Bool {
        let entry = self.entry
        guard entry.kind == .string else { return false }
        if entry.flags & TapeEntry.stringHasEscapes != 0 {
            guard let decoded = string else { return false }
            return decoded.utf8.elementsEqual(other)
        }
        guard Int(entry.length) == other.count else { return false }
        return storage.input.withUnsafeBytes { input in
            bytesEqual(UnsafeRawBufferPointer(rebasing: input[Int(entry.offset)..<Int(entry.offset + entry.length)]), other)
        }
    }

    /// The number as it is spelled in the input, or `nil` when this is not a number.
    public var numberSpelling: String? {
        let entry = self.entry
        guard entry.kind == .number else { return nil }
        return storage.input.withUnsafeBytes { input in
            String(decoding: input[Int(entry.offset)..<Int(entry.offset + entry.length)], as: UTF8.self)
        }
    }

    /// The value as an `Int` when it is an integer spelling (no fraction, no exponent) that fits.
    @inlinable
    public var int: Int? {
        let entry = self.entry
        guard entry.kind == .number,
            entry.flags & (TapeEntry.numberHasFraction | TapeEntry.numberHasExponent) == 0
        else { return nil }
        return storage.input.withUnsafeBufferPointer { input in
            parseInteger(input, from: Int(entry.offset), length: Int(entry.length))
        }
    }

    /// True for a number spelled without fraction or exponent.
    @inlinable
    public var isIntegerSpelling: Bool {
        let entry = self.entry
        return entry.kind == .number
            && entry.flags & (TapeEntry.numberHasFraction | TapeEntry.numberHasExponent) == 0
    }

    /// The number as the nearest `Double` (infinite when out of range), or `nil` when this is
    /// not a number.
    public var double: Double? {
        let entry = self.entry
        guard entry.kind == .number else { return nil }
        if entry.flags & (TapeEntry.numberHasFraction | TapeEntry.numberHasExponent) == 0, let int { return Double(int) }
        return storage.input.withUnsafeBytes { input in
            // Spellings of up to 15 bytes fit a small string, so the common case does not allocate.
            Double(String(decoding: input[Int(entry.offset)..<Int(entry.offset + entry.length)], as: UTF8.self))
        }
    }

    // MARK: Containers

    /// Elements of an array or members of an object; 0 for scalars.
    @inlinable
    public var count: Int {
        let entry = self.entry
        return entry.kind == .object || entry.kind == .array ? Int(entry.length) : 0
    }

    /// The elements of an array, in document order; empty for anything else.
    @inlinable
    public var elements: Elements {
        let entry = self.entry
        guard entry.kind == .array else { return Elements(storage: storage, first: 0, end: 0) }
        return Elements(storage: storage, first: index + 1, end: Int(entry.link) - 1)
    }

    /// The members of an object, in document order, duplicates included; empty for anything else.
    @inlinable
    public var members: Members {
        let entry = self.entry
        guard entry.kind == .object else { return Members(storage: storage, first: 0, end: 0) }
        return Members(storage: storage, first: index + 1, end: Int(entry.link) - 1)
    }

    /// The first member named `key`, or `nil` (also when this is not an object).
    @inlinable
    public subscript(key: StaticString) -> JSONValue? {
        for member in members where member.key.stringEquals(key) { return member.value }
        return nil
    }

    /// The first member named `key`, or `nil` (also when this is not an object).
    public subscript(key: String) -> JSONValue? {
        for member in members where member.key.stringEquals(key) { return member.value }
        return nil
    }

    /// The element at `position`, or `nil` when out of range or not an array.
    public subscript(position: Int) -> JSONValue? {
        guard position >= 0 else { return nil }
        var remaining = position
        for element in elements {
            if remaining == 0 { return element }
            remaining -= 1
        }
        return nil
    }

    /// The index of the entry after this value and everything inside it.
    @inlinable
    var nextSiblingIndex: Int {
        let entry = self.entry
        return entry.kind == .object || entry.kind == .array ? Int(entry.link) : index + 1
    }

    public struct Elements: Sequence, Sendable {
        @usableFromInline let storage: JSONTapeStorage
        @usableFromInline let first: Int
        @usableFromInline let end: Int

        @inlinable
        init(storage: JSONTapeStorage, first: Int, end: Int) {
            self.storage = storage
            self.first = first
            self.end = end
        }

        @inlinable
        public func makeIterator() -> Iterator { Iterator(storage: storage, next: first, end: end) }

        public struct Iterator: IteratorProtocol {
            @usableFromInline let storage: JSONTapeStorage
            @usableFromInline var nextIndex: Int
            @usableFromInline let end: Int

            @inlinable
            init(storage: JSONTapeStorage, next: Int, end: Int) {
                self.storage = storage
                self.nextIndex = next
                self.end = end
            }

            @inlinable
            public mutating func next() -> JSONValue? {
                guard nextIndex < end else { return nil }
                let value = JSONValue(storage: storage, index: nextIndex)
                nextIndex = value.nextSiblingIndex
                return value
            }
        }
    }

    public struct Member: Sendable {
        /// The key, a string value (compare it with ``JSONValue/stringEquals(_:)-(StaticString)``).
        public let key: JSONValue
        public let value: JSONValue

        @inlinable
        init(key: JSONValue, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    public struct Members: Sequence, Sendable {
        @usableFromInline let storage: JSONTapeStorage
        @usableFromInline let first: Int
        @usableFromInline let end: Int

        @inlinable
        init(storage: JSONTapeStorage, first: Int, end: Int) {
            self.storage = storage
            self.first = first
            self.end = end
        }

        @inlinable
        public func makeIterator() -> Iterator { Iterator(storage: storage, next: first, end: end) }

        public struct Iterator: IteratorProtocol {
            @usableFromInline let storage: JSONTapeStorage
            @usableFromInline var nextIndex: Int
            @usableFromInline let end: Int

            @inlinable
            init(storage: JSONTapeStorage, next: Int, end: Int) {
                self.storage = storage
                self.nextIndex = next
                self.end = end
            }

            @inlinable
            public mutating func next() -> Member? {
                guard nextIndex < end else { return nil }
                let key = JSONValue(storage: storage, index: nextIndex)
                let value = JSONValue(storage: storage, index: nextIndex + 1)
                nextIndex = value.nextSiblingIndex
                return Member(key: key, value: value)
            }
        }
    }
}

@inlinable
func bytesEqual(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    guard lhs.count == rhs.count else { return false }
    for index in 0..<lhs.count where lhs[index] != rhs[index] { return false }
    return true
}

/// Parses an integer spelling the scanner already validated; `nil` on overflow.
@inlinable
func parseInteger(_ input: UnsafeBufferPointer<UInt8>, from start: Int, length: Int) -> Int? {
    var index = start
    let end = start + length
    let negative = input[index] == ASCII.minus
    if negative { index += 1 }
    var value = 0
    while index < end {
        let digit = Int(input[index] &- ASCII.zero)
        let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
        let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
        if overflow1 || overflow2 { return nil }
        value = next
        index += 1
    }
    return value
}

/// Decodes the content of a string that contains escapes. The scanner validated it, so every
/// escape is well formed and surrogates come in pairs.
@usableFromInline
func decodeEscapedString(_ raw: UnsafeRawBufferPointer) -> String {
    // Decoded text is never longer than its escaped spelling.
    String(unsafeUninitializedCapacity: raw.count) { output in
        var written = 0
        forEachDecodedRun(raw) { run in
            for byte in run {
                output[written] = byte
                written += 1
            }
        }
        return written
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
