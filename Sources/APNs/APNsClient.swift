public import CoreMetrics
public import HTTP2Transport
public import Logging
public import NIOCore
import NIOHPACK
public import NIOSSL
public import PushAPNs
public import PushAPNsTokens
import PushInternals
import Synchronization

/// Where and how the client talks to APNs.
public struct APNsClientConfiguration: Sendable {
    public enum Authentication: Sendable {
        /// A bearer provider token on every request, from this cache (one per signing key).
        case token(APNsTokenCache)
        /// A TLS client certificate (from a PEM pair, or a PKCS#12 file with ``certificate(pkcs12Path:password:)``).
        case certificate(chain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey)

        /// The identity in a PKCS#12 (`.p12`) file.
        public static func certificate(pkcs12Path: String, password: String) throws -> Authentication {
            let bundle = try NIOSSLPKCS12Bundle(file: pkcs12Path, passphrase: Array(password.utf8))
            return .certificate(chain: bundle.certificateChain, privateKey: bundle.privateKey)
        }
    }

    public static let production = "https://api.push.apple.com"
    public static let development = "https://api.sandbox.push.apple.com"
    /// Where broadcast channels are managed; broadcasts themselves go to ``endpoint``.
    public static let productionChannelManagement = "https://api-manage-broadcast.push.apple.com:2196"
    public static let developmentChannelManagement = "https://api-manage-broadcast.sandbox.push.apple.com:2195"

    /// `https://host[:port]`: ``production``, ``development`` (both also answer on port 2197), or any endpoint for tests.
    public var endpoint: String
    /// Where channel management requests go: APNs' management host for ``production`` and
    /// ``development``, the endpoint itself for anything else (an emulator serves both).
    public var channelManagementEndpoint: String
    public var authentication: Authentication
    /// Trust these roots instead of the system's (an emulator's certificate); verification stays on.
    public var trustRoots: [NIOSSLCertificate]?
    /// Requests in flight at once, over all of a send's devices: HTTP/2 streams on the connections.
    public var maximumConcurrentRequests: Int
    /// HTTP/2 connections to the endpoint at most, each on its own event loop, opened one at a
    /// time as requests come. Each carries as many requests at once as the server allows (100 on
    /// the emulator, 1,000 on APNs); more spread the work of TLS and HTTP/2 over more cores.
    public var connections: Int
    /// How long one request may take before it counts as unanswered.
    public var requestTimeout: TimeAmount
    /// How long making a connection (TCP, the proxy's tunnel, TLS and the server's first SETTINGS) may take.
    public var connectTimeout: TimeAmount
    /// A connection that has read nothing for this long is sent a PING.
    public var pingInterval: TimeAmount
    /// A connection that reads nothing within this of its PING, not even the answer, is closed: its
    /// written requests are reported unanswered (they may have been delivered), its unwritten ones
    /// go to another connection.
    public var pingTimeout: TimeAmount
    /// An HTTP proxy to tunnel through (`CONNECT`); `APNsProxy.fromEnvironment(for:environment:)` reads `HTTPS_PROXY`.
    public var proxy: APNsProxy?
    /// Where the client's metrics go; swift-metrics' bootstrapped factory when nil.
    public var metricsFactory: (any MetricsFactory)?
    public var retry: APNsRetryPolicy

    public init(
        endpoint: String = Self.production, authentication: Authentication, trustRoots: [NIOSSLCertificate]? = nil,
        maximumConcurrentRequests: Int = 100, connections: Int = 1, requestTimeout: TimeAmount = .seconds(10),
        connectTimeout: TimeAmount = .seconds(10), pingInterval: TimeAmount = .seconds(60), pingTimeout: TimeAmount = .seconds(10),
        proxy: APNsProxy? = nil, metricsFactory: (any MetricsFactory)? = nil, retry: APNsRetryPolicy = APNsRetryPolicy()
    ) {
        self.connectTimeout = connectTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.proxy = proxy
        self.metricsFactory = metricsFactory
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        channelManagementEndpoint =
            switch self.endpoint {
            case Self.production: Self.productionChannelManagement
            case Self.development: Self.developmentChannelManagement
            default: self.endpoint
            }
        self.authentication = authentication
        self.trustRoots = trustRoots
        self.maximumConcurrentRequests = max(1, maximumConcurrentRequests)
        self.connections = max(1, connections)
        self.requestTimeout = requestTimeout
        self.retry = retry
    }
}

