import Foundation
import PushJSON
import PushTestSupport
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    func parseError(_ text: String, options: JSONParser.Options = .init()) -> JSONError? {
        var parser = JSONParser(options: options)
        do {
            _ = try parser.parse(Array(text.utf8))
            return nil
        } catch {
            return error
        }
    }

    /// One known answer per syntax and limit code: the code and the byte it points at.
    @Test(
        "error codes and offsets",
        arguments: [
            ("[1,]", "unexpectedByte", 3),
            ("[1", "unexpectedEnd", 2),
            ("\"\\q\"", "invalidEscape", 1),
            ("\"\\u00zz\"", "invalidUnicodeEscape", 1),
            ("\"\\udc00\"", "loneSurrogate", 1),
            ("\"\u{01}\"", "controlCharacterInString", 1),
            ("[00]", "invalidNumber", 2),
            ("{} []", "trailingData", 3),
            ("[[[", "depthLimitExceeded", 2),
        ] as [(String, String, Int)])
    func syntaxErrors(_ text: String, _ code: String, _ offset: Int) {
        let error = parseError(text, options: JSONParser.Options(maximumDepth: 2))
        #expect(error?.code.rawValue == code)
        #expect(error?.offset == offset)
    }

    @Test("\\u escapes: every digit checked, surrogates paired, codes and offsets as for any escape")
    func unicodeEscapes() throws {
        var parser = JSONParser()
        // Each position holding a non-digit, and bytes next to the digit and letter ranges.
        for digits in ["G000", "0G00", "00G0", "000G", "/000", ":000", "@000", "`000", "g000", "00 0", "\u{E9}00"] {
            let error = parseError("[\"a\\u\(digits)\"]")
            #expect(error?.code == .invalidUnicodeEscape, "\(digits)")
            #expect(error?.offset == 3, "\(digits)")
        }
        for (text, offset) in [
            ("[\"\\ud83d\"]", 2), ("[\"\\ud83d\\u0041\"]", 2), ("[\"\\ud83d\\ud83d\"]", 2), ("[\"x\\udbff\\n\"]", 3),
            ("[\"\\ude00\"]", 2), ("[\"\\ud83d\\ude00\\udc00\"]", 14),
        ] {
            let error = parseError(text)
            #expect(error?.code == .loneSurrogate, "\(text)")
            #expect(error?.offset == offset, "\(text)")
        }
        #expect(parseError("[\"\\ud83d\\uG000\"]")?.code == .invalidUnicodeEscape)
        #expect(parseError("[\"\\u00e\"]")?.code == .invalidUnicodeEscape)
        #expect(parseError("[\"\\u00e")?.code == .unexpectedEnd)
        // Well-formed: the edges of the ranges, upper and lower case, surrogate pairs back to back.
        let valid = #"["\u0000\uD7FF\uE000\uffff\uFFFF\ud800\udc00\uDBFF\uDFFF\ud83d\ude00\ud83d\ude00\/\"\\\n\b\f\r\t"]"#
        let document = try parser.parse(Array(valid.utf8))
        #expect(document.root[0]?.string == "\u{0}\u{D7FF}\u{E000}\u{FFFF}\u{FFFF}\u{10000}\u{10FFFF}😀😀/\"\\\n\u{8}\u{C}\r\t")
    }

    @Test("invalid UTF-8 is refused at the lead byte")
    func invalidUTF8() throws {
        var parser = JSONParser()
        for bytes: [UInt8] in [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80], [0xF8]] {
            #expect(throws: JSONError(.invalidUTF8, at: 3, "")) {
                _ = try parser.parse([0x5B, 0x22, 0x61] + bytes + [0x22, 0x5D])
            }
        }
    }

    @Test("UTF-8 in long strings: every well-formed and ill-formed sequence at every block offset, against a reference")
    func utf8AtEveryOffset() throws {
        // Well-formed sequences, the edges of Table 3-7 of the Unicode Standard among them, ASCII
        // and two-byte runs longer than a block, and escapes, which end a block the vector check
        // takes.
        let valid: [[UInt8]] = [
            Array("a".utf8), Array("bc".utf8), Array(" plain ASCII, longer than a block ".utf8), Array("двадцатьдва".utf8),
            Array("é".utf8), Array("駅".utf8),
            Array("😀".utf8), [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xF1, 0x80, 0x80, 0x80], Array(#"\n"#.utf8),
            Array(#"\u00e9"#.utf8),
        ]
        // Ill-formed: stray continuations, bytes that never occur, overlong forms, surrogates,
        // code points above U+10FFFF and truncated sequences.
        let invalid: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xC3], [0xE9, 0xA7], [0xF0, 0x9F, 0x98], [0xC3, 0xC3, 0xA9],
            [0xE9, 0x41, 0x85], [0xF0, 0x9F, 0x98, 0x80, 0x80],
        ]
        var random = SeededGenerator(seed: 0x0075_7466_38)
        var parser = JSONParser()
        for iteration in 0..<100_000 {
            var text: [UInt8] = []
            let pieces = Int.random(in: 0...40, using: &random)
            let invalidAt = Int.random(in: 0..<3, using: &random) == 0 ? Int.random(in: 0...pieces, using: &random) : -1
            for piece in 0...pieces {
                text += piece == invalidAt ? invalid.randomElement(using: &random)! : valid.randomElement(using: &random)!
            }
            let prefix = [UInt8](repeating: 0x20, count: Int.random(in: 0...17, using: &random))
            let document = prefix + Array(#"[""#.utf8) + text + Array(#""]"#.utf8)
            let expected = Self.firstIllFormedSequence(in: text).map { JSONError(.invalidUTF8, at: prefix.count + 2 + $0, "") }
            do {
                let root = try parser.parse(document).root
                #expect(expected == nil, "\(iteration): accepted \(text)")
                if expected == nil { #expect(root[0]?.withRawStringBytes { Array($0) } == text, "\(iteration)") }
            } catch {
                #expect(error == expected, "\(iteration): \(text)")
            }
        }
    }

    /// The offset of the first ill-formed UTF-8 sequence in `bytes` (escapes read as ASCII), at its
    /// first byte, by Table 3-7 of the Unicode Standard.
    static func firstIllFormedSequence(in bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            var length = 3, second: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: second = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: break
            case 0xED: second = 0x80...0x9F
            case 0xF0: length = 4; second = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; second = 0x80...0x8F
            default: return index
            }
            guard index + length <= bytes.count, second.contains(bytes[index + 1]) else { return index }
            if bytes[(index + 2)..<(index + length)].contains(where: { $0 & 0xC0 != 0x80 }) { return index }
            index += length
        }
        return nil
    }

    @Test("input size limit")
    func inputTooLarge() {
        let error = parseError("[" + String(repeating: "1,", count: 100) + "1]", options: JSONParser.Options(maximumInputSize: 64))
        #expect(error?.code == .inputTooLarge)
        #expect(error?.offset == 64)
    }

    @Test("100,000 nested brackets stop at the depth limit without recursion")
    func hostileNesting() {
        let error = parseError(String(repeating: "[", count: 100_000))
        #expect(error?.code == .depthLimitExceeded)
        #expect(error?.offset == 512)
    }

    @Test("line and column are computed when rendering")
    func lineAndColumn() throws {
        let text = "{\n  \"é\": [1,\n  2,]\n}"
        let error = try #require(parseError(text))
        #expect(error.location(in: Array(text.utf8)) == (3, 5))
        #expect(
            error.rendered(in: Array(text.utf8), fileName: "x.json")
                == "x.json: error: unexpectedByte at byte 18 (line 3, column 5): unexpected ']', expected a value")
    }

    @Test("the view reads every kind of value")
    func view() throws {
        var parser = JSONParser()
        let document = try parser.parse(
            Array(
                #"{"s":"a\"b\u00e9\ud83d\ude00","i":-42,"d":1.5e2,"big":123456789012345678901,"t":true,"f":false,"n":null,"a":[1,[2],{"x":3}],"o":{}}"#
                    .utf8))
        let root = document.root
        #expect(root.kind == .object)
        #expect(root.count == 9)
        #expect(root["s"]?.string == "a\"bé😀")
        #expect(root["s"]?.stringHasEscapes == true)
        #expect(root["s"]?.stringEquals("a\"bé😀") == true)
        #expect(root["i"]?.int == -42)
        #expect(root["d"]?.int == nil)
        #expect(root["d"]?.double == 150)
        #expect(root["d"]?.numberSpelling == "1.5e2")
        #expect(root["big"]?.int == nil)
        #expect(root["big"]?.double == 123456789012345683968)  // the nearest Double to 123456789012345678901
        #expect(root["t"]?.bool == true)
        #expect(root["f"]?.bool == false)
        #expect(root["n"]?.isNull == true)
        #expect(root["a"]?.count == 3)
        #expect(root["a"]?[1]?[0]?.int == 2)
        #expect(root["a"]?[2]?["x"]?.int == 3)
        #expect(root["a"]?[3] == nil)
        #expect(root["o"]?.count == 0)
        #expect(root["missing"] == nil)
        #expect(root.members.map { $0.key.string! } == ["s", "i", "d", "big", "t", "f", "n", "a", "o"])
        #expect(String(decoding: document.bytes[root["a"]!.byteRange], as: UTF8.self) == #"[1,[2],{"x":3}]"#)
        #expect(String(decoding: document.bytes[root["s"]!.byteRange], as: UTF8.self) == #""a\"b\u00e9\ud83d\ude00""#)
    }

    @Test("descendants walk every value and key in document order, without recursion")
    func descendants() throws {
        var parser = JSONParser()
        let text = #"{"a":[1,{"b":null},[]],"c":"x","d":{}}"#
        let summary = try parser.parse(Array(text.utf8)) { (root) throws(JSONError) in
            root.descendants.map { value in
                "\(value.kind)\(value.isObjectKey ? ":key" : "")=\(value.byteRange.lowerBound)"
            }
        }
        #expect(
            summary == [
                "string:key=1", "array=5", "number=6", "object=8", "string:key=9", "null=13", "array=19",
                "string:key=23", "string=27", "string:key=31", "object=35",
            ])
        // Scalars have no descendants, and neither do empty containers.
        #expect(try parser.parse(Array("42".utf8)) { (root) throws(JSONError) in Array(root.descendants).count } == 0)
        #expect(try parser.parse(Array("[]".utf8)) { (root) throws(JSONError) in Array(root.descendants).count } == 0)
        // A subtree's walk stops at its end.
        #expect(try parser.parse(Array(text.utf8)) { (root) throws(JSONError) in root["a"]!.descendants.map(\.byteOffset) } == [6, 8, 9, 13, 19])
        // The deepest nesting the parser accepts costs one step per value.
        let depth = JSONParser.Options.maximumSupportedDepth
        var deepParser = JSONParser(options: .init(maximumDepth: depth))
        let deep = Array(String(repeating: "[", count: depth).utf8) + [UInt8(ascii: "7")] + Array(String(repeating: "]", count: depth).utf8)
        let (count, last) = try deepParser.parse(deep) { (root) throws(JSONError) in
            root.descendants.reduce((0, 0)) { ($0.0 + 1, $1.int ?? $0.1) }
        }
        #expect(count == depth)
        #expect(last == 7)
    }

    @Test("duplicates are kept in document order")
    func duplicates() throws {
        var parser = JSONParser()
        let root = try parser.parse(Array(#"{"k":1,"k":2}"#.utf8)).root
        #expect(root.members.map { $0.value.int! } == [1, 2])
        #expect(root["k"]?.int == 1)
        #expect(throws: JSONError(.duplicateKey, at: 7, "")) { try root.checkUniqueKeys() }
    }

    @Test("a repeated key is found whatever follows its closing quote")
    func duplicateKeysBeforeWhitespace() throws {
        var parser = JSONParser()
        // Keys that differ in length and letters, so only the repeat looks like another key; the
        // bytes between a key and its colon are not part of it.
        let keys = ["a", "bb", "ccc", "dddd", "eeeee", ""]
        for repeated in keys {
            for separator in [":", " :", "\n\t:"] {
                let prefix = "{" + keys.map { "\"\($0)\":1," }.joined()
                let text = prefix + "\"\(repeated)\"" + separator + "2}"
                #expect(throws: JSONError(.duplicateKey, at: prefix.utf8.count, "")) {
                    try parser.parse(Array(text.utf8)) { (root) throws(JSONError) in try root.checkUniqueKeys() }
                }
            }
        }
    }

    @Test("a repeated key is found at every pair of positions, past nested values and escapes")
    func duplicateKeysAtEveryPair() throws {
        var parser = JSONParser()
        let values = ["1", #"{"x":[1,{"k00":2}]}"#, "[]", #""s""#]
        // Up to 16 members takes the pairwise path, 17 the hashed one. Keys all have the same
        // length, so only their content tells them apart.
        for count in 2...17 {
            let keys = (0..<count).map { "k" + String($0 / 10) + String($0 % 10) }
            func text(repeating first: Int, at second: Int) -> (text: String, offset: Int) {
                var text = "{"
                var offset = -1
                for index in 0..<count {
                    if index > 0 { text += "," }
                    if index == second { offset = text.utf8.count }
                    // The repeat is spelled with an escape every other time: still the same key.
                    let key = index == second ? (second % 2 == 0 ? keys[first] : #"\u006b"# + keys[first].dropFirst()) : keys[index]
                    text += "\"\(key)\":" + values[index % values.count]
                }
                return (text + "}", offset)
            }
            let distinct = text(repeating: 0, at: -1).text
            #expect(throws: Never.self) { try parser.parse(Array(distinct.utf8)) { (root) throws(JSONError) in try root.checkUniqueKeys() } }
            for first in 0..<count {
                for second in (first + 1)..<count {
                    let (repeated, offset) = text(repeating: first, at: second)
                    #expect(throws: JSONError(.duplicateKey, at: offset, "")) {
                        try parser.parse(Array(repeated.utf8)) { (root) throws(JSONError) in try root.checkUniqueKeys() }
                    }
                }
            }
        }
    }

    @Test("a repeated key anywhere inside a value is found, at any depth; sibling objects may share keys")
    func duplicateKeysThroughout() throws {
        var parser = JSONParser()
        let deep = String(repeating: #"{"a":"#, count: 40) + #"{"b":1,"b":2}"# + String(repeating: "}", count: 40)
        let wide = "{" + (0..<100).map { "\"key\($0)\":\($0)" }.joined(separator: ",")
        let cases: [(text: String, duplicateAt: String?)] = [
            (#"[{"a":1,"b":2},{"a":1,"b":2}]"#, nil),
            (#"{"a":[{"a":1}],"b":{"a":2,"b":3}}"#, nil),
            (#"{"a":{"b":1},"b":2}"#, nil),
            (#"{"a":{"b":1},"a":2}"#, #""a":2"#),
            (#"{"x":{"a":1},"a":{"a":{"b":1,"b":2}}}"#, #""b":2"#),
            (#"[{"a":1},{"k":1,"\u006b":2}]"#, #""\u006b""#),
            (#"[[[{"é":1,"e\#u{301}":2}]]]"#, nil),
            (deep, #""b":2"#),
            (wide + "}", nil),
            (wide + #","key7":0}"#, #""key7":0"#),
        ]
        for (text, duplicateAt) in cases {
            let expected = duplicateAt.map { text.utf8.count - text.split(separator: $0).last!.utf8.count - $0.utf8.count }
            let thrown: JSONError? = try parser.parse(Array(text.utf8)) { root in
                do throws(JSONError) {
                    try root.checkUniqueKeysThroughout()
                    return nil
                } catch {
                    return error
                }
            }
            #expect(thrown?.code == (expected == nil ? nil : .duplicateKey), "\(text)")
            #expect(thrown?.offset == expected, "\(text)")
        }
    }

    @Test("the closure API's presized tape holds the densest documents, one entry per input byte")
    func presizedTapeDensestDocuments() throws {
        var texts: [String] = []
        for depth in [1, 2, 31, 32, 33, 63, 64, 65, 511, 512, 1024] {
            texts.append(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        }
        for count in [1, 15, 16, 17, 63, 64, 65, 1000, 5000] {
            texts.append("[" + Array(repeating: "[]", count: count).joined(separator: ",") + "]")
            texts.append("{" + Array(repeating: #""":{}"#, count: count).joined(separator: ",") + "}")
            texts.append("[" + Array(repeating: "0", count: count).joined(separator: ",") + "]")
        }
        // Big first, then small ones: the reused tape only grows.
        texts += texts.reversed()
        let options = JSONParser.Options(maximumDepth: 1024)
        var parser = JSONParser(options: options)
        for text in texts {
            let bytes = Array(text.utf8)
            var reference = JSONParser(options: options)
            let expected = try reference.parse(bytes).canonicalBytes()
            let canonical = try parser.parse(bytes) { root in
                var canonical: [UInt8] = []
                root.writeCanonical(into: &canonical)
                return canonical
            }
            #expect(canonical == expected, "\(text.prefix(40))…")
        }
    }

    @Test("a document outlives the next parse with the same parser")
    func documentsAreIndependent() throws {
        var parser = JSONParser()
        let first = try parser.parse(Array(#"{"a":"first"}"#.utf8))
        let second = try parser.parse(Array(#"["second",2]"#.utf8))
        #expect(first.root["a"]?.string == "first")
        #expect(second.root[0]?.string == "second")
    }

    @Test("Data-like collections parse through the copying entry point")
    func genericEntryPoint() throws {
        var parser = JSONParser()
        let slice = Array(#"xx{"a":1}yy"#.utf8)[2..<9]
        #expect(try parser.parse(slice).root["a"]?.int == 1)
    }

    func brackets(_ depth: Int) -> [UInt8] {
        Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
    }

    @Test("validation deeper than its small stack still applies the whole depth limit")
    func deepValidation() throws {
        let parser = JSONParser()
        let deep = JSONParser.validationStackDepth + 44
        try parser.validate(brackets(deep))
        try parser.validate(brackets(JSONParser.Options.defaultMaximumDepth))
        let tooDeep = JSONParser.Options.defaultMaximumDepth + 1
        #expect(throws: JSONError(.depthLimitExceeded, at: tooDeep - 1, "")) { try parser.validate(brackets(tooDeep)) }
        // Errors past the point where the small stack ran out are found at their own offsets.
        let garbage = Array(String(repeating: "[", count: deep).utf8) + [UInt8(ascii: "x")]
        #expect(throws: JSONError(.unexpectedByte, at: deep, "")) { try parser.validate(garbage) }
        // Errors before it are reported without a second scan changing them.
        #expect(throws: JSONError(.unexpectedByte, at: 3, "")) { try parser.validate(Array("[[[x".utf8) + brackets(deep)) }
        // A small limit is the limit.
        let strict = JSONParser(options: .init(maximumDepth: 10))
        #expect(throws: JSONError(.depthLimitExceeded, at: 10, "")) { try strict.validate(brackets(11)) }
        try strict.validate(brackets(10))
    }
}

@Suite("UTF-8 inside long non-ASCII runs")
struct UTF8RunTests {
    /// The scanner checks runs of two-byte sequences a word at a time; an invalid sequence
    /// planted anywhere in such a run, at any alignment, must still be found at its lead byte.
    @Test(
        "invalid sequences planted in runs of two-byte characters",
        arguments: [
            [0xC0, 0x80], [0xC1, 0xBF], [0xC3, 0x28], [0x80], [0xBF, 0xBF], [0xED, 0xA0, 0x80], [0xF5, 0x80, 0x80, 0x80],
        ] as [[UInt8]])
    func plantedInvalid(_ invalid: [UInt8]) throws {
        var parser = JSONParser()
        let run = [UInt8](String(repeating: "é", count: 20).utf8)
        for prefix in 0..<3 {
            for position in stride(from: 0, through: run.count, by: 2) {
                let head = [UInt8](repeating: UInt8(ascii: "a"), count: prefix)
                let bytes = [UInt8(ascii: "\"")] + head + Array(run[..<position]) + invalid + Array(run[position...]) + [UInt8(ascii: "\"")]
                #expect(throws: JSONError(.invalidUTF8, at: 1 + prefix + position, "")) { _ = try parser.parse(bytes) }
            }
        }
    }

    @Test("valid mixes of one-, two-, three- and four-byte characters at every alignment")
    func validMixes() throws {
        var parser = JSONParser()
        let pieces = ["é", "ß", "Ω", "Ж", "a", "你", "😀", "\u{7FF}", "\u{80}"]
        var random = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0..<40, using: &random) { text += pieces.randomElement(using: &random)! }
            let bytes = Array("\"\(text)\"".utf8)
            #expect(try parser.parse(bytes).root.string == text)
        }
    }
}

/// Decoded strings are made from the scanner's validated bytes without the standard library
/// checking them again, and are marked ASCII when the scanner saw no byte above 0x7F. A wrong
/// mark would show in `count` and the UTF-16 view (the ASCII fast paths count bytes).
@Suite("Strings made from validated bytes")
struct ValidatedStringTests {
    @Test(
        "decoded strings equal the standard library's, whatever their content and escapes",
        arguments: [
            "", "plain", "é", "你好，世界", "👨‍👩‍👧‍👦", "🇫🇷", #"e\u0301"#, #"tab\there"#, #"\u00e9"#, #"\ud83d\ude00"#, #"\\ and \""#,
        ])
    func sameAsStandardLibrary(_ piece: String) throws {
        var parser = JSONParser()
        for padding in [0, 7, 15, 16, 31, 40] {
            let spelled = String(repeating: "a", count: padding) + piece
            let expected = try #require(JSONSerialization.jsonObject(with: Data("\"\(spelled)\"".utf8), options: .fragmentsAllowed) as? String)
            let decoded = try #require(try parser.parse(Array("\"\(spelled)\"".utf8)).root.string)
            #expect(decoded == expected)
            #expect(decoded.count == expected.count)
            #expect(decoded.utf16.count == expected.utf16.count)
            #expect(Array(decoded.unicodeScalars) == Array(expected.unicodeScalars))
            #expect(decoded.hashValue == expected.hashValue)
            #expect(decoded.utf16.last == expected.utf16.last)
        }
    }
}

/// Strings are checked 32 bytes at a time (SIMD) before falling back to words and bytes: every
/// byte that needs a closer look must be found at every position in and around those blocks.
@Suite("Long strings, every position")
struct LongStringTests {
    let lengths = 0..<100

    @Test("the closing quote is found after any number of plain bytes")
    func closingQuote() throws {
        var parser = JSONParser()
        for length in lengths {
            let text = String(repeating: "a", count: length)
            #expect(try parser.parse(Array("[\"\(text)\",1]".utf8)).root[0]?.string == text)
        }
    }

    @Test("escapes, control characters and non-ASCII planted at every position")
    func planted() throws {
        var parser = JSONParser()
        for length in 1..<80 {
            for position in 0..<length {
                var plain = [UInt8](repeating: UInt8(ascii: "b"), count: length)
                plain[position] = 0x01
                #expect(throws: JSONError(.controlCharacterInString, at: 1 + position, "")) {
                    _ = try parser.parse([UInt8(ascii: "\"")] + plain + [UInt8(ascii: "\"")])
                }
                let before = String(repeating: "b", count: position)
                let after = String(repeating: "b", count: length - position - 1)
                #expect(try parser.parse(Array("\"\(before)\\n\(after)\"".utf8)).root.string == before + "\n" + after)
                #expect(try parser.parse(Array("\"\(before)é\(after)\"".utf8)).root.string == before + "é" + after)
            }
        }
    }

    @Test("the writer escapes a quote, a backslash or a control character at every position")
    func writerEscapes() throws {
        for length in 1..<80 {
            for position in 0..<length {
                for special in ["\"", "\\", "\u{1F}", "\n"] {
                    let text = String(repeating: "c", count: position) + special + String(repeating: "é", count: (length - position) / 2)
                    var bytes: [UInt8] = []
                    try JSON.string(text).write(into: &bytes)
                    #expect(bytes.count == (try JSON.string(text).encodedSize()))
                    var parser = JSONParser()
                    #expect(try parser.parse(bytes).root.string == text)
                    // Only the special character is escaped: the rest goes out raw.
                    #expect(bytes.count == text.utf8.count + 2 + (special == "\u{1F}" ? 5 : 1))
                }
            }
        }
    }
}
