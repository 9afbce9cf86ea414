public import PushInternals

/// Scans a string's content from its opening quote at `quote`, validating escapes and UTF-8.
/// Returns the offset of the closing quote, with `stringHasEscapes` and `stringHasNonASCII`
/// when they apply.
@inlinable
func scanStringContent(_ bytes: UnsafePointer<UInt8>, end: Int, quote: Int) throws(JSONError) -> (closingQuote: Int, flags: UInt8) {
    var index = quote + 1
    var flags: UInt8 = 0
    while true {
        // Thirty-two bytes at a time while none needs a closer look (quote, backslash, control
        // character or non-ASCII): two vector registers, one test.
        while index &+ 32 <= end && !blockNeedsAttention(UnsafeRawPointer(bytes + index), nonASCII: true) {
            index &+= 32
        }
        // Then eight at a time, jumping straight to the first byte that needs a closer look.
        while index &+ 8 <= end {
            let word = UInt64(littleEndian: UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self))
            let mask = attentionMask(word)
            if mask != 0 {
                index &+= mask.trailingZeroBitCount &>> 3
                break
            }
            index &+= 8
        }
        guard index < end else {
            throw JSONError(.unexpectedEnd, at: end, "unterminated string starting at byte \(quote)")
        }
        let byte = bytes[index]
        if byte == ASCII.quote {
            return (index, flags)
        } else if byte == ASCII.backslash {
            flags |= TapeEntry.stringHasEscapes
            // Runs of escapes (`\uD83D\uDE00`, `\/`) are checked here without a call; anything
            // else, errors included, goes to validateEscape.
            repeat {
                index = try skipEscape(bytes, end: end, at: index)
            } while index < end && bytes[index] == ASCII.backslash
        } else if byte < 0x20 {
            throw JSONError(.controlCharacterInString, at: index, "unescaped control character \(describeByte(byte)) in a string")
        } else if byte < 0x80 {
            index &+= 1
        } else {
            // Text outside ASCII (accented, CJK, emoji), ASCII mixed in: checked as one run,
            // without going back to the ASCII skipper after every character.
            flags |= TapeEntry.stringHasNonASCII
            index = try skipNonASCIIRun(bytes, end: end, at: index)
        }
    }
}