/// When a request is sent again. Only where a retry cannot show the user a notification twice:
/// 429, 500 and 503 (APNs did not accept it), and a request that was never written.
public struct APNsRetryPolicy: Sendable {
    /// Attempts per device, the first included.
    public var maximumAttempts: Int
    /// The first backoff's ceiling; each retry doubles it, and the wait is random below it (full jitter).
    public var baseDelay: Duration
    public var maximumDelay: Duration
    /// A `Retry-After` longer than this is not waited for: the device's result is the refusal.
    public var maximumRetryAfter: Duration
    /// Retries one send may make over all its devices: `minimumRetries` plus this share of its devices.
    public var retryBudgetRatio: Double
    public var minimumRetries: Int

    public init(
        maximumAttempts: Int = 3, baseDelay: Duration = .milliseconds(100), maximumDelay: Duration = .seconds(5),
        maximumRetryAfter: Duration = .seconds(30), retryBudgetRatio: Double = 0.2, minimumRetries: Int = 10
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.retryBudgetRatio = retryBudgetRatio
        self.minimumRetries = minimumRetries
    }

    /// A random wait below `baseDelay × 2^(retry − 1)`, capped.
    func backoff(retry: Int) -> Duration {
        Backoff.fullJitter(retry: retry, base: baseDelay, maximum: maximumDelay)
    }
}

/// Sends notifications straight to APNs over HTTP/2: one encoded body shared by every device of
/// a send, a bounded number of requests in flight, a typed result per device, retries only where
/// they cannot duplicate a notification, and a provider token re-minted once after APNs calls it
/// expired. Log lines carry shortened device tokens, never keys, provider tokens or payloads.
///
/// Its metrics, through swift-metrics (nothing is recorded unless a backend is bootstrapped or a
/// factory given), carry statuses and Apple's reasons, never tokens or devices:
/// - `apns_sends_total{status, reason}`: one per device result; `status` is the HTTP status or
///   `none` (no answer), `reason` one of Apple's reasons, `other` or `none`.
/// - `apns_request_duration_seconds`: each request, from its start to its answer or failure.
/// - `apns_retries_total`: requests made again by the retry policy.
/// - `apns_resends_total`, `apns_goaways_total`, `apns_pings_total`, `apns_pings_failed_total`,
///   `apns_connections_open`: the connections' own.
/// - `apns_provider_tokens_minted_total`: new provider tokens this client took from its cache.
public final class APNsClient: Sendable {
    public let configuration: APNsClientConfiguration
    /// The push endpoint's connections and the channel management endpoint's (the same pool when
    /// both are one origin, as on an emulator); or why there can be none, which every send reports.
    private let pools: Result<Pools, APNsClientError>
    let metrics: HTTP2TransportMetrics
    private let tokensMinted: Counter
    /// The provider token last taken from the cache, to count new ones.
    private let lastToken = Mutex<String?>(nil)
    let logger: Logger

    struct Pools {
        let push: HTTP2ConnectionPool
        let management: HTTP2ConnectionPool
    }

