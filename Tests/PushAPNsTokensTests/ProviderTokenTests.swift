import Crypto
import Foundation
import PushAPNsTokens
import Synchronization
import Testing

/// The fixtures: a P-256 key made with `openssl genpkey` for these tests alone (not a secret), its
/// public half, and a token for it that Python's `cryptography` made
/// (`scripts/provider-token.py mint AuthKey_TESTKEY001.p8 TESTKEY001 TEAM123456 1700000000`).
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static func text(_ name: String) -> String {
        (try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }
    static let privateKeyPEM = text("AuthKey_TESTKEY001.p8")
    static let publicKeyPEM = text("AuthKey_TESTKEY001.pub.pem")
    static let pythonToken = text("python-token-iat-1700000000.txt").trimmingCharacters(in: .whitespacesAndNewlines)
    static let keyID = "TESTKEY001"
    static let teamID = "TEAM123456"
    static let issuedAt: Int64 = 1_700_000_000

    static func signingKey() throws -> APNsSigningKey {
        try APNsSigningKey(pemRepresentation: privateKeyPEM, keyID: keyID, teamID: teamID)
    }

    static func verifier(maximumAge: Int64 = 3600) throws -> APNsTokenVerifier {
        APNsTokenVerifier(keys: [try APNsVerificationKey(pemRepresentation: publicKeyPEM, keyID: keyID, teamID: teamID)], maximumAge: maximumAge)
    }
}

@Suite("APNs provider tokens")
struct ProviderTokenTests {
    /// Header and claims byte for byte as Python's token has them; signatures are randomised, so
    /// each side's is checked by verifying it (the other direction runs in scripts/cross-check-provider-tokens).
    @Test("ours matches Python's header and claims, and Python's verifies with ours")
    func knownAnswers() throws {
        let token = try Fixtures.signingKey().token(issuedAt: Fixtures.issuedAt)
        let ours = token.split(separator: ".")
        let theirs = Fixtures.pythonToken.split(separator: ".")
        #expect(theirs.count == 3)
        #expect(ours.count == 3)
        #expect(ours[0] == theirs[0])
        #expect(ours[1] == theirs[1])
        #expect(ours[0] == "eyJhbGciOiJFUzI1NiIsImtpZCI6IlRFU1RLRVkwMDEifQ")
        #expect(ours[1] == "eyJpc3MiOiJURUFNMTIzNDU2IiwiaWF0IjoxNzAwMDAwMDAwfQ")
        #expect(ours[2].utf8.count == 86)

        let verifier = try Fixtures.verifier()
        let claims = try verifier.verify(Fixtures.pythonToken, now: Fixtures.issuedAt + 10)
        #expect(claims == APNsProviderTokenClaims(keyID: "TESTKEY001", teamID: "TEAM123456", issuedAt: 1_700_000_000))
        #expect(try verifier.verify(token, now: Fixtures.issuedAt) == claims)
    }

