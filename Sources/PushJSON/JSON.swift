/// An owned JSON value: what custom payload keys, `content-state` and `attributes` hold.
///
/// Objects keep their members in order. Numbers keep their spelling, so re-encoding is lossless.
/// `.raw` holds pre-encoded JSON, validated when it is made; it compares equal to the parsed
/// value it spells. Decoded payloads keep their custom arrays and objects that way: no tree of
/// owned strings to build, and writing them back is one copy.
public enum JSON: Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSON])
    case object([JSONMember])
    case raw(RawJSON)
}

/// One member of an object: a key and its value.
public struct JSONMember: Sendable, Hashable {
    public var key: String
    public var value: JSON

    public init(_ key: String, _ value: JSON) {
        self.key = key
        self.value = value
    }
}

/// A JSON number, kept as it is spelled (`1`, `-0.5`, `1.0e+10`).
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    public let spelling: String

    public init(_ value: Int) { spelling = String(value) }

    /// The shortest spelling that reads back as `value`.
    /// - Throws: `invalidNumber` for NaN and infinities.
    public init(_ value: Double) throws(JSONError) {
        guard value.isFinite else { throw JSONError(.invalidNumber, at: 0, "\(value) is not a JSON number") }
        spelling = value.description
    }

    /// A number from its JSON spelling; `nil` unless `spelling` is exactly one valid JSON number.
    public init?(spelling: String) {
        var parser = JSONParser()
        guard let document = try? parser.parse(Array(spelling.utf8)), document.root.kind == .number else { return nil }
        self.spelling = spelling
    }

    @usableFromInline init(uncheckedSpelling: String) { spelling = uncheckedSpelling }

    public var description: String { spelling }
    /// The value as an `Int` when the spelling is an integer that fits.
    public var int: Int? { Int(spelling) }
    public var double: Double? { Double(spelling) }
}

/// Pre-encoded JSON, validated and stored in canonical (minified) form.
public struct RawJSON: Sendable, Hashable, CustomStringConvertible {
    /// The canonical encoding.
    public let bytes: [UInt8]

    /// - Throws: ``JSONError`` when `text` is not exactly one valid JSON value.
    public init(_ text: String) throws(JSONError) {
        try self.init(bytes: Array(text.utf8))
    }

    /// - Throws: ``JSONError`` when `bytes` are not exactly one valid JSON value.
    public init(bytes: [UInt8]) throws(JSONError) {
        var parser = JSONParser()
        let document = try parser.parse(bytes)
        var canonical: [UInt8] = []
        canonical.reserveCapacity(bytes.count)
        document.root.writeCanonical(into: &canonical)
        self.bytes = canonical
    }

    /// Bytes already in canonical form, written by `writeCanonical`.
    package init(canonical bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// The parsed value this encodes.
    public var value: JSON {
        var parser = JSONParser()
        // Validated at construction, so parsing and conversion cannot fail.
        return try! JSON(parser.parse(bytes).root)
    }
}

extension JSON: Hashable {
    /// Structural equality; `.raw` compares by the value it encodes.
    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        // Equal bytes settle it; different ones may still spell canonically equivalent strings,
        // which `String` equality joins, so compare the values as the other cases do.
        case (.raw(let left), .raw(let right)): return left == right || left.value == right.value
        case (.raw(let raw), let other), (let other, .raw(let raw)): return raw.value == other
        case (.null, .null): return true
        case (.bool(let left), .bool(let right)): return left == right
        case (.number(let left), .number(let right)): return left == right
        case (.string(let left), .string(let right)): return left == right
        case (.array(let left), .array(let right)): return left == right
        case (.object(let left), .object(let right)): return left == right
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        case .raw(let raw): raw.value.hash(into: &hasher)
        }
    }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(floatLiteral value: Double) {
        // A float literal is finite by construction.
        self = .number(try! JSONNumber(value))
    }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    /// Members in the order written.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(elements.map { JSONMember($0.0, $0.1) })
    }
}

extension JSON {
    /// An owned copy of a parsed value.
    /// - Throws: `duplicateKey` when an object repeats a key (at the second occurrence).
    public init(_ value: JSONValue) throws(JSONError) {
        self = try value.withUnsafeValue { (value) throws(JSONError) in try JSON(value) }
    }

