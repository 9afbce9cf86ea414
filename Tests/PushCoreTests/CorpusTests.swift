import PushCore
import PushTestSupport
import Testing

@Suite("Corpus")
struct CorpusTests {
    @Test("the corpus has at least 150 cases, each with its expected result")
    func corpusIsComplete() {
        #expect(Corpus.valid.count + Corpus.invalid.count >= 150)
        #expect(Corpus.valid.count > 50 && Corpus.invalid.count > 50)
    }

    @Test("valid: parses, and re-encodes to the expected canonical bytes", arguments: Corpus.valid)
    func validCase(_ corpusCase: CorpusCase) throws {
        var parser = JSONParser()
        let document = try parser.parse(corpusCase.bytes)
        let canonical = document.canonicalBytes()
        #expect(String(decoding: canonical, as: UTF8.self) == String(decoding: corpusCase.sibling("canon"), as: UTF8.self))
        #expect(canonical == corpusCase.sibling("canon"))

        // Canonical re-encoding is idempotent.
        #expect(try parser.parse(canonical).canonicalBytes() == canonical)
        // Validation alone agrees with the parser.
        try parser.validate(corpusCase.bytes)
    }

    @Test("valid APNs payloads: lint finds no error, and they round-trip through the model", arguments: Corpus.valid)
    func validPayload(_ corpusCase: CorpusCase) throws {
        var parser = JSONParser()
        let document = try parser.parse(corpusCase.bytes)
        guard document.root.kind == .object, document.root["aps"] != nil else { return }
        try expectLintCleanRoundTrip(document, parser: &parser)
    }

    // The bench skips what a decoder refuses; these must all reach it, or its rich-payload rows
    // would quietly measure fewer payloads.
    @Test("the bench's rich payloads are all there")
    func richPayloadsArePresent() {
        #expect(Corpus.richPayloads.count == 24)
    }

    @Test("the bench's rich payloads: APNs payloads within 4096 bytes that lint clean and round-trip", arguments: Corpus.richPayloads)
    func richPayload(_ corpusCase: CorpusCase) throws {
        #expect(corpusCase.bytes.count <= APNsLimits.payloadSize)
        var parser = JSONParser()
        let document = try parser.parse(corpusCase.bytes)
        try expectLintCleanRoundTrip(document, parser: &parser)
    }

    func expectLintCleanRoundTrip(_ document: JSONDocument, parser: inout JSONParser) throws {
        let errors = APNsLinter.lint(document).filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors)")

        let payload = try APNsPayload(decoding: document)
        var encoded: [UInt8] = []
        try payload.encode(into: &encoded, limit: .max)
        #expect(try payload.encodedSize() == encoded.count)
        let decodedAgain = try APNsPayload(decoding: parser.parse(encoded))
        #expect(decodedAgain == payload)
    }

    @Test("invalid: refused with the expected code at the expected byte", arguments: Corpus.invalid)
    func invalidCase(_ corpusCase: CorpusCase) throws {
        let expectation = String(decoding: corpusCase.sibling("error"), as: UTF8.self)
            .split(whereSeparator: \.isWhitespace).map(String.init)
        let (code, offset) = (expectation[0], Int(expectation[1])!)
        var options = JSONParser.Options()
        for option in expectation.dropFirst(2) {
            let parts = option.split(separator: "=")
            if parts[0] == "maximum-input-size" { options.maximumInputSize = Int(parts[1])! }
        }
        var parser = JSONParser(options: options)
        do {
            let document = try parser.parse(corpusCase.bytes)
            let firstError = APNsLinter.lint(document).first { $0.severity == .error }
            #expect(firstError?.code.rawValue == code)
            #expect(firstError?.offset == offset)
        } catch {
            #expect(error.code.rawValue == code)
            #expect(error.offset == offset)
            // Validation without a tape reports the same error.
            #expect(throws: error) { try parser.validate(corpusCase.bytes) }
        }
    }
}
