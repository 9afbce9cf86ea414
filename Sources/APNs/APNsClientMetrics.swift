import CoreMetrics
import HTTP2Transport

/// The client's metrics, through swift-metrics: nothing is recorded unless a backend is bootstrapped
/// (or a factory given). Labels carry statuses and Apple's reasons, never tokens or devices.
///
/// - `apns_sends_total{status, reason}`: one per device result; `status` is the HTTP status or
///   `none` (no answer), `reason` one of Apple's reasons, `other` or `none`.
/// - `apns_request_duration_seconds`: each request, from its start to its answer or failure.
/// - `apns_retries_total`: requests made again by the retry policy.
/// - `apns_resends_total`, `apns_goaways_total`, `apns_pings_total`, `apns_pings_failed_total`,
///   `apns_connections_open`: the connections' own (`HTTP2TransportMetrics`).
/// - `apns_provider_tokens_minted_total`: new provider tokens this client took from its cache.
final class APNsClientMetrics: Sendable {
    let tokensMinted: Counter
    let transport: HTTP2TransportMetrics

    init(factory: any MetricsFactory) {
        tokensMinted = Counter(label: "apns_provider_tokens_minted_total", dimensions: [], factory: factory)
        transport = HTTP2TransportMetrics(prefix: "apns", reasonDimension: "reason", factory: factory)
    }

    /// Counts one device's (or broadcast's) final result.
    func record(_ outcome: APNsSendOutcome) {
        switch outcome {
        case .delivered: transport.countSend(status: 200, reason: nil)
        case .rejected(let status, let reason, _):
            let label = if case .other = reason { "other" } else { reason.rawValue }
            transport.countSend(status: status, reason: label)
        case .failed: transport.countSend(status: nil, reason: nil)
        }
    }
}
