public import Foundation
import HTTPTypes
import OpenAPIRuntime
import PushInternals

/// A user's name and password for the backend's HTTP Basic authentication. Its description and
/// reflection show the name only.
public struct PushCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let user: String
    let password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    public var description: String { "PushCredentials(user: \(user), password: <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["user": user, "password": "<redacted>"]) }

    /// `Basic base64(user:password)` (RFC 7617, UTF-8).
    var authorization: String { "Basic " + Base64.encodedString("\(user):\(password)".utf8) }
}

/// Where the app keeps the signed-in user's credentials (the Keychain, say). Asked before every
/// request, so that signing in again takes effect at once.
public protocol PushCredentialStore: Sendable {
    /// The credentials, or nil when nobody is signed in.
    func credentials() async throws -> PushCredentials?
}

/// Credentials that do not change, for tools and tests.
public struct FixedCredentials: PushCredentialStore {
    let value: PushCredentials

    public init(_ credentials: PushCredentials) { value = credentials }

    public func credentials() async throws -> PushCredentials? { value }
}

/// Credentials in a file only its owner can read (mode 0600): the Keychain's counterpart where
/// there is none, for tools such as `pushcore phone` on Linux. The file holds the password as it
/// is: keep it in a directory of the user's own.
public struct FileCredentialStore: PushCredentialStore {
    let file: URL

    public init(file: URL) { self.file = file }

    /// - Throws: ``PushClientError/credentialsUnavailable`` when the file cannot be read or is not
    ///   credentials (its contents are not repeated).
    public func credentials() async throws -> PushCredentials? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        guard let data = try? Data(contentsOf: file), let stored = try? JSONDecoder().decode(Stored.self, from: data) else {
            throw PushClientError.credentialsUnavailable
        }
        return PushCredentials(user: stored.user, password: stored.password)
    }

    /// Keeps `credentials` in place of any before them.
    public func save(_ credentials: PushCredentials) throws(PushClientError) {
        do {
            try PrivateFile.replace(file, with: try JSONEncoder().encode(Stored(user: credentials.user, password: credentials.password)))
        } catch {
            throw .credentialsUnavailable
        }
    }

    /// Forgets the credentials.
    public func delete() throws(PushClientError) {
        do { try PrivateFile.replace(file, with: nil) } catch { throw .credentialsUnavailable }
    }

    private struct Stored: Codable {
        let user: String
        let password: String
    }
}

/// Adds the store's credentials to every request; with none, fails before anything is sent.
struct BasicAuthenticationMiddleware: ClientMiddleware {
    let store: any PushCredentialStore

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let credentials = try await askingForCredentials({ try await store.credentials() }) else { throw PushClientError.unauthorized }
        var request = request
        request.headerFields[.authorization] = credentials.authorization
        return try await next(request, body, baseURL)
    }
}

/// Adds the app's bearer token to every request; on a 401, asks for a renewed one and sends the
/// request again, once.
struct BearerAuthenticationMiddleware: ClientMiddleware {
    let token: @Sendable (_ renewing: Bool) async throws -> String?

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = try await authorization(renewing: false)
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status == .unauthorized, body?.iterationBehavior != .single else { return (response, responseBody) }
        request.headerFields[.authorization] = try await authorization(renewing: true)
        return try await next(request, body, baseURL)
    }

    /// `Bearer TOKEN`, for a token of visible ASCII only: anything else could end the header or
    /// start another, and is refused before it is sent (its text is not repeated).
    private func authorization(renewing: Bool) async throws -> String {
        guard let given = try await askingForCredentials({ try await token(renewing) }) else { throw PushClientError.unauthorized }
        guard !given.isEmpty, given.utf8.count <= 8192, given.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw PushClientError.credentialsUnavailable
        }
        return "Bearer " + given
    }
}

/// What the app's credential store or token closure gives; its failure as a ``PushClientError``.
/// The source's own error may describe the item it could not read: only the fact is kept.
private func askingForCredentials<Value>(_ ask: () async throws -> Value) async throws(PushClientError) -> Value {
    do {
        return try await ask()
    } catch let error as PushClientError {
        throw error
    } catch {
        throw .credentialsUnavailable
    }
}