    /// An owned copy of a parsed value.
    /// - Throws: `duplicateKey` when an object repeats a key (at the second occurrence).
    package init(_ value: UnsafeJSONValue) throws(JSONError) {
        try self.init(value) { (object) throws(JSONError) in try object.checkUniqueKeys() }
    }

    /// An owned copy of a parsed value whose objects are known to have unique keys (see
    /// `UnsafeJSONValue.checkUniqueKeysThroughout()`): the copy without the check.
    package init(uniqueKeys value: UnsafeJSONValue) {
        self.init(value) { _ in }
    }

    /// An owned copy that keeps an array or object as its canonical bytes (`.raw`); scalars
    /// become their own cases. One allocation instead of one per string, array and object
    /// inside, and writing it back is one copy. What a decoded payload keeps of its custom data.
    /// - Throws: `duplicateKey` when an object repeats a key.
    package init(encoding value: UnsafeJSONValue) throws(JSONError) {
        if value.kind == .array || value.kind == .object { try value.checkUniqueKeysThroughout() }
        self.init(encodingUniqueKeys: value)
    }

    /// An owned copy that keeps every member of an object that repeats a key, in order: for a
    /// reader that settles repeats itself, as a dictionary does.
    package init(keepingRepeatedKeys value: JSONValue) {
        self = value.withUnsafeValue { JSON($0) { _ in } }
    }

    /// ``init(encoding:)`` for a value whose objects are known to have unique keys.
    package init(encodingUniqueKeys value: UnsafeJSONValue) {
        guard value.kind == .array || value.kind == .object else {
            self.init(uniqueKeys: value)
            return
        }
        var bytes: [UInt8] = []
        // Escapes in the input mostly shrink when written minimally, so its span is the size.
        bytes.reserveCapacity(value.byteRange.count)
        value.writeCanonical(into: &bytes)
        self = .raw(RawJSON(canonical: bytes))
    }

    /// The copy, calling `checkObject` on each object before copying its members.
    init<Failure: Error>(_ value: UnsafeJSONValue, checkObject: (UnsafeJSONValue) throws(Failure) -> Void) throws(Failure) {
        switch value.kind {
        case .null: self = .null
        case .bool: self = .bool(value.bool!)
        case .number: self = .number(JSONNumber(uncheckedSpelling: value.numberSpelling!))
        case .string: self = .string(value.string!)
        case .array:
            var elements: [JSON] = []
            elements.reserveCapacity(value.count)
            for element in value.elements { elements.append(try JSON(element, checkObject: checkObject)) }
            self = .array(elements)
        case .object:
            try checkObject(value)
            var members: [JSONMember] = []
            members.reserveCapacity(value.count)
            for member in value.members { members.append(JSONMember(member.key.string!, try JSON(member.value, checkObject: checkObject))) }
            self = .object(members)
        }
    }

    /// Writes the value minified with minimal escaping.
    /// - Throws: `invalidNumber`/`duplicateKey`/`depthLimitExceeded` for values no valid JSON text
    ///   can hold.
    @inlinable
    public func write(into bytes: inout [UInt8]) throws(JSONError) {
        try bytes.withJSONOutput { (output: inout ByteArrayOutput) throws(JSONError) in try write(to: &output, depth: 0) }
    }

    /// The exact number of bytes ``write(into:)`` appends.
    public func encodedSize() throws(JSONError) -> Int {
        var counter = ByteCountOutput()
        try write(to: &counter, depth: 0)
        return counter.count
    }

    @inlinable
    package func write<Output: JSONOutput>(to output: inout Output, depth: Int) throws(JSONError) {
        switch self {
        case .null: JSONWriter.writeStatic("null", to: &output)
        case .bool(let value): JSONWriter.writeStatic(value ? "true" : "false", to: &output)
        case .number(let number): JSONWriter.writeRaw(number.spelling, to: &output)
        case .string(let string): JSONWriter.writeString(string, to: &output)
        case .raw(let raw): raw.bytes.withUnsafeBytes { output.append($0) }
        case .array(let elements):
            try checkDepth(depth)
            try Self.write(elements, between: ASCII.openBracket, and: ASCII.closeBracket, to: &output, depth: depth + 1)
        case .object(let members):
            try checkDepth(depth)
            try checkUniqueKeys(members)
            try Self.write(members, between: ASCII.openBrace, and: ASCII.closeBrace, to: &output, depth: depth + 1)
        }
    }

