import Crypto
package import Metrics
import PushCore
import PushInternals
import Synchronization

/// The ways a caller may sign in; each can be switched off (`serve --no-basic-auth`,
/// `--no-api-keys`), and identity tokens are taken only when their provider is configured.
public struct AuthenticationSchemes: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// A user's name and password (RFC 7617).
    public static let basic = AuthenticationSchemes(rawValue: 1)
    /// An API key as a bearer token (`push-backend apikey add`).
    public static let apiKeys = AuthenticationSchemes(rawValue: 2)
    /// An identity provider's JWT as a bearer token (``IdentityTokenSettings``).
    public static let identityTokens = AuthenticationSchemes(rawValue: 4)
    public static let all: AuthenticationSchemes = [.basic, .apiKeys, .identityTokens]

    /// What a request without credentials is told to send.
    var request: String {
        let names = [(Self.basic, "HTTP Basic credentials"), (.apiKeys, "an API key"), (.identityTokens, "an identity token")]
        return "send " + names.filter { contains($0.0) }.map(\.1).joined(separator: " or ")
    }
}

/// HTTP Basic authentication against the store's scrypt hashes, API keys, and identity tokens.
///
/// scrypt costs tens of milliseconds and 32 MiB on purpose, which a server cannot pay on every
/// request of a client that sends its credentials each time. So a successful check is remembered
/// (``LoginLimits/rememberFor``, renewed by each use up to ``LoginLimits/rememberAtMost``): as an
/// HMAC of the password under a key that lives only in this process (never the password), tied to
/// the stored hash it was checked against, so that a changed password or a removed user misses the
/// cache at once. Failures are never remembered. Checks of the same credentials that arrive
/// together share one scrypt run, and at most ``hashingThreads`` run at once, on their own
/// threads, so logins cannot starve the event loops or the database.
///
/// scrypt runs are budgeted (``LoginLimits``): each client address, and each user name from each
/// network (a /24 or a /64), has its own token bucket of checks; the checks waiting for a thread
/// are capped and served fairly (``PasswordCheckQueue``), so a flood of wrong passwords is refused
/// (429, or 503 for the flooding addresses) instead of queueing ahead of everyone else's first
/// login, and an attacker elsewhere cannot lock a user out of their own network. A name that logged
/// in from a network within ``recentSuccessWindow`` goes to the head of the queue from there.
/// Remembered logins run no check and spend no budget.
package final class Authenticator: Sendable {
    package struct User: Sendable, Hashable {
        package let name: String
        package let role: UserRole
    }

    package static let hashingThreads = 2
    /// Beyond this many remembered users the cache starts over (the cost is one scrypt run each).
    static let cacheCapacity = 10_000
    /// How long a login from a network gives its name's checks from there the head of the queue.
    static let recentSuccessWindow = Duration.seconds(7 * 24 * 3600)

    private struct Remembered {
        let storedHash: String
        let passwordMAC: [UInt8]
        let since: ContinuousClock.Instant
        var until: ContinuousClock.Instant
    }

    private struct Attempt: Hashable {
        let name: String
        let storedHash: String
        let passwordMAC: [UInt8]
    }

    private let store: any BackendStore
    /// The schemes this server takes; a request in another is refused (401).
    let schemes: AuthenticationSchemes
    /// Present when identity tokens are taken.
    private let identityTokens: IdentityTokenVerifier?
    private let queue: PasswordCheckQueue
    private let limits: LoginLimits
    private let addressBudget: RateLimiter<String>
    /// Keyed by name and the client's network.
    private let userBudget: RateLimiter<String>
    /// The cache's HMAC key: random per process, so remembered MACs mean nothing elsewhere.
    private let cacheKey: [UInt8] = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    private let remembered = Mutex<[String: Remembered]>([:])
    /// When each name last logged in from each network (name and network as the user budget's key).
    private let recentSuccesses = Mutex<[String: ContinuousClock.Instant]>([:])
    private let inFlight = Mutex<[Attempt: Task<Bool?, Never>]>([:])
    private let metrics: BackendMetrics
    /// What remembering and forgetting logins go by; tests turn it by hand.
    private let clock: @Sendable () -> ContinuousClock.Instant
    /// Checked for names that do not exist, so that they take as long as wrong passwords. Made on
    /// first use, once per process (so the first unknown name costs one hash more).
    private static let decoy = PasswordHash(hashing: "decoy", parameters: .standard)

    package convenience init(
        store: any BackendStore, limits: LoginLimits = LoginLimits(), schemes: AuthenticationSchemes = .all,
        identityTokens: IdentityTokenVerifier? = nil
    ) {
        self.init(store: store, limits: limits, schemes: schemes, identityTokens: identityTokens, metricsFactory: MetricsSystem.factory)
    }

    /// - Parameter schemes: The schemes taken; identity tokens only with a verifier.
    package init(
        store: any BackendStore, limits: LoginLimits, schemes: AuthenticationSchemes = .all, identityTokens: IdentityTokenVerifier? = nil,
        metricsFactory: any MetricsFactory, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.clock = clock
        self.store = store
        self.identityTokens = schemes.contains(.identityTokens) ? identityTokens : nil
        self.schemes = self.identityTokens == nil ? schemes.subtracting(.identityTokens) : schemes
        self.limits = limits
        addressBudget = RateLimiter(limits.perAddress)
        userBudget = RateLimiter(limits.perUser)
        queue = PasswordCheckQueue(
            threads: Self.hashingThreads, capacity: limits.maximumPendingChecks, perLane: limits.maximumPendingChecksPerNetwork)
        metrics = BackendMetrics(factory: metricsFactory)
    }

    package func shutdown() async {
        await queue.shutdown()
    }

    /// The client a request comes from: the peer, or, when the peer is one of
    /// ``LoginLimits/trustedProxies``, the client the proxies say they forwarded for (see
    /// ``ForwardedFor``).
    /// - Parameters:
    ///   - peer: The connection's remote address.
    ///   - forwardedFor: The request's `X-Forwarded-For` fields, in order; read only for a trusted peer.
    ///   - forwarded: The request's `Forwarded` fields (RFC 7239), in order; likewise.
    package func clientAddress(peer: String, forwardedFor: @autoclosure () -> [String], forwarded: @autoclosure () -> [String]) -> String {
        guard limits.trustedProxies.contains(peer) else { return peer }
        return ForwardedFor.client(forwardedFor: forwardedFor(), forwarded: forwarded(), trustedProxies: limits.trustedProxies) ?? peer
    }

    /// The user the `Authorization` header names, when the password is theirs.
    /// - Parameters:
    ///   - authorization: The `Authorization` header.
    ///   - client: The client's address, whose budget a password check spends.
    /// - Throws: `APIError.unauthorized` (with `WWW-Authenticate`) otherwise; `tooManyLogins` (429,
    ///   `Retry-After`) beyond the address's or the name's budget; `loginBusy` (503) when the
    ///   checks already waiting fill the queue.
    package func authenticate(authorization: String?, client: String) async throws(APIError) -> User {
        let store = store
        return try await authenticate(authorization: authorization, client: client) {
            principal throws(StoreError) -> (UserRecord, APIKeyRecord?, Void)? in
            switch principal {
            case .user(let name):
                guard let user = try await store.user(named: name) else { return nil }
                return (user, nil, ())
            case .apiKey(let id):
                guard let (apiKey, user) = try await store.apiKeyOwner(id: id) else { return nil }
                return (user, apiKey, ())
            }
        }.user
    }

    /// Whom a request's credentials name, for the store to read.
    package enum Principal: Sendable {
        /// A user's name, from Basic credentials or an identity token.
        case user(String)
        /// An API key's id, from a bearer token.
        case apiKey(id: String)
    }

    /// As ``authenticate(authorization:client:)``, with the user's row (and for an API key, the
    /// key's, whose owner the user is) read by `load` together with what the request is after, in
    /// one round trip: `load` returns nil when there is no such user or key. What it loaded is
    /// handed back only once the password or the key is checked.
    package func authenticate<Loaded: Sendable>(
        authorization: String?, client: String,
        loading load: (Principal) async throws(StoreError) -> (UserRecord, APIKeyRecord?, Loaded)?
    ) async throws(APIError) -> (user: User, loaded: Loaded) {
        do {
            return try await identify(authorization: authorization, client: client, loading: load)
        } catch {
            metrics.loginsRefused.increment()
            throw error
        }
    }

    private func identify<Loaded: Sendable>(
        authorization: String?, client: String, loading load: (Principal) async throws(StoreError) -> (UserRecord, APIKeyRecord?, Loaded)?
    ) async throws(APIError) -> (user: User, loaded: Loaded) {
        let asked = schemes.request
        guard let authorization else { throw .unauthorized(asked, offering: schemes) }
        if APIKey.isBearer(authorization) {
            let token = authorization.utf8.dropFirst(7).drop { $0 == UInt8(ascii: " ") }
            if let identityTokens, !token.starts(with: APIKey.prefix.utf8) {
                return try await identify(token: String(Substring(token)), verifier: identityTokens, client: client, loading: load)
            }
            guard schemes.contains(.apiKeys) else { throw .unauthorized("API keys are off on this server", offering: schemes) }
            return try await identify(APIKey(authorization: authorization), client: client, loading: load)
        }
        guard let (name, password) = Self.basicCredentials(authorization) else { throw .unauthorized(asked, offering: schemes) }
        guard schemes.contains(.basic) else { throw .unauthorized("Basic authentication is off on this server", offering: schemes) }
        let found: (UserRecord, Loaded)?
        do {
            found = UserRecord.isValidName(name) ? try await load(.user(name)).map { ($0.0, $0.2) } : nil
        } catch {
            throw .storage(error)
        }
        let mac = Array(HMAC<SHA256>.authenticationCode(for: Array(password.utf8), using: SymmetricKey(data: cacheKey)))
        if let (user, loaded) = found {
            let attempt = Attempt(name: user.name, storedHash: user.passwordHash, passwordMAC: mac)
            // Remembered credentials were checked against this very stored hash, so it is not
            // parsed again: most requests end here.
            if isRemembered(attempt, now: clock()) {
                metrics.loginCacheHits.increment()
                return (User(name: user.name, role: user.role), loaded)
            }
            if let hash = PasswordHash(encoded: user.passwordHash) {
                guard try await budgetedCheck(attempt, password: password, hash: hash, client: client) else {
                    throw .unauthorized("wrong user name or password", offering: schemes)
                }
                metrics.loginsChecked.increment()
                return (User(name: user.name, role: user.role), loaded)
            }
        }
        // No such user, or a stored hash that does not parse: budgeted like a wrong password, so
        // that unknown names are told apart by nothing.
        _ = try await budgetedCheck(
            Attempt(name: name, storedHash: Self.decoy.encoded, passwordMAC: mac), password: password, hash: Self.decoy, client: client)
        throw .unauthorized("wrong user name or password", offering: schemes)
    }

    /// The owner of an API key, read with the key on every request (so a revoked key fails on the next one);
    /// no password check, so no scrypt budget. A key that is malformed, unknown or wrong spends a
    /// check of the client's budget, so that guessing keys cannot keep the database busy.
    private func identify<Loaded: Sendable>(
        _ key: APIKey?, client: String, loading load: (Principal) async throws(StoreError) -> (UserRecord, APIKeyRecord?, Loaded)?
    ) async throws(APIError) -> (user: User, loaded: Loaded) {
        func refuse() -> APIError {
            if let wait = addressBudget.take(client) { return .tooManyLogins(retryAfter: wait) }
            return .unauthorized("unknown or revoked API key", offering: schemes)
        }
        guard let key else { throw refuse() }
        let found: (UserRecord, APIKeyRecord?, Loaded)?
        do { found = try await load(.apiKey(id: key.id)) } catch { throw .storage(error) }
        guard let (user, record, loaded) = found, let record, key.matches(record) else { throw refuse() }
        metrics.apiKeyLogins.increment()
        return (User(name: user.name, role: user.role), loaded)
    }

    /// The user an identity token names, created with the `user` role on first sight. A refused
    /// token spends a check of the client's budget, as a wrong API key does; a token checked before
    /// (``IdentityTokenVerifier``) spends nothing.
    private func identify<Loaded: Sendable>(
        token: String, verifier: IdentityTokenVerifier, client: String,
        loading load: (Principal) async throws(StoreError) -> (UserRecord, APIKeyRecord?, Loaded)?
    ) async throws(APIError) -> (user: User, loaded: Loaded) {
        let name: String
        do throws(IdentityTokenVerifier.Refusal) {
            name = try await verifier.userName(from: token)
        } catch {
            if error.keysUnavailable { throw .identityProviderUnavailable(error.message) }
            if let wait = addressBudget.take(client) { throw .tooManyLogins(retryAfter: wait) }
            throw .unauthorized(error.message, offering: schemes)
        }
        do throws(StoreError) {
            var found = try await load(.user(name))
            if found == nil {
                do throws(StoreError) {
                    try await store.addUser(UserRecord(name: name, passwordHash: UserRecord.noPassword, role: .user))
                } catch  where error.code == .conflict {
                    // Another request made the user first.
                }
                found = try await load(.user(name))
            }
            guard let (user, _, loaded) = found else { throw StoreError(.notFound, "the user \(name) was removed as it was created") }
            metrics.identityTokenLogins.increment()
            return (User(name: user.name, role: user.role), loaded)
        } catch {
            throw .storage(error)
        }
    }

    /// Takes a check from the client's and the name's budgets and runs it. A real login that
    /// succeeded gives its tokens back (the decoy never does, whatever password matches it); a
    /// check refused for a full queue gives back the name's token but not the address's, so that an
    /// address flooding the queue runs out of budget rather than keep it full.
    private func budgetedCheck(_ attempt: Attempt, password: String, hash: PasswordHash, client: String) async throws(APIError) -> Bool {
        // The same credentials already being checked: a client opening many connections at once
        // asks once, and the same guess repeated learns nothing more.
        if let running = inFlight.withLock({ $0[attempt] }) {
            guard let matches = await running.value else { throw .loginBusy }
            return matches
        }
        let network = NetworkAddress.network(of: client)
        let nameFromNetwork = attempt.name + " " + network
        if let wait = addressBudget.take(client) { throw .tooManyLogins(retryAfter: wait) }
        if let wait = userBudget.take(nameFromNetwork) {
            addressBudget.giveBack(client)
            throw .tooManyLogins(retryAfter: wait)
        }
        let isReal = attempt.storedHash != Self.decoy.encoded
        let priority =
            isReal
            && recentSuccesses.withLock { successes in
                successes[nameFromNetwork].map { clock() - $0 < Self.recentSuccessWindow } ?? false
            }
        let matches: Bool
        do throws(APIError) {
            matches = try await check(attempt, password: password, hash: hash, network: network, priority: priority)
        } catch {
            userBudget.giveBack(nameFromNetwork)
            throw error
        }
        if matches && isReal {
            addressBudget.giveBack(client)
            userBudget.giveBack(nameFromNetwork)
            recentSuccesses.withLock { successes in
                if successes.count >= Self.cacheCapacity { successes.removeAll() }
                successes[nameFromNetwork] = clock()
            }
        }
        return matches
    }

    /// Whether the credentials were checked recently; a hit keeps them remembered for another
    /// ``LoginLimits/rememberFor``, up to ``LoginLimits/rememberAtMost`` since the check.
    private func isRemembered(_ attempt: Attempt, now: ContinuousClock.Instant) -> Bool {
        remembered.withLock { cache in
            guard var entry = cache[attempt.name], entry.storedHash == attempt.storedHash, entry.until > now,
                constantTimeEquals(entry.passwordMAC, attempt.passwordMAC)
            else { return false }
            entry.until = min(now + limits.rememberFor, entry.since + limits.rememberAtMost)
            cache[attempt.name] = entry
            return true
        }
    }

    /// Runs scrypt, or joins the run already checking the same credentials against the same hash.
    /// - Throws: `loginBusy` when the queue refused the check (``PasswordCheckQueue``).
    /// - Parameter network: The client's network: its lane in the queue.
    private func check(_ attempt: Attempt, password: String, hash: PasswordHash, network: String, priority: Bool) async throws(APIError) -> Bool {
        let (task, isNew) = inFlight.withLock { running -> (Task<Bool?, Never>, Bool) in
            if let task = running[attempt] { return (task, false) }
            let queue = self.queue
            let task = Task { await queue.run(lane: network, priority: priority) { hash.matches(password) } }
            running[attempt] = task
            return (task, true)
        }
        let matches = await task.value
        if isNew {
            if matches == true && attempt.storedHash != Self.decoy.encoded {
                let now = clock()
                remembered.withLock { cache in
                    if cache.count >= Self.cacheCapacity { cache.removeAll() }
                    cache[attempt.name] = Remembered(
                        storedHash: attempt.storedHash, passwordMAC: attempt.passwordMAC, since: now, until: now + limits.rememberFor)
                }
            }
            // Remembered first: a request arriving in between finds the run or the cache, never neither.
            inFlight.withLock { _ = $0.removeValue(forKey: attempt) }
        }
        guard let matches else { throw .loginBusy }
        return matches
    }

    /// `Basic base64(name:password)` (RFC 7617): the scheme in any case, canonical base64, UTF-8,
    /// the name up to the first colon.
    package static func basicCredentials(_ header: String) -> (name: String, password: String)? {
        let bytes = Array(header.utf8)
        guard bytes.count > 6, bytes.count <= 4096, String(decoding: bytes[0..<6], as: UTF8.self).lowercased() == "basic " else { return nil }
        let encoded = Array(bytes[6...].drop { $0 == UInt8(ascii: " ") })
        guard let decoded = Base64.decode(encoded), let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
            let name = String(validating: decoded[..<colon], as: UTF8.self),
            let password = String(validating: decoded[(colon + 1)...], as: UTF8.self)
        else { return nil }
        return (name, password)
    }
}

