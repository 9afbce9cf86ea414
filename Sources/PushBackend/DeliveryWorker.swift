import APNs
import FCM
package import Logging
import NotificationHubs
import PushCore
import PushInternals
import ServiceLifecycle
import Tracing

/// Works the delivery queue (``DeliveryQueueStore``) for direct delivery: claims due jobs, sends
/// each to the recipient's devices that have no answer yet (Apple's through APNs, Android's
/// through FCM with direct delivery), a page at a time, keeps the answers, prunes dead tokens, and
/// then finishes the job, or gives it back for a retry when the service left devices unanswered (a
/// 429 or 5xx after the client's own retries, a lost connection, no connection), until the push's
/// deadline.
///
/// Any number of workers, in any number of instances, may share one database: a job is held by
/// one lease at a time, renewed before each page. A worker that dies mid-job leaves its lease to
/// expire; the next claimer sends to the devices without an answer, so only those whose request
/// was written and not answered may get the push twice.
package final class DeliveryWorker: Sendable {
    package struct Settings: Sendable {
        /// How long a claim holds without renewal: a job whose instance died is taken over after it.
        package var lease: Duration
        /// Jobs one claim takes at most, worked one after another.
        package var batch: Int
        /// Devices one page sends to: the lease is renewed before each, the answers kept after.
        package var page: Int
        /// How long a worker that found nothing due waits before it looks again.
        package var idlePoll: Duration
        /// The first retry's backoff ceiling, doubled each attempt up to `maximumBackoff`; the wait
        /// is random below it (full jitter, but at least half the base), so that retries after an
        /// outage do not arrive together.
        package var baseBackoff: Duration
        package var maximumBackoff: Duration
        /// How often the queue's depth and age are measured for their gauges.
        package var backlogInterval: Duration

        package init(
            lease: Duration = .seconds(30), batch: Int = 8, page: Int = 500, idlePoll: Duration = .milliseconds(250),
            baseBackoff: Duration = .seconds(1), maximumBackoff: Duration = .seconds(60), backlogInterval: Duration = .seconds(5)
        ) {
            self.lease = lease
            self.batch = max(batch, 1)
            self.page = max(page, 1)
            self.idlePoll = idlePoll
            self.baseBackoff = baseBackoff
            self.maximumBackoff = maximumBackoff
            self.backlogInterval = backlogInterval
        }
    }

    let store: any BackendStore
    let delivery: DirectDelivery
    /// This worker's name on its leases: random, so that instances never share one.
    let owner: String
    let settings: Settings
    let logger: Logger

    package init(store: any BackendStore, delivery: DirectDelivery, settings: Settings = Settings(), logger: Logger) {
        self.store = store
        self.delivery = delivery
        self.settings = settings
        self.logger = logger
        owner = randomHex(bytes: 8)
    }

    /// Claims what is due and works each job to its end or its next retry; how many it claimed.
    @discardableResult
    package func runOnce() async -> Int {
        let now = unixMilliseconds()
        let jobs: [DeliveryJob]
        do {
            jobs = try await store.claimDeliveryJobs(
                owner: owner, now: now, leaseUntil: now + settings.lease.wholeMilliseconds, limit: settings.batch)
        } catch {
            logger.error("delivery jobs could not be claimed", metadata: ["error": "\(error)"])
            return 0
        }
        // In the order they were queued: one recipient's pushes arrive as they were sent. Each job
        // is concurrent within itself, its devices' requests in flight together.
        for job in jobs { await work(job) }
        return jobs.count
    }

    /// Works the queue until the task is cancelled, measuring its backlog every `backlogInterval`.
    package func run() async {
        var measured = ContinuousClock.now - settings.backlogInterval
        while !Task.isCancelled {
            if ContinuousClock.now - measured >= settings.backlogInterval {
                await measureBacklog()
                measured = .now
            }
            if await runOnce() == 0 { try? await Task.sleep(for: settings.idlePoll) }
        }
    }

    /// Sets the queue's gauges from the store: one indexed query, shared by every instance's view.
    package func measureBacklog() async {
        let now = unixMilliseconds()
        guard let backlog = try? await store.deliveryBacklog(now: now) else { return }
        delivery.metrics.deliveryBacklog(jobs: backlog.jobs, oldestSeconds: Double(now - (backlog.oldestDueAt ?? now)) / 1000)
    }

    /// Works one job in a span of its own that joins the trace of the request that queued it.
    func work(_ job: DeliveryJob) async {
        var context = ServiceContext.topLevel
        InstrumentationSystem.instrument.extract(job.push.trace, into: &context, using: TraceFields())
        let span = startSpan("delivery.job", context: context, ofKind: .consumer)
        span.attributes["push.attempt"] = job.attempts
        defer { span.end() }
        await ServiceContext.$current.withValue(span.context) { await deliver(job) }
    }

    private func deliver(_ job: DeliveryJob) async {
        let id = job.notificationID
        let logger = self.logger.with(notification: id)
        guard unixMilliseconds() < job.push.deadline else {
            await finish(job, .failed, failure: "its deadline passed before every device answered", logger: logger)
            return
        }
        do throws(StoreError) {
            let answered = try await store.deliveryAnswers(notificationID: id)
            let answeredTargets = Set(answered.map(\.target))
            let devices = try await store.registrations(owner: job.recipient).filter {
                delivery.reaches($0.platform) && !answeredTargets.contains($0.deviceToken)
            }
            var progress = Progress(
                fcmDelivered: answered.contains { $0.platform == Installation.Platform.fcmv1.rawValue && $0.outcome == Self.delivered })
            for platform in [Installation.Platform.apns, .fcmv1] {
                let targets = devices.filter { $0.platform == platform }
                for start in stride(from: 0, to: targets.count, by: settings.page) {
                    guard
                        try await store.renewDeliveryLease(
                            notificationID: id, owner: owner, until: unixMilliseconds() + settings.lease.wholeMilliseconds)
                    else {
                        logger.notice("delivery job taken over by another worker")
                        return
                    }
                    let page = Array(targets[start..<min(start + settings.page, targets.count)])
                    switch platform {
                    case .apns: try await sendAPNs(job, to: page, progress: &progress, logger: logger)
                    case .fcmv1: try await sendFCM(job, to: page, progress: &progress, logger: logger)
                    }
                }
            }
            guard progress.unanswered > 0 else {
                let outcomes = try await store.deliveryAnswers(notificationID: id).map(\.outcome)
                let delivered = outcomes.filter { $0 == Self.delivered }.count
                let state: DeliveryState = delivered == outcomes.count ? .delivered : delivered > 0 ? .partly : .failed
                await finish(job, state, failure: state == .delivered ? nil : "refused by \(outcomes.count - delivered) device(s)", logger: logger)
                return
            }
            let failure = "\(progress.unanswered) device(s) unanswered: \(progress.lastFailure)"
            // Never sooner than half the base: a job the service just refused is not claimed again at once.
            let backoff = max(
                Backoff.fullJitter(retry: job.attempts, base: settings.baseBackoff, maximum: settings.maximumBackoff), settings.baseBackoff / 2)
            let due = unixMilliseconds() + backoff.wholeMilliseconds
            guard due < job.push.deadline else {
                await finish(job, .failed, failure: failure + "; its deadline passed", logger: logger)
                return
            }
            if try await store.requeueDeliveryJob(notificationID: id, owner: owner, dueAt: due, failure: failure) {
                delivery.metrics.deliveryJob("retried", attempts: job.attempts, sinceDue: nil)
                logger.notice("delivery retried later", metadata: ["attempts": "\(job.attempts)", "unanswered": "\(progress.unanswered)"])
            }
        } catch {
            // The lease runs out, and the job is claimed again: by then the store may answer.
            logger.error("delivery job left to its lease", metadata: ["error": "\(error)"])
        }
    }

    /// What a job's pages have left unanswered so far, and why the last one was.
    struct Progress {
        var unanswered = 0
        var lastFailure = ""
        /// Whether FCM delivered to some device of this job: its project is then the right one.
        var fcmDelivered: Bool

        mutating func noAnswer(from devices: Int, why: String) {
            unanswered += devices
            lastFailure = why
        }
    }

    /// Sends one page to Apple devices, keeps their answers and prunes dead tokens.
    private func sendAPNs(_ job: DeliveryJob, to page: [RegistrationRecord], progress: inout Progress, logger: Logger) async throws(StoreError) {
        let span = Self.pageSpan("delivery.apns", devices: page.count)
        defer { span.end() }
        let payload = job.push.kind.apnsPayload(id: job.notificationID, richType: job.richType ?? "", message: job.push.message)
        let results: [APNsSendResult]
        do throws(APNsClientError) {
            results = try await delivery.client.send(payload, headers: APNsHeaders(for: payload, topic: delivery.topic), to: page.map(\.deviceToken))
        } catch {
            progress.noAnswer(from: page.count, why: error.message)
            return
        }
        try await keep(
            results.map { ($0.deviceToken, Self.answer($0.outcome), Self.describe($0.outcome)) }, from: .apns, of: job, progress: &progress)
        await delivery.prune(results, of: page, recipient: job.recipient, logger: logger)
    }

    /// Sends one page to Android devices, keeps their answers and prunes dead tokens.
    private func sendFCM(_ job: DeliveryJob, to page: [RegistrationRecord], progress: inout Progress, logger: Logger) async throws(StoreError) {
        guard let fcm = delivery.fcm else { return }
        let span = Self.pageSpan("delivery.fcm", devices: page.count)
        defer { span.end() }
        let message = job.push.kind.fcmMessage(id: job.notificationID, richType: job.richType ?? "", message: job.push.message)
        let results: [FCMSendResult]
        do throws(FCMClientError) {
            results = try await fcm.send(message, to: page.map(\.deviceToken))
        } catch {
            progress.noAnswer(from: page.count, why: error.message)
            return
        }
        try await keep(results.map { ($0.target, Self.answer($0.outcome), "\($0.outcome)") }, from: .fcmv1, of: job, progress: &progress)
        await delivery.pruneFCM(results, of: page, projectIsRight: progress.fcmDelivered, logger: logger)
    }

    /// A page's span: a client span under the job's, with how many devices it sends to.
    private static func pageSpan(_ name: String, devices: Int) -> any Span {
        let span = startSpan(name, ofKind: .client)
        span.attributes["push.devices"] = devices
        return span
    }

    /// Records a page's answers; a target without one (nil) is counted unanswered, with its outcome as why.
    private func keep(
        _ outcomes: [(target: String, answer: String?, outcome: String)], from platform: Installation.Platform, of job: DeliveryJob,
        progress: inout Progress
    ) async throws(StoreError) {
        var answers: [DeliveryAnswer] = []
        for (target, answer, outcome) in outcomes {
            guard let answer else {
                progress.noAnswer(from: 1, why: outcome)
                continue
            }
            if platform == .fcmv1 && answer == Self.delivered { progress.fcmDelivered = true }
            answers.append(DeliveryAnswer(target: target, platform: platform.rawValue, outcome: answer))
        }
        try await store.recordDeliveryAnswers(notificationID: job.notificationID, answers: answers, at: unixMilliseconds())
    }

    static let delivered = "delivered"

    /// What is kept for a device: delivered, or APNs' reason for a refusal no retry changes; nil
    /// for no answer, or a refusal worth asking again later (429, 500, 503).
    static func answer(_ outcome: APNsSendOutcome) -> String? {
        switch outcome {
        case .delivered: delivered
        case .rejected(429, _, _), .rejected(500, _, _), .rejected(503, _, _): nil
        case .rejected(_, let reason, _): reason.rawValue
        case .failed(.invalidDeviceToken, _): "invalidDeviceToken"
        case .failed: nil
        }
    }

    /// The same for FCM: delivered, or FCM's code for a refusal no retry changes (`UNREGISTERED`,
    /// `INVALID_ARGUMENT`, …); nil for no answer, or for 429 and 5xx, which the client already
    /// retried honouring `Retry-After`.
    static func answer(_ outcome: FCMSendOutcome) -> String? {
        switch outcome {
        case .delivered: delivered
        case .rejected(let status, _, _) where status == 429 || status >= 500: nil
        case .rejected(_, let code, _): code.rawValue
        case .failed(.invalidRegistrationToken, _): "invalidRegistrationToken"
        case .failed: nil
        }
    }

    static func describe(_ outcome: APNsSendOutcome) -> String {
        switch outcome {
        case .delivered: delivered
        case .rejected(let status, let reason, _): "\(status) \(reason)"
        case .failed(let failure, _): "\(failure)"
        }
    }

    private func finish(_ job: DeliveryJob, _ state: DeliveryState, failure: String?, logger: Logger) async {
        do {
            guard try await store.finishDeliveryJob(notificationID: job.notificationID, owner: owner, state: state, failure: failure) else {
                logger.notice("delivery job taken over by another worker")
                return
            }
            // As a direct send counts: sent when some device took it.
            delivery.metrics.counted(.notification, outcome: state == .failed ? "failed" : "sent")
            delivery.metrics.deliveryJob(state.rawValue, attempts: job.attempts, sinceDue: unixMilliseconds() - job.dueAt)
            if state != .delivered { logger.notice("delivery ended", metadata: ["state": "\(state.rawValue)", "why": "\(failure ?? "")"]) }
        } catch {
            logger.error("delivery job left to its lease", metadata: ["error": "\(error)"])
        }
    }

}

extension Duration {
    /// The duration in whole milliseconds, for the store's Unix-millisecond times.
    var wholeMilliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}

extension Logger {
    fileprivate func with(notification id: String) -> Logger {
        var logger = self
        logger[metadataKey: "notification"] = "\(id)"
        return logger
    }
}

/// The worker beside the server: stops taking jobs when the application shuts down (a job it was
/// working is left to its lease).
struct DeliveryWorkerService: Service {
    let worker: DeliveryWorker

    func run() async throws {
        await cancelWhenGracefulShutdown { await worker.run() }
    }
}
