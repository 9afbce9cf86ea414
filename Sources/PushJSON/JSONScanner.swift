/// Receives the tokens the scanner finds. ``TapeSink`` and ``PresizedTapeSink`` record a tape,
/// ``ValidationSink`` records nothing. The scanner is generic over the sink so each gets its own
/// specialised loop instead of a runtime flag checked per token.
@usableFromInline
protocol JSONSink {
    mutating func scalar(_ kind: JSONKind, offset: Int, length: Int, flags: UInt8)
    /// Returns an identifier for the container, handed back to `countElement` and `close`.
    mutating func open(_ kind: JSONKind, offset: Int) -> UInt32
    mutating func countElement(of container: UInt32)
    mutating func close(_ kind: JSONKind, offset: Int, container: UInt32)
}

@usableFromInline
struct ValidationSink: JSONSink {
    @inlinable init() {}
    @inlinable mutating func scalar(_ kind: JSONKind, offset: Int, length: Int, flags: UInt8) {}
    @inlinable mutating func open(_ kind: JSONKind, offset: Int) -> UInt32 { 0 }
    @inlinable mutating func countElement(of container: UInt32) {}
    @inlinable mutating func close(_ kind: JSONKind, offset: Int, container: UInt32) {}
}

/// A sink that records a tape: what it writes per token, given how it appends an entry.
@usableFromInline
protocol TapeRecording: JSONSink {
    var entries: UnsafeMutablePointer<TapeEntry> { get }
    /// Entries appended so far.
    var count: Int { get }
    /// Appends `entry`; returns its index.
    mutating func append(_ entry: TapeEntry) -> UInt32
}

extension TapeRecording {
    @inlinable @inline(__always)
    mutating func scalar(_ kind: JSONKind, offset: Int, length: Int, flags: UInt8) {
        _ = append(TapeEntry(kind: kind, offset: offset, length: length, flags: flags))
    }

    @inlinable @inline(__always)
    mutating func open(_ kind: JSONKind, offset: Int) -> UInt32 {
        append(TapeEntry(kind: kind, offset: offset, length: 0, flags: 0))
    }

    @inlinable @inline(__always)
    mutating func countElement(of container: UInt32) {
        entries[Int(container)].length &+= 1
    }

    @inlinable @inline(__always)
    mutating func close(_ kind: JSONKind, offset: Int, container: UInt32) {
        var end = TapeEntry(kind: kind, offset: offset, length: 0, flags: 0)
        end.link = container
        let endIndex = append(end)
        entries[Int(container)].link = endIndex &+ 1
    }
}

/// Appends entries to a ``JSONTapeStorage``, growing it as needed; `count` is written back by
/// the caller.
@usableFromInline
struct TapeSink: TapeRecording {
    @usableFromInline unowned(unsafe) let storage: JSONTapeStorage
    @usableFromInline var entries: UnsafeMutablePointer<TapeEntry>
    @usableFromInline var count: Int
    @usableFromInline var capacity: Int

    @inlinable
    init(storage: JSONTapeStorage) {
        self.storage = storage
        self.entries = storage.entries
        self.count = 0
        self.capacity = storage.capacity
    }

    @inlinable @inline(__always)
    mutating func append(_ entry: TapeEntry) -> UInt32 {
        if count == capacity {
            storage.grow(keeping: count, minimum: count + 1)
            entries = storage.entries
            capacity = storage.capacity
        }
        // Safe: count < capacity after the check above.
        (entries + count).initialize(to: entry)
        count &+= 1
        return UInt32(truncatingIfNeeded: count - 1)
    }
}

/// Appends entries to a tape with room for one entry per input byte, which no document can
/// outgrow: every entry stands for a distinct byte of the input (a bracket, or the first byte of
/// a scalar). So, unlike ``TapeSink``, no capacity check per entry.
@usableFromInline
struct PresizedTapeSink: TapeRecording {
    @usableFromInline let entries: UnsafeMutablePointer<TapeEntry>
    @usableFromInline var count = 0

