import AsyncHTTPClient
import Crypto
import JWTKit
package import Logging
import NIOCore
import NIOHTTP1
import PushInternals
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where an identity provider's signing keys come from, and what its tokens must say: apps sign in
/// with `Authorization: Bearer <JWT>` (an OpenID Connect ID or access token) when this is set.
public struct IdentityTokenSettings: Sendable, Hashable {
    /// The provider's JWK Set (RFC 7517 §5).
    public enum KeySource: Sendable, Hashable {
        /// Fetched, kept as long as its `Cache-Control` says, fetched again on a key id it lacks
        /// (at most once a minute). `https`, or `http` to a loopback address.
        case url(String)
        /// Read at start, and again on a key id it lacks (at most once a minute).
        case file(String)
    }

    public var keys: KeySource
    /// The `iss` a token must carry, exactly.
    public var issuer: String
    /// What a token's `aud` must name (one of its values).
    public var audience: String
    /// The claim that names the user (`sub` unless configured): a user name here, 1 to 64 of
    /// `A-Z a-z 0-9 . _ -`. A name first seen in a token becomes a user with the `user` role.
    public var userClaim: String
    /// How far `exp` and `nbf` may be off the server's clock.
    public var leeway: Duration

    public init(keys: KeySource, issuer: String, audience: String, userClaim: String = "sub", leeway: Duration = .seconds(60)) {
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.userClaim = userClaim
        self.leeway = leeway
    }
}

