import Metrics
import NIOCore
import Synchronization
import Tracing

/// A store whose every call is timed (`push_backend_store_duration_seconds{operation}`) and traced
/// (a client span named `store.OPERATION`), whichever engine is behind it.
///
/// It also keeps what `/ready` reports: whether writes have been failing (a full disk answers reads
/// and refuses writes), and the last check of the database, reused for a second so that probes
/// cannot load it.
struct InstrumentedStore: BackendStore {
    let base: any BackendStore
    /// `sqlite` or `postgresql`, the spans' `db.system`.
    let system: String
    private let health = StoreHealth()

    init(base: any BackendStore, system: String) {
        self.base = base
        self.system = system
    }

    private func measure<Result>(
        _ operation: String, writes: Bool = false, _ call: () async throws(StoreError) -> Result
    ) async throws(StoreError) -> Result {
        let span = startSpan("store.\(operation)", ofKind: .client)
        span.attributes["db.system"] = system
        let timer = Timer(label: "push_backend_store_duration_seconds", dimensions: [("operation", operation)], preferredDisplayUnit: .seconds)
        let started = ContinuousClock.now
        defer {
            let elapsed = (ContinuousClock.now - started).components
            timer.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
            span.end()
        }
        do {
            let result = try await call()
            if writes { health.writeSucceeded() }
            return result
        } catch {
            span.recordError(error)
            if writes && error.code != .conflict { health.writeFailed(error) }
            throw error
        }
    }

    func addUser(_ user: UserRecord) async throws(StoreError) {
        try await measure("add_user", writes: true) { () async throws(StoreError) in try await base.addUser(user) }
    }
    func user(named name: String) async throws(StoreError) -> UserRecord? {
        try await measure("user") { () async throws(StoreError) in try await base.user(named: name) }
    }
    func users() async throws(StoreError) -> [UserRecord] { try await measure("users") { () async throws(StoreError) in try await base.users() } }
    func removeUser(named name: String) async throws(StoreError) -> Bool {
        try await measure("remove_user", writes: true) { () async throws(StoreError) in try await base.removeUser(named: name) }
    }

    func addAPIKey(_ key: APIKeyRecord) async throws(StoreError) {
        try await measure("add_api_key", writes: true) { () async throws(StoreError) in try await base.addAPIKey(key) }
    }
    func apiKeyOwnerAndNotification(
        keyID: String, id: String, visibleAt: Int64
    ) async throws(StoreError)
        -> (APIKeyRecord, UserRecord, NotificationRecord?)?
    {
        try await measure("api_key_owner_and_notification") { () async throws(StoreError) in
            try await base.apiKeyOwnerAndNotification(keyID: keyID, id: id, visibleAt: visibleAt)
        }
    }
    func apiKeys() async throws(StoreError) -> [APIKeyRecord] {
        try await measure("api_keys") { () async throws(StoreError) in try await base.apiKeys() }
    }
    func removeAPIKey(id: String) async throws(StoreError) -> Bool {
        try await measure("remove_api_key", writes: true) { () async throws(StoreError) in try await base.removeAPIKey(id: id) }
    }

    func addImage(_ image: ImageRecord) async throws(StoreError) {
        try await measure("add_image", writes: true) { () async throws(StoreError) in try await base.addImage(image) }
    }
    func addImageChunk(imageID: String, index: Int, bytes: ByteBuffer) async throws(StoreError) {
        try await measure("add_image_chunk", writes: true) { () async throws(StoreError) in
            try await base.addImageChunk(imageID: imageID, index: index, bytes: bytes)
        }
    }
    func completeImage(id: String, size: Int, entityTag: String, digest: String) async throws(StoreError) {
        try await measure("complete_image", writes: true) { () async throws(StoreError) in
            try await base.completeImage(id: id, size: size, entityTag: entityTag, digest: digest)
        }
    }
    func image(id: String) async throws(StoreError) -> ImageRecord? {
        try await measure("image") { () async throws(StoreError) in try await base.image(id: id) }
    }
    func imageBytes(id: String) async throws(StoreError) -> (ImageRecord, ByteBuffer)? {
        try await measure("image_bytes") { () async throws(StoreError) in try await base.imageBytes(id: id) }
    }
    func images(owner: String) async throws(StoreError) -> [ImageRecord] {
        try await measure("images") { () async throws(StoreError) in try await base.images(owner: owner) }
    }
    func deleteImage(id: String, owner: String?) async throws(StoreError) -> Bool {
        try await measure("delete_image", writes: true) { () async throws(StoreError) in try await base.deleteImage(id: id, owner: owner) }
    }
    func deleteUnusedImages(unreferencedBefore: Int64, incompleteBefore: Int64, limit: Int) async throws(StoreError) -> Int {
        try await measure("delete_unused_images", writes: true) { () async throws(StoreError) in
            try await base.deleteUnusedImages(unreferencedBefore: unreferencedBefore, incompleteBefore: incompleteBefore, limit: limit)
        }
    }

