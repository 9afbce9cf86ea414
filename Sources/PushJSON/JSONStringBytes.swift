/// Byte-level helpers for the views: comparing, reading integers, and making or decoding strings
/// from the input's bytes.

/// Eight bytes at a time, the last eight overlapping: keys, and the names they are matched
/// against, are mostly 3 to 20 bytes long.
@inlinable @inline(__always)
package func bytesEqual(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    let count = lhs.count
    guard count == rhs.count else { return false }
    guard count >= 8, let first = lhs.baseAddress, let second = rhs.baseAddress else {
        for index in 0..<count where lhs[index] != rhs[index] { return false }
        return true
    }
    var index = 0
    while index &+ 8 < count {
        guard first.loadUnaligned(fromByteOffset: index, as: UInt64.self) == second.loadUnaligned(fromByteOffset: index, as: UInt64.self) else {
            return false
        }
        index &+= 8
    }
    return first.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self) == second.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
}

/// Parses an integer spelling the scanner already validated; `nil` on overflow.
@inlinable
func parseInteger(_ spelling: UnsafeRawBufferPointer) -> Int? {
    var index = 0
    let negative = spelling[0] == ASCII.minus
    if negative { index = 1 }
    var value = 0
    while index < spelling.count {
        let digit = Int(spelling[index] &- ASCII.zero)
        let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
        let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
        if overflow1 || overflow2 { return nil }
        value = next
        index += 1
    }
    return value
}

/// A `String` holding a copy of UTF-8 that the scanner has already validated. The standard
/// library's `String(decoding:)` would check every byte again (a sixth of the instructions of
/// decoding the corpus); `UTF8Span(unchecked:)` is its documented way to say the check was done.
/// Older Apple systems, which lack it, take the checking path.
@usableFromInline
func makeString(validatedUTF8 bytes: UnsafeRawBufferPointer, isASCII: Bool) -> String {
    #if compiler(>=6.2)
    if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
        let span = Span<UInt8>(_unsafeBytes: bytes)
        return String(copying: UTF8Span(unchecked: span, isKnownASCII: isASCII))
    }
    #endif
    return String(decoding: bytes, as: UTF8.self)
}

/// Decodes the content of a string that contains escapes. The scanner validated it, so every
/// escape is well formed, surrogates come in pairs, and the decoded bytes are valid UTF-8.
@usableFromInline
func decodeEscapedString(_ raw: UnsafeRawBufferPointer) -> String {
    // Decoded text is never longer than its escaped spelling.
    withUnsafeTemporaryAllocation(byteCount: raw.count, alignment: 1) { output in
        var written = 0
        var combinedBits: UInt8 = 0
        forEachDecodedRun(raw) { run in
            for byte in run {
                output[written] = byte
                combinedBits |= byte
                written += 1
            }
        }
        return makeString(validatedUTF8: UnsafeRawBufferPointer(rebasing: output[..<written]), isASCII: combinedBits < 0x80)
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