/// The offset after the run of well-formed multi-byte UTF-8 sequences at `index`. A function of
/// its own, called once per run, so the sequence checks inline into its loop.
///
/// Text in any script, ASCII mixed in, goes sixteen bytes at a time: its UTF-8 is checked in
/// vector registers at once (``utf8IsValid(_:at:lanes:)``), up to the first quote, backslash or
/// control byte, where the run ends and the caller takes over. A block the check refuses, or
/// the last few bytes of the input, are taken sequence by sequence from the start of their
/// first character, which reports any error at the same offset as before.
@inlinable
func skipNonASCIIRun(_ bytes: UnsafePointer<UInt8>, end: Int, at index: Int) throws(JSONError) -> Int {
    var index = index
    // The check reads three bytes back, which only a top-level string's first bytes lack.
    if index >= 3 && index &+ 16 <= end {
        let start = index
        let allLanes = SIMD16<UInt8>(repeating: 0xFF)
        // Whether the character before `index` is known complete (always, at the start of a run).
        var atBoundary = true
        while index &+ 16 <= end {
            // Text of two-byte characters alone (accented Latin, Greek, Cyrillic, Hebrew,
            // Arabic) goes cheaper still as four sequences per word.
            let words = UnsafeRawPointer(bytes + index).loadUnaligned(as: SIMD2<UInt64>.self)
            if atBoundary && isFourTwoByteSequences(UInt64(littleEndian: words[0]))
                && isFourTwoByteSequences(UInt64(littleEndian: words[1]))
            {
                index &+= 16
                continue
            }
            let block = unsafeBitCast(words, to: SIMD16<UInt8>.self)
            let special = specialBytes(block)
            if special[0] | special[1] == 0 {
                // ASCII after a complete character is valid as it stands.
                if anyHighBit(block) || bytes[index &- 1] >= 0x80 {
                    guard utf8IsValid(block, at: bytes + index, lanes: allLanes) else { break }
                }
                index &+= 16
                // Checked, so an ASCII byte or a two-byte lead and its continuation end a character.
                atBoundary = bytes[index &- 1] < 0x80 || bytes[index &- 2] & 0xE0 == 0xC0
                continue
            }
            // The text ends at the first special byte; the check covers it too, which finds a
            // character the text leaves unfinished.
            let first = special[0] != 0 ? special[0].trailingZeroBitCount &>> 3 : 8 &+ special[1].trailingZeroBitCount &>> 3
            let lanes = unsafeBitCast(
                SIMD16<UInt8>(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
                    .< SIMD16<UInt8>(repeating: UInt8(truncatingIfNeeded: first &+ 1)), to: SIMD16<UInt8>.self)
            guard utf8IsValid(block, at: bytes + index, lanes: lanes) else { break }
            return index &+ first
        }
        if index != start {
            // The checks so far vouch for every byte before `index` except a last character
            // that runs on past it (or stops short, which only the next block's check would
            // see): take that character again from its lead byte.
            var lead = index &- 1
            while lead > start && bytes[lead] & 0xC0 == 0x80 { lead &-= 1 }
            if bytes[lead] >= 0xC0 { index = lead }
        }
    }
    repeat {
        // Four two-byte sequences (accented Latin, Greek, Cyrillic, Hebrew, Arabic) per word.
        while index &+ 8 <= end
            && isFourTwoByteSequences(UInt64(littleEndian: UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self)))
        {
            index &+= 8
        }
        guard index < end && bytes[index] >= 0x80 else { break }
        index = try validateUTF8Sequence(bytes, end: end, at: index)
    } while index < end && bytes[index] >= 0x80
    return index
}

/// The offset after the escape at `index` (a backslash): the common well-formed ones decided
/// inline, a `\u` escape by its four digits at once; the rest by ``validateEscape``.
@inlinable @inline(__always)
func skipEscape(_ bytes: UnsafePointer<UInt8>, end: Int, at index: Int) throws(JSONError) -> Int {
    if index &+ 6 <= end {
        let next = bytes[index &+ 1]
        if next == ASCII.lowerU {
            let unit = fourHexDigits(bytes + (index &+ 2))
            // Valid and outside the surrogates: the common case (accents, CJK, ZWJ, variation selectors).
            if unit < 0xD800 || (unit > 0xDFFF && unit <= 0xFFFF) { return index &+ 6 }
            // A high surrogate and a low one: an emoji.
            if unit <= 0xDBFF && index &+ 12 <= end && bytes[index &+ 6] == ASCII.backslash && bytes[index &+ 7] == ASCII.lowerU {
                let low = fourHexDigits(bytes + (index &+ 8))
                if low >= 0xDC00 && low <= 0xDFFF { return index &+ 12 }
            }
        } else if next == ASCII.quote || next == ASCII.backslash || next == ASCII.slash || next == UInt8(ascii: "n") {
            return index &+ 2
        }
    }
    return try validateEscape(bytes, end: end, at: index)
}

/// The code unit four hexadecimal digits at `pointer` spell, or a value above 0xFFFF when one
/// is not a hexadecimal digit.
// Transparent: in scanStringContent, `@inline(__always)` left it a call.
@_transparent @usableFromInline
func fourHexDigits(_ pointer: UnsafePointer<UInt8>) -> UInt32 {
    let first = UInt32(hexDigitValue(pointer[0])), second = UInt32(hexDigitValue(pointer[1]))
    let third = UInt32(hexDigitValue(pointer[2])), fourth = UInt32(hexDigitValue(pointer[3]))
    // An invalid digit is 0xFF: its high bits survive the shifts and land above 0xFFFF.
    return first << 12 | second << 8 | third << 4 | fourth | ((first | second | third | fourth) & 0xF0) << 12
}

