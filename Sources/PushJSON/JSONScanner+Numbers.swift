/// Scans `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` at `start`; returns the
/// offset after it and its shape (fraction, exponent).
@inlinable
func scanNumber(_ bytes: UnsafePointer<UInt8>, end: Int, at start: Int) throws(JSONError) -> (end: Int, flags: UInt8) {
    var index = start
    var flags: UInt8 = 0
    if bytes[index] == ASCII.minus {
        index += 1
    }
    guard index < end else { throw numberError(bytes, end: end, at: index, "a digit") }
    let first = bytes[index]
    if first == ASCII.zero {
        index += 1
        if index < end, isDigit(bytes[index]) {
            throw JSONError(.invalidNumber, at: index, "leading zeros are not allowed")
        }
    } else if isDigit(first) {
        index = skipDigits(bytes, end: end, from: index + 1)
    } else {
        throw numberError(bytes, end: end, at: index, "a digit")
    }
    if index < end, bytes[index] == ASCII.dot {
        flags |= TapeEntry.numberHasFraction
        index += 1
        guard index < end, isDigit(bytes[index]) else { throw numberError(bytes, end: end, at: index, "a digit after '.'") }
        index = skipDigits(bytes, end: end, from: index + 1)
    }
    if index < end, bytes[index] == ASCII.lowerE || bytes[index] == ASCII.upperE {
        flags |= TapeEntry.numberHasExponent
        index += 1
        if index < end, bytes[index] == ASCII.plus || bytes[index] == ASCII.minus {
            index += 1
        }
        guard index < end, isDigit(bytes[index]) else { throw numberError(bytes, end: end, at: index, "a digit in the exponent") }
        index = skipDigits(bytes, end: end, from: index + 1)
    }
    return (index, flags)
}

@inlinable @inline(__always)
func skipDigits(_ bytes: UnsafePointer<UInt8>, end: Int, from index: Int) -> Int {
    var index = index
    while index < end, isDigit(bytes[index]) { index += 1 }
    return index
}

@usableFromInline
func numberError(_ bytes: UnsafePointer<UInt8>, end: Int, at offset: Int, _ expected: String) -> JSONError {
    if offset >= end {
        return JSONError(.unexpectedEnd, at: end, "unexpected end of input in a number, expected \(expected)")
    }
    return JSONError(.invalidNumber, at: offset, "invalid number: expected \(expected), found \(describeByte(bytes[offset]))")
}

@inlinable
@inline(__always)
package func isDigit(_ byte: UInt8) -> Bool {
    byte &- ASCII.zero < 10
}
