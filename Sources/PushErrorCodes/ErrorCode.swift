/// The stable code of one of PushCore's errors (`SASError.Code`, `JSONError.Code`, …): a name
/// that is safe to match on with `==` or in a `switch` that has a `default` case. Later versions
/// may add codes; that breaks no `switch`, since no code is an enum case.
///
/// `Name` is the error's list of codes. Only the error's own module makes codes (its
/// `static let`s), so a `Name` value cannot be turned into a code, nor a code into a `Name`,
/// outside it.
public struct ErrorCode<Name: ErrorCodeName>: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline let name: Name

    @inlinable
    package init(_ name: Name) { self.name = name }

    /// The code's name, as the command line, the JSON bodies and logs spell it.
    public var rawValue: String { name.rawValue }
    public var description: String { name.rawValue }
}

/// The names of one error type's codes; the error's module declares them (an enum with a `String`
/// raw value) and an `ErrorCode` per name.
public protocol ErrorCodeName: RawRepresentable<String>, Hashable, Sendable {}
