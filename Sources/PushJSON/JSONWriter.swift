public import PushInternals

/// Primitive writers shared by every encoder: strings with minimal escaping, integers by hand.
@usableFromInline
package enum JSONWriter {
    /// Writes `"…"` with the string's UTF-8 escaped minimally.
    @inlinable
    package static func writeString<Output: JSONOutput>(_ string: String, to output: inout Output) {
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

    /// Writes UTF-8 bytes, escaping only `"`, `\\` and U+0000–U+001F; runs that need no
    /// escaping go out in one append, found 32 bytes (SIMD) or eight at a time.
    @inlinable
    static func writeEscaped<Output: JSONOutput>(_ bytes: UnsafeRawBufferPointer, to output: inout Output) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        // Most keys and values are at most 32 bytes: one test over possibly overlapping loads
        // covers them, and a clean string goes out in one append without entering the loop.
        if count <= 32 {
            let clean: Bool
            if count > 16 {
                clean = !blocksNeedAttention(UnsafeRawPointer(base), UnsafeRawPointer(base + (count &- 16)), nonASCII: false)
            } else if count >= 8 {
                let head = UInt64(littleEndian: base.loadUnaligned(as: UInt64.self))
                let tail = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self))
                clean = escapeMask(head) | escapeMask(tail) == 0
            } else if count >= 4 {
                let head = UInt64(UInt32(littleEndian: base.loadUnaligned(as: UInt32.self)))
                let tail = UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)))
                clean = escapeMask(head | tail << 32) == 0
            } else {
                clean = !bytes.contains(where: needsEscape)
            }
            if clean { return output.append(bytes) }
        }
        var runStart = 0
        var index = 0
        while index < count {
            // Long runs (alert bodies near the size limit) go by 32 bytes per test.
            if index &+ 32 <= count && !blockNeedsAttention(UnsafeRawPointer(base + index), nonASCII: false) {
                index &+= 32
                continue
            }
            if index &+ 8 <= count {
                let word = UInt64(littleEndian: (base + index).loadUnaligned(as: UInt64.self))
                let mask = escapeMask(word)
                if mask == 0 {
                    index &+= 8
                    continue
                }
                index &+= mask.trailingZeroBitCount &>> 3
            } else if !needsEscape(base.load(fromByteOffset: index, as: UInt8.self)) {
                index &+= 1
                continue
            }
            if runStart < index { output.append(UnsafeRawBufferPointer(start: base + runStart, count: index - runStart)) }
            writeEscape(for: base.load(fromByteOffset: index, as: UInt8.self), to: &output)
            index &+= 1
            runStart = index
        }
        if runStart < count { output.append(UnsafeRawBufferPointer(start: base + runStart, count: count - runStart)) }
    }

    @inlinable @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == ASCII.quote || byte == ASCII.backslash
    }

    /// The high bit of each byte that needs escaping, read as little-endian; exact for the
    /// lowest marked byte (see ``attentionMask(_:)``). Non-ASCII bytes are written raw.
    @inlinable @inline(__always)
    static func escapeMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* UInt64(ASCII.quote))
        let backslashes = word ^ (ones &* UInt64(ASCII.backslash))
        let hasQuote = (quotes &- ones) & ~quotes
        let hasBackslash = (backslashes &- ones) & ~backslashes
        let belowSpace = (word &- (ones &* 0x20)) & ~word
        return (hasQuote | hasBackslash | belowSpace) & 0x8080_8080_8080_8080
    }

    @inlinable
    static func writeEscape<Output: JSONOutput>(for byte: UInt8, to output: inout Output) {
        output.append(ASCII.backslash)
        switch byte {
        case ASCII.quote, ASCII.backslash: output.append(byte)
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x09: output.append(UInt8(ascii: "t"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        default:
            output.append(ASCII.lowerU)
            output.append(ASCII.zero)
            output.append(ASCII.zero)
            output.append(Hex.lowerDigit(byte >> 4))
            output.append(Hex.lowerDigit(byte))
        }
    }

    /// Writes a decimal integer without going through `String`.
    @inlinable
    package static func writeInteger<Output: JSONOutput>(_ value: Int, to output: inout Output) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = writeDecimalDigits(UInt64(value.magnitude), endingAt: buffer)
            if value < 0 {
                start -= 1
                buffer[start] = ASCII.minus
            }
            output.append(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Writes a finite double in its shortest round-trip form (Swift's `description`).
    /// - Throws: `invalidNumber` for NaN and infinities, which JSON cannot express.
    @inlinable
    package static func writeDouble<Output: JSONOutput>(_ value: Double, to output: inout Output) throws(JSONError) {
        guard value.isFinite else {
            throw JSONError(.invalidNumber, at: 0, "\(value) cannot be written as a JSON number")
        }
        writeRaw(value.description, to: &output)
    }

    @inlinable
    package static func writeStatic<Output: JSONOutput>(_ text: StaticString, to output: inout Output) {
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
    package static func escapedCount(_ string: String) -> Int {
        var counter = ByteCountOutput()
        writeStringContent(string, to: &counter)
        return counter.count
    }
}
