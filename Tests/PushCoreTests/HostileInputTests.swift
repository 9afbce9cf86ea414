import PushCore
import PushTestSupport
import Testing

/// Inputs built to hurt: each ends with a clear typed error (or a correct result) in bounded time
/// and memory — no crash, no hang, no recursion, no quadratic work.
@Suite("Hostile inputs")
struct HostileInputTests {
    private func error(parsing bytes: [UInt8], options: JSONParser.Options = .init()) -> JSONError? {
        var parser = JSONParser(options: options)
        do {
            _ = try parser.parse(bytes)
            return nil
        } catch {
            #expect(throws: error) { try parser.validate(bytes) }
            return error
        }
    }

    @Test("100,000 nested arrays or objects stop at the depth limit, also at the largest limit")
    func deepNesting() throws {
        let arrays = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(error(parsing: arrays) == JSONError(.depthLimitExceeded, at: 512, ""))
        var deepest = JSONParser.Options()
        deepest.maximumDepth = 1024
        #expect(error(parsing: arrays, options: deepest) == JSONError(.depthLimitExceeded, at: 1024, ""))
        let objects = Array(String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(error(parsing: objects)?.code == .depthLimitExceeded)
        // Exactly at the limit is fine, and lint walks it without recursing into trouble.
        let atLimit = Array((String(repeating: "[", count: 511) + String(repeating: "]", count: 511)).utf8)
        #expect(error(parsing: Array("{\"a\":".utf8) + atLimit + [UInt8(ascii: "}")]) == nil)
        _ = try APNsLinter.lint(Array("{\"aps\":{},\"a\":".utf8) + atLimit + [UInt8(ascii: "}")])
    }

    @Test("A 100 MiB string: refused at the input limit, and scanned when the limit allows it")
    func hugeString() throws {
        var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 100 << 20)
        bytes[0] = UInt8(ascii: "\"")
        bytes[bytes.count - 1] = UInt8(ascii: "\"")
        #expect(error(parsing: bytes) == JSONError(.inputTooLarge, at: 16 << 20, ""))
        var roomy = JSONParser.Options()
        roomy.maximumInputSize = 128 << 20
        var parser = JSONParser(options: roomy)
        let length = try parser.parse(bytes) { root in root.rawStringBytes?.count }
        #expect(length == (100 << 20) - 2)
        bytes[50 << 20] = 0x01  // an unescaped control character deep inside
        #expect(error(parsing: bytes, options: roomy) == JSONError(.controlCharacterInString, at: 50 << 20, ""))
    }

    @Test("A million-member object parses; a million duplicate keys are caught without quadratic work")
    func millionMembers() throws {
        var text = "{"
        text.reserveCapacity(16 << 20)
        for index in 0..<1_000_000 { text += (index == 0 ? "" : ",") + "\"k\(index)\":\(index)" }
        text += "}"
        // About 17 MB: over the default 16 MiB input limit, so raise it.
        var parser = JSONParser(options: JSONParser.Options(maximumInputSize: 32 << 20))
        let count = try parser.parse(Array(text.utf8)) { root in root.count }
        #expect(count == 1_000_000)
        let unique = try APNsLinter.lint(Array(text.utf8), parser: &parser)
        #expect(!unique.contains { $0.code == .duplicateKey })

        let duplicated = "{" + String(repeating: "\"same\":1,", count: 999_999) + "\"same\":1}"
        let findings = try APNsLinter.lint(Array(duplicated.utf8), parser: &parser)
        #expect(findings.first { $0.code == .duplicateKey }?.offset == 10)
        var late = "{"
        for index in 0..<999_999 { late += "\"k\(index)\":0," }
        late += "\"k5\":0}"
        #expect(try APNsLinter.lint(Array(late.utf8), parser: &parser).contains { $0.code == .duplicateKey })
    }

    @Test("Numbers with 100,000 digits parse exactly, read as the nearest Double, and are refused where an Int is needed")
    func longNumbers() throws {
        let big = "1" + String(repeating: "0", count: 100_000)
        let small = "0." + String(repeating: "0", count: 99_999) + "1"
        let precise = "1." + String(repeating: "0", count: 100_000) + "1"
        var parser = JSONParser()
        for (text, expected) in [(big, Double.infinity), (small, 0.0), (precise, 1.0), ("-" + big, -Double.infinity)] {
            let document = try parser.parse(Array(text.utf8))
            #expect(document.root.numberSpelling == text)
            #expect(document.root.double == expected)
            #expect(document.root.int == nil || text == precise)
            #expect(document.canonicalBytes() == Array(text.utf8))
        }
        let payload = Array("{\"aps\":{\"badge\":\(big)}}".utf8)
        #expect(throws: APNsPayloadError.self) { try APNsPayload(decoding: payload, parser: &parser) }
        #expect(try APNsLinter.lint(payload).contains { $0.severity == .error })
        #expect(error(parsing: Array((big + "e").utf8))?.code == .unexpectedEnd)
        #expect(error(parsing: Array(("[" + big + "e]").utf8)) == JSONError(.invalidNumber, at: 100_003, ""))
        #expect(error(parsing: Array(("0" + big).utf8)) == JSONError(.invalidNumber, at: 1, ""))
    }