/// 0xFF in each byte of the two words that is a quote, a backslash or below 0x20 (little-endian:
/// the lowest set byte is the first).
@inlinable @inline(__always)
func specialBytes(_ block: SIMD16<UInt8>) -> SIMD2<UInt64> {
    let marks =
        (block .== SIMD16<UInt8>(repeating: ASCII.quote)) .| (block .== SIMD16<UInt8>(repeating: ASCII.backslash))
        .| (block .< SIMD16<UInt8>(repeating: ASCII.space))
    return unsafeBitCast(marks, to: SIMD2<UInt64>.self)
}

/// True when the 16 bytes `current`, read at `pointer`, continue or start well-formed UTF-8 in
/// the `lanes` that are 0xFF: continuation bytes exactly where the lead bytes up to three before
/// call for them, no byte that cannot occur (C0, C1, F5–FF), no overlong form, encoded surrogate
/// or code point above U+10FFFF. It reads the three bytes before `pointer`, so a block's check
/// covers the sequence the block before it left open; a sequence this block leaves open is the
/// next check's.
///
/// Only `.==`, `.<`, `.&`, `.|`, `.^` and `&-` on explicitly typed byte vectors, which compile to a
/// few vector instructions each; an untyped `SIMD16(repeating:)` compiled to a loop over the lanes.
@inlinable @inline(__always)
func utf8IsValid(_ current: SIMD16<UInt8>, at pointer: UnsafePointer<UInt8>, lanes: SIMD16<UInt8>) -> Bool {
    typealias Bytes = SIMD16<UInt8>
    let raw = UnsafeRawPointer(pointer)
    let previous1 = (raw - 1).loadUnaligned(as: Bytes.self)
    let previous2 = (raw - 2).loadUnaligned(as: Bytes.self)
    let previous3 = (raw - 3).loadUnaligned(as: Bytes.self)
    let isContinuation = (current & Bytes(repeating: 0xC0)) .== Bytes(repeating: 0x80)
    // A lead of two or more bytes one back, of three or more two back, of four three back.
    let needsContinuation =
        (Bytes(repeating: 0xBF) .< previous1) .| (Bytes(repeating: 0xDF) .< previous2) .| (Bytes(repeating: 0xEF) .< previous3)
    let impossible =
        (current .== Bytes(repeating: 0xC0)) .| (current .== Bytes(repeating: 0xC1)) .| (Bytes(repeating: 0xF4) .< current)
    // The second byte's narrower ranges: at least A0 after E0 (overlong) and 90 after F0
    // (overlong), at most 9F after ED (surrogates) and 8F after F4 (above U+10FFFF). Each pair of
    // leads differs in bit 4, and so do their bounds: one bound compare per pair.
    let bit4 = previous1 & Bytes(repeating: 0x10)
    let outOfRange =
        (((previous1 & Bytes(repeating: 0xEF)) .== Bytes(repeating: 0xE0)) .& (current .< (Bytes(repeating: 0xA0) &- bit4)))
        .| (((previous1 .== Bytes(repeating: 0xED)) .| (previous1 .== Bytes(repeating: 0xF4)))
            .& ((Bytes(repeating: 0x9F) &- bit4) .< current))
    // A byte is a continuation or not, and the bytes before it call for one or not: it is in the
    // wrong place exactly when the two answers differ.
    let errors = (isContinuation .^ needsContinuation) .| impossible .| outOfRange
    return !anyHighBit(unsafeBitCast(errors, to: Bytes.self) & lanes)
}

