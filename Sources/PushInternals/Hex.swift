/// Hexadecimal digits, written and read.
public enum Hex {
    // Computed, so that other modules' inlined code reads the literal, not a global's accessor.
    @inlinable static var lowerDigits: StaticString { "0123456789abcdef" }
    @inlinable static var upperDigits: StaticString { "0123456789ABCDEF" }

    /// The lowercase digit for the low four bits of `value`.
    @inlinable @inline(__always)
    public static func lowerDigit(_ value: UInt8) -> UInt8 { lowerDigits.utf8Start[Int(value & 0xF)] }

    /// The uppercase digit for the low four bits of `value`.
    @inlinable @inline(__always)
    public static func upperDigit(_ value: UInt8) -> UInt8 { upperDigits.utf8Start[Int(value & 0xF)] }

    /// 0–15 for a digit of either case, 0xFF for any other byte: a sentinel rather than an
    /// optional, so that the JSON scanner can test four digits of a `\u` escape at once.
    @inlinable @inline(__always)
    public static func digitValue(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: 0xFF
        }
    }

    /// The value of a digit of either case; nil for any other byte.
    @inlinable
    public static func value(_ byte: UInt8) -> UInt8? {
        let value = digitValue(byte)
        return value <= 15 ? value : nil
    }

    /// `bytes` as lowercase hex, two digits a byte.
    @inlinable
    public static func lowercase(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            var offset = 0
            for byte in bytes {
                output[offset] = lowerDigit(byte >> 4)
                output[offset + 1] = lowerDigit(byte)
                offset += 2
            }
            return offset
        }
    }

    /// The 16 lowercase digits of `value`, most significant first.
    @inlinable
    public static func lowercase(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { output in
            for index in 0..<16 { output[index] = lowerDigit(UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * index))) }
            return 16
        }
    }
}
