import PushBackend
import PushTestSupport
import Testing

/// The queue's half of the store: jobs written with their notification, claimed under leases,
/// answers kept per target; on SQLite and on PostgreSQL alike.
@Suite("Delivery queue: jobs, leases and answers on SQLite and PostgreSQL")
struct DeliveryQueueTests {
    /// Where a store of either engine keeps its data, so that a second store can open it again.
    enum Location {
        case directory(String)
        case url(String)

        static func new(_ engine: StoreEngine) async throws -> Location {
            switch engine {
            case .sqlite: .directory(try temporaryDirectory())
            case .postgres: .url(try await TestPostgres.makeDatabase())
            }
        }

        func open() async throws -> any BackendStore {
            switch self {
            case .directory(let path): try await SQLiteBackendStore.open(dataDirectory: path)
            case .url(let url): try await PostgresBackendStore.open(url: url, connectTimeout: .seconds(60))
            }
        }
    }

    static let hour: Int64 = 3_600_000

    func notification(_ id: String, createdAt: Int64, sendAt: Int64? = nil) -> NotificationRecord {
        NotificationRecord(
            id: id, sender: "alice", recipient: "alice", content: .secure(payload: "hello"), createdAt: createdAt, sendAt: sendAt)
    }

    func withQueue(_ engine: StoreEngine, _ body: (any BackendStore, Location) async throws -> Void) async throws {
        let location = try await Location.new(engine)
        let store = try await location.open()
        do {
            try await store.addUser(UserRecord(name: "alice", passwordHash: "$scrypt$a", role: .sender))
            try await body(store, location)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    @Test("A job is claimed once it is due, by one claimer, and finished only by it", arguments: StoreEngine.allCases)
    func claimAndFinish(engine: StoreEngine) async throws {
        try await withQueue(engine) { store, _ in
            // The request's trace goes with its job, as the tracer wrote it.
            let trace = ["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "vendor=\"1\""]
            try await store.addNotification(
                notification("now", createdAt: 1_000),
                queuing: QueuedPush(kind: .secureAlert, message: "New message", deadline: 1_000 + Self.hour, trace: trace))
            try await store.addNotification(
                notification("later", createdAt: 1_000, sendAt: 5_000), queuing: QueuedPush(kind: .secure, message: "", deadline: 5_000 + Self.hour))
            // Without a job (the hub's sends before the queue): never claimed.
            try await store.addNotification(notification("untracked", createdAt: 500))
            #expect(try await store.deliveryReport(notificationID: "untracked") == nil)
            #expect(try await store.deliveryReport(notificationID: "now")?.state == .queued)
            // The backlog counts what is due and not ended: not a job due later, not one without a job.
            let backlog = try await store.deliveryBacklog(now: 2_000)
            #expect(backlog.jobs == 1 && backlog.oldestDueAt == 1_000)

            let claimed = try await store.claimDeliveryJobs(owner: "a", now: 2_000, leaseUntil: 32_000, limit: 10)
            #expect(claimed.map(\.notificationID) == ["now"])
            #expect(claimed.first?.recipient == "alice" && claimed.first?.attempts == 1 && claimed.first?.dueAt == 1_000)
            #expect(claimed.first?.push == QueuedPush(kind: .secureAlert, message: "New message", deadline: 1_000 + Self.hour, trace: trace))
            #expect(claimed.first?.leaseExpiresAt == 32_000 && claimed.first?.richType == nil)
            #expect(try await store.claimDeliveryJobs(owner: "b", now: 2_000, leaseUntil: 32_000, limit: 10).isEmpty)
            #expect(try await store.deliveryReport(notificationID: "now")?.state == .sending)

            try await store.recordDeliveryAnswers(
                notificationID: "now",
                answers: [
                    DeliveryAnswer(target: "t2", platform: "apns", outcome: "Unregistered"),
                    DeliveryAnswer(target: "t1", platform: "fcmv1", outcome: "delivered"),
                ], at: 2_100)
            // A target keeps its first answer.
            try await store.recordDeliveryAnswers(
                notificationID: "now", answers: [DeliveryAnswer(target: "t1", platform: "fcmv1", outcome: "failed")], at: 2_200)
            #expect(
                try await store.deliveryAnswers(notificationID: "now") == [
                    DeliveryAnswer(target: "t1", platform: "fcmv1", outcome: "delivered"),
                    DeliveryAnswer(target: "t2", platform: "apns", outcome: "Unregistered"),
                ])

            #expect(try await !store.finishDeliveryJob(notificationID: "now", owner: "b", state: .delivered, failure: nil))
            #expect(try await store.finishDeliveryJob(notificationID: "now", owner: "a", state: .partly, failure: "APNs refused 1 device(s)"))
            // Reports for several notifications in one call: those without a job are left out.
            let reports = try await store.deliveryReports(notificationIDs: ["now", "later", "untracked", "missing"])
            #expect(reports.keys.sorted() == ["later", "now"])
            #expect(reports["now"]?.state == .partly && reports["now"]?.attempts == 1 && reports["now"]?.failure == "APNs refused 1 device(s)")
            #expect(reports["now"]?.outcomes == ["apns": ["Unregistered": 1], "fcmv1": ["delivered": 1]])
            #expect(reports["later"]?.state == .queued && reports["later"]?.attempts == 0 && reports["later"]?.outcomes == [:])
            #expect(try await store.deliveryReports(notificationIDs: []).isEmpty)
            let ended = try await store.deliveryBacklog(now: 2_000)
            #expect(ended.jobs == 0 && ended.oldestDueAt == nil)
            #expect(try await !store.finishDeliveryJob(notificationID: "now", owner: "a", state: .delivered, failure: nil))

            #expect(try await store.claimDeliveryJobs(owner: "a", now: 4_999, leaseUntil: 40_000, limit: 10).isEmpty)
            #expect(try await store.claimDeliveryJobs(owner: "a", now: 5_000, leaseUntil: 40_000, limit: 10).map(\.notificationID) == ["later"])
        }
    }

    @Test("An expired lease is taken over; the first holder can no longer renew, finish or requeue", arguments: StoreEngine.allCases)
    func leaseTakeover(engine: StoreEngine) async throws {
        try await withQueue(engine) { store, _ in
            try await store.addNotification(notification("n", createdAt: 0), queuing: QueuedPush(kind: .secure, message: "", deadline: Self.hour))
            #expect(try await store.claimDeliveryJobs(owner: "a", now: 0, leaseUntil: 100, limit: 1).count == 1)
            #expect(try await store.claimDeliveryJobs(owner: "b", now: 99, leaseUntil: 199, limit: 1).isEmpty)
            let taken = try await store.claimDeliveryJobs(owner: "b", now: 100, leaseUntil: 200, limit: 1)
            #expect(taken.map(\.attempts) == [2])
            #expect(try await !store.renewDeliveryLease(notificationID: "n", owner: "a", until: 300))
            #expect(try await !store.finishDeliveryJob(notificationID: "n", owner: "a", state: .delivered, failure: nil))
            #expect(try await !store.requeueDeliveryJob(notificationID: "n", owner: "a", dueAt: 150, failure: nil))
            #expect(try await store.renewDeliveryLease(notificationID: "n", owner: "b", until: 400))
            #expect(try await store.claimDeliveryJobs(owner: "c", now: 300, leaseUntil: 500, limit: 1).isEmpty)

            // A retry: back in the queue, due after its backoff, with why.
            #expect(try await store.requeueDeliveryJob(notificationID: "n", owner: "b", dueAt: 500, failure: "503 ServiceUnavailable"))
            let status = try await store.deliveryReport(notificationID: "n")
            #expect(status?.state == .queued && status?.attempts == 2 && status?.failure == "503 ServiceUnavailable")
            #expect(try await store.claimDeliveryJobs(owner: "c", now: 499, leaseUntil: 900, limit: 1).isEmpty)
            #expect(try await store.claimDeliveryJobs(owner: "c", now: 500, leaseUntil: 900, limit: 1).map(\.attempts) == [3])
            #expect(try await store.finishDeliveryJob(notificationID: "n", owner: "c", state: .failed, failure: "deadline passed"))
            #expect(try await store.deliveryReport(notificationID: "n")?.failure == "deadline passed")
        }
    }

    @Test("Claims take the oldest due first, up to the limit; concurrent claimers never share a job", arguments: StoreEngine.allCases)
    func concurrentClaims(engine: StoreEngine) async throws {
        try await withQueue(engine) { store, location in
            for index in 0..<60 {
                try await store.addNotification(
                    notification("n\(100 + index)", createdAt: Int64(index)), queuing: QueuedPush(kind: .secure, message: "", deadline: Self.hour))
            }
            let first = try await store.claimDeliveryJobs(owner: "probe", now: 1_000, leaseUntil: 1_001, limit: 3)
            #expect(first.map(\.notificationID) == ["n100", "n101", "n102"])

            // Two instances on PostgreSQL; on SQLite, concurrent calls on the one store.
            let other = engine == .postgres ? try await location.open() : store
            let owners = ["a", "b", "c", "d"]
            let claims = try await withThrowingTaskGroup(of: [String].self) { group in
                for (index, owner) in owners.enumerated() {
                    let claimer = index % 2 == 0 ? store : other
                    group.addTask {
                        var mine: [String] = []
                        while true {
                            let jobs = try await claimer.claimDeliveryJobs(owner: owner, now: 1_002, leaseUntil: 60_000, limit: 4)
                            if jobs.isEmpty { return mine }
                            mine += jobs.map(\.notificationID)
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            if engine == .postgres { await other.close() }
            #expect(claims.count == 60)
            #expect(Set(claims).count == 60)
        }
    }

    @Test("A restart resumes queued jobs and takes over the ones a stopped process held", arguments: StoreEngine.allCases)
    func restart(engine: StoreEngine) async throws {
        try await withQueue(engine) { store, location in
            try await store.addNotification(notification("held", createdAt: 0), queuing: QueuedPush(kind: .secure, message: "", deadline: Self.hour))
            let rich = NotificationRecord(
                id: "queued", sender: "alice", recipient: "alice", content: .rich(richType: "news", resource: "cat", message: "Look"),
                createdAt: 10)
            try await store.addNotification(rich, queuing: QueuedPush(kind: .richAlert, message: "Look", deadline: Self.hour))
            #expect(try await store.claimDeliveryJobs(owner: "gone", now: 0, leaseUntil: 30_000, limit: 1).map(\.notificationID) == ["held"])
            try await store.recordDeliveryAnswers(
                notificationID: "held", answers: [DeliveryAnswer(target: "t1", platform: "apns", outcome: "delivered")], at: 5)

            let reopened = try await location.open()
            let resumed = try await reopened.claimDeliveryJobs(owner: "next", now: 30_000, leaseUntil: 60_000, limit: 10)
            #expect(resumed.map(\.notificationID) == ["held", "queued"])
            #expect(resumed.last?.richType == "news" && resumed.last?.push.kind == .richAlert && resumed.last?.push.message == "Look")
            #expect(try await reopened.deliveryAnswers(notificationID: "held").map(\.target) == ["t1"])
            await reopened.close()
        }
    }

    @Test("Answers go with their notification, and none is kept for one that is gone", arguments: StoreEngine.allCases)
    func answersFollowTheNotification(engine: StoreEngine) async throws {
        try await withQueue(engine) { store, _ in
            try await store.addNotification(notification("n", createdAt: 0), queuing: QueuedPush(kind: .secure, message: "", deadline: Self.hour))
            let many = (0..<700).map { DeliveryAnswer(target: "token\($0)", platform: "apns", outcome: "delivered") }
            try await store.recordDeliveryAnswers(notificationID: "n", answers: many, at: 1)
            #expect(try await store.deliveryAnswers(notificationID: "n").count == 700)
            try await store.deleteNotification(id: "n")
            #expect(try await store.deliveryAnswers(notificationID: "n").isEmpty)
            try await store.recordDeliveryAnswers(notificationID: "n", answers: Array(many.prefix(2)), at: 2)
            #expect(try await store.deliveryAnswers(notificationID: "n").isEmpty)
            #expect(try await store.deliveryReport(notificationID: "n") == nil)
        }
    }
}
