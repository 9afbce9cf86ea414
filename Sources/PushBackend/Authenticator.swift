import Crypto
import NIOPosix
import PushCore
import Synchronization

/// HTTP Basic authentication against the store's scrypt hashes.
///
/// scrypt costs tens of milliseconds and 32 MiB on purpose, which a server cannot pay on every
/// request of a client that sends its credentials each time. So a successful check is remembered
/// for ``cacheLifetime``: as an HMAC of the password under a key that lives only in this process
/// (never the password), tied to the stored hash it was checked against, so that a changed
/// password or a removed user misses the cache at once. Failures are never remembered. Checks of the
/// same credentials that arrive together share one scrypt run, and at most ``hashingThreads`` run at
/// once, on their own threads, so logins cannot starve the event loops or the database.
///
/// scrypt runs are budgeted (``LoginLimits``): each client address and each user name has its own
/// token bucket of checks, and the checks waiting for a thread are capped, so a flood of wrong
/// passwords is refused (429, or 503 when the queue is full) instead of queueing ahead of everyone
/// else's first login. Remembered logins run no check and spend no budget.
public final class Authenticator: Sendable {
    public struct User: Sendable, Hashable {
        public let name: String
        public let role: UserRole
    }

    public static let hashingThreads = 2
    public static let cacheLifetime = Duration.seconds(600)
    /// Beyond this many remembered users the cache starts over (the cost is one scrypt run each).
    static let cacheCapacity = 10_000

    private struct Remembered {
        let storedHash: String
        let passwordMAC: [UInt8]
        let until: ContinuousClock.Instant
    }

    private struct Attempt: Hashable {
        let name: String
        let storedHash: String
        let passwordMAC: [UInt8]
    }

    private let store: any BackendStore
    private let pool: NIOThreadPool
    private let limits: LoginLimits
    private let addressBudget: RateLimiter<String>
    private let userBudget: RateLimiter<String>
    /// scrypt runs started and not finished (joined attempts count once).
    private let pendingChecks = Mutex(0)
    /// The cache's HMAC key: random per process, so remembered MACs mean nothing elsewhere.
    private let cacheKey: [UInt8] = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    private let remembered = Mutex<[String: Remembered]>([:])
    private let inFlight = Mutex<[Attempt: Task<Bool, Never>]>([:])
    private let metrics = BackendMetrics()
    /// Checked for names that do not exist, so that they take as long as wrong passwords. Made on
    /// first use, once per process (so the first unknown name costs one hash more).
    private static let decoy = PasswordHash(hashing: "decoy", parameters: .standard)

    public init(store: any BackendStore, limits: LoginLimits = LoginLimits()) {
        self.store = store
        self.limits = limits
        addressBudget = RateLimiter(limits.perAddress)
        userBudget = RateLimiter(limits.perUser)
        pool = NIOThreadPool(numberOfThreads: Self.hashingThreads)
        pool.start()
    }

    public func shutdown() async {
        let pool = self.pool
        await Task { try? await pool.shutdownGracefully() }.value  // also when the caller is cancelled
    }

    /// The user the `Authorization` header names, when the password is theirs.
    /// - Parameters:
    ///   - authorization: The `Authorization` header.
    ///   - client: The client's address, whose budget a password check spends.
    /// - Throws: `APIError.unauthorized` (with `WWW-Authenticate`) otherwise; `tooManyLogins` (429,
    ///   `Retry-After`) beyond the address's or the name's budget; `loginBusy` (503) when the
    ///   checks already waiting fill the queue.
    public func authenticate(authorization: String?, client: String) async throws(APIError) -> User {
        do {
            return try await identify(authorization: authorization, client: client)
        } catch {
            metrics.loginsRefused.increment()
            throw error
        }
    }

    private func identify(authorization: String?, client: String) async throws(APIError) -> User {
        guard let authorization, let (name, password) = Self.basicCredentials(authorization) else {
            throw .unauthorized("send HTTP Basic credentials")
        }
        let user: UserRecord?
        do {
            user = UserRecord.isValidName(name) ? try await store.user(named: name) : nil
        } catch {
            throw .storage(error)
        }
        let mac = Array(HMAC<SHA256>.authenticationCode(for: Array(password.utf8), using: SymmetricKey(data: cacheKey)))
        guard let user, let hash = PasswordHash(encoded: user.passwordHash) else {
            // Budgeted like a wrong password, so that unknown names are told apart by nothing.
            _ = try await budgetedCheck(
                Attempt(name: name, storedHash: Self.decoy.encoded, passwordMAC: mac), password: password, hash: Self.decoy, client: client)
            throw .unauthorized("wrong user name or password")
        }
        let attempt = Attempt(name: user.name, storedHash: user.passwordHash, passwordMAC: mac)
        if isRemembered(attempt) {
            metrics.loginCacheHits.increment()
        } else {
            guard try await budgetedCheck(attempt, password: password, hash: hash, client: client) else {
                throw .unauthorized("wrong user name or password")
            }
            metrics.loginsChecked.increment()
        }
        return User(name: user.name, role: user.role)
    }

