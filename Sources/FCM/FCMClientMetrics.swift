import CoreMetrics
import HTTP2Transport
import Synchronization

/// The client's metrics, through swift-metrics: nothing is recorded unless a backend is bootstrapped
/// (or a factory given). Labels carry statuses and FCM's codes, never tokens or topics.
///
/// - `fcm_sends_total{status, code}`: one per target's result; `status` is the HTTP status or
///   `none` (no answer), `code` FCM's error code, `other` or `none`.
/// - `fcm_request_duration_seconds`: each request, from its start to its answer or failure.
/// - `fcm_retries_total`: requests made again by the retry policy (or after a 401).
/// - `fcm_access_tokens_fetched_total`: requests to the token URI.
/// - `fcm_resends_total`, `fcm_goaways_total`, `fcm_pings_total`, `fcm_pings_failed_total`,
///   `fcm_connections_open`: the connections' own.
final class FCMClientMetrics: Sendable {
    let factory: any MetricsFactory
    let duration: CoreMetrics.Timer
    let retries: Counter
    let accessTokensFetched: Counter
    let transport: HTTP2TransportMetrics
    private let delivered: Counter
    /// Counters by `status code`, made as results come: FCM's codes are few.
    private let sends = Mutex<[String: Counter]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
        duration = Timer(label: "fcm_request_duration_seconds", dimensions: [], factory: factory)
        retries = Counter(label: "fcm_retries_total", dimensions: [], factory: factory)
        accessTokensFetched = Counter(label: "fcm_access_tokens_fetched_total", dimensions: [], factory: factory)
        transport = HTTP2TransportMetrics(prefix: "fcm", factory: factory)
        delivered = Counter(label: "fcm_sends_total", dimensions: [("status", "200"), ("code", "none")], factory: factory)
    }

    func record(_ outcome: FCMSendOutcome) {
        switch outcome {
        case .delivered:
            delivered.increment()
        case .rejected(let status, let code, _):
            let label = if case .other = code { "other" } else { code.rawValue }
            counter(status: String(status), code: label).increment()
        case .failed:
            counter(status: "none", code: "none").increment()
        }
    }

    private func counter(status: String, code: String) -> Counter {
        let key = status + " " + code
        return sends.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: "fcm_sends_total", dimensions: [("status", status), ("code", code)], factory: factory)
            counters[key] = counter
            return counter
        }
    }
}
