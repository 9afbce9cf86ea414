/// The byte encodings of SAS tokens: percent-encoding (RFC 3986 unreserved characters kept,
/// uppercase hex) and base64 (RFC 4648, standard alphabet, padded).
package enum TokenEncoding {
    static let upperHex: StaticString = "0123456789ABCDEF"
    static let base64Alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Appends `bytes` percent-encoded, lowercasing ASCII letters first when asked.
    package static func appendPercentEncoded(_ bytes: some Sequence<UInt8>, lowercasingASCII: Bool = false, to output: inout [UInt8]) {
        for var byte in bytes {
            if lowercasingASCII && byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(upperHex.utf8Start[Int(byte >> 4)])
                output.append(upperHex.utf8Start[Int(byte & 0xF)])
            }
        }
    }

    /// Percent-decodes `bytes` (hex digits of either case); `nil` for a malformed `%` sequence.
    static func percentDecoded(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next() else { return nil }
            guard let highValue = hexValue(high), let lowValue = hexValue(low) else { return nil }
            output.append(highValue << 4 | lowValue)
        }
        return output
    }

    /// Decodes padded base64; `nil` when `text` is not canonical base64.
    package static func base64Decoded(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3)
        var index = 0
        while index < text.count {
            var value: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let byte = text[index + offset]
                let sextet: UInt32
                if byte == UInt8(ascii: "=") && index + 4 == text.count && offset >= 2 {
                    padding += 1
                    sextet = 0
                } else {
                    guard padding == 0, let decoded = base64Value(byte) else { return nil }
                    sextet = decoded
                }
                value = value << 6 | sextet
            }
            output.append(UInt8(value >> 16 & 0xFF))
            if padding < 2 { output.append(UInt8(value >> 8 & 0xFF)) }
            if padding < 1 { output.append(UInt8(value & 0xFF)) }
            index += 4
        }
        return output
    }

    static func base64Value(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(byte - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }

    /// Compares in time that depends only on the lengths, not on where the bytes differ.
    package static func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}

/// The value of a hexadecimal digit of a percent escape, either case.
private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
    default: nil
    }
}

/// Writes the decimal digits of `value` so that they end at the end of `buffer` (20 bytes hold any
/// `UInt64`); returns the offset of the first digit.
@inline(__always)
func writeDecimalDigits(_ value: UInt64, endingAt buffer: UnsafeMutableRawBufferPointer) -> Int {
    var value = value
    var start = buffer.count
    repeat {
        start -= 1
        buffer[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
        value /= 10
    } while value != 0
    return start
}
