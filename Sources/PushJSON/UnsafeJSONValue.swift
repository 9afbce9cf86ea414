/// A value inside a ``JSONDocument``, read straight from the tape and the input: no reference
/// counting, no copies. Valid only inside the `JSONDocument.withUnsafeRoot(_:)` call it came
/// from (or ``JSONValue/withUnsafeValue(_:)``).
@usableFromInline
package struct UnsafeJSONValue {
    @usableFromInline let entries: UnsafePointer<TapeEntry>
    @usableFromInline let input: UnsafePointer<UInt8>
    /// The value's entry on the tape.
    @usableFromInline package let index: Int

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

    /// Another value of the same document, by its index on the tape (`index` of a value read
    /// earlier).
    @inlinable
    package func value(at index: Int) -> UnsafeJSONValue {
        UnsafeJSONValue(entries: entries, input: input, index: index)
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
        if entry.flags & TapeEntry.stringHasEscapes == 0 { return bytesEqual(contentBytes, other) }
        // Decoded run by run against `other`, so an escaped key costs no allocation either.
        var matched = 0
        var equal = true
        forEachDecodedRun(contentBytes) { run in
            guard equal else { return }
            equal = matched + run.count <= other.count && bytesEqual(run, UnsafeRawBufferPointer(rebasing: other[matched..<(matched + run.count)]))
            matched += run.count
        }
        return equal && matched == other.count
    }

    /// True when both are strings with the same decoded content.
    @inlinable
    package func sameString(as other: UnsafeJSONValue) -> Bool {
        if !stringHasEscapes && !other.stringHasEscapes {
            return entry.kind == .string && other.entry.kind == .string && bytesEqual(contentBytes, other.contentBytes)
        }
        guard entry.kind == .string && other.entry.kind == .string else { return false }
        // Decoded text is never longer than its escaped spelling.
        return withUnsafeTemporaryAllocation(byteCount: contentBytes.count, alignment: 1) { buffer in
            var written = 0
            forEachDecodedRun(contentBytes) { run in
                UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + run.count)]).copyMemory(from: run)
                written += run.count
            }
            return other.stringEquals(UnsafeRawBufferPointer(rebasing: buffer[..<written]))
        }
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
        return Members(Elements(entries: entries, input: input, first: index + 1, end: end))
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
        return Descendants(Elements(entries: entries, input: input, first: index + 1, end: end))
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
        init(_ entries: Elements) { self.entries = entries }

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
        package mutating func next() -> Member? {
            guard let key = entries.next(), let value = entries.next() else { return nil }
            return Member(key: key, value: value)
        }

        @inlinable
        init(_ entries: Elements) { self.entries = entries }
    }
}
