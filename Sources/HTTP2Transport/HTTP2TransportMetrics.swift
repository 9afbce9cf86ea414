package import CoreMetrics

/// The connections' metrics, named after the service (`apns_…`, `fcm_…`):
///
/// - `{service}_resends_total`: requests sent again because a connection proved it had not
///   processed them (above a GOAWAY's last stream, refused, or unwritten when it closed).
/// - `{service}_goaways_total`, `{service}_pings_total` (sent), `{service}_pings_failed_total`,
///   `{service}_connections_open`.
package final class HTTP2TransportMetrics: Sendable {
    let resends: Counter
    let goAways: Counter
    let pings: Counter
    let pingsFailed: Counter
    private let connectionsOpen: Meter

    /// - Parameter prefix: The service's label prefix, `apns` or `fcm`.
    package init(prefix: String, factory: any MetricsFactory) {
        resends = Counter(label: prefix + "_resends_total", dimensions: [], factory: factory)
        goAways = Counter(label: prefix + "_goaways_total", dimensions: [], factory: factory)
        pings = Counter(label: prefix + "_pings_total", dimensions: [], factory: factory)
        pingsFailed = Counter(label: prefix + "_pings_failed_total", dimensions: [], factory: factory)
        connectionsOpen = Meter(label: prefix + "_connections_open", dimensions: [], factory: factory)
    }

    func connectionOpened() { connectionsOpen.increment() }
    func connectionClosed() { connectionsOpen.decrement() }
}
