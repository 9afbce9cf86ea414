import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import NIOCore
import NIOHTTP1
import PushBackend
import PushCore
import PushTestSupport
import Synchronization
import Testing
import _CryptoExtras

/// Identity tokens (`Authorization: Bearer <JWT>` from an OpenID Connect provider): checked against
/// the provider's JWK Set, its issuer and audience, `exp` and `nbf`; RS256 and ES256 only.
@Suite("push-backend identity tokens")
struct IdentityTokenTests {
    static let issuer = "https://id.example.com/"
    static let audience = "com.example.pushapp"

    struct Claims: JWTPayload {
        var iss: String? = IdentityTokenTests.issuer
        var aud: String? = IdentityTokenTests.audience
        var sub: String?
        var exp: Int64? = Int64(Date().timeIntervalSince1970) + 600
        var nbf: Int64?
        var email: String?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A provider: its signing keys and the JWK Set it publishes (which a test may change).
    final class Provider: Sendable {
        let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
        let ec = P256.Signing.PrivateKey()
        let signers = JWTKeyCollection()
        let published = Mutex<[[String: String]]>([])
        let fetches = Atomic<Int>(0)
        let cacheControl = Mutex<String?>("max-age=3600")

        init() async throws {
            await signers.add(rsa: try Insecure.RSA.PrivateKey(backing: rsa), digestAlgorithm: .sha256, kid: "rsa1")
            await signers.add(ecdsa: try ES256PrivateKey(backing: ec), kid: "ec1")
            publish([rsaJWK(rsa, kid: "rsa1"), ecJWK(ec, kid: "ec1")])
        }

        func publish(_ keys: [[String: String]]) { published.withLock { $0 = keys } }

        func sign(_ claims: Claims, kid: String) async throws -> String {
            try await signers.sign(claims, kid: JWKIdentifier(string: kid))
        }

        /// Serves the set at `/jwks` and runs `body` with its URL.
        func serve(_ body: @Sendable (String) async throws -> Void) async throws {
            let router = Router()
            router.get("/jwks") { _, _ -> Response in
                self.fetches.add(1, ordering: .relaxed)
                let body = try JSONSerialization.data(withJSONObject: ["keys": self.published.withLock { $0 }])
                var headers: HTTPFields = [.contentType: "application/json"]
                if let cacheControl = self.cacheControl.withLock({ $0 }) { headers[.cacheControl] = cacheControl }
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
            }
            try await Application(router: router).test(.live) { client in
                try await body("http://127.0.0.1:\(client.port!)/jwks")
            }
        }
    }

    static func base64URL(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func rsaJWK(_ key: _RSA.Signing.PrivateKey, kid: String) -> [String: String] {
        let primitives = try! key.publicKey.getKeyPrimitives()
        return ["kty": "RSA", "kid": kid, "use": "sig", "n": base64URL(primitives.modulus), "e": base64URL(primitives.publicExponent)]
    }

    static func ecJWK(_ key: P256.Signing.PrivateKey, kid: String) -> [String: String] {
        let raw = key.publicKey.rawRepresentation
        return ["kty": "EC", "kid": kid, "crv": "P-256", "x": base64URL(raw.prefix(32)), "y": base64URL(raw.suffix(32))]
    }

    func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer " + token)] }

    func withProvider(
        _ provider: Provider, configure: @escaping @Sendable (inout BackendConfiguration) -> Void = { _ in },
        _ body: @Sendable (Backend) async throws -> Void
    ) async throws {
        try await provider.serve { url in
            try await withBackend(configure: { configuration in
                configuration.identityTokens = IdentityTokenSettings(keys: .url(url), issuer: Self.issuer, audience: Self.audience)
                configure(&configuration)
            }) { backend in try await body(backend) }
        }
    }

    @Test("An RS256 or ES256 token acts as its subject, made a user on first sight; the set is fetched once")
    func tokensActAsUsers() async throws {
        let provider = try await Provider()
        try await withProvider(provider) { backend in
            let dana = try await provider.sign(Claims(sub: "dana"), kid: "rsa1")
            let list = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(dana))
            #expect(list.status == 200, "\(list.text)")
            let sent = try await backend.call(
                .POST, "/api/notifications", as: nil, headers: bearer(dana), json: #"{"to": "dana", "kind": "rich", "message": "hello"}"#)
            #expect(sent.status == 201, "\(sent.text)")
            let id = try #require(try sent.json().root["id"]?.string)
            let image = try await backend.call(.GET, "/api/notifications/\(id)", as: nil, headers: bearer(dana))
            #expect(image.status == 200 && image.header("Content-Type") == "image/png")
            // A user made by a token has the user role: they notify only themselves.
            let other = try await backend.call(
                .POST, "/api/notifications", as: nil, headers: bearer(dana), json: #"{"to": "alice", "kind": "rich", "message": "x"}"#)
            #expect(other.status == 403)
            // …and no password: Basic never lets them in.
            #expect(try await backend.call(.GET, "/api/notifications", as: "dana", password: "!").status == 401)

            let erin = try await provider.sign(Claims(sub: "erin"), kid: "ec1")
            let erinList = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(erin))
            #expect(erinList.status == 200, "\(erinList.text)")
            // An existing user signs in by token as themselves, with their role.
            let alice = try await provider.sign(Claims(sub: "alice"), kid: "ec1")
            let aliceList = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(alice))
            #expect(aliceList.status == 200)
            #expect(provider.fetches.load(ordering: .relaxed) == 1)
        }
    }

