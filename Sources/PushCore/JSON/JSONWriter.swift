/// Primitive writers shared by every encoder: strings with minimal escaping, integers by hand.
@usableFromInline
enum JSONWriter {
    /// For each byte: 0 = written as is; otherwise the character after the backslash, or `u` for
    /// a `\u00XX` escape. Only `"`, `\` and U+0000–U+001F are escaped; `/`, `&`, `<`, `>` and
    /// non-ASCII bytes are written raw.
    @usableFromInline
    static let escapes: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        for byte in 0..<0x20 { table[byte] = ASCII.lowerU }
        table[0x08] = UInt8(ascii: "b")
        table[0x09] = UInt8(ascii: "t")
        table[0x0A] = UInt8(ascii: "n")
        table[0x0C] = UInt8(ascii: "f")
        table[0x0D] = UInt8(ascii: "r")
        table[Int(ASCII.quote)] = ASCII.quote
        table[Int(ASCII.backslash)] = ASCII.backslash
        return table
    }()

    @usableFromInline static let hexDigits: StaticString = "0123456789abcdef"

    /// Writes `"…"` with the string's UTF-8 escaped minimally.
    @inlinable
    static func writeString<Output: JSONOutput>(_ string: String, to output: inout Output) {
        output.append(ASCII.quote)
        writeStringContent(string, to: &output)
        output.append(ASCII.quote)
    }

    @inlinable
    static func writeStringContent<Output: JSONOutput>(_ string: String, to output: inout Output) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { utf8 in
            writeEscaped(UnsafeRawBufferPointer(utf8), to: &output)
        }
        if done == nil {
            var copy = string
            copy.withUTF8 { writeEscaped(UnsafeRawBufferPointer($0), to: &output) }
        }
    }

    /// Writes UTF-8 bytes, escaping as needed; runs that need no escaping go out in one append.
    @inlinable
    static func writeEscaped<Output: JSONOutput>(_ bytes: UnsafeRawBufferPointer, to output: inout Output) {
        escapes.withUnsafeBufferPointer { table in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                let escape = table[Int(byte)]
                if escape == 0 { continue }
                if runStart < index { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
                writeEscape(escape, for: byte, to: &output)
                runStart = index + 1
            }
            if runStart < bytes.count { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart...])) }
        }
    }

    @inlinable
    static func writeEscape<Output: JSONOutput>(_ escape: UInt8, for byte: UInt8, to output: inout Output) {
        output.append(ASCII.backslash)
        output.append(escape)
        if escape == ASCII.lowerU {
            output.append(ASCII.zero)
            output.append(ASCII.zero)
            output.append(hexDigits.utf8Start[Int(byte >> 4)])
            output.append(hexDigits.utf8Start[Int(byte & 0xF)])
        }
    }

    /// Writes a decimal integer without going through `String`.
    @inlinable
    static func writeInteger<Output: JSONOutput>(_ value: Int, to output: inout Output) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = value.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = ASCII.zero &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            if value < 0 {
                start -= 1
                buffer[start] = ASCII.minus
            }
            output.append(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Writes a finite double in its shortest round-trip form (Swift's `description`).
    /// - Throws: `invalidValue` for NaN and infinities, which JSON cannot express.
    @inlinable
    static func writeDouble<Output: JSONOutput>(_ value: Double, to output: inout Output) throws(JSONError) {
        guard value.isFinite else {
            throw JSONError(.invalidValue, at: 0, "\(value) cannot be written as a JSON number")
        }
        writeRaw(value.description, to: &output)
    }

    @inlinable
    static func writeStatic<Output: JSONOutput>(_ text: StaticString, to output: inout Output) {
        output.append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Writes text that needs no escaping (number spellings, canonical raw JSON).
    @inlinable
    static func writeRaw<Output: JSONOutput>(_ text: String, to output: inout Output) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { output.append(UnsafeRawBufferPointer($0)) }
        if done == nil {
            var copy = text
            copy.withUTF8 { output.append(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Bytes `string` takes once escaped, quotes excluded.
    @usableFromInline
    static func escapedCount(_ string: String) -> Int {
        var counter = ByteCountOutput()
        writeStringContent(string, to: &counter)
        return counter.count
    }
}
