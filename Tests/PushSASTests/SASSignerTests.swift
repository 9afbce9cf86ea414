import Crypto
import PushSAS
import PushTestSupport
import Synchronization
import Testing

@Suite("SAS signing")
struct SASSignerTests {
    /// Known answers given in the SAS issue. The first is the vector a public Go client for
    /// Notification Hubs uses in its tests; all three were checked with Python's hmac module.
    @Test("known answers")
    func knownAnswers() throws {
        let first = SASSigner(keyName: "testAccessKeyName", key: "testAccessKey")
        #expect(
            try first.token(for: "https://testhub-ns.servicebus.windows.net", expiry: 123)
                == "SharedAccessSignature sr=https%3A%2F%2Ftesthub-ns.servicebus.windows.net&sig=cy3Y21BlsAw8slr5TnmSM3pilYBC8T7k3oNqOUKvE2g%3D&se=123&skn=testAccessKeyName"
        )

        let second = SASSigner(keyName: "DefaultFullSharedAccessSignature", key: "JHadkDHkdhi74jaHdakhy/rZ6KEdfhasYdahO8JOx/1sZXTUlc=")
        let token = try second.token(for: "http://test-namespace.servicebus.windows.net/test-hub/messages/", expiry: 1_700_000_000)
        #expect(token.contains("&sig=bvi0cTe2O7vwE2Ot6wmG7SzuBw3h0jE95351tJvpqXE%3D&"))
        #expect(token.hasPrefix("SharedAccessSignature sr=http%3A%2F%2Ftest-namespace.servicebus.windows.net%2Ftest-hub%2Fmessages%2F&"))
        #expect(token.hasSuffix("&se=1700000000&skn=DefaultFullSharedAccessSignature"))

