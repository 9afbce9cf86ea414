import APNs
import Metrics
import Tracing

/// The backend's own metrics, beside Hummingbird's per-route request metrics, through swift-metrics:
/// whichever backend the process bootstraps receives them (`push-backend serve --metrics-port`
/// bootstraps Prometheus); with none, they cost next to nothing. Made when the service starts, so
/// that a process bootstrapping its metrics system first gets real handlers.
///
/// - `push_backend_logins_total{result}`: `cache_hit` (no password check ran), `checked` (scrypt
///   ran and matched), `api_key` (an API key matched) or `refused` (no credentials, an unknown
///   name, a wrong password or key, a budget spent).
/// - `push_backend_pushes_total{kind, outcome}`: `notification`, `live_activity` or `broadcast`;
///   `sent` or `failed` (the hub or APNs call threw, or APNs reached none of the devices).
/// - `push_backend_store_duration_seconds{operation}`: each store call (``InstrumentedStore``).
/// - `push_backend_pruning_held_total{reason}`: sends whose answers blamed the configuration, so
///   that no registration was pruned (``PruningBrake``); `reason` is APNs' spelling.
/// - The delivery queue (``DeliveryWorker``): `push_backend_delivery_jobs_total{outcome}`, each
///   job's end (`delivered`, `partly`, `failed`) or retry (`retried`);
///   `push_backend_delivery_job_attempts`, the claims an ended job took;
///   `push_backend_delivery_job_seconds`, from when it last became due (its send time, or its
///   retry's) to its end; and, measured by each
///   worker every few seconds, `push_backend_delivery_queue_jobs` (due and not ended, in every
///   instance) and `push_backend_delivery_queue_oldest_seconds` (how long the oldest has been due).
struct BackendMetrics: Sendable {
    let factory: any MetricsFactory
    let loginCacheHits: Counter
    let loginsChecked: Counter
    let loginsRefused: Counter
    let apiKeyLogins: Counter
    let identityTokenLogins: Counter

    /// - Parameter factory: The metrics system's, unless a test hands in its own.
    init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        loginCacheHits = Counter(label: "push_backend_logins_total", dimensions: [("result", "cache_hit")], factory: factory)
        loginsChecked = Counter(label: "push_backend_logins_total", dimensions: [("result", "checked")], factory: factory)
        loginsRefused = Counter(label: "push_backend_logins_total", dimensions: [("result", "refused")], factory: factory)
        apiKeyLogins = Counter(label: "push_backend_logins_total", dimensions: [("result", "api_key")], factory: factory)
        identityTokenLogins = Counter(label: "push_backend_logins_total", dimensions: [("result", "identity_token")], factory: factory)
    }

    func pruningHeld(blaming reason: APNsRejectionReason) {
        Counter(label: "push_backend_pruning_held_total", dimensions: [("reason", reason.rawValue)], factory: factory).increment()
    }

    enum PushKind: String {
        case notification
        case liveActivity = "live_activity"
        case broadcast
    }

    /// Runs a hub or APNs call in a client span and counts it: `failed` when it throws or
    /// `delivered` says APNs took it for no device, `sent` otherwise.
    func push<Answer, Failure: Error>(
        _ kind: PushKind, delivered: (Answer) -> Bool = { _ in true }, _ call: () async throws(Failure) -> Answer
    ) async throws(Failure) -> Answer {
        let span = startSpan("push.\(kind.rawValue)", ofKind: .client)
        defer { span.end() }
        // Bound as the task's context, so that the client's own spans nest under this one.
        let result = await InstrumentationContext.$current.withValue(span.context) { await Self.capture(call) }
        let outcome: String
        switch result {
        case .success(let answer): outcome = delivered(answer) ? "sent" : "failed"
        case .failure(let error):
            span.recordError(error)
            outcome = "failed"
        }
        counted(kind, outcome: outcome)
        return try result.get()
    }

    /// Counts a delivery job's end or retry; an ended job's attempts and time since due too.
    func deliveryJob(_ outcome: String, attempts: Int, sinceDue milliseconds: Int64?) {
        Counter(label: "push_backend_delivery_jobs_total", dimensions: [("outcome", outcome)], factory: factory).increment()
        guard let milliseconds else { return }
        Recorder(label: "push_backend_delivery_job_attempts", factory: factory).record(attempts)
        Timer(label: "push_backend_delivery_job_seconds", preferredDisplayUnit: .seconds, factory: factory)
            .recordNanoseconds(max(milliseconds, 0) * 1_000_000)
    }

    /// The queue's depth and age, as a worker last measured them.
    func deliveryBacklog(jobs: Int, oldestSeconds: Double) {
        Gauge(label: "push_backend_delivery_queue_jobs", factory: factory).record(jobs)
        Gauge(label: "push_backend_delivery_queue_oldest_seconds", factory: factory).record(oldestSeconds)
    }

    /// Counts a push that went (`sent`) or did not (`failed`).
    func counted(_ kind: PushKind, outcome: String) {
        Counter(label: "push_backend_pushes_total", dimensions: [("kind", kind.rawValue), ("outcome", outcome)], factory: factory).increment()
    }

    private static func capture<Answer, Failure: Error>(_ call: () async throws(Failure) -> Answer) async -> Result<Answer, Failure> {
        do {
            return .success(try await call())
        } catch {
            return .failure(error)
        }
    }
}
