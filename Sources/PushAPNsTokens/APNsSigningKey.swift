public import Crypto
import FoundationEssentials
import PushInternals

/// A token-signing key from Apple's developer account (the `AuthKey_KEYID.p8` file), with its key
/// id and the team id it belongs to. Mints provider tokens:
///
///     base64url({"alg":"ES256","kid":"KEY_ID"}) . base64url({"iss":"TEAM_ID","iat":SECONDS}) . base64url(r ‖ s)
///
/// where `r ‖ s` is the raw 64-byte ECDSA P-256 signature over SHA-256 of the first two parts.
/// The header's encoding is the same for every token and is made once, here.
///
/// `@unchecked Sendable`: swift-crypto 3 does not mark its keys `Sendable`, but a key is never
/// mutated after it is made, and BoringSSL signs with a shared `const` key from any thread.
public struct APNsSigningKey: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let keyID: String
    public let teamID: String
    let privateKey: P256.Signing.PrivateKey
    /// base64url of the header and the `.` after it.
    let encodedHeader: [UInt8]

    /// - Parameters:
    ///   - pemRepresentation: The `.p8` file's text: a PKCS#8 `PRIVATE KEY` (or SEC 1 `EC PRIVATE
    ///     KEY`) PEM block holding a P-256 key.
    ///   - keyID: The key's 10-character id (A–Z, 0–9).
    ///   - teamID: The developer team's 10-character id (A–Z, 0–9).
    /// - Throws: `invalidKey`, `invalidKeyID` or `invalidTeamID`.
    public init(pemRepresentation: String, keyID: String, teamID: String) throws(APNsTokenError) {
        let privateKey: P256.Signing.PrivateKey
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: pemRepresentation)
        } catch {
            // swift-crypto's error could quote the input; say only what was expected.
            throw APNsTokenError(.invalidKey, "not a P-256 private key in PEM (PKCS#8 PRIVATE KEY or EC PRIVATE KEY)")
        }
        try self.init(privateKey: privateKey, keyID: keyID, teamID: teamID)
    }

    /// - Throws: `invalidKeyID` or `invalidTeamID`.
    public init(privateKey: P256.Signing.PrivateKey, keyID: String, teamID: String) throws(APNsTokenError) {
        try Self.checkIdentifier(keyID, code: .invalidKeyID, name: "key id")
        try Self.checkIdentifier(teamID, code: .invalidTeamID, name: "team id")
        self.keyID = keyID
        self.teamID = teamID
        self.privateKey = privateKey
        // No escaping needed: the id is 10 letters and digits.
        let header = Array("{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}".utf8)
        var encoded = [UInt8](repeating: 0, count: Base64.encodedCount(header.count, .url) + 1)
        let end = header.withUnsafeBytes { header in
            encoded.withUnsafeMutableBytes { Base64.encode(header, .url, into: $0, at: 0) }
        }
        encoded[end] = UInt8(ascii: ".")
        self.encodedHeader = encoded
    }

    /// The key that verifies this key's tokens.
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// A provider token issued at `issuedAt` (Unix seconds). ECDSA signatures are randomised, so two
    /// tokens for the same second differ in their last part.
    /// - Throws: `invalidIssuedAt` for a negative time; `signingFailed` if the signature fails.
    public func token(issuedAt: Int64) throws(APNsTokenError) -> String {
        guard issuedAt >= 0 else { throw APNsTokenError(.invalidIssuedAt, "iat \(issuedAt) is before 1970") }
        // Header and claims are at most 40 + 1 + 62 bytes; with the signature, 190.
        return try withUnsafeTemporaryAllocation(byteCount: 256, alignment: 1) { buffer throws(APNsTokenError) -> String in
            var count = encodedHeader.withUnsafeBytes { header in
                buffer.copyMemory(from: header)
                return header.count
            }
            count = writeEncodedClaims(issuedAt: issuedAt, into: buffer, at: count)
            var hash = SHA256()
            hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            let digest = hash.finalize()
            let signature: P256.Signing.ECDSASignature
            do {
                signature = try privateKey.signature(for: digest)
            } catch {
                throw APNsTokenError(.signingFailed, "ECDSA signing failed")
            }
            buffer[count] = UInt8(ascii: ".")
            count += 1
            count = signature.rawRepresentation.withUnsafeBytes { Base64.encode($0, .url, into: buffer, at: count) }
            return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    /// Writes base64url(`{"iss":"TEAM_ID","iat":SECONDS}`) at `offset`; returns the offset after it.
    private func writeEncodedClaims(issuedAt: Int64, into output: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) { claims in
            var count = 0
            func append(_ bytes: some Sequence<UInt8>) {
                for byte in bytes {
                    claims[count] = byte
                    count += 1
                }
            }
            append("{\"iss\":\"".utf8)
            append(teamID.utf8)
            append("\",\"iat\":".utf8)
            var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
            withUnsafeMutableBytes(of: &digits) { digits in
                append(digits[writeDecimalDigits(UInt64(issuedAt), endingAt: digits)...])
            }
            append("}".utf8)
            return Base64.encode(UnsafeRawBufferPointer(rebasing: claims[..<count]), .url, into: output, at: offset)
        }
    }

    static func checkIdentifier(_ identifier: String, code: APNsTokenError.Code, name: String) throws(APNsTokenError) {
        let valid =
            identifier.utf8.count == 10
            && identifier.utf8.allSatisfy {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            }
        guard valid else { throw APNsTokenError(code, "the \(name) must be 10 characters A–Z and 0–9") }
    }

    public var description: String { "APNsSigningKey(keyID: \(keyID), teamID: \(teamID), key: <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["keyID": keyID, "teamID": teamID], displayStyle: .struct) }
}
