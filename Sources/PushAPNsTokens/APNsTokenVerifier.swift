public import Crypto
import PushInternals
import PushJSON

/// A key that provider tokens are checked against: the public half of a signing key, with the ids
/// a token must name. `@unchecked Sendable` for the reason `APNsSigningKey` is.
public struct APNsVerificationKey: @unchecked Sendable {
    public let keyID: String
    public let teamID: String
    public let publicKey: P256.Signing.PublicKey

    /// - Throws: `invalidKeyID` or `invalidTeamID`.
    public init(publicKey: P256.Signing.PublicKey, keyID: String, teamID: String) throws(APNsTokenError) {
        try APNsSigningKey.checkIdentifier(keyID, code: .invalidKeyID, name: "key id")
        try APNsSigningKey.checkIdentifier(teamID, code: .invalidTeamID, name: "team id")
        self.keyID = keyID
        self.teamID = teamID
        self.publicKey = publicKey
    }

    /// - Parameter pemRepresentation: A `PUBLIC KEY` PEM block, or a private key's (the `.p8`
    ///   file itself), whose public half is taken.
    /// - Throws: `invalidKey`, `invalidKeyID` or `invalidTeamID`.
    public init(pemRepresentation: String, keyID: String, teamID: String) throws(APNsTokenError) {
        let publicKey: P256.Signing.PublicKey
        if let key = try? P256.Signing.PublicKey(pemRepresentation: pemRepresentation) {
            publicKey = key
        } else if let key = try? P256.Signing.PrivateKey(pemRepresentation: pemRepresentation) {
            publicKey = key.publicKey
        } else {
            throw APNsTokenError(.invalidKey, "not a P-256 public or private key in PEM")
        }
        try self.init(publicKey: publicKey, keyID: keyID, teamID: teamID)
    }
}

/// What a verified provider token says.
public struct APNsProviderTokenClaims: Sendable, Hashable, CustomStringConvertible {
    public let keyID: String
    public let teamID: String
    /// `iat`, Unix seconds.
    public let issuedAt: Int64

    public init(keyID: String, teamID: String, issuedAt: Int64) {
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = issuedAt
    }

    public var description: String { "key id: \(keyID)\nteam id: \(teamID)\nissued at: \(issuedAt)\nsignature: <redacted>" }
}

/// Checks provider tokens the way APNs does: the form (three base64url parts, a JSON header and
/// claims with no repeated keys), `alg` ES256, a known `kid`, `iss` the team of that key, the
/// signature, and the age (`iat` at most `maximumAge` ago and not in the future beyond
/// `clockSkew`).
public struct APNsTokenVerifier: Sendable {
    /// Longest token accepted; longer ones are refused before any work.
    public static let maximumTokenLength = 1024

    let keys: [String: APNsVerificationKey]
    /// Oldest accepted token, in seconds: an hour, as APNs.
    public var maximumAge: Int64
    /// How far in the future `iat` may be, for clocks that disagree.
    public var clockSkew: Int64

    public init(keys: [APNsVerificationKey], maximumAge: Int64 = 60 * 60, clockSkew: Int64 = 60) {
        var byID: [String: APNsVerificationKey] = [:]
        for key in keys { byID[key.keyID] = key }
        self.keys = byID
        self.maximumAge = maximumAge
        self.clockSkew = clockSkew
    }

    /// Verifies `token` at `now` (Unix seconds).
    /// - Throws: ``APNsTokenError`` with code `malformed`, `unsupportedAlgorithm`, `unknownKeyID`,
    ///   `teamMismatch`, `badSignature`, `expired` or `issuedInFuture`, checked in that order.
    public func verify(_ token: some StringProtocol, now: Int64) throws(APNsTokenError) -> APNsProviderTokenClaims {
        let parsed = try ParsedProviderToken(Array(token.utf8))
        guard parsed.algorithm == "ES256" else {
            throw APNsTokenError(.unsupportedAlgorithm, "alg must be ES256")
        }
        guard let key = keys[parsed.keyID] else {
            throw APNsTokenError(.unknownKeyID, "no key with id \(Self.quoted(parsed.keyID))")
        }
        guard parsed.teamID == key.teamID else {
            throw APNsTokenError(.teamMismatch, "iss \(Self.quoted(parsed.teamID)) is not the team of key \(key.keyID)")
        }
        let valid = parsed.signature.withUnsafeBytes { signature in
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            var hash = SHA256()
            parsed.signedBytes.withUnsafeBytes { hash.update(bufferPointer: $0) }
            let digest = hash.finalize()
            return key.publicKey.isValidSignature(signature, for: digest)
        }
        guard valid else { throw APNsTokenError(.badSignature, "the signature does not verify with key \(key.keyID)") }
        try checkAge(issuedAt: parsed.issuedAt, now: now)
        return APNsProviderTokenClaims(keyID: key.keyID, teamID: key.teamID, issuedAt: parsed.issuedAt)
    }

