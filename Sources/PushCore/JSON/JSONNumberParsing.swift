#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Exact powers of ten that a `Double` holds without rounding.
@usableFromInline
let exactPowersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { result, _ in result * 10 } }

/// The value of a validated number spelling when Clinger's fast path applies: at most 15
/// significant digits (so the digits are an exact `Double`) and a power of ten within ±22 (also
/// exact), so one multiplication or division rounds correctly. `nil` otherwise.
@inlinable
func exactDouble(_ spelling: UnsafeRawBufferPointer) -> Double? {
    var index = 0
    let count = spelling.count
    let negative = spelling[0] == ASCII.minus
    if negative { index = 1 }
    var digits: UInt64 = 0
    var significantDigits = 0
    var exponent = 0
    var inFraction = false
    while index < count {
        let byte = spelling[index]
        if byte == ASCII.dot {
            inFraction = true
        } else if isDigit(byte) {
            if digits != 0 || byte != ASCII.zero { significantDigits += 1 }
            guard significantDigits <= 15 else { return nil }
            digits = digits &* 10 &+ UInt64(byte &- ASCII.zero)
            if inFraction { exponent -= 1 }
        } else {
            break  // the exponent marker
        }
        index += 1
    }
    if index < count {
        index += 1
        var exponentNegative = false
        if spelling[index] == ASCII.minus || spelling[index] == ASCII.plus {
            exponentNegative = spelling[index] == ASCII.minus
            index += 1
        }
        var written = 0
        while index < count {
            written = written &* 10 &+ Int(spelling[index] &- ASCII.zero)
            guard written <= 1000 else { return nil }
            index += 1
        }
        exponent += exponentNegative ? -written : written
    }
    guard exponent >= -22 && exponent <= 22 else { return digits == 0 ? (negative ? -0.0 : 0.0) : nil }
    let magnitude = exponent < 0 ? Double(digits) / exactPowersOfTen[-exponent] : Double(digits) * exactPowersOfTen[exponent]
    return negative ? -magnitude : magnitude
}

/// The C library's correctly rounded conversion, in the "C" locale whatever the process's
/// locale is, from a NUL-terminated copy on the stack: no `String`, so no allocation for any
/// spelling that fits the stack.
@usableFromInline
func correctlyRoundedDouble(_ spelling: UnsafeRawBufferPointer) -> Double {
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