    /// Opens no connection: the first send does. An endpoint that is not `https://host[:port]`, or
    /// TLS settings BoringSSL refuses (a certificate and key that do not match, say), make every
    /// send throw ``APNsClientError``.
    public init(configuration: APNsClientConfiguration, logger: Logger = Logger(label: "apns")) {
        self.configuration = configuration
        self.logger = logger
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        if let roots = configuration.trustRoots { tls.trustRoots = .certificates(roots) }
        if case .certificate(let chain, let key) = configuration.authentication {
            tls.certificateChain = chain.map { .certificate($0) }
            tls.privateKey = .privateKey(key)
            // In TLS 1.3 the client finishes its handshake before the server has judged the
            // certificate, so a refused one shows up as a connection lost after the request was
            // written: "may have been delivered". In TLS 1.2 the refusal ends the handshake, and
            // the device's result is a certain "not delivered" TLS failure.
            tls.maximumTLSVersion = .tlsv12
        }
        let factory = configuration.metricsFactory ?? MetricsSystem.factory
        let metrics = HTTP2TransportMetrics(prefix: "apns", reasonDimension: "reason", factory: factory)
        self.metrics = metrics
        tokensMinted = Counter(label: "apns_provider_tokens_minted_total", dimensions: [], factory: factory)
        let sslContext: NIOSSLContext
        do {
            sslContext = try NIOSSLContext(configuration: tls)
        } catch {
            pools = .failure(APNsClientError(code: .invalidTLSConfiguration, message: "TLS cannot be set up: \(error)"))
            return
        }
        func pool(for endpoint: String) throws(APNsClientError) -> HTTP2ConnectionPool {
            guard let origin = HTTPSOrigin(endpoint) else {
                throw APNsClientError(code: .invalidEndpoint, message: "\(endpoint) is not https://host[:port]")
            }
            return HTTP2ConnectionPool(
                configuration: .init(
                    service: "APNs", host: origin.host, port: origin.port, connections: configuration.connections,
                    connectTimeout: configuration.connectTimeout, requestTimeout: configuration.requestTimeout,
                    pingInterval: configuration.pingInterval, pingTimeout: configuration.pingTimeout, proxy: configuration.proxy,
                    maximumStreamsPerConnection: 1000, goAwayReason: { parseErrorBody(Array($0.readableBytesView)).reason }),
                sslContext: sslContext, logger: logger, metrics: metrics)
        }
        do throws(APNsClientError) {
            let push = try pool(for: configuration.endpoint)
            let management =
                configuration.channelManagementEndpoint == configuration.endpoint ? push : try pool(for: configuration.channelManagementEndpoint)
            pools = .success(Pools(push: push, management: management))
        } catch {
            pools = .failure(error)
        }
    }

    /// The connection pools, or why the client has none.
    func connectionPools() throws(APNsClientError) -> Pools {
        try pools.get()
    }

    /// Closes the connections; requests still waiting or unanswered fail. Call once, when no send is running.
    public func shutdown() async throws {
        guard case .success(let pools) = pools else { return }
        await pools.push.shutdown()
        if pools.management !== pools.push { await pools.management.shutdown() }
    }

    /// Sends `payload` to every device in `devices`.
    /// - Parameters:
    ///   - payload: Encoded once, within its push type's limit, for every device.
    ///   - headers: Push type, topic, priority, …; derived from the payload when nil (the topic must then be given).
    ///   - devices: Device tokens in hex.
    /// - Returns: One result per device, in the order of `devices`.
    /// - Throws: ``APNsClientError`` when the headers are invalid or the payload does not fit.
    public func send(_ payload: APNsPayload, headers: APNsHeaders, to devices: [String]) async throws(APNsClientError) -> [APNsSendResult] {
        let body: [UInt8]
        do throws(APNsPayloadError) {
            body = try payload.encoded()
        } catch {
            throw APNsClientError(code: .invalidPayload, message: "the payload cannot be encoded: \(error)")
        }
        return try await send(encodedPayload: body, headers: headers, to: devices)
    }