        let keyed = KeyedHMAC(keyBytes: Array("mysecretkey".utf8))
        #expect(base64(keyed, "mydata") == "u0JTQtSbhCo8r7+Yr/RNiJOs7/VwDireHAXovvLBbXo=")
    }

    /// RFC 4231, section 4: HMAC-SHA-256 test cases 1–7 (case 5 compares the first 128 bits).
    @Test(
        "RFC 4231 through one pre-keyed state, reused",
        arguments: [
            (
                [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
            ),
            (
                Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
            ),
            (
                [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
            ),
            (
                Array(1...25), [UInt8](repeating: 0xcd, count: 50),
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
            ),
            ([UInt8](repeating: 0x0c, count: 20), Array("Test With Truncation".utf8), "a3b6167473100ee06e0c796c2955552b"),
            (
                [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
            ),
            (
                [UInt8](repeating: 0xaa, count: 131),
                Array(
                    "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                        .utf8),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
            ),
        ] as [([UInt8], [UInt8], String)])
    func rfc4231(_ key: [UInt8], _ data: [UInt8], _ expected: String) {
        let keyed = KeyedHMAC(keyBytes: key)
        // Three codes from the same keyed state: no state may leak from one to the next.
        for _ in 0..<3 {
            let hex = data.withUnsafeBytes { keyed.authenticationCode(for: $0) }.map { byte in
                String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
            }.joined()
            #expect(hex.hasPrefix(expected))
        }
    }

    /// Our HMAC construction over swift-crypto's SHA-256 against swift-crypto's own `HMAC`, for
    /// keys either side of the 64-byte block (longer ones are hashed first) and messages of
    /// zero to several blocks, each key's state reused for several messages.
    @Test("equals swift-crypto's HMAC<SHA256> for random keys and messages (seeded)")
    func matchesSwiftCrypto() {
        var random = SeededGenerator(seed: 4231)
        for keyLength in [0, 1, 31, 32, 55, 63, 64, 65, 100, 128, 200] {
            for _ in 0..<20 {
                let key = (0..<keyLength).map { _ in UInt8.random(in: .min ... .max, using: &random) }
                let keyed = KeyedHMAC(keyBytes: key)
                for _ in 0..<5 {
                    let message = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: .min ... .max, using: &random) }
                    let ours = Array(message.withUnsafeBytes { keyed.authenticationCode(for: $0) })
                    let theirs = Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
                    #expect(ours == theirs, "key of \(keyLength) bytes, message of \(message.count) bytes")
                }
            }
        }
    }

    func base64(_ keyed: KeyedHMAC, _ text: String) -> String {
        base64Bytes(Array(Array(text.utf8).withUnsafeBytes { keyed.authenticationCode(for: $0) }))
    }

    /// A plain base64 encoder of the tests' own, independent of the library's.
    func base64Bytes(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var output = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                output.append(position <= chunk.count ? alphabet[value >> (18 - 6 * position) & 63] : "=")
            }
            index += 3
        }
        return output
    }

    @Test("resources are lowercased and every byte outside A-Z a-z 0-9 - . _ ~ is encoded")
    func encoding() throws {
        let signer = SASSigner(keyName: "rule name/ä", key: "k")
        let token = try signer.token(for: "HTTPS://My-NS.ServiceBus.Windows.NET/Hub_1/~x?a=b&c", expiry: 0)
        #expect(token.hasPrefix("SharedAccessSignature sr=https%3A%2F%2Fmy-ns.servicebus.windows.net%2Fhub_1%2F~x%3Fa%3Db%26c&sig="))
        #expect(token.hasSuffix("&se=0&skn=rule%20name%2F%C3%A4"))
        // Non-ASCII is lowercased as Unicode text.
        let unicode = try signer.token(for: "https://ns/ÄB", expiry: 5)
        #expect(unicode.hasPrefix("SharedAccessSignature sr=https%3A%2F%2Fns%2F%C3%A4b&"))
        // Non-ASCII found by the word-at-a-time check, not only in its byte-by-byte tail.
        let early = try signer.token(for: "HTTPS://ÄÖ.example/ÜBER", expiry: 5)
        #expect(early.hasPrefix("SharedAccessSignature sr=https%3A%2F%2F%C3%A4%C3%B6.example%2F%C3%BCber&"))
    }

    @Test("expiries: negative, overflowing and from a clock")
    func expiries() throws {
        let signer = SASSigner(keyName: "k", key: "v")
        #expect(throws: SASError.self) { try signer.token(for: "https://x", expiry: -1) }
        #expect(throws: SASError.self) { try signer.token(for: "https://x", ttl: -5, clock: .fixed(100)) }
        #expect(throws: SASError.self) { try signer.token(for: "https://x", ttl: 10, clock: .fixed(.max)) }
        #expect(try signer.token(for: "https://x", ttl: 60, clock: .fixed(1000)) == signer.token(for: "https://x", expiry: 1060))
    }

    @Test("the key appears in no description, mirror or error")
    func secretsStaySecret() throws {
        let key = "SuperSecretKeyValue+/="
        let connection = try ConnectionString("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Full;SharedAccessKey=\(key)")
        let signer = SASSigner(connection)
        var texts = [connection.description, connection.debugDescription, signer.description, signer.debugDescription]
        texts.append(String(describing: Mirror(reflecting: connection).children.map { "\($0.label ?? ""): \($0.value)" }))
        texts.append(String(describing: Mirror(reflecting: signer).children.map { "\($0.label ?? ""): \($0.value)" }))
        texts.append("\(connection)")
        texts.append(String(reflecting: connection))
        do {
            _ = try ConnectionString("Endpoint=sb://ns/;SharedAccessKeyName=Full;SharedAccessKey=\(key);SharedAccessKey=\(key)")
        } catch {
            texts.append(error.description)
        }
        do {
            _ = try ConnectionString("\(key);Endpoint=sb://ns/")
        } catch {
            texts.append(error.description)
        }
        for text in texts { #expect(!text.contains("SuperSecret"), "\(text)") }
    }
}

@Suite("Connection strings")
struct ConnectionStringTests {
    @Test("parts in any order and case, whitespace, trailing ';', '=' in values, EntityPath")
    func parsing() throws {
        let connection = try ConnectionString(
            "  sharedaccesskey = abc=def== ; ENDPOINT=sb://my-ns.servicebus.windows.net/ ;SharedAccessKeyName=DefaultFullSharedAccessSignature;EntityPath=hub;"
        )
        #expect(connection.endpoint == "https://my-ns.servicebus.windows.net/")
        #expect(connection.host == "my-ns.servicebus.windows.net")
        #expect(connection.keyName == "DefaultFullSharedAccessSignature")
        #expect(connection.entityPath == "hub")
        // The key is kept as given: tokens from it match a signer given the same key.
        let fromConnection = try SASSigner(connection).token(for: "https://x", expiry: 1)
        #expect(fromConnection == (try SASSigner(keyName: "DefaultFullSharedAccessSignature", key: "abc=def==").token(for: "https://x", expiry: 1)))
        #expect(try ConnectionString("Endpoint=https://ns.example/;SharedAccessKeyName=a;SharedAccessKey=b").endpoint == "https://ns.example/")
    }