    func registration(id: String) async throws(StoreError) -> RegistrationRecord? {
        try await measure("registration") { () async throws(StoreError) in try await base.registration(id: id) }
    }
    func registration(deviceToken: String) async throws(StoreError) -> RegistrationRecord? {
        try await measure("registration_by_token") { () async throws(StoreError) in try await base.registration(deviceToken: deviceToken) }
    }
    func saveRegistration(_ registration: RegistrationRecord, maximumPerOwner: Int) async throws(StoreError) -> Bool {
        try await measure("save_registration", writes: true) { () async throws(StoreError) in
            try await base.saveRegistration(registration, maximumPerOwner: maximumPerOwner)
        }
    }
    func deleteRegistration(id: String, owner: String) async throws(StoreError) -> Bool {
        try await measure("delete_registration", writes: true) { () async throws(StoreError) in
            try await base.deleteRegistration(id: id, owner: owner)
        }
    }
    func registrations(owner: String) async throws(StoreError) -> [RegistrationRecord] {
        try await measure("registrations") { () async throws(StoreError) in try await base.registrations(owner: owner) }
    }

    func saveActivity(_ activity: ActivityRecord) async throws(StoreError) {
        try await measure("save_activity", writes: true) { () async throws(StoreError) in try await base.saveActivity(activity) }
    }
    func activity(id: String) async throws(StoreError) -> ActivityRecord? {
        try await measure("activity") { () async throws(StoreError) in try await base.activity(id: id) }
    }
    func activityCount(owner: String) async throws(StoreError) -> Int {
        try await measure("activity_count") { () async throws(StoreError) in try await base.activityCount(owner: owner) }
    }
    func deleteActivity(id: String, owner: String?) async throws(StoreError) -> Bool {
        try await measure("delete_activity", writes: true) { () async throws(StoreError) in try await base.deleteActivity(id: id, owner: owner) }
    }

    func addChannel(_ channel: ChannelRecord) async throws(StoreError) {
        try await measure("add_channel", writes: true) { () async throws(StoreError) in try await base.addChannel(channel) }
    }
    func channel(id: String) async throws(StoreError) -> ChannelRecord? {
        try await measure("channel") { () async throws(StoreError) in try await base.channel(id: id) }
    }
    func deleteChannel(id: String) async throws(StoreError) -> Bool {
        try await measure("delete_channel", writes: true) { () async throws(StoreError) in try await base.deleteChannel(id: id) }
    }

    func addNotification(_ notification: NotificationRecord) async throws(StoreError) {
        try await measure("add_notification", writes: true) { () async throws(StoreError) in try await base.addNotification(notification) }
    }
    func userAndNotification(named name: String, id: String, visibleAt: Int64) async throws(StoreError) -> (UserRecord, NotificationRecord?)? {
        try await measure("user_and_notification") { () async throws(StoreError) in
            try await base.userAndNotification(named: name, id: id, visibleAt: visibleAt)
        }
    }
    func addNotification(_ notification: NotificationRecord, queuing push: QueuedPush) async throws(StoreError) {
        try await measure("add_notification", writes: true) { () async throws(StoreError) in
            try await base.addNotification(notification, queuing: push)
        }
    }