    @inlinable
    init(entries: UnsafeMutablePointer<TapeEntry>) {
        self.entries = entries
    }

    @inlinable @inline(__always)
    mutating func append(_ entry: TapeEntry) -> UInt32 {
        (entries + count).initialize(to: entry)
        count &+= 1
        return UInt32(truncatingIfNeeded: count &- 1)
    }
}

/// Named byte constants, compared as `UInt8` in the hot loops. Computed, not stored: a stored
/// static read from inlined code in another module goes through a lazy-initialisation accessor.
@usableFromInline
package enum ASCII {
    @inlinable static var quote: UInt8 { UInt8(ascii: "\"") }
    @inlinable static var backslash: UInt8 { UInt8(ascii: "\\") }
    @inlinable static var slash: UInt8 { UInt8(ascii: "/") }
    @inlinable package static var comma: UInt8 { UInt8(ascii: ",") }
    @inlinable static var colon: UInt8 { UInt8(ascii: ":") }
    @inlinable package static var openBrace: UInt8 { UInt8(ascii: "{") }
    @inlinable package static var closeBrace: UInt8 { UInt8(ascii: "}") }
    @inlinable package static var openBracket: UInt8 { UInt8(ascii: "[") }
    @inlinable package static var closeBracket: UInt8 { UInt8(ascii: "]") }
    @inlinable package static var minus: UInt8 { UInt8(ascii: "-") }
    @inlinable static var plus: UInt8 { UInt8(ascii: "+") }
    @inlinable static var dot: UInt8 { UInt8(ascii: ".") }
    @inlinable static var zero: UInt8 { UInt8(ascii: "0") }
    @inlinable static var nine: UInt8 { UInt8(ascii: "9") }
    @inlinable static var lowerE: UInt8 { UInt8(ascii: "e") }
    @inlinable static var upperE: UInt8 { UInt8(ascii: "E") }
    @inlinable static var lowerU: UInt8 { UInt8(ascii: "u") }
    @inlinable static var space: UInt8 { UInt8(ascii: " ") }
    @inlinable static var tab: UInt8 { UInt8(ascii: "\t") }
    @inlinable static var newline: UInt8 { UInt8(ascii: "\n") }
    @inlinable static var carriageReturn: UInt8 { UInt8(ascii: "\r") }
}

/// A strict RFC 8259 scanner over borrowed bytes. It never recurses: open containers live on
/// an explicit stack bounded by the depth limit. The position is a local of ``scanDocument()``
/// and the token scanners are functions of (bytes, end, offset), so it stays in a register.
@usableFromInline
struct JSONScanner<Sink: JSONSink> {
    @usableFromInline let bytes: UnsafePointer<UInt8>
    @usableFromInline let end: Int
    @usableFromInline var sink: Sink
    /// One slot per nesting level: the sink's container id, with `objectFlag` for objects.
    @usableFromInline let stack: UnsafeMutablePointer<UInt32>
    @usableFromInline let maximumDepth: Int

    @usableFromInline static var objectFlag: UInt32 { 1 << 31 }

    @inlinable
    init(bytes: UnsafePointer<UInt8>, count: Int, sink: Sink, stack: UnsafeMutablePointer<UInt32>, maximumDepth: Int) {
        self.bytes = bytes
        self.end = count
        self.sink = sink
        self.stack = stack
        self.maximumDepth = maximumDepth
    }

