extension JSONScanner {
    /// Scans `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` and records its spelling.
    @inlinable
    mutating func scanNumber() throws(JSONError) {
        let start = position
        var index = position
        var flags: UInt8 = 0
        if bytes[index] == ASCII.minus {
            flags |= TapeEntry.numberIsNegative
            index += 1
        }
        guard index < end else { throw numberError(at: index, "a digit") }
        let first = bytes[index]
        if first == ASCII.zero {
            index += 1
            if index < end, isDigit(bytes[index]) {
                throw JSONError(.invalidNumber, at: index, "leading zeros are not allowed")
            }
        } else if isDigit(first) {
            index = skipDigits(from: index + 1)
        } else {
            throw numberError(at: index, "a digit")
        }
        if index < end, bytes[index] == ASCII.dot {
            flags |= TapeEntry.numberHasFraction
            index += 1
            guard index < end, isDigit(bytes[index]) else { throw numberError(at: index, "a digit after '.'") }
            index = skipDigits(from: index + 1)
        }
        if index < end, bytes[index] == ASCII.lowerE || bytes[index] == ASCII.upperE {
            flags |= TapeEntry.numberHasExponent
            index += 1
            if index < end, bytes[index] == ASCII.plus || bytes[index] == ASCII.minus {
                index += 1
            }
            guard index < end, isDigit(bytes[index]) else { throw numberError(at: index, "a digit in the exponent") }
            index = skipDigits(from: index + 1)
        }
        sink.scalar(.number, offset: start, length: index - start, flags: flags)
        position = index
    }

    @inlinable
    func skipDigits(from index: Int) -> Int {
        var index = index
        while index < end, isDigit(bytes[index]) { index += 1 }
        return index
    }

    @inlinable
    func numberError(at offset: Int, _ expected: String) -> JSONError {
        if offset >= end {
            return JSONError(.unexpectedEnd, at: end, "unexpected end of input in a number, expected \(expected)")
        }
        return JSONError(.invalidNumber, at: offset, "invalid number: expected \(expected), found \(describeByte(bytes[offset]))")
    }
}

@inlinable
@inline(__always)
func isDigit(_ byte: UInt8) -> Bool {
    byte &- ASCII.zero < 10
}