    /// Takes a check from the client's and the name's budgets and runs it. Only failures drain the
    /// budgets: a check that never ran (the queue was full), or a real login that succeeded, gives
    /// its tokens back. (The decoy never does, whatever password matches it.)
    private func budgetedCheck(_ attempt: Attempt, password: String, hash: PasswordHash, client: String) async throws(APIError) -> Bool {
        // The same credentials already being checked: a client opening many connections at once
        // asks once, and the same guess repeated learns nothing more.
        if let running = inFlight.withLock({ $0[attempt] }) { return await running.value }
        if let wait = addressBudget.take(client) { throw .tooManyLogins(retryAfter: wait) }
        if let wait = userBudget.take(attempt.name) {
            addressBudget.giveBack(client)
            throw .tooManyLogins(retryAfter: wait)
        }
        let matches: Bool
        do throws(APIError) {
            matches = try await check(attempt, password: password, hash: hash)
        } catch {
            addressBudget.giveBack(client)
            userBudget.giveBack(attempt.name)
            throw error
        }
        if matches && attempt.storedHash != Self.decoy.encoded {
            addressBudget.giveBack(client)
            userBudget.giveBack(attempt.name)
        }
        return matches
    }

    private func isRemembered(_ attempt: Attempt) -> Bool {
        remembered.withLock { cache in
            guard let entry = cache[attempt.name], entry.storedHash == attempt.storedHash, entry.until > .now else { return false }
            return TokenEncoding.constantTimeEquals(entry.passwordMAC, attempt.passwordMAC)
        }
    }

    /// Runs scrypt, or joins the run already checking the same credentials against the same hash.
    /// - Throws: `loginBusy` when ``LoginLimits/maximumPendingChecks`` runs are already waiting.
    private func check(_ attempt: Attempt, password: String, hash: PasswordHash) async throws(APIError) -> Bool {
        let started = inFlight.withLock { running -> (task: Task<Bool, Never>, isNew: Bool)? in
            if let task = running[attempt] { return (task, false) }
            let admitted = pendingChecks.withLock { pending in
                guard pending < limits.maximumPendingChecks else { return false }
                pending += 1
                return true
            }
            guard admitted else { return nil }
            let pool = self.pool
            let task = Task { (try? await pool.runIfActive { hash.matches(password) }) ?? false }
            running[attempt] = task
            return (task, true)
        }
        guard let (task, isNew) = started else { throw .loginBusy }
        let matches = await task.value
        guard isNew else { return matches }
        pendingChecks.withLock { $0 -= 1 }
        if matches && attempt.storedHash != Self.decoy.encoded {
            remembered.withLock { cache in
                if cache.count >= Self.cacheCapacity { cache.removeAll() }
                cache[attempt.name] = Remembered(storedHash: attempt.storedHash, passwordMAC: attempt.passwordMAC, until: .now + Self.cacheLifetime)
            }
        }
        // Remembered first: a request arriving in between finds the run or the cache, never neither.
        inFlight.withLock { _ = $0.removeValue(forKey: attempt) }
        return matches
    }

    /// `Basic base64(name:password)` (RFC 7617): the scheme in any case, canonical base64, UTF-8,
    /// the name up to the first colon.
    package static func basicCredentials(_ header: String) -> (name: String, password: String)? {
        let bytes = Array(header.utf8)
        guard bytes.count > 6, bytes.count <= 4096, String(decoding: bytes[0..<6], as: UTF8.self).lowercased() == "basic " else { return nil }
        let encoded = Array(bytes[6...].drop { $0 == UInt8(ascii: " ") })
        guard let decoded = TokenEncoding.base64Decoded(encoded), let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
            let name = String(validating: decoded[..<colon], as: UTF8.self),
            let password = String(validating: decoded[(colon + 1)...], as: UTF8.self)
        else { return nil }
        return (name, password)
    }
}

/// The budgets of password checks (scrypt runs). Logins already remembered spend nothing.
public struct LoginLimits: Sendable, Hashable {
    /// Checks one client address may start: a burst, then a steady rate.
    public var perAddress: RateLimit
    /// Checks one user name may be the subject of, from anywhere (a name under attack locks out
    /// first logins with that name only, and only until its budget refills).
    public var perUser: RateLimit
    /// Checks waiting for or running on the hashing threads; beyond it, `loginBusy` (503).
    public var maximumPendingChecks: Int

    public init(
        perAddress: RateLimit = RateLimit(burst: 10, perSecond: 1), perUser: RateLimit = RateLimit(burst: 10, perSecond: 0.1),
        maximumPendingChecks: Int = 64
    ) {
        self.perAddress = perAddress
        self.perUser = perUser
        self.maximumPendingChecks = maximumPendingChecks
    }
}