    @Test(
        "typos never put the key, or any of it, into the error: it names the part and the byte where it starts",
        arguments: [
            ("Endpoint=sb://ns.servicebus.windows.net/SharedAccessKey=Zm9vYmFyS2V5WFlaMTIz;SharedAccessKeyName=Full", "invalidEndpoint", 9),
            (
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=FullSharedAccessKey=Zm9vYmFyS2V5WFlaMTIz;SharedAccessKey=x",
                "malformedPart", 80
            ),
            ("Endpoint=sb://ns/;SharedAccessKeyName=Full SharedAccessKey=Zm9vYmFyS2V5WFlaMTIz;SharedAccessKey=x", "malformedPart", 42),
            ("Endpoint=sb://ns/;SharedAccessKeyName=Full;SharedAccessKey=Zm9vYmFy;S2V5WFlaMTIz", "malformedPart", 68),
            (
                "Endpoint=sb://ns/;SharedAccessKeyName=Full;SharedAccessKey=Zm9vYmFyS2V5WFlaMTIz;SharedAccessKey=Zm9vYmFyS2V5WFlaMTIz",
                "duplicatePart", 80
            ),
            ("Endpoint=sb://ns/;SharedAccessKeyName=Full;EntityPath=hubSharedAccessKey=Zm9vYmFyS2V5WFlaMTIz;SharedAccessKey=x", "malformedPart", 72),
            ("Zm9vYmFyS2V5WFlaMTIz;Endpoint=sb://ns/", "malformedPart", 0),
        ] as [(String, String, Int)])
    func typosHideTheKey(_ text: String, _ code: String, _ offset: Int) {
        guard let error = refusal(of: text) else { return }
        #expect(error.code.rawValue == code)
        #expect(error.message.contains("at byte \(offset)"), "\(error.message)")
        // No run of four characters of the key (or of the part that swallowed it) reaches the message.
        let key = Array("Zm9vYmFyS2V5WFlaMTIz")
        for start in 0...(key.count - 4) {
            #expect(!error.description.contains(String(key[start..<start + 4])), "\(error.description)")
        }
    }

    @Test(
        "errors name the part",
        arguments: [
            ("SharedAccessKeyName=a;SharedAccessKey=b", "missingPart", "Endpoint"),
            ("Endpoint=sb://ns/;SharedAccessKey=b", "missingPart", "SharedAccessKeyName"),
            ("Endpoint=sb://ns/;SharedAccessKeyName=a", "missingPart", "SharedAccessKey"),
            ("Endpoint=sb://ns/;SharedAccessKeyName=;SharedAccessKey=b", "emptyPart", "SharedAccessKeyName"),
            ("Endpoint=sb://ns/;SharedAccessKeyName=a;SharedAccessKey=  ", "emptyPart", "SharedAccessKey"),
            ("Endpoint=sb://ns/;Endpoint=sb://other/;SharedAccessKeyName=a;SharedAccessKey=b", "duplicatePart", "Endpoint"),
            ("Endpoint=ftp://ns/;SharedAccessKeyName=a;SharedAccessKey=b", "invalidEndpoint", "Endpoint"),
            ("Endpoint=sb://;SharedAccessKeyName=a;SharedAccessKey=b", "invalidEndpoint", "Endpoint"),
            ("Endpoint=sb://ns/path;SharedAccessKeyName=a;SharedAccessKey=b", "invalidEndpoint", "Endpoint"),
            ("Endpoint;SharedAccessKeyName=a;SharedAccessKey=b", "malformedPart", "Endpoint"),
            ("", "missingPart", "Endpoint"),
        ] as [(String, String, String)])
    func errors(_ text: String, _ code: String, _ part: String) {
        guard let error = refusal(of: text) else { return }
        #expect(error.code.rawValue == code)
        #expect(error.message.contains(part))
    }

    /// What `text` is refused with; an issue is recorded when it is accepted.
    func refusal(of text: String) -> SASError? {
        do {
            _ = try ConnectionString(text)
            Issue.record("accepted \(text)")
            return nil
        } catch {
            return error
        }
    }
}
