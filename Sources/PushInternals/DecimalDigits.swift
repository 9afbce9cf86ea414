/// Writes the decimal digits of `magnitude` so that they end at the end of `buffer` (20 bytes
/// hold any `UInt64`); returns the offset of the first digit. Backwards, so that no digit count
/// is needed first.
@inlinable
public func writeDecimalDigits(_ magnitude: UInt64, endingAt buffer: UnsafeMutableRawBufferPointer) -> Int {
    var magnitude = magnitude
    var start = buffer.count
    repeat {
        start -= 1
        buffer[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
        magnitude /= 10
    } while magnitude != 0
    return start
}
