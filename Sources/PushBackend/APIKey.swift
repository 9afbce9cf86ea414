import Crypto
import PushInternals

/// An API key as a service sends it, `Authorization: Bearer pck_ID_SECRET`: `pck_` (PushCore key,
/// so that a leaked one is recognisable), 16 hex digits that name the key and may be shown, and 64
/// that are its secret (256 random bits), kept by the store only as their SHA-256.
package struct APIKey: Sendable {
    package let id: String
    /// The SHA-256 of the secret, in lowercase hex: what the store keeps.
    package let secretHash: String

    static let prefix = "pck_"

    /// A new key for `owner`: its text, shown once and never again, and what the store keeps.
    package static func generate(owner: String) -> (text: String, record: APIKeyRecord) {
        let (id, secret) = (randomHex(bytes: 8), randomHex(bytes: 32))
        let key = APIKey(id: id, secret: secret)
        return (prefix + id + "_" + secret, APIKeyRecord(id: id, owner: owner, secretHash: key.secretHash, createdAt: unixMilliseconds()))
    }

    private init(id: String, secret: String) {
        self.id = id
        secretHash = Hex.lowercase(Array(SHA256.hash(data: Array(secret.utf8))))
    }

    /// The key an `Authorization` header carries, when it is `Bearer` (in any case) with a key of
    /// this form; nil for anything else.
    package init?(authorization: String) {
        let bytes = Array(authorization.utf8)
        guard bytes.count == 7 + 4 + 16 + 1 + 64, Self.isBearer(authorization) else { return nil }
        let token = bytes[7...]
        let id = token.dropFirst(4).prefix(16), secret = token.suffix(64)
        guard token.starts(with: Self.prefix.utf8), token[token.startIndex + 20] == UInt8(ascii: "_"),
            (id + secret).allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
        else { return nil }
        self.init(id: String(decoding: id, as: UTF8.self), secret: String(decoding: secret, as: UTF8.self))
    }

    /// Whether `record` is this key: its id, and its secret's hash compared in constant time.
    func matches(_ record: APIKeyRecord) -> Bool {
        record.id == id && constantTimeEquals(Array(record.secretHash.utf8), Array(secretHash.utf8))
    }

    /// Whether an `Authorization` header uses the bearer scheme at all.
    static func isBearer(_ authorization: String) -> Bool {
        authorization.utf8.count >= 7 && String(decoding: authorization.utf8.prefix(7), as: UTF8.self).lowercased() == "bearer "
    }
}
