import PushJSON
import Testing

/// Whitespace between tokens, at every place it may go: each of its four bytes, in runs shorter
/// and longer than the eight bytes the scanner skips at a time, reads as the compact text does;
/// any other control byte after such a run is refused where it stands.
@Suite("Whitespace between tokens, every position")
struct WhitespaceTests {
    static let compact = Array(
        #"{"aps":{"alert":{"title":"Sunset","body":"at the pier"},"badge":3,"sound":"default"},"ids":[1,-2.5e3,true,false,null,[],{}],"k":"é\u00e9"}"#
            .utf8)

    /// The offsets where whitespace may go: outside strings, and not inside a number or a literal.
    static let boundaries: [Int] = {
        var result: [Int] = []
        var inString = false
        var escaped = false
        func isWordByte(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || [UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "E")].contains(byte)
        }
        for index in 0...compact.count {
            let atBoundary = !inString && !(index > 0 && index < compact.count && isWordByte(compact[index - 1]) && isWordByte(compact[index]))
            if atBoundary { result.append(index) }
            guard index < compact.count else { break }
            let byte = compact[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            }
        }
        return result
    }()

    static let runs: [[UInt8]] = {
        var runs: [[UInt8]] = []
        for byte in [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")] {
            for length in [1, 2, 7, 8, 9, 15, 16, 17, 40] { runs.append(Array(repeating: byte, count: length)) }
        }
        runs.append(Array("\r\n        ".utf8))
        runs.append(Array("\n\t\t\t\t\t\t\t\t\t".utf8))
        return runs
    }()

    static func inserting(_ run: [UInt8], at offset: Int) -> [UInt8] {
        Array(compact[..<offset]) + run + Array(compact[offset...])
    }

    @Test("each whitespace byte, in runs of 1 to 40 and mixed, at every boundary: the compact value")
    func readsAsCompact() throws {
        var parser = JSONParser()
        let expected = try parser.parse(Self.compact).canonicalBytes()
        #expect(Self.boundaries.count > 40)
        for offset in Self.boundaries {
            for run in Self.runs {
                let text = Self.inserting(run, at: offset)
                let canonical = try parser.parse(text).canonicalBytes()
                #expect(canonical == expected, "\(run.count) × \(run[0]) at \(offset)")
                try parser.validate(text)
            }
        }
    }

    @Test("any other control byte, alone or after a run of whitespace, is refused at its offset")
    func controlBytesRefused() throws {
        var parser = JSONParser()
        let controls = (UInt8(0)..<0x20).filter { ![UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains($0) } + [0x7F]
        for offset in Self.boundaries {
            for (control, lead) in zip(controls, [0, 1, 7, 8, 9, 15, 16, 17].cycled(to: controls.count)) {
                let text = Self.inserting(Array(repeating: UInt8(ascii: " "), count: lead) + [control], at: offset)
                let at = offset + lead
                // After the value a stray byte is trailing data; anywhere else, unexpected.
                let code: JSONError.Code = offset == Self.compact.count ? .trailingData : .unexpectedByte
                let parseError = #expect(throws: JSONError.self) { try parser.parse(text) }
                #expect(parseError?.offset == at && parseError?.code == code, "\(control) at \(at): \(String(describing: parseError))")
                let validateError = #expect(throws: JSONError.self) { try parser.validate(text) }
                #expect(validateError?.offset == at && validateError?.code == code, "\(control) at \(at)")
            }
        }
    }
}

extension Array {
    /// This array's elements repeated until there are `count`.
    fileprivate func cycled(to count: Int) -> [Element] { (0..<count).map { self[$0 % self.count] } }
}
