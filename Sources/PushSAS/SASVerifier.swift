import Crypto
import PushInternals

/// The fields of a SAS token, as `inspect` shows them and `verify` returns them. The signature is
/// never shown.
public struct SASTokenInfo: Sendable, Hashable, CustomStringConvertible {
    /// The resource URI, percent-decoded.
    public let resource: String
    /// `sr` exactly as it appears in the token (what the signature covers).
    public let encodedResource: String
    public let keyName: String
    /// Unix seconds.
    public let expiry: Int64

    /// One line per field. Control characters in the decoded fields are written as `\u{…}`, so a
    /// token cannot add lines of its own (a forged `valid`, say) to what is printed.
    public var description: String {
        "resource: \(escapingControls(resource))\nkey name: \(escapingControls(keyName))\nexpiry: \(expiry)\nsignature: <redacted>"
    }
}

/// Checks SAS tokens against the keys it knows: the signature in constant time, the expiry
/// with a clock skew, and that the requested URI lies under the token's resource (whole path
/// segments: a token for `…/hub` covers `…/hub/messages` but not `…/hub2`).
public struct SASVerifier: Sendable {
    /// Longest token accepted; longer ones are refused before any work.
    public static let maximumTokenLength = 8 << 10

    let keys: [String: KeyedHMAC]
    /// Seconds a token is still accepted after its expiry, for clocks that disagree.
    public var clockSkew: Int64

    /// A verifier for the keys of these rules (name and key as in a connection string).
    public init(keys: [(keyName: String, key: String)], clockSkew: Int64 = 0) {
        var keyed: [String: KeyedHMAC] = [:]
        for (keyName, key) in keys { keyed[keyName] = KeyedHMAC(key: key) }
        self.keys = keyed
        self.clockSkew = clockSkew
    }

    public init(_ connectionString: ConnectionString, clockSkew: Int64 = 0) {
        self.init(keys: [(connectionString.keyName, connectionString.key)], clockSkew: clockSkew)
    }

    /// Verifies `token` for a request to `uri` at `now` (Unix seconds).
    /// - Returns: The token's fields.
    /// - Throws: ``SASError`` with code `malformed`, `unknownKeyName`, `badSignature`, `expired`
    ///   or `resourceMismatch`, checked in that order.
    public func verify(_ token: String, uri: String, now: Int64) throws(SASError) -> SASTokenInfo {
        let parsed = try ParsedToken(token)
        guard let keyed = keys[parsed.info.keyName] else {
            throw SASError(.unknownKeyName, "no key named \"\(escapingControls(parsed.info.keyName))\"")
        }
        let expected = parsed.signedText.withUnsafeBytes { keyed.authenticationCode(for: $0) }
        let matches = expected.withUnsafeBytes { constantTimeEquals($0, parsed.signature) }
        guard matches else { throw SASError(.badSignature, "the signature does not match") }
        let (deadline, overflow) = parsed.info.expiry.addingReportingOverflow(max(clockSkew, 0))
        guard overflow || now <= deadline else {
            throw SASError(.expired, "expired at \(parsed.info.expiry), now is \(now)")
        }
        guard Self.covers(resource: parsed.info.resource, uri: uri) else {
            throw SASError(
                .resourceMismatch,
                "the token is for \(escapingControls(parsed.info.resource)), not \(escapingControls(uri))")
        }
        return parsed.info
    }

    /// Whether `uri` is `resource` or lies under it, compared without case: the resource must end
    /// where a path segment or the query ends, so that a token for hub `h` is no token for hub `h2`.
    static func covers(resource: String, uri: String) -> Bool {
        let resource = Array(resource.lowercased().utf8)
        let uri = Array(uri.lowercased().utf8)
        guard uri.starts(with: resource) else { return false }
        guard uri.count > resource.count, resource.last != UInt8(ascii: "/") else { return true }
        let next = uri[resource.count]
        return next == UInt8(ascii: "/") || next == UInt8(ascii: "?")
    }

    /// Decodes a token's fields without checking it.
    /// - Throws: `malformed` when it is not a well-formed SAS token.
    public static func inspect(_ token: String) throws(SASError) -> SASTokenInfo {
        try ParsedToken(token).info
    }
}

/// `SharedAccessSignature sr=…&sig=…&se=…&skn=…`, fields in any order, each exactly once.
struct ParsedToken {
    let info: SASTokenInfo
    /// The decoded signature bytes.
    let signature: [UInt8]
    /// `sr` as sent + "\n" + `se` as sent: what the signature covers.
    let signedText: [UInt8]

    static let prefix = Array("SharedAccessSignature ".utf8)

    init(_ token: String) throws(SASError) {
        let bytes = Array(token.utf8)
        guard bytes.count <= SASVerifier.maximumTokenLength else {
            throw SASError(.malformed, "token is \(bytes.count) bytes, longer than \(SASVerifier.maximumTokenLength)")
        }
        guard bytes.starts(with: Self.prefix) else {
            throw SASError(.malformed, "token does not start with \"SharedAccessSignature \"")
        }
        var resource: ArraySlice<UInt8>?
        var signature: ArraySlice<UInt8>?
        var expiry: ArraySlice<UInt8>?
        var keyName: ArraySlice<UInt8>?
        for field in bytes[Self.prefix.count...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else {
                throw SASError(.malformed, "token field without '='")
            }
            let name = String(decoding: field[..<equals], as: UTF8.self)
            let value = field[(equals + 1)...]
            func assign(_ slot: inout ArraySlice<UInt8>?) throws(SASError) {
                guard slot == nil else { throw SASError(.malformed, "token field \(name) appears more than once") }
                slot = value
            }
            switch name {
            case "sr": try assign(&resource)
            case "sig": try assign(&signature)
            case "se": try assign(&expiry)
            case "skn": try assign(&keyName)
            default: throw SASError(.malformed, "unknown token field \"\(escapingControls(String(name.prefix(16))))\"")
            }
        }
        guard let resource, !resource.isEmpty else { throw SASError(.malformed, "token has no sr") }
        guard let signature, !signature.isEmpty else { throw SASError(.malformed, "token has no sig") }
        guard let expiry, !expiry.isEmpty else { throw SASError(.malformed, "token has no se") }
        guard let keyName, !keyName.isEmpty else { throw SASError(.malformed, "token has no skn") }

        guard expiry.count <= 18, expiry.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let seconds = Int64(String(decoding: expiry, as: UTF8.self))
        else {
            throw SASError(.malformed, "se must be Unix seconds")
        }
        guard let decodedResource = PercentEncoding.decode(resource),
            let decodedKeyName = PercentEncoding.decode(keyName),
            let encodedSignature = PercentEncoding.decode(signature)
        else {
            throw SASError(.malformed, "invalid percent-encoding")
        }
        guard let signatureBytes = Base64.decode(encodedSignature), signatureBytes.count == 32 else {
            throw SASError(.malformed, "sig must be the base64 of a 32-byte HMAC-SHA256")
        }
        self.signature = signatureBytes
        self.signedText = Array(resource) + [UInt8(ascii: "\n")] + Array(expiry)
        self.info = SASTokenInfo(
            resource: String(decoding: decodedResource, as: UTF8.self), encodedResource: String(decoding: resource, as: UTF8.self),
            keyName: String(decoding: decodedKeyName, as: UTF8.self), expiry: seconds)
    }
}
