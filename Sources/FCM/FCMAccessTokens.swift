import CoreMetrics
import HTTP2Transport
import Logging
import NIOCore
import NIOHPACK
import PushInternals
import PushJSON
import Synchronization

/// The OAuth 2 scopes the client asks for.
package enum FCMAccessScope {
    /// Sending with FCM, and nothing else.
    package static let messaging = "https://www.googleapis.com/auth/firebase.messaging"
}

/// The OAuth 2 access token FCM requests carry, from the service account's token URI: a signed
/// assertion exchanged for a token (RFC 7523), kept until shortly before it expires, fetched once
/// however many sends need it at the same time, and dropped when FCM calls it invalid.
final class FCMAccessTokens: Sendable {
    static let grantType = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"

    struct Token: Sendable {
        let value: String
        let expires: ContinuousClock.Instant
        /// When the next caller fetches a new one rather than use this.
        let renewal: ContinuousClock.Instant
    }

    private struct State {
        var token: Token?
        var fetch: Task<Result<Token, FCMTransportFailure>, Never>?
    }

    let account: FCMServiceAccount
    let pool: HTTP2ConnectionPool
    let path: String
    /// `fcm_access_tokens_fetched_total`.
    let fetched: Counter
    let logger: Logger
    private let state = Mutex(State())

    init(account: FCMServiceAccount, pool: HTTP2ConnectionPool, path: String, fetched: Counter, logger: Logger) {
        self.account = account
        self.pool = pool
        self.path = path
        self.fetched = fetched
        self.logger = logger
    }

    /// A token valid for a while yet: the one kept, or a new one.
    func current() async -> Result<String, FCMTransportFailure> {
        enum Next {
            case use(String)
            case wait(Task<Result<Token, FCMTransportFailure>, Never>)
        }
        let now = ContinuousClock.now
        let next = state.withLock { state -> Next in
            if let token = state.token, now < token.renewal { return .use(token.value) }
            if let fetch = state.fetch { return .wait(fetch) }
            let fetch = Task { await self.fetchAndKeep() }
            state.fetch = fetch
            return .wait(fetch)
        }
        let fetch: Task<Result<Token, FCMTransportFailure>, Never>
        switch next {
        case .use(let token): return .success(token)
        case .wait(let task): fetch = task
        }
        switch await fetch.value {
        case .success(let token): return .success(token.value)
        case .failure(let failure):
            // A token that has not expired yet still serves while its renewal fails.
            if let kept = state.withLock({ $0.token }), ContinuousClock.now < kept.expires { return .success(kept.value) }
            return .failure(failure)
        }
    }

    /// Forgets `rejected` (FCM answered 401 to it), so that the next caller fetches a new one.
    /// - Returns: Whether it was the token kept: the first of the requests refused with it says so.
    @discardableResult
    func invalidate(_ rejected: String) -> Bool {
        state.withLock { state in
            guard state.token?.value == rejected else { return false }
            state.token = nil
            return true
        }
    }

    private func fetchAndKeep() async -> Result<Token, FCMTransportFailure> {
        let result = await fetch()
        state.withLock { state in
            state.fetch = nil
            if case .success(let token) = result { state.token = token }
        }
        return result
    }

    private func fetch() async -> Result<Token, FCMTransportFailure> {
        let assertion: String
        do {
            assertion = try account.assertion(scope: FCMAccessScope.messaging, issuedAt: unixSeconds())
        } catch {
            return .failure(.noAccessToken("the service account's key cannot sign"))
        }
        var headers = HPACKHeaders()
        headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        headers.add(name: "accept", value: "application/json")
        let body = ByteBuffer(string: "grant_type=" + Self.grantType + "&assertion=" + assertion)
        let request = HTTP2Request(method: "POST", path: path, headers: headers, body: body, responseLimit: 64 << 10)
        let started = ContinuousClock.now
        fetched.increment()
        switch await pool.execute(request) {
        case .failure(let failure):
            logger.warning("access token request failed", metadata: ["result": "\(failure.failure)"])
            return .failure(.noAccessToken(failure.failure.description))
        case .success(let response):
            var parser = JSONParser()
            let document = try? parser.parse(Array(response.body.readableBytesView))
            let root = document?.root
            guard response.status == 200 else {
                // Google's `{"error": "invalid_grant", "error_description": "…"}`: its words, escaped and cut short.
                let error = root?["error"]?.string ?? "status \(response.status)"
                let detail = root?["error_description"]?.string.map { ": " + $0 } ?? ""
                let problem = escapingControls((error + detail).prefix(200))
                logger.error("the token URI refused the service account", metadata: ["answer": "\(problem)"])
                return .failure(.noAccessToken(problem))
            }
            guard let value = root?["access_token"]?.string, !value.isEmpty, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                return .failure(.noAccessToken("the token URI answered without an access token"))
            }
            let lifetime = max(root?["expires_in"]?.int ?? 3600, 1)
            // Renewed with a quarter of its life left, at most five minutes before it expires.
            let margin = min(lifetime / 4, 300)
            return .success(Token(value: value, expires: started + .seconds(lifetime), renewal: started + .seconds(lifetime - margin)))
        }
    }
}
