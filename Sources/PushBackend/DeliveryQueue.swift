import PushCore
import Tracing

/// Where a notification's delivery stands: queued until due, then sending under one instance's
/// lease, then done. A job another instance held is `sending` with a lease that has expired, and
/// any instance may claim it again.
package enum DeliveryState: String, Sendable, Hashable, CaseIterable {
    case queued, sending, delivered, partly, failed
}

/// How a queued notification is pushed, as the API decided when it took it.
package struct QueuedPush: Sendable, Hashable {
    package let kind: OutgoingPush.Kind
    /// The text the push carries: an alert's (shortened to fit), a rich push's message, a secure
    /// alert's placeholder; empty for a silent secure push.
    package let message: String
    /// When the job stops being retried and is `failed` (Unix milliseconds).
    package let deadline: Int64
    /// The request's trace as the tracer propagates it (a W3C `traceparent`, …), which the job's
    /// span joins; empty without a tracer.
    package let trace: [String: String]

    package init(kind: OutgoingPush.Kind, message: String, deadline: Int64, trace: [String: String] = [:]) {
        self.kind = kind
        self.message = message
        self.deadline = deadline
        self.trace = trace
    }

    /// ``trace`` as the store keeps it: a JSON object of strings; nil when empty.
    var traceText: String? {
        guard !trace.isEmpty else { return nil }
        return JSON.object(trace.sorted { $0.key < $1.key }.map { JSONMember($0.key, .string($0.value)) }).storedText
    }

    /// ``traceText`` read back; empty for none, or for text that is not such an object.
    static func trace(fromText text: String?) -> [String: String] {
        guard let text, case .object(let members)? = try? RawJSON(text).value else { return [:] }
        var trace: [String: String] = [:]
        for member in members {
            if case .string(let value) = member.value { trace[member.key] = value }
        }
        return trace
    }
}

/// Writes and reads a trace's propagation fields in ``QueuedPush/trace``.
struct TraceFields: Injector, Extractor {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}

/// A notification's delivery job, as the instance that claimed it holds it.
package struct DeliveryJob: Sendable, Hashable {
    package let notificationID: String
    package let recipient: String
    package let push: QueuedPush
    /// A rich notification's type, which its push carries; nil for a secure one.
    package let richType: String?
    /// When it became due (Unix milliseconds): its `sendAt`, its creation, or a retry's backoff.
    package let dueAt: Int64
    /// Claims so far, this one included: more than one means an instance gave it up or died.
    package let attempts: Int
    /// Until when this claim holds unless renewed (Unix milliseconds).
    package let leaseExpiresAt: Int64
}

/// One target's answer within a job: recorded as it comes, so that a job resumed elsewhere sends
/// only to the targets that have none.
package struct DeliveryAnswer: Sendable, Hashable {
    /// The device token (or registration token) the answer is for.
    package let target: String
    /// `apns` or `fcmv1`.
    package let platform: String
    /// `delivered`, the service's reason for a refusal (`Unregistered`, `UNREGISTERED`, …), or
    /// `failed` for a target given up on.
    package let outcome: String

    package init(target: String, platform: String, outcome: String) {
        self.target = target
        self.platform = platform
        self.outcome = outcome
    }
}

/// The queue's half of a store: notifications carry their delivery job (one row, written in the
/// same statement as the notification), claimed by leases that expire.
///
/// At least once: an answer is recorded after the service gave it, so a target whose request was
/// written when its instance died has no answer and is sent again by the next claimer. Nothing else
/// is sent twice, and nothing is left out: a job is finished only by the instance holding its lease.
package protocol DeliveryQueueStore: Sendable {
    /// Stores the notification with its job, due at its `sendAt` (or its creation), failed if still
    /// pending at the push's deadline; `conflict` when the id is taken.
    func addNotification(_ notification: NotificationRecord, queuing push: QueuedPush) async throws(StoreError)
    /// Takes up to `limit` jobs due by `now`, the oldest due first (in the order they were queued
    /// when due together): queued ones, and sending ones whose lease expired. Each is `sending`
    /// under `owner`'s lease until `leaseUntil`. Concurrent claimers (instances on one PostgreSQL)
    /// never take the same job.
    func claimDeliveryJobs(owner: String, now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [DeliveryJob]
    /// Extends the lease; false when `owner` no longer holds it (it expired and another took the job).
    func renewDeliveryLease(notificationID: String, owner: String, until: Int64) async throws(StoreError) -> Bool
    /// Keeps answers; a target already answered keeps its first answer.
    func recordDeliveryAnswers(notificationID: String, answers: [DeliveryAnswer], at time: Int64) async throws(StoreError)
    /// The answers so far, by target.
    func deliveryAnswers(notificationID: String) async throws(StoreError) -> [DeliveryAnswer]
    /// Ends the job as `state` (`delivered`, `partly` or `failed`, with why); false, and nothing
    /// changed, when `owner` no longer holds its lease.
    func finishDeliveryJob(notificationID: String, owner: String, state: DeliveryState, failure: String?) async throws(StoreError) -> Bool
    /// Gives the job back to the queue, due at `dueAt` (a retry's backoff), with why; false, and
    /// nothing changed, when `owner` no longer holds its lease.
    func requeueDeliveryJob(notificationID: String, owner: String, dueAt: Int64, failure: String?) async throws(StoreError) -> Bool
    /// Where each of these notifications' jobs stands, by notification id, in one round trip;
    /// notifications without a job (sent through a hub) are left out.
    func deliveryReports(notificationIDs: [String]) async throws(StoreError) -> [String: DeliveryReport]
    /// The jobs due by `now` and not finished (queued, or sending under a lease), and when the
    /// oldest of them became due: the queue's depth and age, for its gauges.
    func deliveryBacklog(now: Int64) async throws(StoreError) -> (jobs: Int, oldestDueAt: Int64?)
}

extension DeliveryQueueStore {
    /// Where the notification's job stands; nil for a notification without a job.
    package func deliveryReport(notificationID: String) async throws(StoreError) -> DeliveryReport? {
        try await deliveryReports(notificationIDs: [notificationID])[notificationID]
    }
}

/// Where a notification's delivery stands, as the API reports it: its job's state and the answers
/// its targets gave so far.
package struct DeliveryReport: Sendable, Hashable {
    package let state: DeliveryState
    /// Claims so far: more than one means a retry, or an instance that gave the job up or died.
    package let attempts: Int
    /// Why it ended `failed` or `partly`, or why it was last given back for a retry.
    package let failure: String?
    /// Per platform (`apns`, `fcmv1`), how many targets answered each outcome (`delivered`, or the
    /// service's reason for a refusal).
    package var outcomes: [String: [String: Int]]

    /// Counts `count` answers of `outcome` from `platform`; a job without answers yet (a row of
    /// the outer join with neither) adds nothing.
    mutating func add(platform: String?, outcome: String?, count: Int) {
        guard let platform, let outcome, count > 0 else { return }
        outcomes[platform, default: [:]][outcome, default: 0] += count
    }
}
