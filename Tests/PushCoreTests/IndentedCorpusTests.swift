import PushCore
import PushTestSupport
import Testing

/// `Benchmarks/indented-payloads` holds the rich and international payloads re-written with
/// indentation, other separators and line ends: each file must read as its original does, so that
/// the bench compares the same payloads with and without whitespace between tokens.
@Suite("Indented payloads: the same values as their originals")
struct IndentedCorpusTests {
    /// `NNN-rich-NAME-STYLE.json` comes from `Benchmarks/rich-payloads/NAME.json`, and `-international-` alike.
    static func original(of indented: CorpusCase) throws -> CorpusCase {
        let parts = indented.name.split(separator: "-", maxSplits: 2)
        let corpus = try #require(parts.count == 3 ? parts[1] : nil)
        let styleDash = try #require(parts[2].lastIndex(of: "-"))
        let stem = parts[2][..<styleDash]
        let originals = corpus == "rich" ? Corpus.richPayloads : Corpus.internationalPayloads
        return try #require(originals.first { $0.name == stem }, "no original for \(indented.name)")
    }

    @Test("every rich and international payload is there, in each of the six styles in turn")
    func complete() throws {
        let indented = Corpus.indentedPayloads
        #expect(indented.count == Corpus.richPayloads.count + Corpus.internationalPayloads.count)
        for style in ["python", "php", "dotnet", "jackson", "tabs", "hand"] {
            #expect(indented.count { $0.name.hasSuffix("-" + style) } >= 50, "\(style)")
        }
        // Each whitespace byte and both separators occur.
        let all = indented.flatMap(\.bytes)
        for byte in [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n")] { #expect(all.contains(byte)) }
    }

    @Test("the same value, the same decoded model and the same findings as the original", arguments: Corpus.indentedPayloads)
    func sameAsOriginal(_ indented: CorpusCase) throws {
        let original = try Self.original(of: indented)
        var parser = JSONParser()
        let bytes = indented.bytes
        #expect(bytes.contains(UInt8(ascii: "\n")))
        #expect(try parser.parse(bytes).canonicalBytes() == parser.parse(original.bytes).canonicalBytes())
        try parser.validate(bytes)

        func decoded(_ bytes: [UInt8]) -> String {
            do {
                return "\(try APNsPayload(decoding: bytes, parser: &parser).encoded(limit: .max))"
            } catch let error as APNsPayloadError {
                return "\(error.code) \(error.path)"
            } catch {
                return "\(error)"
            }
        }
        #expect(decoded(bytes) == decoded(original.bytes))
        // Offsets move with the whitespace; what is found, and where in the payload, does not.
        func findings(_ bytes: [UInt8]) throws -> [String] {
            try APNsLinter.lint(bytes, parser: &parser).map { "\($0.severity) \($0.error.code) \($0.error.path)" }
        }
        #expect(try findings(bytes) == findings(original.bytes))
    }
}
