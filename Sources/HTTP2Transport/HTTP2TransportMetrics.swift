package import CoreMetrics
import Synchronization

/// A client's requests and connections, named after the service (`apns_…`, `fcm_…`):
///
/// - `{service}_sends_total{status, REASON}`: one per target's final result; `status` is the HTTP
///   status or `none` (no answer), REASON (`reason` for APNs, `code` for FCM) the service's name for
///   a refusal, `other` (one the client does not name) or `none`.
/// - `{service}_request_duration_seconds`: each request, from its start to its answer or failure.
/// - `{service}_retries_total`: requests made again by the retry policy.
/// - `{service}_resends_total`: requests sent again because a connection proved it had not
///   processed them (above a GOAWAY's last stream, refused, or unwritten when it closed).
/// - `{service}_goaways_total`, `{service}_pings_total` (sent), `{service}_pings_failed_total`,
///   `{service}_connections_open`.
package final class HTTP2TransportMetrics: Sendable {
    let resends: Counter
    let goAways: Counter
    let pings: Counter
    let pingsFailed: Counter
    package let duration: CoreMetrics.Timer
    package let retries: Counter
    private let connectionsOpen: Meter
    private let factory: any MetricsFactory
    private let sendsLabel: String
    private let reasonDimension: String
    private let delivered: Counter
    /// Counters by `status reason`, made as results come: the services' lists are short and fixed.
    private let refusals = Mutex<[String: Counter]>([:])

    /// - Parameters:
    ///   - prefix: The service's label prefix, `apns` or `fcm`.
    ///   - reasonDimension: What the service calls a refusal's name: `reason` or `code`.
    package init(prefix: String, reasonDimension: String, factory: any MetricsFactory) {
        self.factory = factory
        self.reasonDimension = reasonDimension
        sendsLabel = prefix + "_sends_total"
        delivered = Counter(label: sendsLabel, dimensions: [("status", "200"), (reasonDimension, "none")], factory: factory)
        duration = Timer(label: prefix + "_request_duration_seconds", dimensions: [], factory: factory)
        retries = Counter(label: prefix + "_retries_total", dimensions: [], factory: factory)
        resends = Counter(label: prefix + "_resends_total", dimensions: [], factory: factory)
        goAways = Counter(label: prefix + "_goaways_total", dimensions: [], factory: factory)
        pings = Counter(label: prefix + "_pings_total", dimensions: [], factory: factory)
        pingsFailed = Counter(label: prefix + "_pings_failed_total", dimensions: [], factory: factory)
        connectionsOpen = Meter(label: prefix + "_connections_open", dimensions: [], factory: factory)
    }

    /// Counts a target's final result: `status` 200 (delivered), an error status with the
    /// service's name for the refusal, or `none` (unanswered).
    package func countSend(_ labels: (status: String, reason: String)) {
        guard labels.status != "200" else { return delivered.increment() }
        let key = labels.status + " " + labels.reason
        refusals.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: sendsLabel, dimensions: [("status", labels.status), (reasonDimension, labels.reason)], factory: factory)
            counters[key] = counter
            return counter
        }.increment()
    }

    func connectionOpened() { connectionsOpen.increment() }
    func connectionClosed() { connectionsOpen.decrement() }
}