    /// Scans one complete JSON text: a single value surrounded by optional whitespace.
    @inlinable
    mutating func scanDocument() throws(JSONError) {
        let bytes = self.bytes
        let end = self.end
        var position = 0
        var depth = 0
        nextValue: while true {
            position = skipWhitespace(bytes, end: end, from: position)
            guard position < end else { throw unexpected(bytes, end: end, at: position, "a value") }
            let byte = bytes[position]
            switch byte {
            case ASCII.openBrace, ASCII.openBracket:
                var opening = byte
                while true {
                    guard depth < maximumDepth else {
                        throw JSONError(.depthLimitExceeded, at: position, "nesting deeper than \(maximumDepth) levels")
                    }
                    let isObject = opening == ASCII.openBrace
                    let container = sink.open(isObject ? .object : .array, offset: position)
                    stack[depth] = isObject ? container | Self.objectFlag : container
                    depth &+= 1
                    position = skipWhitespace(bytes, end: end, from: position &+ 1)
                    guard position < end else {
                        throw unexpected(bytes, end: end, at: position, isObject ? "a key or '}'" : "a value or ']'")
                    }
                    let next = bytes[position]
                    if next == (isObject ? ASCII.closeBrace : ASCII.closeBracket) {
                        sink.close(isObject ? .objectEnd : .arrayEnd, offset: position, container: container)
                        depth &-= 1
                        position &+= 1
                        break
                    }
                    sink.countElement(of: container)
                    if isObject {
                        position = try scanKeyAndColon(at: position, expected: "a key or '}'")
                        continue nextValue
                    }
                    // An array whose first element is a container: open it without going round.
                    guard next == ASCII.openBracket || next == ASCII.openBrace else { continue nextValue }
                    opening = next
                }
            case ASCII.quote:
                position = try scanString(at: position, flags: 0)
            case ASCII.minus, ASCII.zero...ASCII.nine:
                let (numberEnd, flags) = try scanNumber(bytes, end: end, at: position)
                sink.scalar(.number, offset: position, length: numberEnd &- position, flags: flags)
                position = numberEnd
            case UInt8(ascii: "t"):
                position = try scanLiteral(bytes, end: end, at: position, "true")
                sink.scalar(.true, offset: position &- 4, length: 4, flags: 0)
            case UInt8(ascii: "f"):
                position = try scanLiteral(bytes, end: end, at: position, "false")
                sink.scalar(.false, offset: position &- 5, length: 5, flags: 0)
            case UInt8(ascii: "n"):
                position = try scanLiteral(bytes, end: end, at: position, "null")
                sink.scalar(.null, offset: position &- 4, length: 4, flags: 0)
            default:
                throw unexpected(bytes, end: end, at: position, "a value")
            }

            // A value is complete: close containers until one continues with a comma.
            while true {
                position = skipWhitespace(bytes, end: end, from: position)
                if depth == 0 {
                    guard position == end else {
                        throw JSONError(.trailingData, at: position, "\(describeByte(bytes[position])) after the end of the value")
                    }
                    return
                }
                guard position < end else { throw unexpected(bytes, end: end, at: position, "',' or a closing bracket") }
                let top = stack[depth &- 1]
                let container = top & ~Self.objectFlag
                let byte = bytes[position]
                if top & Self.objectFlag != 0 {
                    if byte == ASCII.comma {
                        sink.countElement(of: container)
                        position = try scanKeyAndColon(at: skipWhitespace(bytes, end: end, from: position &+ 1), expected: "a key after ','")
                        continue nextValue
                    }
                    guard byte == ASCII.closeBrace else { throw unexpected(bytes, end: end, at: position, "',' or '}'") }
                    sink.close(.objectEnd, offset: position, container: container)
                } else {
                    if byte == ASCII.comma {
                        sink.countElement(of: container)
                        position &+= 1
                        continue nextValue
                    }
                    guard byte == ASCII.closeBracket else { throw unexpected(bytes, end: end, at: position, "',' or ']'") }
                    sink.close(.arrayEnd, offset: position, container: container)
                }
                depth &-= 1
                position &+= 1
            }
        }
    }