    /// An array's elements or an object's members, comma-separated between `open` and `close`.
    @inlinable
    static func write<Item: JSONWritableInPlace, Output: JSONOutput>(
        _ items: [Item], between open: UInt8, and close: UInt8, to output: inout Output, depth: Int
    ) throws(JSONError) {
        output.append(open)
        try items.withUnsafeBufferPointer { (buffer) throws(JSONError) in
            try forEachInPlace(buffer) { (index, item) throws(JSONError) in
                if index > 0 { output.append(ASCII.comma) }
                try item.writeInPlace(to: &output, depth: depth)
            }
        }
        output.append(close)
    }

    /// ``write(to:depth:)`` on a value reached by address. Mutating only for that: see
    /// `JSONMember.writeInPlace`. Nothing is written to `self`.
    @inlinable
    package mutating func writeInPlace<Output: JSONOutput>(to output: inout Output, depth: Int) throws(JSONError) {
        try write(to: &output, depth: depth)
    }

    @inlinable
    func checkDepth(_ depth: Int) throws(JSONError) {
        guard depth < JSONParser.Options.maximumSupportedDepth else {
            throw JSONError(.depthLimitExceeded, at: 0, "value nested deeper than \(JSONParser.Options.maximumSupportedDepth) levels")
        }
    }
}

/// Throws `duplicateKey` for the second occurrence of a key. Pairwise for small objects (no
/// allocation), hashed for large ones (no quadratic time on hostile input).
///
/// Keys are the same when their UTF-8 bytes are, as the parser judges them: Swift's `==` would
/// also join canonically equivalent spellings ("é" and "e" + U+0301), so a model decoded from a
/// document the parser accepted could not be written back.
@usableFromInline
package func checkUniqueKeys(_ members: [JSONMember]) throws(JSONError) {
    try members.withUnsafeBufferPointer { (members) throws(JSONError) in try checkUniqueKeys(members) }
}

@usableFromInline
package func checkUniqueKeys(_ members: UnsafeBufferPointer<JSONMember>) throws(JSONError) {
    if members.count <= 16 {
        for second in members.indices {
            for first in 0..<second where sameBytes(members[first].key, members[second].key) {
                throw JSONError(.duplicateKey, at: 0, "duplicate key \"\(members[second].key)\"")
            }
        }
        return
    }
    var seen = Set<[UInt8]>(minimumCapacity: members.count)
    for member in members where !seen.insert(Array(member.key.utf8)).inserted {
        throw JSONError(.duplicateKey, at: 0, "duplicate key \"\(member.key)\"")
    }
}

/// Whether two strings have the same UTF-8 bytes. Different lengths settle it at once; otherwise
/// `==` (whose fast paths compare small strings by their bits) rules out all but canonically
/// equivalent spellings, and only those are compared byte by byte.
@inlinable
func sameBytes(_ first: String, _ second: String) -> Bool {
    first.utf8.count == second.utf8.count && first == second && first.utf8.elementsEqual(second.utf8)
}