    @Test(
        "Every class of invalid UTF-8 is refused at its first byte, in values and in keys",
        arguments: [
            ([0x80], "lone continuation byte"),
            ([0xBF], "lone continuation byte"),
            ([0xC0, 0x80], "overlong two-byte NUL"),
            ([0xC1, 0xBF], "overlong two-byte"),
            ([0xE0, 0x80, 0x80], "overlong three-byte"),
            ([0xE0, 0x9F, 0xBF], "overlong three-byte"),
            ([0xF0, 0x80, 0x80, 0x80], "overlong four-byte"),
            ([0xF0, 0x8F, 0xBF, 0xBF], "overlong four-byte"),
            ([0xED, 0xA0, 0x80], "encoded high surrogate"),
            ([0xED, 0xBF, 0xBF], "encoded low surrogate"),
            ([0xF4, 0x90, 0x80, 0x80], "above U+10FFFF"),
            ([0xF5, 0x80, 0x80, 0x80], "F5 lead byte"),
            ([0xFF], "FF byte"),
            ([0xFE], "FE byte"),
            ([0xE2, 0x82], "truncated three-byte"),
            ([0xF0, 0x9F, 0x98], "truncated four-byte"),
            ([0xC3], "truncated two-byte"),
            ([0xE2, 0x41, 0x82], "continuation missing"),
        ] as [([UInt8], String)])
    func invalidUTF8(sequence: [UInt8], what: String) {
        let value = Array("{\"k\":\"ok ".utf8) + sequence + Array(" ok\"}".utf8)
        #expect(error(parsing: value) == JSONError(.invalidUTF8, at: 9, ""), "\(what) in a value")
        let key = Array("{\"ab".utf8) + sequence + Array("\":1}".utf8)
        #expect(error(parsing: key) == JSONError(.invalidUTF8, at: 4, ""), "\(what) in a key")
        // At the very end of the input, too (no read past the end).
        let end = Array("\"".utf8) + sequence
        #expect(error(parsing: end)?.code == .invalidUTF8 || error(parsing: end)?.code == .unexpectedEnd, "\(what) at the end")
    }

    @Test("A 1 MiB SAS token is refused as malformed before any work")
    func hugeToken() {
        let verifier = SASVerifier(keys: [("rule", "key")])
        let token = "SharedAccessSignature sr=" + String(repeating: "a", count: 1 << 20) + "&sig=x&se=1&skn=rule"
        #expect(throws: SASError.self) { try verifier.verify(token, uri: "https://x", now: 0) }
        do {
            _ = try verifier.verify(token, uri: "https://x", now: 0)
        } catch {
            #expect(error.code == .malformed)
        }
        #expect(throws: SASError.self) { try SASVerifier.inspect(token) }
    }

    @Test("Connection strings with repeated keys are refused, whatever their case; a 1 MiB one too")
    func repeatedConnectionKeys() {
        for text in [
            "Endpoint=sb://a/;SharedAccessKeyName=r;SharedAccessKey=k;SharedAccessKey=k2",
            "Endpoint=sb://a/;SharedAccessKeyName=r;sharedaccesskeyname=r2;SharedAccessKey=k",
            "Endpoint=sb://a/;ENDPOINT=sb://b/;SharedAccessKeyName=r;SharedAccessKey=k",
            "Endpoint=sb://a/;SharedAccessKeyName=r;SharedAccessKey=k;EntityPath=h;EntityPath=h",
        ] {
            do {
                _ = try ConnectionString(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.code == .duplicatePart, "\(text)")
                #expect(!error.message.contains("k2"))
            }
        }
        let huge =
            "Endpoint=sb://a/;SharedAccessKeyName=r;SharedAccessKey=" + String(repeating: "k", count: 1 << 20)
            + ";" + String(repeating: "x=y;", count: 100_000)
        // A long key is legal (its bytes are the HMAC key); unknown parts are ignored, as Azure's SDKs do.
        let parsed = try? ConnectionString(huge)
        #expect(parsed?.keyName == "r" && parsed?.key.utf8.count == 1 << 20)
    }
}