/// Checks identity tokens: RS256 or ES256 (nothing else, whatever the header asks), signed by a key
/// of the provider's set whose type fits the algorithm, from the configured issuer, for the
/// configured audience, within `exp` and `nbf` (with the leeway). jwt-kit checks the signature; the
/// choice of key and algorithm is made here, so that a token cannot pick a key or an algorithm
/// the provider did not publish (`alg: none`, or HS256 with the public key as its secret).
///
/// A token that passed is remembered until its `exp` (by its SHA-256, never its text) while its key
/// stays in the set: an app sends the same token with every request, and an RSA or ECDSA check on
/// each would cost more than the request.
package final class IdentityTokenVerifier: Sendable {
    /// Why a token was not taken: the message is the client's (it never repeats the token).
    package struct Refusal: Error, Sendable {
        package let message: String
        /// The provider's keys could not be had: the token was not judged.
        package let keysUnavailable: Bool

        init(_ message: String, keysUnavailable: Bool = false) {
            self.message = message
            self.keysUnavailable = keysUnavailable
        }
    }

    /// What one fetch of the key set gave: jwt-kit's collection, and each key id's algorithm.
    private struct KeySet: Sendable {
        let collection: JWTKeyCollection
        let algorithms: [String: JWK.Algorithm]
    }

    private struct State {
        var keys: KeySet?
        /// Until then the set is used as is; after, the next token starts a fetch in the background.
        var freshUntil: ContinuousClock.Instant?
        /// When the last fetch started, whatever started it: a failing provider is asked once a minute.
        var lastFetch: ContinuousClock.Instant?
        /// When a token's unknown key id last started one: forged key ids cost one fetch a minute.
        var lastKeyIDFetch: ContinuousClock.Instant?
        var fetching: Task<Void, Never>?
    }

    private struct Remembered {
        let subject: String
        let keyID: String
        let expires: Int64
    }

    /// Key sets are fetched no more often than this, whatever asks (an unknown key id, a failure).
    static let minimumFetchInterval = Duration.seconds(60)
    /// A set served without `max-age` is kept this long; longer ones are cut to a day.
    static let defaultFreshness = Duration.seconds(3600)
    static let maximumFreshness = Duration.seconds(24 * 3600)
    static let maximumKeySetBytes = 1 << 20
    static let maximumTokenBytes = 8192
    static let cacheCapacity = 10_000

    let settings: IdentityTokenSettings
    private let logger: Logger
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let state = Mutex(State())
    private let remembered = Mutex<[SHA256Digest: Remembered]>([:])

    package init(
        _ settings: IdentityTokenSettings, logger: Logger, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.settings = settings
        self.logger = logger
        self.clock = clock
    }

    /// Starts fetching the key set (at start, without holding the server up): tokens that come
    /// before it is in wait for it; a failure is logged, and the next fetch is a minute later.
    package func start() {
        state.withLock { state in
            state.lastFetch = clock()
            state.fetching = fetchTask()
        }
    }

    /// The user name the token names, once it is checked.
    package func userName(from token: String) async throws(Refusal) -> String {
        guard token.utf8.count <= Self.maximumTokenBytes else { throw Refusal("the token is over \(Self.maximumTokenBytes) bytes") }
        let digest = SHA256.hash(data: Array(token.utf8))
        let now = unixSeconds()
        if let entry = remembered.withLock({ $0[digest] }), entry.expires > now, currentKeys()?.algorithms[entry.keyID] != nil {
            return entry.subject
        }
        let header = try Self.header(of: token)
        guard let algorithm = header.alg.flatMap(JWK.Algorithm.init(rawValue:)), algorithm == .rs256 || algorithm == .es256 else {
            throw Refusal("the token's algorithm is not accepted: RS256 and ES256 are")
        }
        // Extensions the token says must be understood (RFC 7515 §4.1.11): none is, here.
        guard header.fields["crit"] == nil else { throw Refusal("the token has critical header parameters (crit), which are not taken") }
        guard let keyID = header.kid else { throw Refusal("the token names no key (kid)") }
        let keys = try await keys(having: keyID)
        guard let keyAlgorithm = keys.algorithms[keyID] else { throw Refusal("the token's key is not one of the provider's") }
        guard keyAlgorithm == algorithm else { throw Refusal("the token's algorithm does not fit its key") }
        let claims: IdentityClaims
        do {
            claims = try await keys.collection.verify(token, as: IdentityClaims.self)
        } catch let error as JWTError where error.errorType == .malformedToken {
            throw Refusal("the token is malformed")
        } catch {
            throw Refusal("the token's signature does not verify")
        }
        let leeway = settings.leeway.components.seconds
        guard claims.issuer == settings.issuer else { throw Refusal("the token is from another issuer") }
        guard claims.audience.contains(settings.audience) else { throw Refusal("the token is for another audience") }
        guard let expires = claims.expiration else { throw Refusal("the token has no expiry (exp)") }
        guard Double(now - leeway) < expires else { throw Refusal("the token has expired") }
        if let notBefore = claims.notBefore, notBefore > Double(now + leeway) { throw Refusal("the token is not valid yet (nbf)") }
        guard let subject = claims.strings[settings.userClaim] else { throw Refusal("the token has no \(settings.userClaim) claim") }
        guard UserRecord.isValidName(subject) else {
            throw Refusal("the token's \(settings.userClaim) is not a user name here (1 to 64 of A-Z a-z 0-9 . _ -)")
        }
        remembered.withLock { cache in
            if cache.count >= Self.cacheCapacity { cache.removeAll() }
            cache[digest] = Remembered(subject: subject, keyID: keyID, expires: Int64(min(expires, 1e15)) + leeway)
        }
        return subject
    }

    private static func header(of token: String) throws(Refusal) -> JWTHeader {
        let bytes = Array(token.utf8)
        guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")), let decoded = Base64.decode(bytes[..<dot], .url),
            let header = try? JSONDecoder().decode(JWTHeader.self, from: Data(decoded))
        else { throw Refusal("the token is malformed") }
        return header
    }

    private func currentKeys() -> KeySet? { state.withLock { $0.keys } }

    /// The key set: fetched again first when it lacks `keyID` (at most once a minute for that
    /// reason) or when there is none yet (once a minute while the provider fails); fetched in the
    /// background when it is stale.
    private func keys(having keyID: String) async throws(Refusal) -> KeySet {
        let now = clock()
        enum Next {
            case use(KeySet)
            case wait(Task<Void, Never>)
        }
        let next = state.withLock { state -> Next? in
            func minuteSince(_ instant: ContinuousClock.Instant?) -> Bool { instant.map { now - $0 >= Self.minimumFetchInterval } ?? true }
            func fetch() -> Next {
                let task = fetchTask()
                state.fetching = task
                state.lastFetch = now
                return .wait(task)
            }
            if let keys = state.keys {
                if keys.algorithms[keyID] != nil {
                    if let freshUntil = state.freshUntil, now >= freshUntil, state.fetching == nil, minuteSince(state.lastFetch) {
                        _ = fetch()
                    }
                    return .use(keys)
                }
                if let running = state.fetching { return .wait(running) }
                guard minuteSince(state.lastKeyIDFetch) else { return .use(keys) }
                state.lastKeyIDFetch = now
                return fetch()
            }
            if let running = state.fetching { return .wait(running) }
            return minuteSince(state.lastFetch) ? fetch() : nil
        }
        switch next {
        case .use(let keys): return keys
        case .wait(let task):
            await task.value
            guard let keys = currentKeys() else {
                throw Refusal("the identity provider's keys cannot be fetched; try again later", keysUnavailable: true)
            }
            return keys
        case nil:
            throw Refusal("the identity provider's keys cannot be fetched; try again later", keysUnavailable: true)
        }
    }

    private func fetchTask() -> Task<Void, Never> {
        Task { await self.fetch() }
    }

    /// One fetch; on failure the set in hand (if any) stays.
    private func fetch() async {
        let started = clock()
        do {
            let (body, maxAge) = try await Self.load(settings.keys)
            let keys = try await Self.keySet(from: body, logger: logger)
            let freshness = maxAge.map { min(max($0, Self.minimumFetchInterval), Self.maximumFreshness) } ?? Self.defaultFreshness
            state.withLock { state in
                state.keys = keys
                state.freshUntil = started + freshness
                state.fetching = nil
            }
            logger.debug("identity provider keys loaded", metadata: ["keys": "\(keys.algorithms.count)"])
        } catch {
            state.withLock { $0.fetching = nil }
            logger.warning("identity provider keys not loaded: \(error)")
        }
    }

    struct KeySetError: Error, CustomStringConvertible {
        let description: String
    }

    /// The set's bytes, and how long its `Cache-Control` lets it be kept (for a URL).
    private static func load(_ source: IdentityTokenSettings.KeySource) async throws -> ([UInt8], Duration?) {
        switch source {
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path), data.count <= maximumKeySetBytes else {
                throw KeySetError(description: "cannot read \(path)")
            }
            return (Array(data), nil)
        case .url(let url):
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await keySetClient.execute(request, timeout: .seconds(10))
            guard response.status == .ok else { throw KeySetError(description: "\(url) answered \(response.status.code)") }
            let body = try await response.body.collect(upTo: maximumKeySetBytes)
            return (Array(buffer: body), maxAge(cacheControl: response.headers["Cache-Control"]))
        }
    }

    /// `max-age` of `Cache-Control` fields (RFC 9111 §5.2.2.1); `no-store` and `no-cache` keep nothing.
    package static func maxAge(cacheControl fields: [String]) -> Duration? {
        var age: Duration?
        for directive in fields.flatMap({ $0.split(separator: ",") }) {
            let parts = directive.trimmingOptionalWhitespace().split(separator: "=", maxSplits: 1)
            switch parts.first?.lowercased() {
            case "no-store", "no-cache": return .zero
            case "max-age":
                if parts.count == 2, let seconds = Int64(parts[1].filter { $0 != "\"" }), seconds >= 0 { age = .seconds(seconds) }
            default: break
            }
        }
        return age
    }

    /// The set's keys that can sign RS256 or ES256 (RSA keys, P-256 EC keys, `use` absent or `sig`,
    /// `alg` absent or fitting): each key's algorithm is fixed here, by its type.
    private static func keySet(from body: [UInt8], logger: Logger) async throws -> KeySet {
        let set: PublishedKeys
        do {
            set = try JSONDecoder().decode(PublishedKeys.self, from: Data(body))
        } catch {
            throw KeySetError(description: "the key set is not a JWK Set")
        }
        let collection = JWTKeyCollection()
        var algorithms: [String: JWK.Algorithm] = [:]
        for published in set.keys {
            guard var key = published.key, let keyID = key.keyIdentifier?.string, published.use == nil || published.use == "sig" else { continue }
            let algorithm: JWK.Algorithm
            switch key.keyType {
            case .rsa: algorithm = .rs256
            case .ecdsa where key.curve == .ecdsa(.p256): algorithm = .es256
            default: continue
            }
            guard key.algorithm == nil || key.algorithm == algorithm else { continue }
            key.algorithm = algorithm
            do {
                try await collection.add(jwk: key)
                algorithms[keyID] = algorithm
            } catch {
                logger.notice("identity provider key skipped: \(error)", metadata: ["kid": "\(keyID)"])
            }
        }
        guard !algorithms.isEmpty else { throw KeySetError(description: "the key set has no RS256 or ES256 signing key") }
        return KeySet(collection: collection, algorithms: algorithms)
    }
}

