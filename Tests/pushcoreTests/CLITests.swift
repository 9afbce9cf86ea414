import Foundation
import PushCore
import PushTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let connectionString =
    "Endpoint=sb://test-namespace.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey=JHadkDHkdhi74jaHdakhy/rZ6KEdfhasYdahO8JOx/1sZXTUlc="
private let secretKey = "JHadkDHkdhi74jaHdakhy/rZ6KEdfhasYdahO8JOx/1sZXTUlc="

@Suite("pushcore command line")
struct CLITests {
    @Test("--version prints the package's version, which heads the changelog's latest entry")
    func version() async throws {
        let result = try await PushCoreBinary.run(["--version"])
        #expect(result.status == 0 && result.out == PushCoreVersion.current + "\n", "\(result.err)")
        let changelog = try String(contentsOf: Corpus.repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let latest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }
        #expect(latest?.hasPrefix("## \(PushCoreVersion.current)") == true, "\(latest ?? "no entry")")
    }

    @Test("check accepts every valid corpus file in one run")
    func checkValidCorpus() async throws {
        let result = try await PushCoreBinary.run(["check"] + Corpus.valid.map(\.path.path))
        #expect(result.status == 0, "\(result.err)")
        #expect(result.stdout.isEmpty && result.stderr.isEmpty)
    }

    @Test("check and lint refuse every invalid corpus file with its code, byte, line and column")
    func invalidCorpus() async throws {
        let parser = JSONParser()
        var syntax: [(CorpusCase, JSONError)] = []
        var rules: [(CorpusCase, String, Int)] = []
        for corpusCase in Corpus.invalid {
            let expectation = String(decoding: corpusCase.sibling("error"), as: UTF8.self).split(whereSeparator: \.isWhitespace)
            guard expectation.count == 2 else { continue }  // cases with parser options are library-only
            do {
                try parser.validate(corpusCase.bytes)
                rules.append((corpusCase, String(expectation[0]), Int(expectation[1])!))
            } catch {
                #expect(error.code.rawValue == expectation[0] && error.offset == Int(expectation[1]))
                syntax.append((corpusCase, error))
            }
        }
        #expect(syntax.count > 50 && rules.count > 10)

        let checked = try await PushCoreBinary.run(["check"] + syntax.map(\.0.path.path))
        #expect(checked.status == 1)
        let lines = checked.err.split(separator: "\n").map(String.init)
        #expect(lines.count == syntax.count)
        for ((corpusCase, error), line) in zip(syntax, lines) {
            let (row, column) = error.location(in: corpusCase.bytes)
            #expect(line.hasPrefix("\(corpusCase.path.path): error: \(error.code) at byte \(error.offset) (line \(row), column \(column)): "))
        }

        for (corpusCase, code, offset) in rules {
            let linted = try await PushCoreBinary.run(["lint", corpusCase.path.path])
            #expect(linted.status == 1, "\(corpusCase)")
            let firstError = linted.err.split(separator: "\n").first { $0.contains(": error: ") }
            #expect(firstError?.hasPrefix("\(corpusCase.path.path): error: \(code) at byte \(offset) (line ") == true, "\(corpusCase): \(linted.err)")
        }
    }

    @Test("canon prints each valid corpus file's expected canonical form and a newline")
    func canonCorpus() async throws {
        for corpusCase in Corpus.valid {
            let result = try await PushCoreBinary.run(["canon", corpusCase.path.path])
            #expect(result.status == 0)
            #expect(result.stdout == corpusCase.sibling("canon") + [UInt8(ascii: "\n")], "\(corpusCase)")
        }
    }

