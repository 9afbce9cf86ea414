import Crypto
public import PushInternals
import PushJSON
import _CryptoExtras

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A Google service account, as the JSON key file Google Cloud's console makes holds it: whom FCM
/// is sent as (`client_email`), the RSA key that signs its token requests, where they go
/// (`token_uri`) and the project. Its description names the account; nothing in it shows the key.
public struct FCMServiceAccount: Sendable, CustomStringConvertible {
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"

    public let projectID: String
    public let clientEmail: String
    /// `private_key_id`: the JWT header's `kid`.
    public let privateKeyID: String?
    /// Where assertions are exchanged for access tokens: Google's, or an emulator's.
    public var tokenURI: String
    let privateKey: _RSA.Signing.PrivateKey

    /// The contents of a service account's key file.
    public init(json: some Collection<UInt8>) throws(FCMCredentialsError) {
        var parser = JSONParser()
        guard let document = try? parser.parse(Array(json)), document.root.kind == .object else {
            throw FCMCredentialsError(code: .notServiceAccount, message: "the service account is not a JSON object")
        }
        let root = document.root
        if let type = root["type"]?.string, type != "service_account" {
            throw FCMCredentialsError(
                code: .notServiceAccount, message: "the credentials are of type \(escapingControls(type.prefix(40))), not service_account")
        }
        guard let projectID = root["project_id"]?.string, !projectID.isEmpty else {
            throw FCMCredentialsError(code: .missingField, message: "project_id is missing")
        }
        guard let clientEmail = root["client_email"]?.string, !clientEmail.isEmpty else {
            throw FCMCredentialsError(code: .missingField, message: "client_email is missing")
        }
        guard let pem = root["private_key"]?.string else { throw FCMCredentialsError(code: .missingField, message: "private_key is missing") }
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            // Never the key, nor BoringSSL's words about it.
            throw FCMCredentialsError(code: .invalidKey, message: "private_key is not an RSA private key of 2048 bits or more in PEM")
        }
        let tokenURI = root["token_uri"]?.string ?? Self.defaultTokenURI
        guard tokenURI.hasPrefix("https://") else { throw FCMCredentialsError(code: .invalidTokenURI, message: "token_uri is not an https URL") }
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
        privateKeyID = root["private_key_id"]?.string
    }

    /// The key file at `path`.
    public init(contentsOfFile path: String) throws(FCMCredentialsError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw FCMCredentialsError(code: .unreadable, message: "cannot read the service account file \(escapingControls(path))")
        }
        guard data.count <= 64 << 10 else { throw FCMCredentialsError(code: .unreadable, message: "the service account file is over 64 KiB") }
        try self.init(json: data)
    }

    /// The key file `GOOGLE_APPLICATION_CREDENTIALS` names, as Google's libraries read it.
    /// - Returns: nil when the variable is not set.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(FCMCredentialsError) -> FCMServiceAccount? {
        guard let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty else { return nil }
        return try FCMServiceAccount(contentsOfFile: path)
    }

    public var description: String { "\(clientEmail) (project \(projectID))" }

    /// The public half of the key, which verifies its assertions.
    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    /// Whether `signature` is this account's RS256 signature of `data` (what Google's token URI checks).
    package func isSignature(_ signature: [UInt8], of data: some DataProtocol) -> Bool {
        privateKey.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
    }

    /// A signed JWT asking `tokenURI` for an access token (RFC 7523): RS256, `iss` the account,
    /// `aud` the token URI, for an hour from `issuedAt` (Unix seconds).
    package func assertion(scope: String, issuedAt: Int64) throws -> String {
        var header = [JSONMember("alg", .string("RS256")), JSONMember("typ", .string("JWT"))]
        if let privateKeyID { header.append(JSONMember("kid", .string(privateKeyID))) }
        let claims = JSON.object([
            JSONMember("iss", .string(clientEmail)), JSONMember("scope", .string(scope)), JSONMember("aud", .string(tokenURI)),
            JSONMember("iat", .number(JSONNumber(Int(issuedAt)))), JSONMember("exp", .number(JSONNumber(Int(issuedAt + 3600)))),
        ])
        var headerJSON: [UInt8] = []
        var claimsJSON: [UInt8] = []
        try JSON.object(header).write(into: &headerJSON)
        try claims.write(into: &claimsJSON)
        let signingInput = Base64.encodedString(headerJSON, .url) + "." + Base64.encodedString(claimsJSON, .url)
        let signature = try privateKey.signature(for: Array(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64.encodedString(signature.rawRepresentation, .url)
    }
}

/// A service account that cannot be used: its file cannot be read or is not a service account
/// key. The message names what is wrong, never the key.
public struct FCMCredentialsError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        /// The file cannot be read, or is over 64 KiB.
        case unreadable
        /// Not a JSON object, or credentials of another type than `service_account`.
        case notServiceAccount
        /// `project_id`, `client_email` or `private_key` is missing.
        case missingField
        /// `private_key` is not an RSA key of 2048 bits or more in PEM.
        case invalidKey
        /// `token_uri` is not an `https` URL.
        case invalidTokenURI
    }

    public let code: Code
    public let message: String

    public var description: String { message }
}
