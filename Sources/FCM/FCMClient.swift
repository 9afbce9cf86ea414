public import CoreMetrics
public import HTTP2Transport
public import Logging
public import NIOCore
import NIOHPACK
public import NIOSSL
public import PushFCM
import PushInternals
import PushJSON

/// Where and how the client talks to FCM.
public struct FCMClientConfiguration: Sendable {
    public static let production = "https://fcm.googleapis.com"

    /// `https://host[:port]`: ``production``, or an emulator.
    public var endpoint: String
    public var serviceAccount: FCMServiceAccount
    /// The project messages are sent in: the service account's, unless given.
    public var projectID: String
    /// Trust these roots instead of the system's (an emulator's certificate), for the endpoint and
    /// the token URI alike; verification stays on.
    public var trustRoots: [NIOSSLCertificate]?
    /// Requests in flight at once, over all of a send's tokens: HTTP/2 streams on the connections.
    public var maximumConcurrentRequests: Int
    /// HTTP/2 connections to the endpoint at most, each on its own event loop, opened as requests come.
    public var connections: Int
    public var requestTimeout: TimeAmount
    public var connectTimeout: TimeAmount
    /// A connection that has read nothing for this long is sent a PING.
    public var pingInterval: TimeAmount
    /// A connection that reads nothing within this of its PING is closed.
    public var pingTimeout: TimeAmount
    /// An HTTP proxy to tunnel through (`CONNECT`), for the endpoint and the token URI;
    /// `FCMProxy.fromEnvironment(for:environment:)` reads `HTTPS_PROXY` and `NO_PROXY`.
    public var proxy: FCMProxy?
    /// Where the client's metrics go; swift-metrics' bootstrapped factory when nil.
    public var metricsFactory: (any MetricsFactory)?
    public var retry: FCMRetryPolicy

    public init(
        endpoint: String = Self.production, serviceAccount: FCMServiceAccount, projectID: String? = nil,
        trustRoots: [NIOSSLCertificate]? = nil, maximumConcurrentRequests: Int = 100, connections: Int = 1,
        requestTimeout: TimeAmount = .seconds(10), connectTimeout: TimeAmount = .seconds(10), pingInterval: TimeAmount = .seconds(60),
        pingTimeout: TimeAmount = .seconds(10), proxy: FCMProxy? = nil, metricsFactory: (any MetricsFactory)? = nil,
        retry: FCMRetryPolicy = FCMRetryPolicy()
    ) {
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.serviceAccount = serviceAccount
        self.projectID = projectID ?? serviceAccount.projectID
        self.trustRoots = trustRoots
        self.maximumConcurrentRequests = max(1, maximumConcurrentRequests)
        self.connections = max(1, connections)
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.proxy = proxy
        self.metricsFactory = metricsFactory
        self.retry = retry
    }
}

/// The proxy the client's connections tunnel through.
public typealias FCMProxy = HTTPProxy

/// When a request is sent again: after 429 and 5xx answers (FCM did not take the message), with
/// full jitter or after the `Retry-After` FCM asks for, and when it was never written. A request
/// that was written and got no answer may have been delivered: it goes again only when
/// ``resendsUnanswered`` says so.
public struct FCMRetryPolicy: Sendable {
    /// Attempts per target, the first included (a new access token after a 401 is one more).
    public var maximumAttempts: Int
    /// The first backoff's ceiling; each retry doubles it, and the wait is random below it.
    public var baseDelay: Duration
    public var maximumDelay: Duration
    /// A `Retry-After` longer than this is not waited for: the target's result is the refusal.
    public var maximumRetryAfter: Duration
    /// Retries one send may make over all its targets: `minimumRetries` plus this share of them.
    public var retryBudgetRatio: Double
    public var minimumRetries: Int
    /// Send again a request that was written and got no answer (a timeout, a lost connection): the
    /// device may then show the message twice.
    public var resendsUnanswered: Bool

    public init(
        maximumAttempts: Int = 4, baseDelay: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(10),
        maximumRetryAfter: Duration = .seconds(60), retryBudgetRatio: Double = 0.2, minimumRetries: Int = 10,
        resendsUnanswered: Bool = false
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.retryBudgetRatio = retryBudgetRatio
        self.minimumRetries = minimumRetries
        self.resendsUnanswered = resendsUnanswered
    }
}