    /// The age check of ``verify(_:now:)`` alone, for a token whose signature was verified before.
    /// - Throws: ``APNsTokenError`` with code `expired` or `issuedInFuture`.
    public func checkAge(issuedAt: Int64, now: Int64) throws(APNsTokenError) {
        // `iat` is not negative, so only a `now` far before 1970 overflows: a token from the future.
        let (age, overflow) = now.subtractingReportingOverflow(issuedAt)
        if !overflow && age > maximumAge {
            throw APNsTokenError(.expired, "issued at \(issuedAt), \(age) s ago; the limit is \(maximumAge) s")
        }
        if overflow || age < -max(clockSkew, 0) {
            throw APNsTokenError(.issuedInFuture, "issued at \(issuedAt), later than now (\(now)) by more than \(max(clockSkew, 0)) s")
        }
    }

    /// A field from a token, quoted and cut short, control characters escaped: a token cannot put
    /// lines of its own into a message.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars.prefix(24) {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\\" || scalar == "\"" {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result + (text.unicodeScalars.count > 24 ? "…\"" : "\"")
    }
}

/// `header.claims.signature`, decoded but not checked.
struct ParsedProviderToken {
    let algorithm: String
    let keyID: String
    let teamID: String
    let issuedAt: Int64
    let signature: [UInt8]
    /// The first two parts and the dot between them, as sent: what the signature covers.
    let signedBytes: ArraySlice<UInt8>

    init(_ token: [UInt8]) throws(APNsTokenError) {
        guard token.count <= APNsTokenVerifier.maximumTokenLength else {
            throw APNsTokenError(.malformed, "token is \(token.count) bytes, longer than \(APNsTokenVerifier.maximumTokenLength)")
        }
        let parts = token.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw APNsTokenError(.malformed, "a provider token has three parts separated by '.'") }
        let header = try Self.object(parts[0], part: "header")
        let claims = try Self.object(parts[1], part: "claims")
        guard let signature = Base64.decode(parts[2], .url), signature.count == 64 else {
            throw APNsTokenError(.malformed, "the signature must be the base64url of 64 bytes (r ‖ s)")
        }
        algorithm = try Self.string("alg", in: header, part: "header")
        keyID = try Self.string("kid", in: header, part: "header")
        teamID = try Self.string("iss", in: claims, part: "claims")
        guard case .number(let number)? = Self.member("iat", in: claims), let seconds = Int64(number.spelling), seconds >= 0 else {
            throw APNsTokenError(.malformed, "the claims need iat, whole Unix seconds")
        }
        issuedAt = seconds
        self.signature = signature
        signedBytes = token[..<parts[1].endIndex]
    }

    private static func object(_ encoded: ArraySlice<UInt8>, part: String) throws(APNsTokenError) -> [JSONMember] {
        guard let bytes = Base64.decode(encoded, .url) else { throw APNsTokenError(.malformed, "the \(part) is not base64url") }
        var parser = JSONParser()
        // `JSON(_:)` refuses repeated keys: two `kid`s must not mean whichever a reader takes.
        guard let document = try? parser.parse(bytes), case .object(let members)? = try? JSON(document.root) else {
            throw APNsTokenError(.malformed, "the \(part) is not a JSON object with unique keys")
        }
        return members
    }

    private static func member(_ key: String, in members: [JSONMember]) -> JSON? {
        members.first { $0.key == key }?.value
    }

    private static func string(_ key: String, in members: [JSONMember], part: String) throws(APNsTokenError) -> String {
        guard case .string(let value)? = member(key, in: members) else {
            throw APNsTokenError(.malformed, "the \(part) needs \(key), a string")
        }
        return value
    }
}
