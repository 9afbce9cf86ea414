/// A value of a parsed document, read straight from the tape and the input: no reference
/// counting, no copies, no allocation until ``owned()`` or a ``JSONStringView/string``.
///
/// Non-escaping: the compiler keeps it, and every view reached from it, inside the call that
/// handed it out, so it can never outlive the bytes it reads.
public struct JSONView: ~Escapable {
    @usableFromInline let value: UnsafeJSONValue

    @inlinable @_lifetime(immortal)
    package init(unchecked value: UnsafeJSONValue) {
        self.value = value
    }

    @inlinable public var kind: JSONValue.Kind { value.kind }
    @inlinable public var isNull: Bool { value.isNull }
    @inlinable public var bool: Bool? { value.bool }
    /// The value as an `Int` when it is an integer spelling (no fraction, no exponent) that fits.
    @inlinable public var int: Int? { value.int }
    /// The number as the nearest `Double` (infinite when out of range).
    @inlinable public var double: Double? { value.double }
    /// True for a number spelled without fraction or exponent.
    @inlinable public var isIntegerSpelling: Bool { value.isIntegerSpelling }
    /// Elements of an array or members of an object; 0 for scalars.
    @inlinable public var count: Int { value.count }
    /// The bytes of the value in the input, brackets and quotes included.
    @inlinable public var byteRange: Range<Int> { value.byteRange }

    /// The string, or `nil` when this is not one.
    @inlinable
    public var string: JSONStringView? {
        @_lifetime(copy self)
        get {
            guard value.kind == .string else { return nil }
            return _overrideLifetime(JSONStringView(unchecked: value), copying: self)
        }
    }

    /// The first member named `key`, or `nil` (also when this is not an object).
    @inlinable
    public subscript(key: StaticString) -> JSONView? {
        @_lifetime(copy self)
        get {
            guard let found = value[key] else { return nil }
            return _overrideLifetime(JSONView(unchecked: found), copying: self)
        }
    }

    /// Calls `body` with each element of an array in order; nothing for other values.
    @inlinable
    public func forEachElement<Failure: Error>(_ body: (borrowing JSONView) throws(Failure) -> Void) throws(Failure) {
        for element in value.elements { try body(JSONView(unchecked: element)) }
    }

    /// Calls `body` with each member of an object in order, duplicates included; nothing for other values.
    @inlinable
    public func forEachMember<Failure: Error>(
        _ body: (borrowing JSONStringView, borrowing JSONView) throws(Failure) -> Void
    ) throws(Failure) {
        for member in value.members { try body(JSONStringView(unchecked: member.key), JSONView(unchecked: member.value)) }
    }

    /// Calls `body` with every value nested inside this one, depth first in document order,
    /// object keys included (as strings whose ``isObjectKey`` is true); nothing for scalars. A
    /// walk straight along the tape: any depth the parser accepts, without recursion.
    @inlinable
    public func forEachDescendant<Failure: Error>(_ body: (borrowing JSONView) throws(Failure) -> Void) throws(Failure) {
        for descendant in value.descendants { try body(JSONView(unchecked: descendant)) }
    }

    /// True for a string that is an object's key rather than a value.
    @inlinable public var isObjectKey: Bool { value.isObjectKey }

    /// An owned copy.
    /// - Throws: `duplicateKey` when an object inside repeats a key (at the second occurrence).
    public func owned() throws(JSONError) -> JSON { try JSON(value) }
}