/// Sends FCM HTTP v1 messages over HTTP/2: one `messages:send` request per token on a pool of
/// connections, as many streams at once as FCM allows, a typed result per token, retries where FCM
/// did not take the message, and an access token fetched once and renewed before it expires. Log
/// lines carry shortened registration tokens, never keys, access tokens or messages.
///
/// Its metrics, through swift-metrics (nothing is recorded unless a backend is bootstrapped or a
/// factory given), carry statuses and FCM's codes, never tokens or topics:
/// - `fcm_sends_total{status, code}`: one per target's result; `status` is the HTTP status or
///   `none` (no answer), `code` FCM's error code, `other` or `none`.
/// - `fcm_request_duration_seconds`: each request, from its start to its answer or failure.
/// - `fcm_retries_total`: requests made again by the retry policy (or after a 401).
/// - `fcm_access_tokens_fetched_total`: requests to the token URI.
/// - `fcm_resends_total`, `fcm_goaways_total`, `fcm_pings_total`, `fcm_pings_failed_total`,
///   `fcm_connections_open`: the connections' own.
public final class FCMClient: Sendable {
    public let configuration: FCMClientConfiguration
    private let pools: Result<(send: HTTP2ConnectionPool, tokens: FCMAccessTokens), FCMClientError>
    let metrics: HTTP2TransportMetrics
    let logger: Logger
    /// `/v1/projects/{project}/messages:send`.
    let sendPath: String

    /// Opens no connection: the first send does. An endpoint or token URI that is not
    /// `https://host[:port]` (the token URI may have a path), or TLS settings BoringSSL refuses,
    /// make every send throw ``FCMClientError``.
    public init(configuration: FCMClientConfiguration, logger: Logger = Logger(label: "fcm")) {
        self.configuration = configuration
        self.logger = logger
        sendPath = "/v1/projects/\(configuration.projectID)/messages:send"
        let factory = configuration.metricsFactory ?? MetricsSystem.factory
        let metrics = HTTP2TransportMetrics(prefix: "fcm", reasonDimension: "code", factory: factory)
        self.metrics = metrics
        let tokensFetched = Counter(label: "fcm_access_tokens_fetched_total", dimensions: [], factory: factory)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        if let roots = configuration.trustRoots { tls.trustRoots = .certificates(roots) }
        let sslContext: NIOSSLContext
        do {
            sslContext = try NIOSSLContext(configuration: tls)
        } catch {
            pools = .failure(FCMClientError(code: .invalidTLSConfiguration, message: "TLS cannot be set up: \(error)"))
            return
        }
        guard isASCIIWord(configuration.projectID, lengths: 1...100, punctuation: "-.:") else {
            pools = .failure(FCMClientError(code: .invalidEndpoint, message: "the project id is not letters, digits, '-', '.' and ':'"))
            return
        }
        func pool(for origin: HTTPSOrigin) -> HTTP2ConnectionPool {
            HTTP2ConnectionPool(
                configuration: .init(
                    service: "FCM", host: origin.host, port: origin.port, connections: configuration.connections,
                    connectTimeout: configuration.connectTimeout, requestTimeout: configuration.requestTimeout,
                    pingInterval: configuration.pingInterval, pingTimeout: configuration.pingTimeout, proxy: configuration.proxy,
                    maximumStreamsPerConnection: 1000, goAwayReason: { _ in nil }),
                sslContext: sslContext, logger: logger, metrics: metrics)
        }
        guard let origin = HTTPSOrigin(configuration.endpoint) else {
            pools = .failure(FCMClientError(code: .invalidEndpoint, message: "\(configuration.endpoint) is not https://host[:port]"))
            return
        }
        let tokenURI = configuration.serviceAccount.tokenURI
        let pathStart = tokenURI.dropFirst("https://".count).firstIndex(of: "/") ?? tokenURI.endIndex
        guard let tokenOrigin = HTTPSOrigin(String(tokenURI[..<pathStart])) else {
            pools = .failure(FCMClientError(code: .invalidEndpoint, message: "the token URI is not https://host[:port]/path"))
            return
        }
        let send = pool(for: origin)
        let tokenPool = tokenOrigin == origin ? send : pool(for: tokenOrigin)
        let path = pathStart == tokenURI.endIndex ? "/" : String(tokenURI[pathStart...])
        pools = .success(
            (send, FCMAccessTokens(account: configuration.serviceAccount, pool: tokenPool, path: path, fetched: tokensFetched, logger: logger)))
    }

