/// Base64url without padding (RFC 4648 §5, as JWS compact serialisation uses it, RFC 7515 §2).
enum Base64URL {
    static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    /// The length of the encoding of `count` bytes.
    static func encodedCount(_ count: Int) -> Int { (count * 4 + 2) / 3 }

    /// Writes the encoding of `bytes` at `output[offset...]`; returns the offset after it.
    static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        precondition(offset + encodedCount(bytes.count) <= output.count, "base64url output too small")
        let digits = alphabet.utf8Start
        var offset = offset
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output[offset] = digits[Int(value >> 18 & 63)]
            output[offset + 1] = digits[Int(value >> 12 & 63)]
            output[offset + 2] = digits[Int(value >> 6 & 63)]
            output[offset + 3] = digits[Int(value & 63)]
            offset += 4
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            let value = UInt32(bytes[index]) << 16 | (remaining == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output[offset] = digits[Int(value >> 18 & 63)]
            output[offset + 1] = digits[Int(value >> 12 & 63)]
            offset += 2
            if remaining == 2 {
                output[offset] = digits[Int(value >> 6 & 63)]
                offset += 1
            }
        }
        return offset
    }

    /// Decodes canonical unpadded base64url: `nil` for padding, characters outside the alphabet,
    /// an impossible length, or leftover bits that are not zero (two spellings of the same bytes).
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var value: UInt32 = 0
        var bits = 0
        for byte in text {
            guard let sextet = sextet(byte) else { return nil }
            value = value << 6 | sextet
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: value >> UInt32(bits)))
                value &= (1 << UInt32(bits)) - 1
            }
        }
        return value == 0 ? output : nil
    }

    private static func sextet(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(byte - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