    @Test("Tokens with a bad signature, another issuer or audience, past exp, before nbf, alg none or HS256 are refused with 401")
    func refusals() async throws {
        let provider = try await Provider()
        try await withProvider(provider, configure: { $0.logins = LoginLimits(perAddress: RateLimit(burst: 100, perSecond: 1)) }) { backend in
            let impostor = JWTKeyCollection()
            await impostor.add(
                rsa: try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048)), digestAlgorithm: .sha256, kid: "rsa1")
            let now = Int64(Date().timeIntervalSince1970)
            let header = Self.base64URL(Data(#"{"alg":"HS256","typ":"JWT","kid":"rsa1"}"#.utf8))
            let payload = Self.base64URL(try JSONEncoder().encode(Claims(sub: "dana")))
            // HS256 keyed with the public key as the provider publishes it (its PEM): the classic confusion.
            let publicPEM = try Insecure.RSA.PrivateKey(backing: provider.rsa).publicKey.pemRepresentation
            let mac = HMAC<SHA256>.authenticationCode(for: Data("\(header).\(payload)".utf8), using: SymmetricKey(data: Data(publicPEM.utf8)))
            let none = Self.base64URL(Data(#"{"alg":"none","kid":"rsa1"}"#.utf8))
            var critical = JWTHeader()
            critical.crit = ["exp"]
            critical.kid = "rsa1"
            let cases: [(String, String, String)] = [
                ("bad signature", try await impostor.sign(Claims(sub: "dana"), kid: "rsa1"), "signature does not verify"),
                ("issuer", try await provider.sign(Claims(iss: "https://evil.example.com/", sub: "dana"), kid: "rsa1"), "another issuer"),
                ("audience", try await provider.sign(Claims(aud: "com.example.other", sub: "dana"), kid: "rsa1"), "another audience"),
                ("expired", try await provider.sign(Claims(sub: "dana", exp: now - 3600), kid: "ec1"), "has expired"),
                ("no exp", try await provider.sign(Claims(sub: "dana", exp: nil), kid: "ec1"), "no expiry"),
                ("nbf", try await provider.sign(Claims(sub: "dana", nbf: now + 3600), kid: "ec1"), "not valid yet"),
                ("alg none", "\(none).\(payload).", "algorithm is not accepted"),
                ("HS256 with the public key", "\(header).\(payload).\(Self.base64URL(Data(mac)))", "algorithm is not accepted"),
                ("no subject", try await provider.sign(Claims(), kid: "rsa1"), "no sub claim"),
                ("subject not a user name", try await provider.sign(Claims(sub: "auth0|5f7c8ec7"), kid: "rsa1"), "not a user name"),
                ("garbage", "not.a.token", "malformed"),
                ("crit", try await provider.signers.sign(Claims(sub: "dana"), kid: JWKIdentifier(string: "rsa1"), header: critical), "crit"),
            ]
            for (name, token, reason) in cases {
                let refused = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(token))
                #expect(refused.status == 401 && refused.text.contains(reason), "\(name): \(refused.status) \(refused.text)")
                #expect(!refused.text.contains(token), "\(name): the token is repeated")
                #expect(refused.headers["WWW-Authenticate"].contains { $0.hasPrefix("Bearer ") }, "\(name)")
            }
            // Within the leeway (60 s), a token just past its exp still passes.
            let late = try await provider.sign(Claims(sub: "dana", exp: now - 10), kid: "rsa1")
            #expect(try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(late)).status == 200)
            #expect(provider.fetches.load(ordering: .relaxed) == 1)
        }
    }

    @Test("A key id the set lacks fetches it again, at most once a minute")
    func unknownKeyFetchesOnce() async throws {
        let provider = try await Provider()
        try await withProvider(provider) { backend in
            let first = try await provider.sign(Claims(sub: "dana"), kid: "rsa1")
            #expect(try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(first)).status == 200)
            #expect(provider.fetches.load(ordering: .relaxed) == 1)
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            await provider.signers.add(rsa: try Insecure.RSA.PrivateKey(backing: key), digestAlgorithm: .sha256, kid: "rsa2")
            provider.publish([Self.rsaJWK(provider.rsa, kid: "rsa1"), Self.rsaJWK(key, kid: "rsa2")])
            let token = try await provider.sign(Claims(sub: "dana"), kid: "rsa2")
            let taken = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(token))
            #expect(taken.status == 200, "\(taken.text)")
            #expect(provider.fetches.load(ordering: .relaxed) == 2)
            // The provider rotates again at once: within the minute the set is not fetched again.
            await provider.signers.add(rsa: try Insecure.RSA.PrivateKey(backing: key), digestAlgorithm: .sha256, kid: "rsa3")
            provider.publish([Self.rsaJWK(key, kid: "rsa3")])
            let early = try await provider.sign(Claims(sub: "dana"), kid: "rsa3")
            let refused = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(early))
            #expect(refused.status == 401 && refused.text.contains("not one of the provider's"), "\(refused.text)")
            #expect(provider.fetches.load(ordering: .relaxed) == 2)
            // The token taken before is still taken (remembered, its key in the set in hand).
            #expect(try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(token)).status == 200)
        }
    }

