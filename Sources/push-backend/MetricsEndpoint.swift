import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus
import PushBackend
import ServiceLifecycle

/// `serve --metrics-port`: swift-metrics bootstrapped with Prometheus, and `GET /metrics` in
/// Prometheus' text format on a port of its own, so that the API's port never exposes it.
final class MetricsEndpoint: Sendable {
    let service: any Service
    private let listening: AsyncStream<Int>

    /// What a scraper needs, and no more: a few connections, short deadlines.
    static let limits = ServerLimits(
        idleTimeout: .seconds(30), requestHeadTimeout: .seconds(10), requestBodyTimeout: .seconds(10), maximumConnections: 64)

    /// Bootstraps the process's metrics system: call once, before the backend starts.
    init(host: String, port: Int, logger: Logger) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Requests and store calls on a healthy server take well under Prometheus' default first
        // bucket (5 ms).
        factory.defaultDurationHistogramBuckets = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        MetricsSystem.bootstrap(factory)

        let router = Router()
        router.get("metrics") { _, _ in
            var text: [UInt8] = []
            registry.emit(into: &text)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
        }
        let (listening, continuation) = AsyncStream.makeStream(of: Int.self)
        self.listening = listening
        service = Application(
            router: router,
            // At the cap the oldest idle connection makes room, as on the API's port: idle sockets
            // cannot keep a scraper out.
            server: .http1(
                limits: Self.limits,
                connections: ConnectionRegistry(maximum: Self.limits.maximumConnections, maximumPerAddress: Self.limits.maximumConnections)),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "push-backend-metrics",
                availableConnectionsDelegate: ConnectionCap(maximum: Self.limits.maximumConnections, logger: logger)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? port)
                continuation.finish()
            },
            logger: logger)
    }

    /// The bound port once the endpoint listens; nil when it stopped first.
    func port() async -> Int? {
        for await port in listening { return port }
        return nil
    }
}