extension UnsafeJSONValue {
    /// Throws `duplicateKey` at the second occurrence of a repeated key in this object. Pairwise
    /// for small objects (no allocation), hashed for large ones (no quadratic time).
    package func checkUniqueKeys() throws(JSONError) {
        let object = entries[index]
        guard object.kind == .object else { return }
        let count = Int(object.length)
        if count <= 16 {
            let firstKey = index + 1
            if keysHaveDistinctShapes(from: firstKey, count: count) { return }
            // Straight over the tape: each key against the earlier ones, by length first (the
            // raw length decides unless an escape is involved), then by content.
            var key = firstKey
            for _ in 0..<count {
                let keyEntry = entries[key]
                var earlier = firstKey
                while earlier != key {
                    let earlierEntry = entries[earlier]
                    if earlierEntry.length == keyEntry.length || (earlierEntry.flags | keyEntry.flags) & TapeEntry.stringHasEscapes != 0 {
                        let duplicate = UnsafeJSONValue(entries: entries, input: input, index: key)
                        if UnsafeJSONValue(entries: entries, input: input, index: earlier).sameString(as: duplicate) {
                            throw JSONError(.duplicateKey, at: duplicate.byteOffset, "duplicate key \"\(duplicate.string!)\"")
                        }
                    }
                    earlier = UnsafeJSONValue(entries: entries, input: input, index: earlier + 1).nextSiblingIndex
                }
                key = UnsafeJSONValue(entries: entries, input: input, index: key + 1).nextSiblingIndex
            }
            return
        }
        var seen = Set<String>(minimumCapacity: count)
        for member in members where !seen.insert(member.key.string!).inserted {
            throw JSONError(.duplicateKey, at: member.key.byteOffset, "duplicate key \"\(member.key.string!)\"")
        }
    }

    /// ``checkUniqueKeys()`` for this value and every object inside it, in the order
    /// `JSON(_:)` meets them, so the first repeat found is the one an owned copy would throw;
    /// nothing is copied.
    package func checkUniqueKeysThroughout() throws(JSONError) {
        if keysHaveDistinctShapesThroughout() { return }
        try checkUniqueKeys()
        for value in descendants where value.entry.kind == .object { try value.checkUniqueKeys() }
    }

    /// ``keysHaveDistinctShapes(from:count:)`` for every object in this value, in one pass over
    /// its tape entries with a shape set per open container, instead of one walk per object.
    /// False (so the caller compares keys) at a repeated shape, an escaped key, or nesting
    /// deeper than the sets kept.
    @inlinable
    func keysHaveDistinctShapesThroughout() -> Bool {
        let end = nextSiblingIndex
        let maximumDepth = 32
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: maximumDepth) { shapes in
            var depth = -1
            for index in self.index..<end {
                let entry = entries[index]
                switch entry.kind {
                case .object, .array:
                    depth &+= 1
                    guard depth < maximumDepth else { return false }
                    shapes[depth] = 0
                case .objectEnd, .arrayEnd:
                    depth &-= 1
                case .string:
                    guard entry.flags & TapeEntry.isKey != 0 else { continue }
                    guard entry.flags & TapeEntry.stringHasEscapes == 0 else { return false }
                    let shape = keyShape(entry)
                    guard shapes[depth] & shape == 0 else { return false }
                    shapes[depth] |= shape
                default:
                    continue
                }
            }
            return true
        }
    }

    /// One bit of 64 for an unescaped key, from its length, first and last byte: keys of
    /// different shapes differ.
    @inlinable @inline(__always)
    func keyShape(_ entry: TapeEntry) -> UInt64 {
        let length = Int(entry.length)
        let first = length == 0 ? 0 : Int(input[Int(entry.offset)])
        let last = length == 0 ? 0 : Int(input[Int(entry.offset) &+ length &- 1])
        return 1 << UInt64((length &* 7 &+ first &* 3 &+ last) & 63)
    }

    /// True when no two of the `count` keys from the tape entry `firstKey` on agree in length,
    /// first and last byte (hashed into a 64-bit set), and none is escaped; then no two are
    /// equal and one pass has shown it. Most objects pass, so the pairwise comparison runs only
    /// for the few that share a shape (or an escape, whose raw bytes are not its text).
    @inlinable @inline(__always)
    func keysHaveDistinctShapes(from firstKey: Int, count: Int) -> Bool {
        var shapes: UInt64 = 0
        var key = firstKey
        for _ in 0..<count {
            let entry = entries[key]
            guard entry.flags & TapeEntry.stringHasEscapes == 0 else { return false }
            let shape = keyShape(entry)
            guard shapes & shape == 0 else { return false }
            shapes |= shape
            key = UnsafeJSONValue(entries: entries, input: input, index: key &+ 1).nextSiblingIndex
        }
        return true
    }

    /// Appends the minified, lossless re-encoding: key order, duplicates and number spellings
    /// as in the input; strings with minimal escaping and raw UTF-8.
    package func writeCanonical(into bytes: inout [UInt8]) {
        bytes.withJSONOutput { (output: inout ByteArrayOutput) in writeCanonical(to: &output) }
    }

    @usableFromInline
    func writeCanonical<Output: JSONOutput>(to output: inout Output) {
        var previousOpensOrIsKey = true
        for index in self.index..<nextSiblingIndex {
            let entry = entries[index]
            switch entry.kind {
            case .objectEnd, .arrayEnd:
                output.append(entry.kind == .objectEnd ? ASCII.closeBrace : ASCII.closeBracket)
                previousOpensOrIsKey = false
                continue
            default:
                break
            }
            if !previousOpensOrIsKey { output.append(ASCII.comma) }
            let content = UnsafeRawBufferPointer(start: input + Int(entry.offset), count: Int(entry.length))
            switch entry.kind {
            case .object:
                output.append(ASCII.openBrace)
                previousOpensOrIsKey = true
            case .array:
                output.append(ASCII.openBracket)
                previousOpensOrIsKey = true
            case .string:
                output.append(ASCII.quote)
                if entry.flags & TapeEntry.stringHasEscapes == 0 {
                    // Validated: no quote, backslash or control byte, so already minimal.
                    output.append(content)
                } else {
                    forEachDecodedRun(content) { JSONWriter.writeEscaped($0, to: &output) }
                }
                output.append(ASCII.quote)
                if entry.flags & TapeEntry.isKey != 0 {
                    output.append(ASCII.colon)
                    previousOpensOrIsKey = true
                } else {
                    previousOpensOrIsKey = false
                }
            default:
                output.append(content)
                previousOpensOrIsKey = false
            }
        }
    }
}

