/// A value inside a ``JSONDocument``. Cheap to copy; keeps the document alive, so it may be
/// stored and passed around freely. Each read goes straight to the tape and the input bytes.
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
        /// The same range of the tape as ``Elements``, stepped entry by entry instead of sibling by sibling.
        @usableFromInline var entries: Elements

        @inlinable
        init(storage: JSONTapeStorage, first: Int, end: Int) {
            entries = Elements(storage: storage, first: first, end: end)
        }

        @inlinable
        public mutating func next() -> JSONValue? {
            while entries.nextIndex < entries.end {
                let index = entries.nextIndex
                entries.nextIndex &+= 1
                // Closing brackets are entries of the tape, not values.
                let kind = entries.storage.entries[index].kind
                if kind != .objectEnd && kind != .arrayEnd { return JSONValue(storage: entries.storage, index: index) }
            }
            return nil
        }
    }

    /// An object's members: its entries on the tape read as key and value in turn.
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
