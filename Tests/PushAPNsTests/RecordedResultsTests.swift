import Foundation
import PushAPNs
import PushJSON
import PushTestSupport
import Testing

/// Lint and decoding of every payload in `Corpus/` and the bench's corpora, against what they
/// were recorded to give in `Records/lint-and-decode.txt`: diagnostics (code, path, offset and
/// message), per push type, and the decoded model by the hash of its canonical encoding. A change
/// to the reader shows here as the lines it changes. `PUSHCORE_RECORD=1` rewrites the record
/// after a deliberate change.
@Suite("Recorded lint and decoding results")
struct RecordedResultsTests {
    static let record = Corpus.repository.appendingPathComponent("Tests/PushAPNsTests/Records/lint-and-decode.txt")

    static let corpora: [(folder: String, cases: [CorpusCase])] = [
        ("Corpus/valid", Corpus.valid), ("Corpus/invalid", Corpus.invalid),
        ("Benchmarks/rich-payloads", Corpus.richPayloads), ("Benchmarks/international-payloads", Corpus.internationalPayloads),
        ("Benchmarks/escaped-payloads", Corpus.escapedPayloads),
    ]

    static func line(_ diagnostic: APNsDiagnostic) -> String {
        let error = diagnostic.error
        return "\(diagnostic.severity) \(error.code) path=\(error.path) offset=\(error.offset.map(String.init) ?? "-") "
            + "size=\(error.size.map(String.init) ?? "-") limit=\(error.limit.map(String.init) ?? "-"): \(error.message)"
    }

    /// FNV-1a: a short stable name for the canonical bytes.
    static func fingerprint(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }

    static func report(_ bytes: [UInt8], parser: inout JSONParser) -> [String] {
        var lines: [String] = []
        let plain: [APNsDiagnostic]
        do {
            plain = try APNsLinter.lint(bytes, parser: &parser)
        } catch {
            return ["  not JSON: \(error.code) at \(error.offset)"]
        }
        lines += plain.map { "  lint: " + line($0) }
        for pushType in [APNsPushType.alert, .background, .liveactivity, .voip] {
            let typed = (try? APNsLinter.lint(bytes, pushType: pushType, parser: &parser)) ?? []
            if typed != plain { lines += typed.map { "  lint \(pushType): " + line($0) } }
        }
        do {
            let payload = try APNsPayload(decoding: bytes, parser: &parser)
            lines.append("  decode: \((try? payload.encoded(limit: .max)).map(fingerprint) ?? "not encodable")")
        } catch let error as APNsPayloadError {
            lines.append("  decode: " + line(APNsDiagnostic(.error, error)))
        } catch {
            lines.append("  decode: \(error)")
        }
        return lines
    }

    static func report() -> String {
        var parser = JSONParser()
        var lines: [String] = []
        for (folder, cases) in corpora {
            for file in cases {
                lines.append("\(folder)/\(file.path.lastPathComponent)")
                lines += report(file.bytes, parser: &parser)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("every corpus payload lints and decodes as recorded")
    func matchesRecord() throws {
        let report = Self.report()
        if ProcessInfo.processInfo.environment["PUSHCORE_RECORD"] == "1" {
            try report.write(to: Self.record, atomically: true, encoding: .utf8)
        }
        let recorded = try String(contentsOf: Self.record, encoding: .utf8)
        let expected = recorded.split(separator: "\n", omittingEmptySubsequences: false)
        let actual = report.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(actual.count == expected.count, "lines: \(actual.count), recorded: \(expected.count)")
        var differences = 0
        for (index, (got, wanted)) in zip(actual, expected).enumerated() where got != wanted {
            differences += 1
            if differences <= 10 { Issue.record("line \(index + 1): got \"\(got)\", recorded \"\(wanted)\"") }
        }
        #expect(differences == 0)
    }

    @Test("every escaped payload parses and decodes to what its unescaped original does")
    func escapedMatchInternational() throws {
        let originals = Dictionary(uniqueKeysWithValues: Corpus.internationalPayloads.map { (String($0.name.prefix(3)), $0) })
        #expect(Corpus.escapedPayloads.count == originals.count && originals.count >= 300)
        var parser = JSONParser()
        for escaped in Corpus.escapedPayloads {
            let original = try #require(originals[String(escaped.name.prefix(3))])
            let escapedValue = try JSON(try parser.parse(escaped.bytes).root)
            let originalValue = try JSON(try parser.parse(original.bytes).root)
            #expect(escapedValue == originalValue, "\(escaped.name)")
            let decoded = try APNsPayload(decoding: escaped.bytes, parser: &parser).encoded(limit: .max)
            #expect(decoded == (try APNsPayload(decoding: original.bytes, parser: &parser).encoded(limit: .max)), "\(escaped.name)")
        }
    }
}
