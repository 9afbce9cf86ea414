import Metrics
import Tracing

/// A store whose every call is timed (`push_backend_store_duration_seconds{operation}`) and traced
/// (a client span named `store.OPERATION`), whichever engine is behind it.
struct InstrumentedStore: BackendStore {
    let base: any BackendStore
    /// `sqlite` or `postgresql`, the spans' `db.system`.
    let system: String

    private func measure<Result>(_ operation: String, _ call: () async throws(StoreError) -> Result) async throws(StoreError) -> Result {
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
            return try await call()
        } catch {
            span.recordError(error)
            throw error
        }
    }

    func addUser(_ user: UserRecord) async throws(StoreError) {
        try await measure("add_user") { () async throws(StoreError) in try await base.addUser(user) }
    }
    func user(named name: String) async throws(StoreError) -> UserRecord? {
        try await measure("user") { () async throws(StoreError) in try await base.user(named: name) }
    }
    func users() async throws(StoreError) -> [UserRecord] { try await measure("users") { () async throws(StoreError) in try await base.users() } }
    func removeUser(named name: String) async throws(StoreError) -> Bool {
        try await measure("remove_user") { () async throws(StoreError) in try await base.removeUser(named: name) }
    }

    func registration(id: String) async throws(StoreError) -> RegistrationRecord? {
        try await measure("registration") { () async throws(StoreError) in try await base.registration(id: id) }
    }
    func registration(deviceToken: String) async throws(StoreError) -> RegistrationRecord? {
        try await measure("registration_by_token") { () async throws(StoreError) in try await base.registration(deviceToken: deviceToken) }
    }
    func saveRegistration(_ registration: RegistrationRecord, maximumPerOwner: Int) async throws(StoreError) -> Bool {
        try await measure("save_registration") { () async throws(StoreError) in
            try await base.saveRegistration(registration, maximumPerOwner: maximumPerOwner)
        }
    }
    func deleteRegistration(id: String, owner: String) async throws(StoreError) -> Bool {
        try await measure("delete_registration") { () async throws(StoreError) in try await base.deleteRegistration(id: id, owner: owner) }
    }
    func registrations(owner: String) async throws(StoreError) -> [RegistrationRecord] {
        try await measure("registrations") { () async throws(StoreError) in try await base.registrations(owner: owner) }
    }

    func saveActivity(_ activity: ActivityRecord) async throws(StoreError) {
        try await measure("save_activity") { () async throws(StoreError) in try await base.saveActivity(activity) }
    }
    func activity(id: String) async throws(StoreError) -> ActivityRecord? {
        try await measure("activity") { () async throws(StoreError) in try await base.activity(id: id) }
    }
    func activityCount(owner: String) async throws(StoreError) -> Int {
        try await measure("activity_count") { () async throws(StoreError) in try await base.activityCount(owner: owner) }
    }
    func deleteActivity(id: String, owner: String?) async throws(StoreError) -> Bool {
        try await measure("delete_activity") { () async throws(StoreError) in try await base.deleteActivity(id: id, owner: owner) }
    }

    func addChannel(_ channel: ChannelRecord) async throws(StoreError) {
        try await measure("add_channel") { () async throws(StoreError) in try await base.addChannel(channel) }
    }
    func channel(id: String) async throws(StoreError) -> ChannelRecord? {
        try await measure("channel") { () async throws(StoreError) in try await base.channel(id: id) }
    }
    func deleteChannel(id: String) async throws(StoreError) -> Bool {
        try await measure("delete_channel") { () async throws(StoreError) in try await base.deleteChannel(id: id) }
    }

    func addNotification(_ notification: NotificationRecord) async throws(StoreError) {
        try await measure("add_notification") { () async throws(StoreError) in try await base.addNotification(notification) }
    }
    func userAndNotification(named name: String, id: String, visibleAt: Int64) async throws(StoreError) -> (UserRecord, NotificationRecord?)? {
        try await measure("user_and_notification") { () async throws(StoreError) in
            try await base.userAndNotification(named: name, id: id, visibleAt: visibleAt)
        }
    }
    func markRead(id: String, at time: Int64) async throws(StoreError) {
        try await measure("mark_read") { () async throws(StoreError) in try await base.markRead(id: id, at: time) }
    }
    func notifications(recipient: String, visibleAt: Int64, limit: Int) async throws(StoreError) -> [NotificationRecord] {
        try await measure("notifications") { () async throws(StoreError) in
            try await base.notifications(recipient: recipient, visibleAt: visibleAt, limit: limit)
        }
    }
    func recordDelivery(id: String, hubMessageID: String?, outcome: String?) async throws(StoreError) {
        try await measure("record_delivery") { () async throws(StoreError) in
            try await base.recordDelivery(id: id, hubMessageID: hubMessageID, outcome: outcome)
        }
    }
    func deleteNotification(id: String) async throws(StoreError) {
        try await measure("delete_notification") { () async throws(StoreError) in try await base.deleteNotification(id: id) }
    }
    func deleteNotifications(pastBefore time: Int64, limit: Int) async throws(StoreError) -> Int {
        try await measure("delete_expired_notifications") { () async throws(StoreError) in
            try await base.deleteNotifications(pastBefore: time, limit: limit)
        }
    }

    func checkAvailable() async throws(StoreError) { try await base.checkAvailable() }
    func close() async { await base.close() }
}