/// Validates the escape at `index` (a backslash); returns the offset after it.
@inlinable
func validateEscape(_ bytes: UnsafePointer<UInt8>, end: Int, at index: Int) throws(JSONError) -> Int {
    guard index + 1 < end else {
        throw JSONError(.unexpectedEnd, at: end, "unexpected end of input in an escape")
    }
    switch bytes[index + 1] {
    case ASCII.quote, ASCII.backslash, ASCII.slash, UInt8(ascii: "b"), UInt8(ascii: "f"),
        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
        return index + 2
    case ASCII.lowerU:
        let unit = try hexEscape(bytes, end: end, at: index)
        if unit >= 0xDC00 && unit <= 0xDFFF {
            throw JSONError(.loneSurrogate, at: index, "low surrogate escape without a preceding high surrogate")
        }
        if unit >= 0xD800 && unit <= 0xDBFF {
            let next = index + 6
            guard next + 1 < end, bytes[next] == ASCII.backslash, bytes[next + 1] == ASCII.lowerU else {
                throw JSONError(.loneSurrogate, at: index, "high surrogate escape not followed by a low surrogate escape")
            }
            let low = try hexEscape(bytes, end: end, at: next)
            guard low >= 0xDC00 && low <= 0xDFFF else {
                throw JSONError(.loneSurrogate, at: index, "high surrogate escape not followed by a low surrogate escape")
            }
            return next + 6
        }
        return index + 6
    default:
        throw JSONError(.invalidEscape, at: index, "invalid escape '\\\(describeEscapeByte(bytes[index + 1]))'")
    }
}

/// The code unit of the `\uXXXX` escape whose backslash is at `index`.
@inlinable
func hexEscape(_ bytes: UnsafePointer<UInt8>, end: Int, at index: Int) throws(JSONError) -> UInt16 {
    var value: UInt16 = 0
    for digitOffset in (index + 2)..<(index + 6) {
        guard digitOffset < end else {
            throw JSONError(.unexpectedEnd, at: end, "unexpected end of input in a \\u escape")
        }
        let digit = hexDigitValue(bytes[digitOffset])
        guard digit < 16 else {
            throw JSONError(.invalidUnicodeEscape, at: index, "\\u must be followed by four hexadecimal digits")
        }
        value = value << 4 | UInt16(digit)
    }
    return value
}

/// Validates one multi-byte UTF-8 sequence whose lead byte is at `index`; returns the
/// offset after it. Rejects overlong forms, encoded surrogates, code points above U+10FFFF
/// and truncated sequences, reporting the lead byte's offset.
@inlinable @inline(__always)
func validateUTF8Sequence(_ bytes: UnsafePointer<UInt8>, end: Int, at index: Int) throws(JSONError) -> Int {
    let lead = bytes[index]
    // Fast paths for the common well-formed cases: two bytes (C2–DF 80–BF) and three bytes
    // outside the surrogate and overlong ranges (E1–EC, EE–EF then 80–BF 80–BF).
    if lead >= 0xC2 && lead <= 0xDF && index + 1 < end && bytes[index + 1] & 0xC0 == 0x80 {
        return index + 2
    }
    if lead >= 0xE1 && lead <= 0xEF && lead != 0xED && index + 2 < end && bytes[index + 1] & 0xC0 == 0x80
        && bytes[index + 2] & 0xC0 == 0x80
    {
        return index + 3
    }
    let length: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch lead {
    case 0xC2...0xDF: length = 2
    case 0xE0: length = 3; low = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED: length = 3; high = 0x9F
    case 0xF0: length = 4; low = 0x90
    case 0xF1...0xF3: length = 4
    case 0xF4: length = 4; high = 0x8F
    default:
        throw JSONError(.invalidUTF8, at: index, "invalid UTF-8 lead byte \(describeByte(lead))")
    }
    guard index + length <= end else {
        throw JSONError(.invalidUTF8, at: index, "truncated UTF-8 sequence")
    }
    let second = bytes[index + 1]
    guard second >= low && second <= high else {
        throw JSONError(.invalidUTF8, at: index, "invalid UTF-8 sequence (overlong, surrogate, out of range or truncated)")
    }
    for offset in (index + 2)..<(index + length) where bytes[offset] & 0xC0 != 0x80 {
        throw JSONError(.invalidUTF8, at: index, "truncated UTF-8 sequence")
    }
    return index + length
}

