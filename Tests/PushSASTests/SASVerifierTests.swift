import Foundation
import PushSAS
import PushTestSupport
import Synchronization
import Testing

@Suite("SAS verifying")
struct SASVerifierTests {
    let connectionText = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Listen;SharedAccessKey=c2VjcmV0S2V5PQ=="
    let hub = "https://ns.servicebus.windows.net/hub"

    func code(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as SASError {
            return error.code.rawValue
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test("a verifier built separately from the same connection string accepts what a signer mints (seeded, 2,000 cases)")
    func mintAndVerify() throws {
        var random = SeededGenerator(seed: 0x5A5)
        let characters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/+=?&%ä€ ")
        for _ in 0..<2_000 {
            let key = String((0..<Int.random(in: 1...64, using: &random)).map { _ in characters.randomElement(using: &random)! })
                .replacingOccurrences(of: ";", with: "")
            let keyName = "rule" + String(Int.random(in: 0...999, using: &random))
            let text = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=\(keyName);SharedAccessKey=\(key.trimmingCharacters())"
            let signer = SASSigner(try ConnectionString(text))
            let verifier = SASVerifier(try ConnectionString(text))
            let path = String((0..<Int.random(in: 0...30, using: &random)).map { _ in characters.randomElement(using: &random)! })
            let resource = "https://ns.servicebus.windows.net/" + path
            let expiry = Int64.random(in: 0...4_000_000_000, using: &random)
            let token = try signer.token(for: resource, expiry: expiry)
            let info = try verifier.verify(token, uri: resource + "/messages/?api-version=2020-06", now: expiry)
            #expect(info.expiry == expiry && info.keyName == keyName && info.resource == resource.lowercased())
        }
    }

    @Test("each refusal has its code")
    func refusals() throws {
        let connection = try ConnectionString(connectionText)
        let signer = SASSigner(connection)
        let verifier = SASVerifier(connection, clockSkew: 30)
        let token = try signer.token(for: hub, expiry: 1000)
        #expect(code { _ = try verifier.verify(token, uri: hub + "/messages", now: 1000) } == nil)
        #expect(code { _ = try verifier.verify(token, uri: hub, now: 1030) } == nil)
        #expect(code { _ = try verifier.verify(token, uri: hub, now: 1031) } == "expired")
        #expect(code { _ = try verifier.verify(token, uri: "https://ns.servicebus.windows.net/other", now: 0) } == "resourceMismatch")
        #expect(code { _ = try verifier.verify(token, uri: "HTTPS://NS.servicebus.windows.net/HUB/x", now: 0) } == nil)
        let other = SASSigner(keyName: "Listen", key: "another key")
        #expect(code { _ = try verifier.verify(try other.token(for: hub, expiry: 1000), uri: hub, now: 0) } == "badSignature")
        let stranger = SASSigner(keyName: "Manage", key: "c2VjcmV0S2V5PQ==")
        #expect(code { _ = try verifier.verify(try stranger.token(for: hub, expiry: 1000), uri: hub, now: 0) } == "unknownKeyName")
        // A later expiry under the same signature is a forgery.
        #expect(code { _ = try verifier.verify(token.replacingOccurrences(of: "se=1000", with: "se=9000"), uri: hub, now: 0) } == "badSignature")
    }

    @Test("the resource covers whole path segments: a token for hub h is no token for hub h2")
    func resourceBoundary() throws {
        let connection = try ConnectionString(connectionText)
        let verifier = SASVerifier(connection)
        let token = try SASSigner(connection).token(for: "https://ns.servicebus.windows.net/h", expiry: 1000)
        for uri in [
            "https://ns.servicebus.windows.net/h", "https://ns.servicebus.windows.net/h/messages",
            "https://ns.servicebus.windows.net/h?api-version=2020-06",
        ] {
            #expect(code { _ = try verifier.verify(token, uri: uri, now: 0) } == nil, "\(uri)")
        }
        for uri in [
            "https://ns.servicebus.windows.net/h2", "https://ns.servicebus.windows.net/h2/messages", "https://ns.servicebus.windows.net/h-other",
            "https://ns.servicebus.windows.net/",
        ] {
            #expect(code { _ = try verifier.verify(token, uri: uri, now: 0) } == "resourceMismatch", "\(uri)")
        }
        // A namespace-wide token (ending in /) covers every hub in it.
        let namespace = try SASSigner(connection).token(for: "https://ns.servicebus.windows.net/", expiry: 1000)
        #expect(code { _ = try verifier.verify(namespace, uri: "https://ns.servicebus.windows.net/h2/messages", now: 0) } == nil)
        let bare = try SASSigner(connection).token(for: "https://ns.servicebus.windows.net", expiry: 1000)
        #expect(code { _ = try verifier.verify(bare, uri: "https://ns.servicebus.windows.net/h2", now: 0) } == nil)
        #expect(code { _ = try verifier.verify(bare, uri: "https://ns.servicebus.windows.net.evil.example/h2", now: 0) } == "resourceMismatch")
    }

    @Test("fields in any order, lowercase hex escapes, and every malformed shape")
    func parsing() throws {
        let connection = try ConnectionString(connectionText)
        let token = try SASSigner(connection).token(for: hub, expiry: 77)
        let fields = token.dropFirst("SharedAccessSignature ".count).split(separator: "&").map(String.init)
        let verifier = SASVerifier(connection)
        let reordered = "SharedAccessSignature " + [fields[3], fields[1], fields[0], fields[2]].joined(separator: "&")
        #expect(code { _ = try verifier.verify(reordered, uri: hub, now: 0) } == nil)
        // An SDK that writes lowercase hex signs its own spelling of sr; the signature covers sr
        // exactly as sent, and sig may use lowercase escapes too.
        let lowercaseSR = "https%3a%2f%2fns.servicebus.windows.net%2fhub"
        let mac = Array(
            Array("\(lowercaseSR)\n77".utf8).withUnsafeBytes { KeyedHMAC(keyBytes: Array("c2VjcmV0S2V5PQ==".utf8)).authenticationCode(for: $0) })
        let signature = SASSignerTests().base64Bytes(mac).replacingOccurrences(of: "=", with: "%3d").replacingOccurrences(of: "+", with: "%2b")
            .replacingOccurrences(of: "/", with: "%2f")
        let sdkToken = "SharedAccessSignature sr=\(lowercaseSR)&sig=\(signature)&se=77&skn=Listen"
        #expect(code { _ = try verifier.verify(sdkToken, uri: hub, now: 0) } == nil)
        // Changing sr's spelling without re-signing is refused.
        let respelled = token.replacingOccurrences(of: "%2F", with: "%2f")
        #expect(code { _ = try verifier.verify(respelled, uri: hub, now: 0) } == "badSignature")

        for malformed in [
            "", "Bearer abc", "SharedAccessSignature ", "SharedAccessSignature sr=a&sig=b&se=1",
            token + "&skn=Listen", token + "&extra=1", token.replacingOccurrences(of: "se=77", with: "se=-77"),
            token.replacingOccurrences(of: "se=77", with: "se=99999999999999999999"),
            token.replacingOccurrences(of: "%3D&se", with: "%3&se"), token.replacingOccurrences(of: "sig=", with: "sig=!"),
            token.replacingOccurrences(of: "&se=", with: "&se"), "SharedAccessSignature " + String(repeating: "a", count: 1 << 20),
        ] {
            #expect(code { _ = try verifier.verify(malformed, uri: hub, now: 0) } == "malformed", "\(malformed.prefix(80))")
        }
    }

    @Test("inspect shows the fields and redacts the signature")
    func inspect() throws {
        let token = try SASSigner(keyName: "Listen", key: "k").token(for: hub, expiry: 1_700_000_000)
        let info = try SASVerifier.inspect(token)
        #expect(info.resource == hub && info.keyName == "Listen" && info.expiry == 1_700_000_000)
        #expect(info.encodedResource == "https%3A%2F%2Fns.servicebus.windows.net%2Fhub")
        let signature = String(token.split(separator: "&")[1].dropFirst(4))
        #expect(!info.description.contains(signature) && info.description.contains("<redacted>"))
    }
}

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    let seconds = Atomic<Int64>(0)
    var clock: SASClock { SASClock { self.seconds.load(ordering: .relaxed) } }
}

@Suite("SAS token cache")
struct SASTokenCacheTests {
    @Test("reused until expiry minus the margin, then minted again (an absolute expiry)")
    func expiry() throws {
        let time = ManualClock()
        time.seconds.store(1000, ordering: .relaxed)
        let cache = SASTokenCache(signer: SASSigner(keyName: "k", key: "v"), ttl: 1200, refreshMargin: 120, clock: time.clock)
        let first = try cache.token(for: "https://ns/hub")
        #expect(first.contains("&se=2200&"))
        time.seconds.store(2079, ordering: .relaxed)
        #expect(try cache.token(for: "https://ns/hub") == first)
        time.seconds.store(2080, ordering: .relaxed)
        let second = try cache.token(for: "https://ns/hub")
        #expect(second.contains("&se=3280&"))
        #expect(try cache.token(for: "https://ns/other") != second)
    }

    @Test("many tasks at once get valid tokens")
    func concurrency() async throws {
        let connection = try ConnectionString("Endpoint=sb://ns/;SharedAccessKeyName=k;SharedAccessKey=v")
        let cache = SASTokenCache(signer: SASSigner(connection), capacity: 4)
        let verifier = SASVerifier(connection)
        let resources = (0..<8).map { "https://ns/hub\($0)" }
        let tokens = try await withThrowingTaskGroup(of: (String, String).self) { group in
            for task in 0..<64 {
                group.addTask {
                    let resource = resources[task % resources.count]
                    var last = ""
                    for _ in 0..<200 { last = try cache.token(for: resource) }
                    return (resource, last)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (resource, token) in tokens {
            #expect(throws: Never.self) { try verifier.verify(token, uri: resource, now: SASClock.system.now()) }
        }
    }
}

extension String {
    /// Connection-string values are trimmed, so random keys are generated without outer spaces.
    func trimmingCharacters() -> String {
        var text = Substring(self)
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text.isEmpty ? "k" : String(text)
    }
}