/// The budgets of password checks (scrypt runs), and how long a login is remembered. Logins already
/// remembered spend nothing.
public struct LoginLimits: Sendable, Hashable {
    /// Checks one client address may start: a burst, then a steady rate.
    public var perAddress: RateLimit
    /// Checks one user name may be the subject of from one network (a /24, or a /64): a name under
    /// attack from elsewhere still logs in from its own network.
    public var perUser: RateLimit
    /// Checks waiting for the hashing threads beyond each network's first; beyond it, `loginBusy`
    /// (503). A network's first check always waits its turn (``PasswordCheckQueue``).
    public var maximumPendingChecks: Int
    /// Checks one network (a /24, or a /64) may have waiting.
    public var maximumPendingChecksPerNetwork: Int
    /// How long a successful login is remembered after its last use.
    public var rememberFor: Duration
    /// How long a successful login is remembered at most, however often it is used.
    public var rememberAtMost: Duration
    /// Proxies whose `X-Forwarded-For` or `Forwarded` names the client (exact addresses). Behind a load balancer
    /// every request comes from it, and without this one budget would serve every client.
    public var trustedProxies: Set<String>

    public init(
        perAddress: RateLimit = RateLimit(burst: 10, perSecond: 1), perUser: RateLimit = RateLimit(burst: 10, perSecond: 0.1),
        maximumPendingChecks: Int = 64, maximumPendingChecksPerNetwork: Int = 4, rememberFor: Duration = .seconds(600),
        rememberAtMost: Duration = .seconds(12 * 3600), trustedProxies: Set<String> = []
    ) {
        self.perAddress = perAddress
        self.perUser = perUser
        self.maximumPendingChecks = maximumPendingChecks
        self.maximumPendingChecksPerNetwork = maximumPendingChecksPerNetwork
        self.rememberFor = rememberFor
        self.rememberAtMost = rememberAtMost
        self.trustedProxies = trustedProxies
    }
}

/// Client addresses as the login budgets see them.
package enum NetworkAddress {
    /// Whether `text` is an IPv4 or IPv6 address.
    package static func isIPAddress(_ text: String) -> Bool { ipAddressBytes(text) != nil }

    /// Whether a server bound to `host` is reachable from this machine only: `localhost`, an IPv4
    /// address in 127.0.0.0/8 or `::1`.
    package static func isLoopback(_ host: String) -> Bool {
        guard let bytes = ipAddressBytes(host) else { return host == "localhost" }
        return bytes.count == 4 ? bytes[0] == 127 : bytes == Array(repeating: 0, count: 15) + [1]
    }

    /// The /24 of an IPv4 address or the /64 of an IPv6 one, canonically spelt; anything else as is.
    static func network(of address: String) -> String {
        guard let bytes = ipAddressBytes(address) else { return address }
        let prefix = bytes.count == 4 ? bytes.prefix(3) : bytes.prefix(8)
        return prefix.map { String($0, radix: 16) }.joined(separator: bytes.count == 4 ? "." : ":") + (bytes.count == 4 ? "/24" : "/64")
    }
}