/// The high bit of each byte that is a quote, a backslash, below 0x20 or above 0x7F, read as
/// little-endian. Bit tricks from "Determine if a word has a zero byte" (Hacker's Delight 6-1):
/// borrows can only mark bytes *above* a marked one, so the lowest marked byte is exact.
@inlinable
@inline(__always)
func attentionMask(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highBits: UInt64 = 0x8080_8080_8080_8080
    let quotes = word ^ (ones &* UInt64(ASCII.quote))
    let backslashes = word ^ (ones &* UInt64(ASCII.backslash))
    let hasQuote = (quotes &- ones) & ~quotes
    let hasBackslash = (backslashes &- ones) & ~backslashes
    // Bytes below 0x20 borrow into their high bit; bytes at or above 0x80 have it already.
    let belowSpace = word &- (ones &* 0x20)
    return (hasQuote | hasBackslash | belowSpace | word) & highBits
}

/// True when any of the 32 bytes at `pointer` is a quote, a backslash or below 0x20 (what JSON
/// must escape), or, with `nonASCII`, above 0x7F. SIMD lanes map to SSE2 on x86_64 and NEON on
/// arm64: half the instructions per byte of ``attentionMask(_:)`` on two words.
@inlinable
@inline(__always)
func blockNeedsAttention(_ pointer: UnsafeRawPointer, nonASCII: Bool) -> Bool {
    blocksNeedAttention(pointer, pointer + 16, nonASCII: nonASCII)
}

/// ``blockNeedsAttention(_:nonASCII:)`` over the 16 bytes at each of two pointers (which may
/// overlap: the first and last 16 bytes of a string of 17 to 32).
@inlinable
@inline(__always)
func blocksNeedAttention(_ firstHalf: UnsafeRawPointer, _ secondHalf: UnsafeRawPointer, nonASCII: Bool) -> Bool {
    let first = firstHalf.loadUnaligned(as: SIMD16<UInt8>.self)
    let second = secondHalf.loadUnaligned(as: SIMD16<UInt8>.self)
    let flagged = unsafeBitCast(specialBytes(first) | specialBytes(second), to: SIMD16<UInt8>.self)
    // Non-ASCII bytes have their high bit set already.
    return anyHighBit(nonASCII ? flagged | first | second : flagged)
}

/// True when any byte of `vector` has its high bit set. (The standard library's `any(_:)` on a
/// mask is a call to a generic reduction here; two words and a test are not.)
@inlinable
@inline(__always)
func anyHighBit(_ vector: SIMD16<UInt8>) -> Bool {
    let halves = unsafeBitCast(vector, to: SIMD2<UInt64>.self)
    return (halves[0] | halves[1]) & 0x8080_8080_8080_8080 != 0
}

/// True when the eight bytes (little-endian) are four well-formed two-byte UTF-8 sequences:
/// each lead is 110xxxxx but not C0 or C1 (overlong), each continuation 10xxxxxx.
@inlinable
@inline(__always)
func isFourTwoByteSequences(_ word: UInt64) -> Bool {
    guard word & 0xC0E0_C0E0_C0E0_C0E0 == 0x80C0_80C0_80C0_80C0 else { return false }
    // A lead whose bits 1–4 are all zero is C0 or C1; find such a lane without a loop.
    let leadBits = word & 0x001E_001E_001E_001E
    return (leadBits &- 0x0001_0001_0001_0001) & 0x8000_8000_8000_8000 == 0
}

/// 0–15 for a hexadecimal digit, 0xFF otherwise (`Hex.digitValue`), under the name the package's
/// modules that do not import `PushInternals` know it by.
@inlinable
@inline(__always)
package func hexDigitValue(_ byte: UInt8) -> UInt8 { Hex.digitValue(byte) }

@usableFromInline
func describeEscapeByte(_ byte: UInt8) -> String {
    byte >= 0x20 && byte < 0x7F ? String(Character(Unicode.Scalar(byte))) : describeByte(byte)
}
