/// Percent-encoding as RFC 3986 §2 defines it: unreserved characters kept, every other byte as
/// `%XX` with uppercase hex (what Notification Hubs and SAS tokens expect).
public enum PercentEncoding {
    @inlinable @inline(__always)
    public static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Appends `bytes` percent-encoded, lowercasing ASCII letters first when asked.
    @inlinable
    public static func append(_ bytes: some Sequence<UInt8>, lowercasingASCII: Bool = false, to output: inout [UInt8]) {
        for var byte in bytes {
            if lowercasingASCII && byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(Hex.upperDigit(byte >> 4))
                output.append(Hex.upperDigit(byte))
            }
        }
    }

    /// Percent-decodes `bytes` (hex digits of either case); nil for a malformed `%` sequence.
    @inlinable
    public static func decode(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Hex.value), let low = iterator.next().flatMap(Hex.value) else { return nil }
            output.append(high << 4 | low)
        }
        return output
    }
}