    /// Scans the string at `position` (its opening quote) and records it; returns the offset
    /// after the closing quote.
    @inlinable @inline(__always)
    mutating func scanString(at position: Int, flags: UInt8) throws(JSONError) -> Int {
        // Most keys and many values are plain ASCII that ends within sixteen bytes: a word or
        // two decide them here, without a call.
        let start = position &+ 1
        if start &+ 8 <= end {
            var wordStart = start
            var mask = attentionMask(UInt64(littleEndian: UnsafeRawPointer(bytes + start).loadUnaligned(as: UInt64.self)))
            if mask == 0 && start &+ 16 <= end {
                wordStart = start &+ 8
                mask = attentionMask(UInt64(littleEndian: UnsafeRawPointer(bytes + wordStart).loadUnaligned(as: UInt64.self)))
            }
            let first = wordStart &+ mask.trailingZeroBitCount &>> 3
            if mask != 0 && bytes[first] == ASCII.quote {
                sink.scalar(.string, offset: start, length: first &- start, flags: flags)
                return first &+ 1
            }
        }
        let (closingQuote, stringFlags) = try scanStringContent(bytes, end: end, quote: position)
        sink.scalar(.string, offset: position &+ 1, length: closingQuote &- position &- 1, flags: flags | stringFlags)
        return closingQuote &+ 1
    }

    /// A key at `position`, then `:`; returns the offset after the colon.
    @inlinable @inline(__always)
    mutating func scanKeyAndColon(at position: Int, expected: String) throws(JSONError) -> Int {
        guard position < end, bytes[position] == ASCII.quote else { throw unexpected(bytes, end: end, at: position, expected) }
        var position = try scanString(at: position, flags: TapeEntry.isKey)
        if position < end, bytes[position] == ASCII.colon { return position &+ 1 }
        position = skipWhitespace(bytes, end: end, from: position)
        guard position < end, bytes[position] == ASCII.colon else { throw unexpected(bytes, end: end, at: position, "':'") }
        return position &+ 1
    }
}

/// The offset of the first byte at or after `position` that is not JSON whitespace.
@inlinable @inline(__always)
func skipWhitespace(_ bytes: UnsafePointer<UInt8>, end: Int, from position: Int) -> Int {
    var position = position
    while position < end {
        let byte = bytes[position]
        // Anything above space is not whitespace: one compare in the common (minified) case.
        if byte > ASCII.space { return position }
        guard byte == ASCII.space || byte == ASCII.newline || byte == ASCII.carriageReturn || byte == ASCII.tab else {
            return position
        }
        position &+= 1
    }
    return position
}

/// `unexpectedEnd` at the end of input, otherwise `unexpectedByte` naming the byte found.
@usableFromInline
func unexpected(_ bytes: UnsafePointer<UInt8>, end: Int, at offset: Int, _ expected: String) -> JSONError {
    if offset >= end {
        return JSONError(.unexpectedEnd, at: end, "unexpected end of input, expected \(expected)")
    }
    return JSONError(.unexpectedByte, at: offset, "unexpected \(describeByte(bytes[offset])), expected \(expected)")
}

/// Checks the literal at `position`; returns the offset after it.
@inlinable @inline(__always)
func scanLiteral(_ bytes: UnsafePointer<UInt8>, end: Int, at position: Int, _ literal: StaticString) throws(JSONError) -> Int {
    let length = literal.utf8CodeUnitCount
    for index in 0..<length {
        let offset = position + index
        guard offset < end, bytes[offset] == literal.utf8Start[index] else {
            throw unexpected(bytes, end: end, at: offset, "'\(literal)'")
        }
    }
    return position + length
}

@usableFromInline
func describeByte(_ byte: UInt8) -> String {
    if byte >= 0x20 && byte < 0x7F {
        return "'\(Character(Unicode.Scalar(byte)))'"
    }
    let hex = String(byte, radix: 16, uppercase: true)
    return "byte 0x\(hex.count == 1 ? "0" + hex : hex)"
}