    /// swift-crypto's own ECDSA check over the same bytes, independent of our verifier.
    @Test("the signature is raw r ‖ s over SHA-256 of the first two parts")
    func signatureForm() throws {
        let key = try Fixtures.signingKey()
        for issuedAt: Int64 in [0, 9, 1_700_000_000, Int64.max] {
            let token = try key.token(issuedAt: issuedAt)
            let parts = token.split(separator: ".")
            let signed = Data((parts[0] + "." + parts[1]).utf8)
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(base64URLDecoded(String(parts[2]))))
            #expect(key.publicKey.isValidSignature(signature, for: signed))
            let claims = try #require(base64URLDecoded(String(parts[1])))
            #expect(String(decoding: claims, as: UTF8.self) == "{\"iss\":\"TEAM123456\",\"iat\":\(issuedAt)}")
            #expect(!token.contains("="))
        }
    }

    @Test("refusals, in the order they are checked")
    func refusals() throws {
        let verifier = try Fixtures.verifier()
        let token = Fixtures.pythonToken
        let now = Fixtures.issuedAt
        let parts = token.split(separator: ".").map(String.init)
        func code(_ token: String, now: Int64 = now) -> APNsTokenError.Code? {
            do {
                _ = try verifier.verify(token, now: now)
                return nil
            } catch {
                return error.code
            }
        }
        func encoded(_ json: String) -> String { base64URLEncoded(Array(json.utf8)) }

        #expect(code("") == .malformed)
        #expect(code(parts[0] + "." + parts[1]) == .malformed)
        #expect(code(token + ".") == .malformed)
        #expect(code(String(repeating: "a", count: 2000)) == .malformed)
        #expect(code(parts[0] + "=." + parts[1] + "." + parts[2]) == .malformed)
        #expect(code(encoded("[1]") + "." + parts[1] + "." + parts[2]) == .malformed)
        #expect(code(encoded("{\"alg\":\"ES256\",\"kid\":\"TESTKEY001\",\"kid\":\"TESTKEY001\"}") + "." + parts[1] + "." + parts[2]) == .malformed)
        #expect(code(parts[0] + "." + encoded("{\"iss\":\"TEAM123456\",\"iat\":1.7e9}") + "." + parts[2]) == .malformed)
        #expect(code(parts[0] + "." + encoded("{\"iss\":\"TEAM123456\",\"iat\":-1}") + "." + parts[2]) == .malformed)
        #expect(code(parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(2))) == .malformed)
        #expect(code(encoded("{\"alg\":\"HS256\",\"kid\":\"TESTKEY001\"}") + "." + parts[1] + "." + parts[2]) == .unsupportedAlgorithm)
        #expect(code(encoded("{\"alg\":\"none\",\"kid\":\"TESTKEY001\"}") + "." + parts[1] + ".") == .malformed)
        #expect(code(encoded("{\"alg\":\"ES256\",\"kid\":\"OTHERKEY01\"}") + "." + parts[1] + "." + parts[2]) == .unknownKeyID)
        #expect(code(parts[0] + "." + encoded("{\"iss\":\"OTHERTEAM1\",\"iat\":1700000000}") + "." + parts[2]) == .teamMismatch)
        // Same claims, spelled differently (a space): the signature covers the bytes as sent.
        #expect(code(parts[0] + "." + encoded("{\"iss\":\"TEAM123456\", \"iat\":1700000000}") + "." + parts[2]) == .badSignature)
        #expect(code(parts[0] + "." + encoded("{\"iss\":\"TEAM123456\",\"iat\":1700000001}") + "." + parts[2]) == .badSignature)
        var flipped = Array(parts[2].utf8)
        flipped[10] = flipped[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(code(parts[0] + "." + parts[1] + "." + String(decoding: flipped, as: UTF8.self)) == .badSignature)
        // Another key's signature over the same bytes.
        let stranger = try APNsSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "TESTKEY001", teamID: "TEAM123456")
        #expect(code(try stranger.token(issuedAt: now)) == .badSignature)

        #expect(code(token, now: now + 3600) == nil)
        #expect(code(token, now: now + 3601) == .expired)
        #expect(code(token, now: now - 60) == nil)
        #expect(code(token, now: now - 61) == .issuedInFuture)
        #expect(code(token, now: Int64.min) == .issuedInFuture)
        #expect(code(token, now: Int64.max) == .expired)
    }

    @Test("keys and ids are checked, and never shown")
    func keysAndIDs() throws {
        func code(_ body: () throws -> Void) -> APNsTokenError.Code? {
            do {
                try body()
                return nil
            } catch {
                return (error as? APNsTokenError)?.code
            }
        }
        #expect(code { _ = try APNsSigningKey(pemRepresentation: "not a key", keyID: "TESTKEY001", teamID: "TEAM123456") } == .invalidKey)
        #expect(code { _ = try APNsSigningKey(pemRepresentation: Fixtures.publicKeyPEM, keyID: "TESTKEY001", teamID: "TEAM123456") } == .invalidKey)
        #expect(code { _ = try APNsSigningKey(pemRepresentation: Fixtures.privateKeyPEM, keyID: "TESTKEY01", teamID: "TEAM123456") } == .invalidKeyID)
        #expect(
            code { _ = try APNsSigningKey(pemRepresentation: Fixtures.privateKeyPEM, keyID: "testkey001", teamID: "TEAM123456") } == .invalidKeyID)
        #expect(
            code { _ = try APNsSigningKey(pemRepresentation: Fixtures.privateKeyPEM, keyID: "TESTKEY\"01", teamID: "TEAM123456") } == .invalidKeyID)
        #expect(
            code { _ = try APNsSigningKey(pemRepresentation: Fixtures.privateKeyPEM, keyID: "TESTKEY001", teamID: "TEAM12345É") } == .invalidTeamID)
        #expect(code { _ = try APNsVerificationKey(pemRepresentation: "", keyID: "TESTKEY001", teamID: "TEAM123456") } == .invalidKey)
        #expect(code { _ = try Fixtures.signingKey().token(issuedAt: -1) } == .invalidIssuedAt)
        // A verification key from the private PEM works as well as from the public one.
        let fromPrivate = try APNsVerificationKey(pemRepresentation: Fixtures.privateKeyPEM, keyID: "TESTKEY001", teamID: "TEAM123456")
        #expect(fromPrivate.publicKey.rawRepresentation == (try P256.Signing.PublicKey(pemRepresentation: Fixtures.publicKeyPEM)).rawRepresentation)

        let key = try Fixtures.signingKey()
        let secret = try P256.Signing.PrivateKey(pemRepresentation: Fixtures.privateKeyPEM).rawRepresentation.base64EncodedString()
        let shown = [String(describing: key), String(reflecting: key), "\(key)", String(describing: Mirror(reflecting: key).children.map(\.value))]
        for text in shown {
            #expect(!text.contains(secret))
            #expect(!text.contains("PRIVATE"))
            #expect(text.contains("TESTKEY001") || text.contains("TEAM123456"))
        }
        // A refusal's message quotes neither the token nor its signature.
        let parts = Fixtures.pythonToken.split(separator: ".")
        let verifier = try Fixtures.verifier()
        do throws(APNsTokenError) {
            _ = try verifier.verify(Fixtures.pythonToken, now: Fixtures.issuedAt + 7200)
            Issue.record("an old token verified")
        } catch {
            #expect(!error.message.contains(parts[2]))
            #expect(!error.description.contains(parts[1]))
        }
    }
}