    @Test("Without the provider's keys a token is answered 503, other schemes still work; wrong tokens spend the budget")
    func providerUnreachable() async throws {
        let port = try TCPListener.unusedPort()
        try await withBackend(configure: { configuration in
            configuration.identityTokens = IdentityTokenSettings(
                keys: .url("http://127.0.0.1:\(port)/jwks"), issuer: Self.issuer, audience: Self.audience)
            configuration.logins = LoginLimits(perAddress: RateLimit(burst: 3, perSecond: 0.001))
        }) { backend in
            let provider = try await Provider()
            let token = try await provider.sign(Claims(sub: "dana"), kid: "rsa1")
            let unavailable = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(token))
            #expect(unavailable.status == 503 && unavailable.text.contains("identityProviderUnavailable"), "\(unavailable.text)")
            #expect(unavailable.header("Retry-After") == "60")
            #expect(try await backend.call(.GET, "/api/notifications", as: "alice").status == 200)
            // Tokens refused before any key is needed still spend the client's budget.
            for _ in 0..<3 {
                #expect(try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer("a.b.c")).status == 401)
            }
            #expect(try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer("a.b.c")).status == 429)
        }
    }

    @Test("A JWK Set from a file; keys of other types and uses are skipped")
    func keySetFile() async throws {
        let provider = try await Provider()
        let directory = try temporaryDirectory()
        let file = directory + "/jwks.json"
        let keys: [[String: String]] = [
            ["kty": "oct", "kid": "hmac", "k": "c2VjcmV0"], Self.rsaJWK(provider.rsa, kid: "enc").merging(["use": "enc"]) { $1 },
            Self.rsaJWK(provider.rsa, kid: "rsa1"),
        ]
        try JSONSerialization.data(withJSONObject: ["keys": keys]).write(to: URL(fileURLWithPath: file))
        try await withBackend(configure: { configuration in
            configuration.identityTokens = IdentityTokenSettings(keys: .file(file), issuer: Self.issuer, audience: Self.audience)
        }) { backend in
            let token = try await provider.sign(Claims(sub: "dana"), kid: "rsa1")
            #expect(try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(token)).status == 200)
            await provider.signers.add(rsa: try Insecure.RSA.PrivateKey(backing: provider.rsa), digestAlgorithm: .sha256, kid: "enc")
            let encryptionKey = try await provider.sign(Claims(sub: "dana"), kid: "enc")
            let refused = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(encryptionKey))
            #expect(refused.status == 401 && refused.text.contains("not one of the provider's"), "\(refused.text)")
        }
    }

    @Test("Cache-Control's max-age, no-cache and no-store")
    func cacheControl() {
        #expect(IdentityTokenVerifier.maxAge(cacheControl: ["public, max-age=3600, must-revalidate"]) == .seconds(3600))
        #expect(IdentityTokenVerifier.maxAge(cacheControl: [#"max-age="120""#]) == .seconds(120))
        #expect(IdentityTokenVerifier.maxAge(cacheControl: ["max-age=600", "no-cache"]) == .zero)
        #expect(IdentityTokenVerifier.maxAge(cacheControl: ["no-store"]) == .zero)
        #expect(IdentityTokenVerifier.maxAge(cacheControl: ["private"]) == nil)
        #expect(IdentityTokenVerifier.maxAge(cacheControl: ["max-age=-1"]) == nil)
    }
}
