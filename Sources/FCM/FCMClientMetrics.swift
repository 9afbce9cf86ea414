import CoreMetrics
import HTTP2Transport

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
    let accessTokensFetched: Counter
    let transport: HTTP2TransportMetrics

    init(factory: any MetricsFactory) {
        accessTokensFetched = Counter(label: "fcm_access_tokens_fetched_total", dimensions: [], factory: factory)
        transport = HTTP2TransportMetrics(prefix: "fcm", reasonDimension: "code", factory: factory)
    }

    func record(_ outcome: FCMSendOutcome) {
        switch outcome {
        case .delivered: transport.countSend(status: 200, reason: nil)
        case .rejected(let status, let code, _):
            let label = if case .other = code { "other" } else { code.rawValue }
            transport.countSend(status: status, reason: label)
        case .failed: transport.countSend(status: nil, reason: nil)
        }
    }
}