    /// Closes the connections; requests still waiting or unanswered fail. Call once, when no send is running.
    public func shutdown() async throws {
        guard case .success(let pools) = pools else { return }
        await pools.send.shutdown()
        if pools.tokens.pool !== pools.send { await pools.tokens.pool.shutdown() }
    }

    /// Sends `message` to every registration token in `tokens` (its own target is ignored).
    /// - Returns: One result per token, in the order of `tokens`.
    /// - Throws: ``FCMClientError`` when the message breaks FCM's rules.
    public func send(_ message: FCMMessage, to tokens: [String]) async throws(FCMClientError) -> [FCMSendResult] {
        try await send(try Self.untargetedBody(message), to: tokens)
    }

    /// Sends an encoded body, `{"message": {…}}` as FCM takes it (from `pushcore build --fcm`, say),
    /// to every registration token in `tokens`: each request is the body with the token put first in
    /// its message, the rest byte for byte.
    /// - Throws: ``FCMClientError`` when the body is not JSON, breaks FCM's rules, or already has a target.
    public func send(encodedMessage body: [UInt8], to tokens: [String]) async throws(FCMClientError) -> [FCMSendResult] {
        try await send(try Self.checked(body), to: tokens)
    }

    /// Sends `message` to every device subscribed to `topic` (the name, without `/topics/`).
    public func send(_ message: FCMMessage, toTopic topic: String) async throws(FCMClientError) -> FCMSendResult {
        try await send(try Self.untargetedBody(message), toTopic: topic)
    }

    /// Sends an encoded body without a target to the devices subscribed to `topic`.
    public func send(encodedMessage body: [UInt8], toTopic topic: String) async throws(FCMClientError) -> FCMSendResult {
        try await send(try Self.checked(body), toTopic: topic)
    }

    /// Sends `message` to the devices a condition over topics picks (`'a' in topics && 'b' in topics`).
    public func send(_ message: FCMMessage, toCondition condition: String) async throws(FCMClientError) -> FCMSendResult {
        try await send(try Self.untargetedBody(message), toCondition: condition)
    }

    /// Sends an encoded body without a target to the devices a condition picks.
    public func send(encodedMessage body: [UInt8], toCondition condition: String) async throws(FCMClientError) -> FCMSendResult {
        try await send(try Self.checked(body), toCondition: condition)
    }

    /// A body whose message a target is put into: the bytes up to the message's `{`, and the rest.
    struct Body: Sendable {
        let bytes: [UInt8]
        /// Just after the message object's `{`.
        let afterBrace: Int
        /// The message has members, which the target's must be separated from.
        let hasMembers: Bool

        /// - Parameter messageStart: The offset of the message object's `{`.
        init(_ bytes: [UInt8], messageStart: Int) {
            self.bytes = bytes
            afterBrace = messageStart + 1
            // JSON's whitespace is space, tab, LF and CR.
            hasMembers = bytes[afterBrace...].first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } != UInt8(ascii: "}")
        }

