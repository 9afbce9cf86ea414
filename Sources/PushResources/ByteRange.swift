public import PushInternals

/// Why a `Range` header value was not understood.
public struct ByteRangeError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        /// The range unit is not `bytes` (RFC 9110 says to ignore such a header).
        case unsupportedUnit
        /// The value does not follow `bytes=first-last, first-, -suffix`, or a last is below its first.
        case malformed
        /// More than ``ByteRangeSet/maximumRanges`` ranges.
        case tooManyRanges
        /// Longer than ``ByteRangeSet/maximumHeaderLength`` bytes.
        case tooLong
    }

    public let code: Code
    /// The byte offset in the header value where the problem was found.
    public let offset: Int

    public init(_ code: Code, at offset: Int) {
        self.code = code
        self.offset = offset
    }

    public var message: String { "at byte \(offset) of the Range header" }

    public var description: String { "\(code) \(message)" }
}

/// What a request's `Range` header asks of a resource of a given length.
public enum ByteRangeResolution: Hashable, Sendable {
    /// Send the whole resource with `200`: no `Range`, or one that is ignored.
    case full
    /// Send these bytes with `206` and `Content-Range: bytes first-last/length`.
    case partial(Range<Int>)
    /// Send `416` with `Content-Range: bytes */length`.
    case unsatisfiable
}

/// A parsed `Range: bytes=…` header (RFC 9110 §14.1.2).
///
/// Numbers of any length are read without overflow: a value too large for `Int` saturates, which
/// keeps its meaning (a first position past any resource, a last position or suffix that covers it
/// all). Policy when resolving, following RFC 9110 §14.2:
/// - a unit other than `bytes`, or a value that does not parse, is ignored: the whole resource (`200`);
/// - more than ``maximumRanges`` ranges or a value over ``maximumHeaderLength`` bytes is refused (`416`);
/// - several ranges are answered with the **first satisfiable one** as a single-part `206`; its
///   `Content-Range` says which bytes were sent (no `multipart/byteranges`);
/// - no satisfiable range gives `416`.
public struct ByteRangeSet: Hashable, Sendable {
    public enum Spec: Hashable, Sendable {
        /// `first-last` (inclusive) or `first-` (to the end).
        case from(first: Int, last: Int?)
        /// `-length`: the final `length` bytes.
        case suffix(length: Int)
    }

    public let specs: [Spec]

    /// The most ranges one header may list.
    public static let maximumRanges = 100
    /// The longest header value accepted, in bytes.
    public static let maximumHeaderLength = 4096

    /// Parses a `Range` header value such as `bytes=0-499, -500`.
    /// - Throws: ``ByteRangeError`` with the offset of the first byte not understood.
    public init(parsing headerValue: some StringProtocol) throws(ByteRangeError) {
        let bytes = Array(headerValue.utf8)
        guard bytes.count <= ByteRangeSet.maximumHeaderLength else {
            throw ByteRangeError(.tooLong, at: ByteRangeSet.maximumHeaderLength)
        }
        var position = 0
        let unit = Array("bytes=".utf8)
        // The unit is case-insensitive; only letters are folded, so no other byte can pass for `=`.
        func folded(_ byte: UInt8) -> UInt8 { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte }
        guard bytes.count >= unit.count, zip(bytes[..<unit.count], unit).allSatisfy({ folded($0) == $1 }) else {
            let equals = bytes.firstIndex(of: UInt8(ascii: "=")) ?? 0
            throw ByteRangeError(equals > 0 ? .unsupportedUnit : .malformed, at: 0)
        }
        position = unit.count

        var specs: [Spec] = []
        /// Digits at `position`, saturating at `Int.max`; nil when there are none.
        func number() -> Int? {
            let start = position
            var value = 0
            while position < bytes.count, case let digit = bytes[position] &- UInt8(ascii: "0"), digit < 10 {
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int(digit))
                value = overflow1 || overflow2 ? Int.max : sum
                position += 1
            }
            return position > start ? value : nil
        }

        skipOptionalWhitespace(bytes, &position)
        while position < bytes.count {
            // Empty list elements (`a-b,,c-d`) are allowed by the list syntax (RFC 9110 §5.6.1).
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                skipOptionalWhitespace(bytes, &position)
                continue
            }
            let specStart = position
            let spec: Spec
            if bytes[position] == UInt8(ascii: "-") {
                position += 1
                guard let length = number() else { throw ByteRangeError(.malformed, at: position) }
                spec = .suffix(length: length)
            } else {
                guard let first = number() else { throw ByteRangeError(.malformed, at: position) }
                guard position < bytes.count, bytes[position] == UInt8(ascii: "-") else {
                    throw ByteRangeError(.malformed, at: position)
                }
                position += 1
                let last = number()
                if let last, last < first { throw ByteRangeError(.malformed, at: specStart) }
                spec = .from(first: first, last: last)
            }
            guard specs.count < ByteRangeSet.maximumRanges else {
                throw ByteRangeError(.tooManyRanges, at: specStart)
            }
            specs.append(spec)
            skipOptionalWhitespace(bytes, &position)
            guard position == bytes.count || bytes[position] == UInt8(ascii: ",") else {
                throw ByteRangeError(.malformed, at: position)
            }
        }
        guard !specs.isEmpty else { throw ByteRangeError(.malformed, at: position) }
        self.specs = specs
    }

    /// The first satisfiable range of a resource of `length` bytes, or `.unsatisfiable`.
    public func resolve(length: Int) -> ByteRangeResolution {
        for spec in specs {
            switch spec {
            case .from(let first, let last):
                // An int-range is satisfiable when its first position lies inside the resource.
                guard first < length else { continue }
                let end = last.map { min($0, length - 1) + 1 } ?? length
                return .partial(first..<end)
            case .suffix(let suffix):
                guard suffix > 0 else { continue }
                // A suffix longer than the resource means all of it; an empty resource has no
                // byte range to send, so it is sent whole (and empty) with 200.
                guard length > 0 else { return .full }
                return .partial(max(0, length - suffix)..<length)
            }
        }
        return .unsatisfiable
    }

    /// What a request's `Range` header (nil when absent) asks of a resource, by the policy above.
    public static func resolve(_ headerValue: String?, length: Int) -> ByteRangeResolution {
        guard let headerValue else { return .full }
        do {
            return try ByteRangeSet(parsing: headerValue).resolve(length: length)
        } catch {
            switch error.code {
            case .tooManyRanges, .tooLong: return .unsatisfiable
            default: return .full
            }
        }
    }
}