    /// Sends an encoded payload (checked JSON of at most the push type's size) to every device.
    public func send(encodedPayload: [UInt8], headers: APNsHeaders, to devices: [String]) async throws(APNsClientError) -> [APNsSendResult] {
        do throws(APNsHeaders.ValidationError) {
            try headers.validate()
        } catch {
            throw APNsClientError(code: .invalidHeaders, message: "invalid header: \(error)")
        }
        guard headers.topic != nil else { throw APNsClientError(code: .invalidHeaders, message: "apns-topic is required") }
        guard encodedPayload.count <= headers.pushType.payloadLimit else {
            throw APNsClientError(
                code: .payloadTooLarge,
                message:
                    "the payload is \(encodedPayload.count) bytes; \(headers.pushType.rawValue) pushes take at most \(headers.pushType.payloadLimit)")
        }
        let pool = try connectionPools().push
        let body = ByteBuffer(bytes: encodedPayload)
        let fields = HPACKHeaders(headers.fields.map { ($0.name, $0.value) } + [("content-type", "application/json")])
        let budget = RetryBudget(configuration.retry.minimumRetries + Int(Double(devices.count) * configuration.retry.retryBudgetRatio))
        let limit = configuration.maximumConcurrentRequests

        return await boundedConcurrentMap(count: devices.count, limit: limit) { index in
            await self.sendOne(to: devices[index], on: pool, body: body, fields: fields, budget: budget)
        }
    }

    private func sendOne(
        to device: String, on pool: HTTP2ConnectionPool, body: ByteBuffer, fields: HPACKHeaders, budget: RetryBudget
    ) async -> APNsSendResult {
        guard Self.isOnePathSegment(device) else {
            metrics.countSend(APNsSendOutcome.failed(.invalidDeviceToken, mayHaveBeenDelivered: false).metricLabels)
            return APNsSendResult(
                deviceToken: device, outcome: .failed(.invalidDeviceToken, mayHaveBeenDelivered: false), apnsID: nil, uniqueID: nil,
                attempts: 0)
        }
        let token: String?
        do throws(APNsTokenError) {
            token = try providerToken()
        } catch {
            let outcome = APNsSendOutcome.failed(.other("no provider token: \(error.code)"), mayHaveBeenDelivered: false)
            metrics.countSend(outcome.metricLabels)
            return APNsSendResult(deviceToken: device, outcome: outcome, apnsID: nil, uniqueID: nil, attempts: 0)
        }
        var request = HTTP2Request(method: "POST", path: "/3/device/" + device, headers: fields, body: body, responseLimit: 64 << 10)
        let exchange = await exchange(&request, on: pool, token: token, budget: budget, subject: ["device": "\(Self.shortened(device))"])
        metrics.countSend(exchange.outcome.metricLabels)
        return APNsSendResult(
            deviceToken: device, outcome: exchange.outcome, apnsID: exchange.headers.first(name: "apns-id"),
            uniqueID: exchange.headers.first(name: "apns-unique-id"), attempts: exchange.attempts)
    }

    /// The bearer token for the next request; nil with certificate authentication.
    func providerToken() throws(APNsTokenError) -> String? {
        guard case .token(let cache) = configuration.authentication else { return nil }
        do throws(APNsTokenError) {
            let token = try cache.token()
            countIfNew(token)
            return token
        } catch {
            logger.error("provider token: \(error.code)")
            throw error
        }
    }

    /// Counts `token` as minted when it is not the one this client used last.
    private func countIfNew(_ token: String) {
        let isNew = lastToken.withLock { last in
            guard last != token else { return false }
            last = token
            return true
        }
        if isNew { tokensMinted.increment() }
    }

    /// A request's last answer, or why there was none, after the retries the policy allows.
    struct Exchange {
        /// `.delivered` for any 2xx answer.
        var outcome: APNsSendOutcome
        var headers = HPACKHeaders()
        var body: [UInt8] = []
        var attempts: Int
    }