extension JSONValue {
    /// Throws `duplicateKey` at the second occurrence of a repeated key in this object.
    public func checkUniqueKeys() throws(JSONError) {
        try withUnsafeValue { (value) throws(JSONError) in try value.checkUniqueKeys() }
    }

    /// Appends the minified, lossless re-encoding: key order, duplicates and number spellings
    /// as in the input; strings with minimal escaping and raw UTF-8.
    public func writeCanonical(into bytes: inout [UInt8]) {
        withUnsafeValue { $0.writeCanonical(into: &bytes) }
    }
}

extension JSONDocument {
    /// The minified, lossless re-encoding of the whole document.
    public func canonicalBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(self.bytes.count)
        root.writeCanonical(into: &bytes)
        return bytes
    }
}

extension JSONMember {
    /// Writes `"key":value`. Mutating only so that `self` is passed by address: a member read
    /// out of an array's buffer for a non-mutating call is copied first, a retain and a release
    /// of its key and of its value each time. Nothing is written to `self`.
    @inlinable
    package mutating func writeInPlace<Output: JSONOutput>(to output: inout Output, depth: Int) throws(JSONError) {
        JSONWriter.writeString(key, to: &output)
        output.append(ASCII.colon)
        try value.write(to: &output, depth: depth)
    }
}

/// A value (``JSON``) or a member (``JSONMember``), written from where it lies in its array.
@usableFromInline
protocol JSONWritableInPlace {
    mutating func writeInPlace<Output: JSONOutput>(to output: inout Output, depth: Int) throws(JSONError)
}

extension JSON: JSONWritableInPlace {}
extension JSONMember: JSONWritableInPlace {}

/// Calls `body` with each element of `elements` in place, by address. Reading an element out of
/// a buffer for a call copies it first, a retain and a release of every reference it holds; passed
/// `inout`, it is not copied. The pointer is mutable only because `inout` needs one: the callers
/// (`writeInPlace`) read and never write, so the array behind `elements` is not modified. This is
/// the one place the codec turns an immutable buffer into a mutable pointer (docs/unsafe.md).
@inlinable @inline(__always)
package func forEachInPlace<Element, Failure: Error>(
    _ elements: UnsafeBufferPointer<Element>, _ body: (_ index: Int, _ element: inout Element) throws(Failure) -> Void
) throws(Failure) {
    guard let first = elements.baseAddress else { return }
    let mutable = UnsafeMutablePointer(mutating: first)
    for index in elements.indices {
        try body(index, &mutable[index])
    }
}