        /// The body with a member `writeMember` writes (`"key":value`) first in its message.
        func targeted(_ writeMember: (inout ByteBuffer) -> Void) -> ByteBuffer {
            var buffer = ByteBuffer()
            buffer.reserveCapacity(bytes.count + 300)
            buffer.writeBytes(bytes[..<afterBrace])
            writeMember(&buffer)
            if hasMembers { buffer.writeInteger(UInt8(ascii: ",")) }
            buffer.writeBytes(bytes[afterBrace...])
            return buffer
        }
    }

    /// An encoded body FCM would take once a target is put in: JSON, clean under PushFCM's lint,
    /// and without a target of its own.
    static func checked(_ body: [UInt8]) throws(FCMClientError) -> Body {
        var parser = JSONParser()
        let document: JSONDocument
        do {
            document = try parser.parse(body)
        } catch {
            throw FCMClientError(code: .invalidMessage, message: "the body is not JSON: \(error)")
        }
        if let finding = FCMLinter.lint(document).first(where: { $0.severity == .error }) {
            throw FCMClientError(code: finding.code == .payloadTooLarge ? .payloadTooLarge : .invalidMessage, message: finding.description)
        }
        guard let message = document.root["message"] else { throw FCMClientError(code: .invalidMessage, message: "the body has no message") }
        for key in ["token", "fid", "topic", "condition"] where message[key] != nil {
            throw FCMClientError(code: .invalidTarget, message: "the message already has a \(key); give the body without a target")
        }
        return Body(body, messageStart: message.byteOffset)
    }

    private func send(_ body: Body, to tokens: [String]) async throws(FCMClientError) -> [FCMSendResult] {
        let (pool, accessTokens) = try pools.get()
        let budget = RetryBudget(configuration.retry.minimumRetries + Int(Double(tokens.count) * configuration.retry.retryBudgetRatio))
        let limit = configuration.maximumConcurrentRequests

        @Sendable func sendOne(_ token: String) async -> FCMSendResult {
            guard isASCIIWord(token, lengths: 1...4096, punctuation: "-_:") else {
                let outcome = FCMSendOutcome.failed(.invalidRegistrationToken, mayHaveBeenDelivered: false)
                metrics.countSend(outcome.metricLabels)
                return FCMSendResult(target: token, outcome: outcome, attempts: 0)
            }
            // Letters, digits and `-_:`: the token needs no escaping.
            let request = body.targeted { buffer in
                buffer.writeStaticString(#""token":""#)
                buffer.writeString(token)
                buffer.writeInteger(UInt8(ascii: "\""))
            }
            return await exchange(request, target: token, on: pool, accessTokens: accessTokens, budget: budget)
        }

        return await boundedConcurrentMap(count: tokens.count, limit: limit) { index in await sendOne(tokens[index]) }
    }

    private func send(_ body: Body, toTopic topic: String) async throws(FCMClientError) -> FCMSendResult {
        guard isASCIIWord(topic, lengths: 1...900, punctuation: "-_.~%") else {
            throw FCMClientError(code: .invalidTarget, message: "a topic name is letters, digits and '-_.~%'")
        }
        return try await send(body, member: "topic", value: topic, label: "/topics/" + topic)
    }

    private func send(_ body: Body, toCondition condition: String) async throws(FCMClientError) -> FCMSendResult {
        guard !condition.isEmpty, condition.utf8.count <= 1000, condition.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw FCMClientError(code: .invalidTarget, message: "a condition is printable ASCII, 1 to 1,000 bytes")
        }
        return try await send(body, member: "condition", value: condition, label: condition)
    }

    private func send(_ body: Body, member key: String, value: String, label: String) async throws(FCMClientError) -> FCMSendResult {
        let (pool, accessTokens) = try pools.get()
        var member = Array("\"\(key)\":".utf8)
        try? JSON.string(value).write(into: &member)  // a string: always valid
        return await exchange(
            body.targeted { $0.writeBytes(member) }, target: label, on: pool, accessTokens: accessTokens,
            budget: RetryBudget(configuration.retry.minimumRetries))
    }

    /// `message` encoded without its target: `{"message":{`, then its members.
    static func untargetedBody(_ message: FCMMessage) throws(FCMClientError) -> Body {
        var untargeted = message
        untargeted.target = nil
        do throws(FCMMessageError) {
            return Body(try untargeted.encoded(), messageStart: #"{"message":"#.utf8.count)
        } catch {
            throw FCMClientError(code: error.code == .payloadTooLarge ? .payloadTooLarge : .invalidMessage, message: error.message)
        }
    }

    /// Makes one target's request, again where ``isRetryable(_:resendsUnanswered:)`` allows and the
    /// budget lasts, and once more with a new access token after a 401.
    private func exchange(
        _ body: ByteBuffer, target: String, on pool: HTTP2ConnectionPool, accessTokens: FCMAccessTokens, budget: RetryBudget
    ) async -> FCMSendResult {
        var headers = HPACKHeaders()
        headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        var request = HTTP2Request(method: "POST", path: sendPath, headers: headers, body: body, responseLimit: 64 << 10)
        var attempts = 0
        var renewedToken = false
        let policy = configuration.retry
        while true {
            guard !Task.isCancelled else {
                return finish(FCMSendResult(target: target, outcome: .failed(.other("cancelled"), mayHaveBeenDelivered: false), attempts: attempts))
            }
            let accessToken: String
            switch await accessTokens.current() {
            case .success(let token): accessToken = token
            case .failure(let failure):
                return finish(FCMSendResult(target: target, outcome: .failed(failure, mayHaveBeenDelivered: false), attempts: attempts))
            }
            attempts += 1
            if attempts > 1 { metrics.retries.increment() }
            request.headers.replaceOrAdd(name: "authorization", value: "Bearer " + accessToken)
            let started = NIODeadline.now()
            let answer = await pool.execute(request)
            metrics.duration.recordNanoseconds((NIODeadline.now() - started).nanoseconds)
            let outcome: FCMSendOutcome
            var retryAfter: Duration?
            switch answer {
            case .success(let response) where response.status == 200:
                var parser = JSONParser()
                let name = (try? parser.parse(Array(response.body.readableBytesView)))?.root["name"]?.string ?? ""
                return finish(FCMSendResult(target: target, outcome: .delivered(name: name), attempts: attempts))
            case .success(let response):
                let (code, message) = parseFCMError(Array(response.body.readableBytesView))
                outcome = .rejected(status: response.status, code: code ?? .other("HTTP \(response.status)"), message: message)
                if response.status == 401, !renewedToken {
                    // Revoked or expired early: one new token, and the request again.
                    renewedToken = true
                    let level: Logger.Level = accessTokens.invalidate(accessToken) ? .notice : .debug
                    logger.log(level: level, "FCM refused the access token; fetching a new one", metadata: ["token": "\(Self.shortened(target))"])
                    continue
                }
                retryAfter = response.headers.first(name: "retry-after").flatMap { RetryAfter.parse($0, now: unixSeconds()) }
            case .failure(let failure):
                outcome = .failed(failure.failure, mayHaveBeenDelivered: failure.mayHaveBeenWritten)
            }
            let unwritten = if case .failed(_, mayHaveBeenDelivered: false) = outcome { true } else { false }
            guard attempts < policy.maximumAttempts, Self.isRetryable(outcome, resendsUnanswered: policy.resendsUnanswered),
                !Task.isCancelled, unwritten || budget.take()
            else {
                logger.debug(
                    "FCM request failed",
                    metadata: ["token": "\(Self.shortened(target))", "result": "\(outcome)", "attempts": "\(attempts)"])
                return finish(FCMSendResult(target: target, outcome: outcome, attempts: attempts))
            }
            var wait = Backoff.fullJitter(retry: attempts, base: policy.baseDelay, maximum: policy.maximumDelay)
            if let retryAfter {
                guard retryAfter <= policy.maximumRetryAfter else {
                    return finish(FCMSendResult(target: target, outcome: outcome, attempts: attempts))
                }
                wait = retryAfter
            }
            try? await Task.sleep(for: wait)
        }
    }

    private func finish(_ result: FCMSendResult) -> FCMSendResult {
        metrics.countSend(result.outcome.metricLabels)
        return result
    }

    /// 429 and 5xx (FCM did not take the message), a request never written, and, when the caller
    /// allows it, one written and unanswered. Not a connection that could not be made (refused,
    /// TLS, proxy): the next attempt would fail alike.
    static func isRetryable(_ outcome: FCMSendOutcome, resendsUnanswered: Bool) -> Bool {
        switch outcome {
        case .delivered: false
        case .rejected(let status, _, _): status == 429 || (500...599).contains(status)
        case .failed(let failure, let mayHaveBeenDelivered):
            switch failure {
            case .connectionLost, .goAway, .timeout: !mayHaveBeenDelivered || resendsUnanswered
            default: false
            }
        }
    }

    /// The first 8 characters and the length: enough to match logs to a device, too little to send to it.
    public static func shortened(_ token: String) -> String {
        shortenedToken(token)
    }
}
