import APNs
import APNsEmulator
import Foundation
import Logging
import MetricsTestKit
import NotificationHubs
import PushBackend
import PushTestSupport
import Testing

/// The queue's worker sending straight to an APNs emulator: each device once, retries after an
/// outage, a deadline that ends a job, a job resumed where another worker left it.
@Suite("Delivery worker: queued notifications to APNs", .serialized)
struct DeliveryWorkerTests {
    static let minute: Int64 = 60_000

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    func token(_ index: Int) -> String {
        let hex = String(index, radix: 16)
        return "d" + String(repeating: "0", count: 63 - hex.count) + hex
    }

    /// A store with alice and her three Apple devices (and an Android one, which APNs does not
    /// reach), a worker on the development emulator, and that emulator.
    func withWorker(
        _ engine: StoreEngine = .sqlite, metrics: TestMetrics = TestMetrics(),
        settings: DeliveryWorker.Settings = .init(lease: .seconds(30), page: 2, baseBackoff: .milliseconds(1), maximumBackoff: .milliseconds(1)),
        _ body: @Sendable (any BackendStore, DeliveryWorker, APNsEmulator) async throws -> Void
    ) async throws {
        let logger = Logger(label: "delivery-worker-test")
        let store = try await DeliveryQueueTests.Location.new(engine).open()
        try await store.addUser(UserRecord(name: "alice", passwordHash: "$scrypt$a", role: .sender))
        for index in 1...3 {
            try await store.saveRegistration(
                RegistrationRecord(
                    id: "r\(index)", owner: "alice", deviceToken: token(index),
                    installationID: RegistrationRecord.installationID(deviceToken: token(index)), updatedAt: Int64(index)))
        }
        try await store.saveRegistration(
            RegistrationRecord(
                id: "android", owner: "alice", deviceToken: "fcm-token-of-alice-0001", platform: .fcmv1,
                installationID: RegistrationRecord.installationID(deviceToken: "fcm-token-of-alice-0001", platform: .fcmv1), updatedAt: 9))
        let emulators = try EmulatorPair()
        do {
            try await emulators.run(logger: logger) { client, other in
                let delivery = DirectDelivery(
                    DirectAPNs(client: client, otherEnvironment: other, topic: APNsBackend.topic, liveActivity: nil), store: store,
                    metricsFactory: metrics)
                let worker = DeliveryWorker(store: store, delivery: delivery, settings: settings, logger: logger)
                try await body(store, worker, emulators.development)
            }
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    func queue(_ store: any BackendStore, _ id: String, deadline: Int64? = nil) async throws {
        let now = Self.now()
        try await store.addNotification(
            NotificationRecord(id: id, sender: "alice", recipient: "alice", content: .secure(payload: "the secret"), createdAt: now),
            queuing: QueuedPush(kind: .secureAlert, message: "New message", deadline: deadline ?? now + Self.minute))
    }

    @Test("The queue's metrics: its depth and age before the worker runs, none after; each job's end with its attempts")
    func metrics() async throws {
        let metrics = TestMetrics()
        try await withWorker(.sqlite, metrics: metrics) { store, worker, emulator in
            try await queue(store, "n1")
            try await queue(store, "n2")
            try await Task.sleep(for: .milliseconds(20))
            await worker.measureBacklog()
            #expect(try metrics.expectGauge("push_backend_delivery_queue_jobs").lastValue == 2)
            #expect(try metrics.expectGauge("push_backend_delivery_queue_oldest_seconds").lastValue ?? 0 >= 0.02)
            #expect(await worker.runOnce() == 2)
            await worker.measureBacklog()
            #expect(try metrics.expectGauge("push_backend_delivery_queue_jobs").lastValue == 0)
            #expect(try metrics.expectGauge("push_backend_delivery_queue_oldest_seconds").lastValue == 0)
            #expect(try metrics.expectCounter("push_backend_delivery_jobs_total", [("outcome", "delivered")]).totalValue == 2)
            #expect(try metrics.expectRecorder("push_backend_delivery_job_attempts").values == [1, 1])
            #expect(try metrics.expectTimer("push_backend_delivery_job_seconds").values.count == 2)
        }
    }

    @Test("Each Apple device gets the push once, in pages; the job ends delivered with an answer per device", arguments: StoreEngine.allCases)
    func delivers(engine: StoreEngine) async throws {
        try await withWorker(engine) { store, worker, emulator in
            try await queue(store, "n1")
            #expect(await worker.runOnce() == 1)
            #expect(try await store.deliveryReport(notificationID: "n1")?.state == .delivered)
            #expect(try await store.deliveryAnswers(notificationID: "n1").map(\.outcome) == ["delivered", "delivered", "delivered"])
            let deliveries = emulator.deliveries
            #expect(deliveries.map(\.deviceToken).sorted() == [token(1), token(2), token(3)])
            // The secure payload never travels: only the placeholder.
            #expect(deliveries.allSatisfy { !String(decoding: $0.payload, as: UTF8.self).contains("the secret") })
            #expect(await worker.runOnce() == 0)
            #expect(emulator.deliveries.count == 3)
        }
    }

    @Test(
        "APNs unavailable: the job goes back to the queue with why, and once APNs answers every device gets it once", arguments: StoreEngine.allCases)
    func outage(engine: StoreEngine) async throws {
        try await withWorker(engine) { store, worker, emulator in
            try await queue(store, "n1")
            // Three devices, three attempts each in the client: every request of the first claim fails.
            emulator.inject(Array(repeating: .status(503, reason: "ServiceUnavailable", retryAfter: nil), count: 9))
            #expect(await worker.runOnce() == 1)
            let status = try await store.deliveryReport(notificationID: "n1")
            #expect(status?.state == .queued && status?.attempts == 1)
            #expect(status?.failure?.contains("3 device(s) unanswered: 503 ServiceUnavailable") == true, "\(status?.failure ?? "")")
            #expect(emulator.deliveries.isEmpty)
            try await Task.sleep(for: .milliseconds(5))
            #expect(await worker.runOnce() == 1)
            #expect(try await store.deliveryReport(notificationID: "n1")?.state == .delivered)
            #expect(emulator.deliveries.map(\.deviceToken).sorted() == [token(1), token(2), token(3)])
        }
    }

    @Test("A job past its deadline ends failed with the reason, sending nothing", arguments: StoreEngine.allCases)
    func deadline(engine: StoreEngine) async throws {
        try await withWorker(engine) { store, worker, emulator in
            try await queue(store, "late", deadline: Self.now() + 200)
            try await Task.sleep(for: .milliseconds(250))
            #expect(await worker.runOnce() == 1)
            let status = try await store.deliveryReport(notificationID: "late")
            #expect(status?.state == .failed && status?.failure?.contains("deadline") == true)
            #expect(emulator.deliveries.isEmpty)
        }
    }

    @Test("A job another worker began is resumed for the devices without an answer only", arguments: StoreEngine.allCases)
    func resumes(engine: StoreEngine) async throws {
        try await withWorker(engine) { store, worker, emulator in
            try await queue(store, "n1")
            // What a worker that died after its first answer left behind.
            let now = Self.now()
            #expect(try await store.claimDeliveryJobs(owner: "dead", now: now, leaseUntil: now + 2_000, limit: 1).count == 1)
            try await store.recordDeliveryAnswers(
                notificationID: "n1", answers: [DeliveryAnswer(target: token(2), platform: "apns", outcome: "delivered")], at: now)
            #expect(await worker.runOnce() == 0)
            try await Task.sleep(for: .milliseconds(2_100))
            #expect(await worker.runOnce() == 1)
            #expect(emulator.deliveries.map(\.deviceToken).sorted() == [token(1), token(3)])
            #expect(try await store.deliveryReport(notificationID: "n1")?.state == .delivered)
            #expect(try await store.deliveryAnswers(notificationID: "n1").count == 3)
        }
    }

    @Test("A device APNs calls unregistered is answered, pruned, and the job ends partly delivered", arguments: StoreEngine.allCases)
    func partly(engine: StoreEngine) async throws {
        try await withWorker(engine) { store, worker, emulator in
            emulator.setState(.unregistered(sinceMilliseconds: 1_000), for: token(3))
            try await queue(store, "n1")
            #expect(await worker.runOnce() == 1)
            let status = try await store.deliveryReport(notificationID: "n1")
            #expect(status?.state == .partly && status?.failure == "refused by 1 device(s)")
            #expect(try await store.deliveryAnswers(notificationID: "n1").map(\.outcome).sorted() == ["Unregistered", "delivered", "delivered"])
            #expect(try await store.registration(deviceToken: token(3)) == nil)
        }
    }
}

/// The outage as an operator lives it, on each engine at once (20 s of wall time in all): the
/// worker running on its own, with backoffs a deployment might choose.
@Suite("Delivery worker through an APNs outage")
struct DeliveryOutageTests {
    @Test(
        "APNs answers 503 for 20 s, then recovers: every device gets the push once, and the notification ends delivered",
        arguments: StoreEngine.allCases)
    func outage(engine: StoreEngine) async throws {
        let settings = DeliveryWorker.Settings(
            lease: .seconds(30), page: 2, idlePoll: .milliseconds(50), baseBackoff: .milliseconds(500), maximumBackoff: .seconds(4))
        let tests = DeliveryWorkerTests()
        try await tests.withWorker(engine, settings: settings) { store, worker, emulator in
            // More refusals than the worker can ask for in 20 s (three devices, three tries each a claim).
            emulator.inject(Array(repeating: .status(503, reason: "ServiceUnavailable", retryAfter: nil), count: 1000))
            let running = Task { await worker.run() }
            defer { running.cancel() }
            try await tests.queue(store, "n1")
            try await Task.sleep(for: .seconds(20))
            let during = try await store.deliveryReport(notificationID: "n1")
            #expect(during?.state == .queued || during?.state == .sending, "\(String(describing: during))")
            // Retried all along (under a sanitizer, on two loaded cores, a claim's sends take seconds).
            #expect((during?.attempts ?? 0) >= (runningUnderSanitizer ? 1 : 3), "\(String(describing: during))")
            #expect(emulator.deliveries.isEmpty)
            emulator.reset()  // APNs is back
            let deadline = ContinuousClock.now + .seconds(60)
            while try await store.deliveryReport(notificationID: "n1")?.state != .delivered, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await store.deliveryReport(notificationID: "n1")?.state == .delivered)
            #expect(emulator.deliveries.map(\.deviceToken).sorted() == [tests.token(1), tests.token(2), tests.token(3)])
            running.cancel()
            await running.value
        }
    }
}
