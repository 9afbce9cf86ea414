import APNs
package import Logging
import NotificationHubs
import PushCore
import PushInternals
import ServiceLifecycle

/// Works the delivery queue (``DeliveryQueueStore``) for APNs delivery: claims due jobs, sends
/// each to the recipient's Apple devices that have no answer yet, a page at a time, keeps the
/// answers, prunes dead tokens as a direct send does, and then finishes the job, or gives it back
/// for a retry when APNs left devices unanswered (a 429 or 5xx after the client's own retries, a
/// lost connection, no connection), until the push's deadline.
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

        package init(
            lease: Duration = .seconds(30), batch: Int = 8, page: Int = 500, idlePoll: Duration = .milliseconds(250),
            baseBackoff: Duration = .seconds(1), maximumBackoff: Duration = .seconds(60)
        ) {
            self.lease = lease
            self.batch = max(batch, 1)
            self.page = max(page, 1)
            self.idlePoll = idlePoll
            self.baseBackoff = baseBackoff
            self.maximumBackoff = maximumBackoff
        }
    }

    let store: any BackendStore
    let apns: APNsDelivery
    /// This worker's name on its leases: random, so that instances never share one.
    let owner: String
    let settings: Settings
    let logger: Logger

    package init(store: any BackendStore, apns: APNsDelivery, settings: Settings = Settings(), logger: Logger) {
        self.store = store
        self.apns = apns
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

    /// Works the queue until the task is cancelled.
    package func run() async {
        while !Task.isCancelled {
            if await runOnce() == 0 { try? await Task.sleep(for: settings.idlePoll) }
        }
    }

    func work(_ job: DeliveryJob) async {
        let id = job.notificationID
        let logger = self.logger.with(notification: id)
        guard unixMilliseconds() < job.push.deadline else {
            await finish(job, .failed, failure: "its deadline passed before every device answered", logger: logger)
            return
        }
        do throws(StoreError) {
            let answered = Set(try await store.deliveryAnswers(notificationID: id).map(\.target))
            let devices = try await store.registrations(owner: job.recipient).filter { $0.platform == .apns && !answered.contains($0.deviceToken) }
            let payload = job.push.kind.apnsPayload(id: id, richType: job.richType ?? "", message: job.push.message)
            let headers = APNsHeaders(for: payload, topic: apns.topic)
            var unanswered = 0
            var lastFailure = ""
            for start in stride(from: 0, to: devices.count, by: settings.page) {
                guard
                    try await store.renewDeliveryLease(notificationID: id, owner: owner, until: unixMilliseconds() + settings.lease.wholeMilliseconds)
                else {
                    logger.notice("delivery job taken over by another worker")
                    return
                }
                let page = Array(devices[start..<min(start + settings.page, devices.count)])
                let results: [APNsSendResult]
                do throws(APNsClientError) {
                    results = try await apns.client.send(payload, headers: headers, to: page.map(\.deviceToken))
                } catch {
                    unanswered += page.count
                    lastFailure = error.message
                    continue
                }
                var answers: [DeliveryAnswer] = []
                for result in results {
                    if let outcome = Self.answer(result.outcome) {
                        answers.append(DeliveryAnswer(target: result.deviceToken, platform: "apns", outcome: outcome))
                    } else {
                        unanswered += 1
                        lastFailure = Self.describe(result.outcome)
                    }
                }
                try await store.recordDeliveryAnswers(notificationID: id, answers: answers, at: unixMilliseconds())
                await apns.prune(results, of: page, recipient: job.recipient, logger: logger)
            }
            guard unanswered > 0 else {
                let outcomes = try await store.deliveryAnswers(notificationID: id).map(\.outcome)
                let delivered = outcomes.filter { $0 == Self.delivered }.count
                let state: DeliveryState = delivered == outcomes.count ? .delivered : delivered > 0 ? .partly : .failed
                await finish(job, state, failure: state == .delivered ? nil : "APNs refused \(outcomes.count - delivered) device(s)", logger: logger)
                return
            }
            let failure = "\(unanswered) device(s) unanswered: \(lastFailure)"
            // Never sooner than half the base: a job APNs just refused is not claimed again at once.
            let backoff = max(
                Backoff.fullJitter(retry: job.attempts, base: settings.baseBackoff, maximum: settings.maximumBackoff), settings.baseBackoff / 2)
            let due = unixMilliseconds() + backoff.wholeMilliseconds
            guard due < job.push.deadline else {
                await finish(job, .failed, failure: failure + "; its deadline passed", logger: logger)
                return
            }
            if try await store.requeueDeliveryJob(notificationID: id, owner: owner, dueAt: due, failure: failure) {
                logger.notice("delivery retried later", metadata: ["attempts": "\(job.attempts)", "unanswered": "\(unanswered)"])
            }
        } catch {
            // The lease runs out, and the job is claimed again: by then the store may answer.
            logger.error("delivery job left to its lease", metadata: ["error": "\(error)"])
        }
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
            apns.metrics.counted(.notification, outcome: state == .failed ? "failed" : "sent")
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