/// AsyncHTTPClient's shared client retries a connection that fails until the request's deadline:
/// tokens would wait the whole 10 s for a provider that is down. This one fails at once.
private let keySetClient: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.timeout.connect = .seconds(5)
    return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
}()

/// A JWK Set whose keys are read one by one: a key of a type jwt-kit does not know (`oct`, an
/// encryption key) is skipped, not a reason to refuse the whole set.
private struct PublishedKeys: Decodable {
    struct Published: Decodable {
        let key: JWK?
        let use: String?

        private enum CodingKeys: String, CodingKey { case use }

        init(from decoder: any Decoder) throws {
            key = try? JWK(from: decoder)
            use = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .use)
        }
    }

    let keys: [Published]
}

/// A token's claims as the verifier reads them: `iss`, `aud` (a string or an array), `exp` and
/// `nbf` (numbers), and every other claim that is a string (one of which names the user). The
/// checks are ``IdentityTokenVerifier``'s, which knows the settings.
struct IdentityClaims: JWTPayload {
    var issuer: String?
    var audience: [String] = []
    var expiration: Double?
    var notBefore: Double?
    var strings: [String: String] = [:]

    private struct Name: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(issuer: String?, audience: [String], expiration: Double?, notBefore: Double? = nil, strings: [String: String]) {
        self.issuer = issuer
        self.audience = audience
        self.expiration = expiration
        self.notBefore = notBefore
        self.strings = strings
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Name.self)
        for name in container.allKeys {
            switch name.stringValue {
            case "iss": issuer = try container.decode(String.self, forKey: name)
            case "aud":
                audience = try (try? container.decode([String].self, forKey: name)) ?? [container.decode(String.self, forKey: name)]
            case "exp": expiration = try container.decode(Double.self, forKey: name)
            case "nbf": notBefore = try container.decode(Double.self, forKey: name)
            default: if let value = try? container.decode(String.self, forKey: name) { strings[name.stringValue] = value }
            }
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Name.self)
        for (name, value) in strings { try container.encode(value, forKey: Name(stringValue: name)) }
        try container.encodeIfPresent(issuer, forKey: Name(stringValue: "iss"))
        if audience.count == 1 {
            try container.encode(audience[0], forKey: Name(stringValue: "aud"))
        } else if !audience.isEmpty {
            try container.encode(audience, forKey: Name(stringValue: "aud"))
        }
        try container.encodeIfPresent(expiration, forKey: Name(stringValue: "exp"))
        try container.encodeIfPresent(notBefore, forKey: Name(stringValue: "nbf"))
    }

    /// Nothing here: the verifier checks the claims against its settings once jwt-kit has checked the signature.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