    func claimDeliveryJobs(owner: String, now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [DeliveryJob] {
        try await measure("claim_delivery_jobs", writes: true) { () async throws(StoreError) in
            try await base.claimDeliveryJobs(owner: owner, now: now, leaseUntil: leaseUntil, limit: limit)
        }
    }
    func renewDeliveryLease(notificationID: String, owner: String, until: Int64) async throws(StoreError) -> Bool {
        try await measure("renew_delivery_lease", writes: true) { () async throws(StoreError) in
            try await base.renewDeliveryLease(notificationID: notificationID, owner: owner, until: until)
        }
    }
    func recordDeliveryAnswers(notificationID: String, answers: [DeliveryAnswer], at time: Int64) async throws(StoreError) {
        try await measure("record_delivery_answers", writes: true) { () async throws(StoreError) in
            try await base.recordDeliveryAnswers(notificationID: notificationID, answers: answers, at: time)
        }
    }
    func deliveryAnswers(notificationID: String) async throws(StoreError) -> [DeliveryAnswer] {
        try await measure("delivery_answers") { () async throws(StoreError) in try await base.deliveryAnswers(notificationID: notificationID) }
    }
    func finishDeliveryJob(notificationID: String, owner: String, state: DeliveryState, failure: String?) async throws(StoreError) -> Bool {
        try await measure("finish_delivery_job", writes: true) { () async throws(StoreError) in
            try await base.finishDeliveryJob(notificationID: notificationID, owner: owner, state: state, failure: failure)
        }
    }
    func requeueDeliveryJob(notificationID: String, owner: String, dueAt: Int64, failure: String?) async throws(StoreError) -> Bool {
        try await measure("requeue_delivery_job", writes: true) { () async throws(StoreError) in
            try await base.requeueDeliveryJob(notificationID: notificationID, owner: owner, dueAt: dueAt, failure: failure)
        }
    }
    func deliveryBacklog(now: Int64) async throws(StoreError) -> (jobs: Int, oldestDueAt: Int64?) {
        try await measure("delivery_backlog") { () async throws(StoreError) in try await base.deliveryBacklog(now: now) }
    }
    func deliveryReports(notificationIDs: [String]) async throws(StoreError) -> [String: DeliveryReport] {
        try await measure("delivery_reports") { () async throws(StoreError) in try await base.deliveryReports(notificationIDs: notificationIDs) }
    }

    func markRead(id: String, at time: Int64) async throws(StoreError) {
        try await measure("mark_read", writes: true) { () async throws(StoreError) in try await base.markRead(id: id, at: time) }
    }
    func notifications(recipient: String, visibleAt: Int64, limit: Int) async throws(StoreError) -> [NotificationRecord] {
        try await measure("notifications") { () async throws(StoreError) in
            try await base.notifications(recipient: recipient, visibleAt: visibleAt, limit: limit)
        }
    }
    func notifications(sender: String, limit: Int) async throws(StoreError) -> [NotificationRecord] {
        try await measure("sent_notifications") { () async throws(StoreError) in try await base.notifications(sender: sender, limit: limit) }
    }
    func recordDelivery(id: String, hubMessageID: String?, outcome: String?) async throws(StoreError) {
        try await measure("record_delivery", writes: true) { () async throws(StoreError) in
            try await base.recordDelivery(id: id, hubMessageID: hubMessageID, outcome: outcome)
        }
    }
    func deleteNotification(id: String) async throws(StoreError) {
        try await measure("delete_notification", writes: true) { () async throws(StoreError) in try await base.deleteNotification(id: id) }
    }
    func deleteNotifications(pastBefore time: Int64, limit: Int) async throws(StoreError) -> Int {
        try await measure("delete_expired_notifications", writes: true) { () async throws(StoreError) in
            try await base.deleteNotifications(pastBefore: time, limit: limit)
        }
    }

    /// Fails while writes have been failing (for ``StoreHealth/writeFailureMemory`` after the last
    /// failure, unless a write succeeded since); else asks the database, at most once a
    /// ``StoreHealth/checkInterval``, and answers the last answer in between.
    func checkAvailable() async throws(StoreError) {
        let now = ContinuousClock.now
        if let failing = health.failingWrite(now: now) { throw failing }
        if let recent = health.recentCheck(now: now) { return try recent.get() }
        let result: Result<Void, StoreError>
        do throws(StoreError) {
            try await base.checkAvailable()
            result = .success(())
        } catch {
            result = .failure(error)
        }
        health.checked(result, at: now)
        try result.get()
    }
    func close() async { await base.close() }
}

/// What `/ready` needs to know of a store beyond one query: how its writes fare, and its last check.
package final class StoreHealth: Sendable {
    /// How long a failed write keeps the store not ready, unless a write succeeds first.
    package static let writeFailureMemory = Duration.seconds(10)
    /// How long one check of the database answers for.
    package static let checkInterval = Duration.seconds(1)

    private struct State {
        var lastWriteFailure: (at: ContinuousClock.Instant, error: StoreError)?
        var lastCheck: (at: ContinuousClock.Instant, result: Result<Void, StoreError>)?
    }

    private let state = Mutex(State())

    package init() {}

    package func writeSucceeded() {
        state.withLock { $0.lastWriteFailure = nil }
    }

    package func writeFailed(_ error: StoreError, at time: ContinuousClock.Instant = .now) {
        state.withLock { $0.lastWriteFailure = (time, error) }
    }

    package func failingWrite(now: ContinuousClock.Instant) -> StoreError? {
        state.withLock { state in
            guard let failure = state.lastWriteFailure, now - failure.at < Self.writeFailureMemory else { return nil }
            return StoreError(failure.error.code, "writes are failing: \(failure.error.message)")
        }
    }

    package func recentCheck(now: ContinuousClock.Instant) -> Result<Void, StoreError>? {
        state.withLock { state in
            guard let check = state.lastCheck, now - check.at < Self.checkInterval else { return nil }
            return check.result
        }
    }

    package func checked(_ result: Result<Void, StoreError>, at time: ContinuousClock.Instant) {
        state.withLock { $0.lastCheck = (time, result) }
    }
}
