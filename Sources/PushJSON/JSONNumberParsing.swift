#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Exact powers of ten that a `Double` holds without rounding (a literal, so no lazy global).
let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
    1e20, 1e21, 1e22,
]

/// The nearest `Double` to a validated number spelling, ties to even, in one pass over its
/// digits. Clinger's fast path first: a significand of at most 2^53 and a power of ten within
/// ±22 are both exact doubles, so one multiplication or division rounds correctly. Otherwise
/// the Eisel–Lemire algorithm decides from the first 19 significant digits; when more digits
/// were dropped it must give the same answer for those digits and for the next 19-digit value
/// up, since the spelling lies between them. What it cannot decide (a product too close to a
/// halfway point) goes to the C library.
@usableFromInline
func correctlyRoundedDouble(_ spelling: UnsafeRawBufferPointer) -> Double {
    let decimal = DecimalSpelling(spelling)
    if !decimal.truncated && decimal.significand <= 1 << 53 && decimal.exponent >= -22 && decimal.exponent <= 22 {
        let significand = Double(decimal.significand)
        let magnitude =
            decimal.exponent < 0
            ? significand / exactPowersOfTen[-decimal.exponent] : significand * exactPowersOfTen[decimal.exponent]
        return decimal.negative ? -magnitude : magnitude
    }
    if let magnitude = eiselLemire(decimal.significand, timesTenToThe: decimal.exponent) {
        if !decimal.truncated {
            return decimal.negative ? -magnitude : magnitude
        }
        if let above = eiselLemire(decimal.significand + 1, timesTenToThe: decimal.exponent),
            above.bitPattern == magnitude.bitPattern
        {
            return decimal.negative ? -magnitude : magnitude
        }
    }
    return cLibraryDouble(spelling)
}

/// A validated number spelling as `significand` × 10^`exponent`, keeping the first 19
/// significant digits (any 19 digits fit a `UInt64`).
struct DecimalSpelling {
    var negative = false
    var significand: UInt64 = 0
    var exponent = 0
    /// A nonzero digit was dropped: the value lies strictly between `significand` and
    /// `significand + 1` times 10^`exponent`.
    var truncated = false

    init(_ spelling: UnsafeRawBufferPointer) {
        // Validated, so: an optional minus, "0" or digits not starting with 0, an optional
        // fraction of at least one digit, an optional exponent of at least one digit.
        let bytes = spelling.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let count = spelling.count
        var index = 0
        if bytes[0] == ASCII.minus {
            negative = true
            index = 1
        }
        var significantDigits = 0
        if bytes[index] == ASCII.zero {
            index += 1
        } else {
            while index < count, case let digit = bytes[index] &- ASCII.zero, digit < 10 {
                if significantDigits < 19 {
                    significand = significand &* 10 &+ UInt64(digit)
                    significantDigits &+= 1
                } else {
                    exponent &+= 1
                    if digit != 0 { truncated = true }
                }
                index &+= 1
            }
        }
        if index < count && bytes[index] == ASCII.dot {
            index &+= 1
            if significand == 0 {
                // Zeros before the first significant digit only scale it.
                while index < count && bytes[index] == ASCII.zero {
                    exponent &-= 1
                    index &+= 1
                }
            }
            while index < count, case let digit = bytes[index] &- ASCII.zero, digit < 10 {
                if significantDigits < 19 {
                    significand = significand &* 10 &+ UInt64(digit)
                    significantDigits &+= 1
                    exponent &-= 1
                } else if digit != 0 {
                    truncated = true
                }
                index &+= 1
            }
        }
        guard index < count else { return }
        index &+= 1  // e or E
        var exponentNegative = false
        if bytes[index] == ASCII.minus || bytes[index] == ASCII.plus {
            exponentNegative = bytes[index] == ASCII.minus
            index &+= 1
        }
        // Capped far beyond any exponent that is not 0 or infinity, yet far from overflow, and
        // above any digit count (inputs are at most 4 GiB), which it may need to cancel.
        var written = 0
        while index < count {
            written = min(written &* 10 &+ Int(bytes[index] &- ASCII.zero), 1 << 40)
            index &+= 1
        }
        exponent &+= exponentNegative ? -written : written
    }
}

/// `significand` × 10^`exponent` rounded to the nearest `Double` (ties to even), or `nil` in the
/// rare case where the 128-bit product of the significand and 5^`exponent` cannot tell which
/// way to round. Lemire, "Number Parsing at a Gigabyte per Second" (2021), section 5.
func eiselLemire(_ significand: UInt64, timesTenToThe exponent: Int) -> Double? {
    if significand == 0 || exponent < powersOfFiveSmallestExponent { return 0 }
    if exponent > powersOfFiveLargestExponent { return .infinity }
    let leadingZeros = significand.leadingZeroBitCount
    let normalized = significand << leadingZeros
    let index = (exponent - powersOfFiveSmallestExponent) &* 2
    var (high, low) = normalized.multipliedFullWidth(by: powersOfFive[index])
    // 55 bits decide the result: 52 stored, the hidden bit, a rounding bit and the product's
    // possible leading zero. When the 9 bits below them are all ones, the power's low word
    // may carry into them.
    if high & 0x1FF == 0x1FF {
        let (secondHigh, _) = normalized.multipliedFullWidth(by: powersOfFive[index + 1])
        let carry: Bool
        (low, carry) = low.addingReportingOverflow(secondHigh)
        if carry { high &+= 1 }
    }
    if low == .max && (exponent < -27 || exponent > 55) { return nil }

    let upperBit = Int(high >> 63)
    let shift = upperBit + 64 - 52 - 3
    var mantissa = high >> shift
    // floor(log2(10^exponent)) from 217706 / 2^16 ≈ log2(10), plus the binary exponent's bias.
    var power2 = ((217_706 &* exponent) >> 16) + 63 + upperBit - leadingZeros + 1023
    if power2 <= 0 {
        // Subnormal (or zero): shift the rest of the way, then round half up.
        guard -power2 + 1 < 64 else { return 0 }
        mantissa >>= -power2 + 1
        mantissa += mantissa & 1
        mantissa >>= 1
        // Rounding up may reach the smallest normal number: bit 52 set is exactly its encoding.
        return Double(bitPattern: mantissa)
    }
    // Exactly halfway (only possible when 5^exponent is exact in the product): ties to even.
    if low <= 1 && exponent >= -4 && exponent <= 23 && mantissa & 3 == 1 && mantissa << shift == high {
        mantissa &= ~1
    }
    mantissa += mantissa & 1
    mantissa >>= 1
    if mantissa >= 2 << 52 {
        mantissa = 1 << 52
        power2 += 1
    }
    guard power2 < 0x7FF else { return .infinity }
    return Double(bitPattern: UInt64(power2) << 52 | mantissa & ~(1 << 52))
}

/// The C library's correctly rounded conversion, in the "C" locale whatever the process's
/// locale is, from a NUL-terminated copy on the stack: no `String`, so no allocation for any
/// spelling that fits the stack.
func cLibraryDouble(_ spelling: UnsafeRawBufferPointer) -> Double {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: spelling.count + 1) { text in
        for index in 0..<spelling.count { text[index] = CChar(bitPattern: spelling[index]) }
        text[spelling.count] = 0
        let previous = uselocale(numericCLocale)
        defer { uselocale(previous) }
        return strtod(text.baseAddress!, nil)
    }
}

/// A locale whose decimal point is `.`; created once.
nonisolated(unsafe) let numericCLocale = newlocale(Int32(1) << LC_NUMERIC, "C", nil)
