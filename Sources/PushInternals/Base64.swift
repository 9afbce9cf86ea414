/// Base64 (RFC 4648 §4, padded) and base64url (§5, unpadded, as JWS compact serialisation uses
/// it, RFC 7515 §2), written into caller-owned buffers so that token writers allocate nothing.
public enum Base64 {
    /// One of the two alphabets; they differ in the last two digits only.
    public struct Alphabet: Sendable {
        @usableFromInline let digits: StaticString
        @usableFromInline let digit62: UInt8
        @usableFromInline let digit63: UInt8
        /// Whether the encoding ends with `=` up to a multiple of four.
        @usableFromInline let isPadded: Bool

        // Computed and inlinable, not stored: a stored `static let` is read through an accessor
        // call from other modules, once per digit in the token writers' loops.
        @inlinable public static var standard: Alphabet {
            Alphabet(
                digits: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", digit62: UInt8(ascii: "+"),
                digit63: UInt8(ascii: "/"), isPadded: true)
        }
        @inlinable public static var url: Alphabet {
            Alphabet(
                digits: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", digit62: UInt8(ascii: "-"),
                digit63: UInt8(ascii: "_"), isPadded: false)
        }

        @inlinable
        init(digits: StaticString, digit62: UInt8, digit63: UInt8, isPadded: Bool) {
            self.digits = digits
            self.digit62 = digit62
            self.digit63 = digit63
            self.isPadded = isPadded
        }

        /// The digit for the low six bits of `value`.
        @inlinable @inline(__always)
        public func digit(_ value: UInt32) -> UInt8 { digits.utf8Start[Int(value & 63)] }

        /// The six bits `byte` stands for; nil for a byte outside the alphabet (padding included).
        @inlinable
        public func sextet(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(byte &- UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(byte &- UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte &- UInt8(ascii: "0")) + 52
            case digit62: 62
            case digit63: 63
            default: nil
            }
        }
    }

    /// The length of the encoding of `count` bytes.
    @inlinable
    public static func encodedCount(_ count: Int, _ alphabet: Alphabet) -> Int {
        alphabet.isPadded ? (count + 2) / 3 * 4 : (count * 4 + 2) / 3
    }

    /// Writes the encoding of `bytes` at `output[offset...]`; returns the offset after it.
    @inlinable
    public static func encode(
        _ bytes: UnsafeRawBufferPointer, _ alphabet: Alphabet, into output: UnsafeMutableRawBufferPointer, at offset: Int
    ) -> Int {
        precondition(offset + encodedCount(bytes.count, alphabet) <= output.count, "base64 output too small")
        var offset = offset
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output[offset] = alphabet.digit(value >> 18)
            output[offset + 1] = alphabet.digit(value >> 12)
            output[offset + 2] = alphabet.digit(value >> 6)
            output[offset + 3] = alphabet.digit(value)
            offset += 4
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            let value = UInt32(bytes[index]) << 16 | (remaining == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output[offset] = alphabet.digit(value >> 18)
            output[offset + 1] = alphabet.digit(value >> 12)
            offset += 2
            if remaining == 2 {
                output[offset] = alphabet.digit(value >> 6)
                offset += 1
            } else if alphabet.isPadded {
                output[offset] = UInt8(ascii: "=")
                offset += 1
            }
            if alphabet.isPadded {
                output[offset] = UInt8(ascii: "=")
                offset += 1
            }
        }
        return offset
    }

    /// The encoding of `bytes` as a string.
    @inlinable
    public static func encodedString(_ bytes: some Sequence<UInt8>, _ alphabet: Alphabet = .standard) -> String {
        let bytes = Array(bytes)
        return String(unsafeUninitializedCapacity: encodedCount(bytes.count, alphabet)) { output in
            bytes.withUnsafeBytes { encode($0, alphabet, into: UnsafeMutableRawBufferPointer(output), at: 0) }
        }
    }

    /// Decodes the canonical encoding of some bytes, nil for anything else: characters outside the
    /// alphabet, an impossible length, padding where the alphabet has none (or missing where it
    /// has), and leftover bits that are not zero (a second spelling of the same bytes).
    @inlinable
    public static func decode(_ text: some BidirectionalCollection<UInt8>, _ alphabet: Alphabet = .standard) -> [UInt8]? {
        var digits = text.count
        if alphabet.isPadded {
            guard digits % 4 == 0 else { return nil }
            for byte in text.reversed().prefix(2) {
                guard byte == UInt8(ascii: "=") else { break }
                digits -= 1
            }
        }
        guard digits % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(digits * 3 / 4)
        var value: UInt32 = 0
        var bits: UInt32 = 0
        for byte in text.prefix(digits) {
            guard let sextet = alphabet.sextet(byte) else { return nil }
            value = value << 6 | sextet
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: value >> bits))
                value &= (1 << bits) - 1
            }
        }
        return value == 0 ? output : nil
    }
}