@Suite("APNs provider token cache")
struct ProviderTokenCacheTests {
    final class ManualClock: Sendable {
        let seconds = Atomic<Int64>(1_700_000_000)
        var clock: APNsTokenClock { APNsTokenClock { [self] in seconds.load(ordering: .relaxed) } }
        func advance(_ delta: Int64) { seconds.add(delta, ordering: .relaxed) }
    }

    @Test("one token for 50 minutes, then a new one")
    func refresh() throws {
        let time = ManualClock()
        let cache = APNsTokenCache(key: try Fixtures.signingKey(), clock: time.clock)
        let first = try cache.token()
        time.advance(50 * 60 - 1)
        #expect(try cache.token() == first)
        time.advance(1)
        let second = try cache.token()
        #expect(second != first)
        #expect(cache.mintCount == 2)
        let claims = try Fixtures.verifier().verify(second, now: time.seconds.load(ordering: .relaxed))
        #expect(claims.issuedAt == 1_700_000_000 + 50 * 60)
        // A clock that steps back keeps the token.
        time.advance(-3600)
        #expect(try cache.token() == second)
        #expect(cache.mintCount == 2)
    }

    @Test("many callers at once: one mint")
    func concurrentCallers() async throws {
        let cache = APNsTokenCache(key: try Fixtures.signingKey())
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<200 { group.addTask { try cache.token() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(cache.mintCount == 1)
    }

    @Test("a rejected token is replaced once, and not within 20 minutes of the last mint")
    func replaceRejected() async throws {
        let time = ManualClock()
        let cache = APNsTokenCache(key: try Fixtures.signingKey(), clock: time.clock)
        let first = try cache.token()
        // Too young to replace: APNs would answer TooManyProviderTokenUpdates.
        time.advance(20 * 60 - 1)
        #expect(try cache.replace(rejected: first) == nil)
        #expect(cache.mintCount == 1)
        time.advance(1)
        // 200 sends rejected with the same token: one new token, the same for all.
        let replacements = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<200 { group.addTask { try cache.replace(rejected: first) } }
            return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(replacements.count == 1)
        let second = try #require(replacements.first ?? nil)
        #expect(second != first)
        #expect(cache.mintCount == 2)
        #expect(try cache.token() == second)
    }

    @Test("the refresh age is never shorter than the minimum mint interval")
    func refreshFloor() throws {
        let cache = APNsTokenCache(key: try Fixtures.signingKey(), refreshAge: 60, minimumMintInterval: 20 * 60)
        #expect(cache.refreshAge == 20 * 60)
    }
}

func base64URLEncoded(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

func base64URLDecoded(_ text: String) -> [UInt8]? {
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
    return Data(base64Encoded: standard).map { Array($0) }
}