    @Test("stdin, '-', empty input, missing files and directories")
    func inputs() async throws {
        let valid = try await PushCoreBinary.run(["check"], stdin: Array(#"{"aps":{}}"#.utf8))
        #expect(valid.status == 0)
        let dash = try await PushCoreBinary.run(["canon", "-"], stdin: Array("[1, 2 ,3]".utf8))
        #expect(dash.out == "[1,2,3]\n")
        let empty = try await PushCoreBinary.run(["check"])
        #expect(empty.status == 1 && empty.err.hasPrefix("<stdin>: error: unexpectedEnd at byte 0 (line 1, column 1): "))
        let missing = try await PushCoreBinary.run(["check", "/nonexistent/payload.json"])
        #expect(missing.status == 1 && missing.err.hasPrefix("/nonexistent/payload.json: error: notFound: "))
        let directory = try await PushCoreBinary.run(["lint", "/tmp"])
        #expect(directory.status == 1 && directory.err.hasPrefix("/tmp: error: notRegularFile: "))
        let mixed = try await PushCoreBinary.run(["check", Corpus.valid[0].path.path, "/nonexistent"])
        #expect(mixed.status == 1 && mixed.err.split(separator: "\n").count == 1)
    }

    @Test("Kernel files that report a size of 0 are read to their end (check, canon, digest)")
    func filesWithoutSize() async throws {
        let status = try await PushCoreBinary.run(["check", "/proc/self/status"])
        #expect(status.status == 1 && !status.err.contains("unexpectedEnd"), "\(status.err)")
        #expect(status.err.hasPrefix("/proc/self/status: error: invalidLiteral at byte 0") || status.err.contains("at byte 0"), "\(status.err)")
        let emptyDigest = "2d06800538d394c2  99aa06d3014798d86001c324468d497f"
        let cpuinfo = try await PushCoreBinary.run(["digest", "/proc/cpuinfo"])
        #expect(cpuinfo.status == 0 && cpuinfo.out.hasSuffix("  /proc/cpuinfo\n") && !cpuinfo.out.hasPrefix(emptyDigest), "\(cpuinfo.out)")
        // A kernel file's digest is the digest of what reading it gives (this one does not change).
        let version = try await PushCoreBinary.run(["digest", "/proc/sys/kernel/ostype"])
        let text = try String(contentsOfFile: "/proc/sys/kernel/ostype", encoding: .utf8)
        #expect(version.out.hasPrefix(XXH3.canonicalHex(XXH3.hash64(Array(text.utf8)))), "\(version.out)")
    }

    @Test(
        "Usage errors exit 2; every command has --help with an example",
        arguments: [
            ["check", "--bogus"], ["canon", "a", "b"], ["lint", "--push-type", "fax"], ["lint", "--format", "xml"],
            ["build", "--rich-id", "x"], ["build", "--critical-volume", "2"], ["build", "--custom", "novalue"],
            ["build", "--custom", "aps={}"], ["build", "--badge", "many"], ["chunks", "--size", "0", "x"],
            ["sas", "sign", "--uri", "https://x"], ["sas", "sign", "--uri", "https://x", "--ttl", "5", "--expiry", "5"],
            ["nosuchcommand"], ["digest"], ["token", "mint", "--key-file", "k.p8", "--team-id", "TEAM123456"],
            ["token", "verify", "--key-file", "k.p8", "--key-id", "TESTKEY001", "--team-id", "TEAM123456", "--max-age", "-1", "t"],
        ])
    func usageErrors(arguments: [String]) async throws {
        let result = try await PushCoreBinary.run(arguments, environment: [:])
        #expect(result.status == 2, "\(arguments): \(result.err)")
        #expect(result.stdout.isEmpty && !result.stderr.isEmpty)
    }

    @Test(
        "--help",
        arguments: [
            [], ["check"], ["canon"], ["lint"], ["build"], ["sas"], ["sas", "sign"], ["sas", "verify"], ["sas", "inspect"], ["token"],
            ["token", "mint"],
            ["token", "verify"], ["digest"], ["chunks"],
        ])
    func help(command: [String]) async throws {
        let result = try await PushCoreBinary.run(command + ["--help"])
        #expect(result.status == 0)
        #expect(result.out.contains("Example") && result.out.contains("pushcore"))
    }

    @Test("lint: findings on stderr in the common format, or JSON on stdout; warnings alone exit 0")
    func lint() async throws {
        let duplicate = Array(#"{"aps":{"alert":"hi"},"a":1,"a":2}"#.utf8)
        let text = try await PushCoreBinary.run(["lint"], stdin: duplicate)
        #expect(text.status == 1)
        #expect(text.err == "<stdin>: error: duplicateKey at byte 28 (line 1, column 29): duplicate key \"a\"\n")

        let seedFlow = Array("{\n  \"aps\": {\"content-available\": 1, \"sound\": \"\"},\n  \"richId\": \"1\"\n}".utf8)
        let warned = try await PushCoreBinary.run(["lint", "--push-type", "background", "--format", "json"], stdin: seedFlow)
        #expect(warned.status == 0)
        var parser = JSONParser()
        let report = try parser.parse(warned.stdout.dropLast())
        #expect(report.root["errors"]?.int == 0 && report.root["warnings"]?.int == 1)
        let finding = report.root["diagnostics"]?[0]
        #expect(finding?["code"]?.string == "backgroundPushWithAlert" && finding?["line"]?.int == 2)

        let tooBig = "{\"aps\":{\"alert\":\"" + String(repeating: "x", count: 4100) + "\"}}"
        let voip = try await PushCoreBinary.run(["lint", "--push-type", "voip"], stdin: Array(tooBig.utf8))
        #expect(voip.status == 0)
        let alert = try await PushCoreBinary.run(["lint", "--push-type", "alert"], stdin: Array(tooBig.utf8))
        #expect(alert.status == 1 && alert.err.contains("payloadTooLarge"))
    }

    @Test("build --fcm prints an FCM v1 message; lint --platform fcmv1 checks one; APNs-only flags are refused with --fcm")
    func fcm() async throws {
        let built = try await PushCoreBinary.run([
            "build", "--fcm", "--title", "Game Request", "--body", "Bob wants to play", "--priority", "high", "--ttl", "3600",
            "--channel-id", "games", "--custom", "gameID=12345678", "--custom", "n=5",
        ])
        #expect(built.status == 0, "\(built.err)")
        #expect(
            built.out
                == #"{"message":{"notification":{"title":"Game Request","body":"Bob wants to play"},"data":{"gameID":"12345678","n":"5"},"#
                + #""android":{"priority":"HIGH","ttl":"3600s","notification":{"channel_id":"games"}}}}"# + "\n")
        let linted = try await PushCoreBinary.run(["lint", "--platform", "fcmv1"], stdin: built.stdout)
        #expect(linted.status == 0 && linted.err.isEmpty, "\(linted.err)")

        let rich = try await PushCoreBinary.run(["build", "--fcm", "--rich-id", "4f1c", "--rich-type", "img", "--rich-message", "New"])
        #expect(rich.out == #"{"message":{"data":{"richId":"4f1c","richType":"img","richMessage":"New"}}}"# + "\n")
        let reserved = try await PushCoreBinary.run(["build", "--fcm", "--custom", "from=me"])
        #expect(reserved.status == 1 && reserved.err.hasPrefix("build: error: reservedDataKey: "), "\(reserved.err)")
        for apnsOnly in [["--badge", "3"], ["--content-available"], ["--headers"], ["--push-type", "alert"]] {
            #expect(try await PushCoreBinary.run(["build", "--fcm"] + apnsOnly).status == 2, "\(apnsOnly)")
        }
        #expect(try await PushCoreBinary.run(["build", "--priority", "high"]).status == 2)
        #expect(try await PushCoreBinary.run(["lint", "--platform", "fcmv1", "--push-type", "alert"]).status == 2)

        let bad = #"{"message":{"data":{"n":5},"android":{"ttl":"1h"}}}"#
        let findings = try await PushCoreBinary.run(["lint", "--platform", "fcmv1"], stdin: Array(bad.utf8))
        #expect(findings.status == 1)
        #expect(
            findings.err.split(separator: "\n").map { $0.split(separator: ":").prefix(3).joined(separator: ":") } == [
                "<stdin>: error: dataValueNotString at byte 24 (line 1, column 25)", "<stdin>: error: invalidTTL at byte 44 (line 1, column 45)",
            ], "\(findings.err)")
        // The same bytes as APNs lint sees them: no aps.
        #expect(try await PushCoreBinary.run(["lint"], stdin: Array(bad.utf8)).status == 1)
    }

    @Test("lint --content-state-schema: a Live Activity's content-state and attributes against the app's declared types")
    func lintContentStateSchema() async throws {
        try await withTemporaryFile(Array(#"{"score":"integer","team":"string","note":"string?"}"#.utf8), name: "state.json") { folder, state in
            let attributes = folder + "/attributes.json"
            try writeFile(attributes, Array(#"{"matchID":"string"}"#.utf8))
            let good = #"{"aps":{"event":"update","timestamp":1,"content-state":{"score":2,"team":"Reds"}}}"#
            let clean = try await PushCoreBinary.run(["lint", "--content-state-schema", state], stdin: Array(good.utf8))
            #expect(clean.status == 0 && clean.err.isEmpty, "\(clean.err)")

            let broken = #"{"aps":{"event":"update","timestamp":1,"content-state":{"score":2.5,"mood":"ok"}}}"#
            let refused = try await PushCoreBinary.run(["lint", "--content-state-schema", state], stdin: Array(broken.utf8))
            #expect(refused.status == 1)
            #expect(
                refused.err.split(separator: "\n").map { $0.split(separator: ":").prefix(3).joined(separator: ":") } == [
                    "<stdin>: error: schemaMismatch at byte 64 (line 1, column 65)",
                    "<stdin>: warning: schemaMismatch at byte 68 (line 1, column 69)",
                    "<stdin>: error: schemaMismatch at byte 55 (line 1, column 56)",
                ], "\(refused.err)")
            #expect(refused.err.contains("aps.content-state lacks team, a required string"))

            let start = #"{"aps":{"event":"start","timestamp":1,"attributes-type":"Match","attributes":{},"content-state":{"score":0,"team":"x"}}}"#
            let withAttributes = try await PushCoreBinary.run(
                ["lint", "--content-state-schema", state, "--attributes-schema", attributes, "--format", "json"], stdin: Array(start.utf8))
            #expect(withAttributes.status == 1 && withAttributes.out.contains("aps.attributes lacks matchID"), "\(withAttributes.out)")

            let badSchema = folder + "/bad.json"
            try writeFile(badSchema, Array(#"{"score":"int"}"#.utf8))
            let unusable = try await PushCoreBinary.run(["lint", "--content-state-schema", badSchema], stdin: Array(good.utf8))
            #expect(unusable.status == 1 && unusable.err.contains("error: invalidSchema at byte 9 (line 1, column 10)"), "\(unusable.err)")
            #expect(try await PushCoreBinary.run(["lint", "--attributes-schema", attributes], stdin: Array(good.utf8)).status == 2)
        }
    }

    @Test("build: payloads from flags, custom values, headers, fit")
    func build() async throws {
        let alert = try await PushCoreBinary.run([
            "build", "--title", "Game Request", "--body", "Bob wants to play poker", "--badge", "3",
            "--sound", "bingbong.aiff", "--critical-volume", "0.5", "--thread-id", "t", "--category", "GAME",
            "--mutable-content", "--interruption-level", "time-sensitive",
            "--custom", "gameID=12345678", "--custom", "name=Bob", "--custom", #"quoted="007""#, "--custom", #"o={"a":[1,true,null]}"#,
        ])
        #expect(alert.status == 0, "\(alert.err)")
        #expect(
            alert.out
                == #"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker"},"badge":3,"sound":{"critical":1,"name":"bingbong.aiff","volume":0.5},"thread-id":"t","category":"GAME","mutable-content":1,"interruption-level":"time-sensitive"},"gameID":12345678,"name":"Bob","quoted":"007","o":{"a":[1,true,null]}}"#
                + "\n")

        let rich = try await PushCoreBinary.run([
            "build", "--rich-id", "4f1c", "--rich-type", "img", "--rich-message", "New photo", "--headers", "--topic", "com.example.app",
        ])
        #expect(
            rich.out == "apns-push-type: background\napns-priority: 5\napns-topic: com.example.app\n\n"
                + #"{"aps":{"content-available":1},"richId":"4f1c","richType":"img","richMessage":"New photo"}"# + "\n")
        let secure = try await PushCoreBinary.run(["build", "--secure-id", "s-1"])
        #expect(secure.out == #"{"aps":{"content-available":1},"secureId":"s-1"}"# + "\n")

        let long = String(repeating: "word ", count: 1000)
        let refused = try await PushCoreBinary.run(["build", "--body", long])
        #expect(refused.status == 1 && refused.err.hasPrefix("build: error: payloadTooLarge: ") && refused.stdout.isEmpty)
        let fitted = try await PushCoreBinary.run(["build", "--title", "Hi", "--body", long, "--fit"])
        #expect(fitted.status == 0 && fitted.stdout.count - 1 <= 4096)
        #expect(fitted.err.hasPrefix("build: fit: body shortened by "))
        let voip = try await PushCoreBinary.run(["build", "--body", long, "--push-type", "voip", "--fit"])
        #expect(voip.status == 0 && voip.stdout.count - 1 > 4096 && voip.stdout.count - 1 <= 5120)

        let badCollapse = try await PushCoreBinary.run(["build", "--body", "x", "--headers", "--collapse-id", String(repeating: "c", count: 65)])
        #expect(badCollapse.status == 1 && badCollapse.err.contains("invalidCollapseID"))
        let customTooBig = try await PushCoreBinary.run(["build", "--body", "x", "--fit", "--custom", "blob=" + String(repeating: "b", count: 5000)])
        #expect(customTooBig.status == 1 && customTooBig.err.contains("cannotFit"))
    }

    @Test("token mint prints exactly a provider token that verify accepts; the key is never printed")
    func providerToken() async throws {
        let fixtures = Corpus.repository.appendingPathComponent("Tests/PushAPNsTokensTests/Fixtures")
        let privateKey = fixtures.appendingPathComponent("AuthKey_TESTKEY001.p8").path
        let publicKey = fixtures.appendingPathComponent("AuthKey_TESTKEY001.pub.pem").path
        let ids = ["--key-id", "TESTKEY001", "--team-id", "TEAM123456"]
        let minted = try await PushCoreBinary.run(["token", "mint", "--key-file", privateKey, "--issued-at", "1700000000"] + ids)
        #expect(minted.status == 0 && minted.stderr.isEmpty)
        #expect(minted.out.hasPrefix("eyJhbGciOiJFUzI1NiIsImtpZCI6IlRFU1RLRVkwMDEifQ.eyJpc3MiOiJURUFNMTIzNDU2IiwiaWF0IjoxNzAwMDAwMDAwfQ."))
        #expect(minted.out.split(separator: "\n").count == 1 && minted.out.hasSuffix("\n"))
        let token = String(minted.out.dropLast())

        let valid = try await PushCoreBinary.run(["token", "verify", "--key-file", publicKey, "--now", "1700000060", token] + ids)
        #expect(valid.out == "valid\nkey id: TESTKEY001\nteam id: TEAM123456\nissued at: 1700000000\nsignature: <redacted>\n")
        // From stdin with a CRLF line end, checked with the private key's public half.
        let fromStdin = try await PushCoreBinary.run(
            ["token", "verify", "--key-file", privateKey, "--now", "1700000060", "-"] + ids, stdin: Array((token + "\r\n").utf8))
        #expect(fromStdin.status == 0, "\(fromStdin.err)")
        let expired = try await PushCoreBinary.run(["token", "verify", "--key-file", publicKey, "--now", "1700003601", token] + ids)
        #expect(expired.status == 1 && expired.err.hasPrefix("token: error: expired: "))
        let longer = try await PushCoreBinary.run(
            ["token", "verify", "--key-file", publicKey, "--now", "1700003601", "--max-age", "7200", token] + ids)
        #expect(longer.status == 0)
        let otherTeam = try await PushCoreBinary.run(
            ["token", "verify", "--key-file", publicKey, "--key-id", "TESTKEY001", "--team-id", "TEAM999999", "--now", "1700000000", token])
        #expect(otherTeam.status == 1 && otherTeam.err.hasPrefix("token: error: teamMismatch: "))

        let notAKey = try await PushCoreBinary.run(["token", "mint", "--key-file", publicKey] + ids)
        #expect(notAKey.status == 1 && notAKey.err.contains("invalidKey"))
        let missing = try await PushCoreBinary.run(["token", "mint", "--key-file", "/nonexistent/AuthKey.p8"] + ids)
        #expect(missing.status == 1 && missing.err.hasPrefix("/nonexistent/AuthKey.p8: error: "))
        let badID = try await PushCoreBinary.run(["token", "mint", "--key-file", privateKey, "--key-id", "short", "--team-id", "TEAM123456"])
        #expect(badID.status == 1 && badID.err.contains("invalidKeyID"))
        let keyText = try String(contentsOfFile: privateKey, encoding: .utf8).split(separator: "\n")[1]
        for result in [minted, valid, expired, notAKey, badID] { #expect(!result.out.contains(keyText) && !result.err.contains(keyText)) }
    }

    @Test("sas sign prints exactly the token; verify and inspect; the key is never printed")
    func sas() async throws {
        let uri = "http://test-namespace.servicebus.windows.net/test-hub/messages/"
        let signed = try await PushCoreBinary.run(["sas", "sign", "--connection-string", connectionString, "--uri", uri, "--expiry", "1700000000"])
        #expect(signed.status == 0 && signed.stderr.isEmpty)
        let expected = try SASSigner(ConnectionString(connectionString)).token(for: uri, expiry: 1_700_000_000)
        #expect(signed.out == expected + "\n")
        // The known answer from issue 3: this key, resource and expiry sign to bvi0cTe2….
        #expect(signed.out.contains("sig=bvi0cTe2O7vwE2Ot6wmG7SzuBw3h0jE95351tJvpqXE%3D"))

        let environment = ["PUSHCORE_CONNECTION_STRING": connectionString]
        let fromEnvironment = try await PushCoreBinary.run(["sas", "sign", "--uri", uri, "--expiry", "1700000000"], environment: environment)
        #expect(fromEnvironment.out == signed.out)
        let withTTL = try await PushCoreBinary.run(["sas", "sign", "--uri", uri, "--ttl", "60"], environment: environment)
        #expect(withTTL.status == 0 && withTTL.out.hasPrefix("SharedAccessSignature sr="))

        let token = String(signed.out.dropLast())
        let valid = try await PushCoreBinary.run(["sas", "verify", "--uri", uri, "--now", "1699999999", token], environment: environment)
        #expect(valid.status == 0 && valid.out.hasPrefix("valid\n"))
        let fromStdin = try await PushCoreBinary.run(
            ["sas", "verify", "--uri", uri, "--now", "1699999999", "-"], stdin: Array(signed.stdout), environment: environment)
        #expect(fromStdin.status == 0)
        let expired = try await PushCoreBinary.run(["sas", "verify", "--uri", uri, "--now", "1700000100", token], environment: environment)
        #expect(expired.status == 1 && expired.err.hasPrefix("token: error: expired: "))
        let skewed = try await PushCoreBinary.run(
            ["sas", "verify", "--uri", uri, "--now", "1700000100", "--skew", "300", token], environment: environment)
        #expect(skewed.status == 0)
        let tampered = token.replacingOccurrences(of: "se=1700000000", with: "se=1700000001")
        let refused = try await PushCoreBinary.run(["sas", "verify", "--uri", uri, "--now", "1699999999", tampered], environment: environment)
        #expect(refused.status == 1 && refused.err.hasPrefix("token: error: badSignature: "))
        let otherHub = try await PushCoreBinary.run(
            ["sas", "verify", "--uri", "http://test-namespace.servicebus.windows.net/other/", "--now", "1699999999", token], environment: environment)
        #expect(otherHub.status == 1 && otherHub.err.hasPrefix("token: error: resourceMismatch: "))

        let inspected = try await PushCoreBinary.run(["sas", "inspect", token])
        #expect(inspected.out == "resource: \(uri)\nkey name: DefaultFullSharedAccessSignature\nexpiry: 1700000000\nsignature: <redacted>\n")
        // Decoded control characters are escaped: a token cannot print a line of its own.
        let forged = token.replacingOccurrences(of: "skn=DefaultFullSharedAccessSignature", with: "skn=rule%0Avalid%0D%1B%5Bm")
        let forgedInspection = try await PushCoreBinary.run(["sas", "inspect", forged])
        #expect(forgedInspection.status == 0 && forgedInspection.out.split(separator: "\n").count == 4)
        #expect(forgedInspection.out.contains(#"key name: rule\u{a}valid\u{d}\u{1b}[m"#), "\(forgedInspection.out)")
        let malformed = try await PushCoreBinary.run(["sas", "inspect", "SharedAccessSignature nonsense"])
        #expect(malformed.status == 1 && malformed.err.hasPrefix("token: error: malformed: "))

        let badConnection = try await PushCoreBinary.run([
            "sas", "sign", "--uri", uri, "--connection-string", "Endpoint=sb://x/;SharedAccessKey=" + secretKey,
        ])
        #expect(badConnection.status == 1 && badConnection.err.contains("missingPart"))
        for result in [signed, fromEnvironment, valid, expired, refused, inspected, badConnection] {
            #expect(!result.out.contains(secretKey) && !result.err.contains(secretKey))
        }
    }

    @Test("digest and chunks agree with xxHash's canonical forms")
    func digestAndChunks() async throws {
        try await withTemporaryFile(Array("abc".utf8)) { folder, path in
            try writeFile(folder + "/empty", [])
            let result = try await PushCoreBinary.run(["digest", path, folder + "/empty"])
            #expect(result.status == 0)
            // `xxhsum -H3` and `xxh128sum` print these for "abc" and for an empty file.
            #expect(
                result.out == "78af5f94892f3950  06b05ab6733a618578af5f94892f3950  \(path)\n"
                    + "2d06800538d394c2  99aa06d3014798d86001c324468d497f  \(folder)/empty\n")
            let missing = try await PushCoreBinary.run(["digest", path, folder + "/missing"])
            #expect(missing.status == 1 && missing.out.split(separator: "\n").count == 1)
            #expect(missing.err.hasPrefix("\(folder)/missing: error: notFound: "))
        }
        let bytes = patternBytes(150_000)
        try await withTemporaryFile(bytes) { _, path in
            let result = try await PushCoreBinary.run(["chunks", "--size", "65536", path])
            let expected = stride(from: 0, to: bytes.count, by: 65_536).map { offset in
                let slice = bytes[offset..<min(offset + 65_536, bytes.count)]
                return "\(offset) \(slice.count) \(XXH3.canonicalHex(XXH3.hash64(slice)))\n"
            }.joined()
            #expect(result.status == 0 && result.out == expected)
        }
    }

    @Test("A 100 MiB input: check refuses it as too large and digest streams it, both in bounded memory")
    func hugeInput() async throws {
        try await withTemporaryFile([]) { _, path in
            // Sparse: 100 MiB of zeros without writing them.
            #expect(truncate(path, 100 << 20) == 0)
            let checked = try await PushCoreBinary.run(["check", path])
            #expect(checked.status == 1)
            #expect(checked.err.hasPrefix("\(path): error: inputTooLarge at byte \(16 << 20) "))
            let digested = try await PushCoreBinary.run(["digest", path])
            #expect(digested.status == 0)
            var zeros = XXH3Hasher64()
            let block = [UInt8](repeating: 0, count: 1 << 20)
            for _ in 0..<100 { zeros.update(block) }
            #expect(digested.out.hasPrefix(XXH3.canonicalHex(zeros.digest()) + "  "))
            // Well under the 100 MiB that reading the file whole would take. (Sanitizers map shadow
            // memory, so the bound only means something without them.)
            #if os(Linux)
            for result in [checked, digested] {
                #expect(result.peakResidentKiB > 0, "no reading of the child's memory")
                #expect(runningUnderSanitizer || result.peakResidentKiB < 64 << 10, "peak RSS \(result.peakResidentKiB) KiB")
            }
            #endif
        }
    }
}
