import Crypto
import Foundation
import PushAPNsTokens

func makeProviderTokenWorkloads() -> [Workload] {
    // A key made for this run: the bench needs one, not a particular one.
    let privateKey = P256.Signing.PrivateKey()
    let keyID = "BENCHKEY01"
    let teamID = "BENCHTEAM1"
    let signingKey = try! APNsSigningKey(privateKey: privateKey, keyID: keyID, teamID: teamID)
    let cache = APNsTokenCache(key: signingKey)
    let foundationCache = FoundationProviderTokenCache(key: privateKey, keyID: keyID, teamID: teamID)
    var issuedAt: Int64 = 1_700_000_000
    let bytes = (try! signingKey.token(issuedAt: issuedAt)).utf8.count
    return [
        Workload(
            name: "apns.jwt.mint", operations: 1, bytes: bytes,
            implementations: [
                // A new `iat` every time, so nothing can be reused between tokens.
                Implementation(name: "pushcore") {
                    issuedAt &+= 1
                    return try! signingKey.token(issuedAt: issuedAt).utf8.count
                },
                Implementation(name: "foundation.baseline") {
                    issuedAt &+= 1
                    return foundationProviderToken(key: privateKey, keyID: keyID, teamID: teamID, issuedAt: issuedAt).utf8.count
                },
            ]),
        Workload(
            name: "apns.jwt.cached", operations: 1, bytes: bytes,
            implementations: [
                Implementation(name: "pushcore") { try! cache.token().utf8.count },
                Implementation(name: "foundation.baseline") { foundationCache.token().utf8.count },
            ]),
    ]
}

/// What a straightforward Foundation-based implementation does to mint a provider token:
/// `JSONEncoder` for header and claims, `base64EncodedString` made URL-safe, the same swift-crypto
/// signature over `Data`.
func foundationProviderToken(key: P256.Signing.PrivateKey, keyID: String, teamID: String, issuedAt: Int64) -> String {
    struct Header: Encodable {
        let alg: String
        let kid: String
    }
    struct Claims: Encodable {
        let iss: String
        let iat: Int64
    }
    func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
    let encoder = JSONEncoder()
    let header = base64URL(try! encoder.encode(Header(alg: "ES256", kid: keyID)))
    let claims = base64URL(try! encoder.encode(Claims(iss: teamID, iat: issuedAt)))
    let signingInput = header + "." + claims
    let signature = try! key.signature(for: Data(signingInput.utf8))
    return signingInput + "." + base64URL(signature.rawRepresentation)
}

/// And its cache: one token behind an `NSLock`, its age from `Date`s.
final class FoundationProviderTokenCache: @unchecked Sendable {
    private let lock = NSLock()
    private var current: (text: String, issuedAt: Date)?
    let key: P256.Signing.PrivateKey
    let keyID: String
    let teamID: String

    init(key: P256.Signing.PrivateKey, keyID: String, teamID: String) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
    }

    func token() -> String {
        let now = Date()
        lock.lock()
        defer { lock.unlock() }
        if let current, now.timeIntervalSince(current.issuedAt) < 50 * 60 { return current.text }
        let text = foundationProviderToken(key: key, keyID: keyID, teamID: teamID, issuedAt: Int64(now.timeIntervalSince1970))
        current = (text, now)
        return text
    }
}
