import PushInternals

/// Appends to uninitialised string storage sized in advance.
struct TokenWriter {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
    }

    /// Unchecked in release builds: the capacity is the token's largest possible size (every
    /// byte of resource and signature percent-encoded, the longest expiry), and `finish()`
    /// checks it once.
    @inline(__always)
    mutating func appendByte(_ byte: UInt8) {
        assert(count < capacity, "token capacity computed too small")
        base[count] = byte
        count += 1
    }

    /// The number of bytes written, after checking they fit.
    func finish() -> Int {
        precondition(count <= capacity, "token capacity computed too small")
        return count
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        assert(count + bytes.count <= capacity, "token capacity computed too small")
        if let source = bytes.baseAddress { (base + count).initialize(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        count += bytes.count
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        for index in 0..<text.utf8CodeUnitCount { appendByte(text.utf8Start[index]) }
    }

    /// The base64 of `bytes` (RFC 4648, padded), percent-encoded as it is written: only `+`, `/`
    /// and `=` need it, so the 6-bit values are mapped straight to text instead of writing
    /// base64 and then classifying every character of it.
    mutating func appendPercentEncodedBase64(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            appendBase64Digit(value >> 18)
            appendBase64Digit(value >> 12)
            appendBase64Digit(value >> 6)
            appendBase64Digit(value)
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            let value = UInt32(bytes[index]) << 16 | (remaining == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            appendBase64Digit(value >> 18)
            appendBase64Digit(value >> 12)
            if remaining == 2 { appendBase64Digit(value >> 6) } else { append("%3D") }
            append("%3D")
        }
    }

    /// The digit for the low six bits of `value`; `+` and `/` percent-encoded.
    @inline(__always)
    mutating func appendBase64Digit(_ value: UInt32) {
        let sextet = Int(value & 63)
        if sextet < 62 {
            appendByte(Base64.Alphabet.standard.digit(value))
        } else {
            appendByte(UInt8(ascii: "%"))
            appendByte(UInt8(ascii: "2"))
            appendByte(sextet == 62 ? UInt8(ascii: "B") : UInt8(ascii: "F"))
        }
    }

    /// The byte itself when unreserved (RFC 3986), `%XX` with uppercase hex otherwise.
    @inline(__always)
    mutating func appendPercentEncoded(_ byte: UInt8) {
        if PercentEncoding.isUnreserved(byte) {
            appendByte(byte)
        } else {
            appendByte(UInt8(ascii: "%"))
            appendByte(Hex.upperDigit(byte >> 4))
            appendByte(Hex.upperDigit(byte))
        }
    }
}