    /// Makes `request` (with `token` as its bearer; `inout`, so adding it copies no headers), again
    /// where ``isRetryable(_:)`` allows and the budget lasts, and once more with a new token after
    /// APNs calls this one expired.
    func exchange(
        _ request: inout HTTP2Request, on pool: HTTP2ConnectionPool, token: String?, budget: RetryBudget,
        subject: @autoclosure () -> Logger.Metadata
    ) async -> Exchange {
        var token = token
        var attempts = 0
        var replacedToken = false
        while true {
            attempts += 1
            if attempts > 1 { metrics.retries.increment() }
            if let token { request.headers.replaceOrAdd(name: "authorization", value: "bearer " + token) }
            var exchange = Exchange(outcome: .delivered, attempts: attempts)
            // A cancelled send writes nothing more; what is already on a stream runs to its answer.
            guard !Task.isCancelled else {
                exchange.outcome = .failed(.other("cancelled"), mayHaveBeenDelivered: false)
                return exchange
            }
            var retryAfter: Duration?
            let started = NIODeadline.now()
            let answer = await pool.execute(request)
            metrics.duration.recordNanoseconds((NIODeadline.now() - started).nanoseconds)
            switch answer {
            case .success(let response):
                exchange.headers = response.headers
                exchange.body = Array(response.body.readableBytesView)
                if (200..<300).contains(response.status) { return exchange }
                let (reasonText, timestamp) = parseErrorBody(exchange.body)
                let reason = APNsRejectionReason(reasonText ?? "")
                exchange.outcome = .rejected(status: response.status, reason: reason, unregisteredSinceMilliseconds: timestamp)
                retryAfter = response.headers.first(name: "retry-after").flatMap { RetryAfter.parse($0, now: APNsTokenClock.system.now()) }
                if reason == .expiredProviderToken, !replacedToken, case .token(let cache) = configuration.authentication, let used = token {
                    replacedToken = true
                    if let fresh = try? cache.replace(rejected: used) {
                        logger.notice("APNs called the provider token expired; retrying with a new one", metadata: subject())
                        countIfNew(fresh)
                        token = fresh
                        continue
                    }
                }
            case .failure(let failure):
                exchange.outcome = .failed(failure.failure, mayHaveBeenDelivered: failure.mayHaveBeenWritten)
            }
            let outcome = exchange.outcome
            // A request never written costs APNs nothing, so only answered ones spend the budget.
            let unwritten = if case .failed(_, mayHaveBeenDelivered: false) = outcome { true } else { false }
            guard attempts < configuration.retry.maximumAttempts, Self.isRetryable(outcome), !Task.isCancelled, unwritten || budget.take()
            else {
                logger.debug("request failed", metadata: subject().merging(["result": "\(outcome)", "attempts": "\(attempts)"]) { $1 })
                return exchange
            }
            var wait = configuration.retry.backoff(retry: attempts)
            if let retryAfter {
                guard retryAfter <= configuration.retry.maximumRetryAfter else { return exchange }
                wait = retryAfter
            }
            try? await Task.sleep(for: wait)
        }
    }

    /// 429 `TooManyRequests`, 500, 503 (`ServiceUnavailable`, `Shutdown`), and a request that was
    /// never written (its connection was lost first). Not 429 `TooManyProviderTokenUpdates`: the
    /// same token gets the same answer until the connection's 20 minutes have passed. Not a
    /// connection that could not be made (refused, TLS, proxy): the next attempt would fail alike.
    static func isRetryable(_ outcome: APNsSendOutcome) -> Bool {
        switch outcome {
        case .delivered: false
        case .rejected(let status, let reason, _): (status == 429 && reason != .tooManyProviderTokenUpdates) || status == 500 || status == 503
        case .failed(let failure, let mayHaveBeenDelivered): failure == .connectionLost && !mayHaveBeenDelivered
        }
    }

    /// Letters, digits, `-` and `_`, 1 to 512 of them: whatever else a token holds, it cannot send
    /// the request to another path. Whether it is a device token is for APNs to say (`BadDeviceToken`).
    static func isOnePathSegment(_ device: String) -> Bool {
        isWord(device, lengths: 1...512, punctuation: "-_")
    }

    static func isWord(_ text: String, lengths: ClosedRange<Int>, punctuation: StaticString) -> Bool {
        isASCIIWord(text, lengths: lengths, punctuation: punctuation)
    }

    /// The first 8 characters and the length: enough to match logs to a device, too little to send to it.
    public static func shortened(_ deviceToken: String) -> String {
        shortenedToken(deviceToken)
    }
}
