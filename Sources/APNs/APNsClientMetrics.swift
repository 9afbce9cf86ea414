import CoreMetrics
import HTTP2Transport
import Synchronization

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
    let factory: any MetricsFactory
    let duration: CoreMetrics.Timer
    let retries: Counter
    let tokensMinted: Counter
    let transport: HTTP2TransportMetrics
    private let delivered: Counter
    /// Counters by `status reason`, made as results come: Apple's list is fixed, so they stay few.
    private let sends = Mutex<[String: Counter]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
        duration = Timer(label: "apns_request_duration_seconds", dimensions: [], factory: factory)
        retries = Counter(label: "apns_retries_total", dimensions: [], factory: factory)
        tokensMinted = Counter(label: "apns_provider_tokens_minted_total", dimensions: [], factory: factory)
        transport = HTTP2TransportMetrics(prefix: "apns", factory: factory)
        delivered = Counter(label: "apns_sends_total", dimensions: [("status", "200"), ("reason", "none")], factory: factory)
    }

    /// Counts one device's (or broadcast's) final result.
    func record(_ outcome: APNsSendOutcome) {
        switch outcome {
        case .delivered:
            delivered.increment()
        case .rejected(let status, let reason, _):
            let label = if case .other = reason { "other" } else { reason.rawValue }
            counter(status: String(status), reason: label).increment()
        case .failed:
            counter(status: "none", reason: "none").increment()
        }
    }

    private func counter(status: String, reason: String) -> Counter {
        let key = status + " " + reason
        return sends.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: "apns_sends_total", dimensions: [("status", status), ("reason", reason)], factory: factory)
            counters[key] = counter
            return counter
        }
    }
}
