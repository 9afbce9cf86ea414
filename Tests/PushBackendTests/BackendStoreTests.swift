import Foundation
import HTTPTypes
import NotificationHubs
import PushBackend
import PushTestSupport
import Synchronization
import Testing

/// The engines every store test runs against.
enum StoreEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// A store over a new, empty database.
    /// - Parameter operationTimeout: PostgreSQL's deadline for each call.
    func open(operationTimeout: Duration = PostgresBackendStore.operationTimeout) async throws -> any BackendStore {
        switch self {
        case .sqlite: try await SQLiteBackendStore.open(dataDirectory: try temporaryDirectory())
        // A minute to connect: beside the CPU-bound tests that hold both cooperative threads, the
        // client's connection pool can wait a long time for a turn.
        case .postgres:
            try await PostgresBackendStore.open(
                url: try await TestPostgres.makeDatabase(), connectTimeout: .seconds(60), operationTimeout: operationTimeout)
        }
    }
}

/// What every `BackendStore` promises, checked on SQLite and on PostgreSQL alike.
@Suite("Backend store: the same behaviour on SQLite and PostgreSQL")
struct BackendStoreTests {
    func withStore(
        _ engine: StoreEngine, operationTimeout: Duration = PostgresBackendStore.operationTimeout, _ body: (any BackendStore) async throws -> Void
    ) async throws {
        let store = try await engine.open(operationTimeout: operationTimeout)
        do {
            try await body(store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    func expectConflict(_ body: () async throws(StoreError) -> Void) async {
        do throws(StoreError) {
            try await body()
            Issue.record("no conflict")
        } catch {
            #expect(error.code == .conflict)
        }
    }

    @Test("Users: added once, listed by name, removed with their notifications, registrations and activity tokens", arguments: StoreEngine.allCases)
    func users(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.addUser(UserRecord(name: "bob", passwordHash: "$scrypt$b", role: .sender))
            try await store.addUser(UserRecord(name: "alice", passwordHash: "$scrypt$a", role: .user))
            await expectConflict { () async throws(StoreError) in
                try await store.addUser(UserRecord(name: "alice", passwordHash: "other", role: .sender))
            }
            #expect(try await store.users().map(\.name) == ["alice", "bob"])
            #expect(try await store.user(named: "bob") == UserRecord(name: "bob", passwordHash: "$scrypt$b", role: .sender))
            #expect(try await store.user(named: "carol") == nil)

            try await store.saveRegistration(
                RegistrationRecord(id: "r1", owner: "alice", deviceToken: "aa", installationID: "apns-1", updatedAt: 5))
            try await store.saveActivity(ActivityRecord(id: "a1", owner: "alice", kind: .activity, token: "bb", updatedAt: 5))
            try await store.addNotification(
                NotificationRecord(id: "n1", sender: "bob", recipient: "alice", content: .secure(payload: "x"), createdAt: 1))
            #expect(try await store.removeUser(named: "alice"))
            #expect(try await !store.removeUser(named: "alice"))
            #expect(try await store.registration(id: "r1") == nil)
            #expect(try await store.activity(id: "a1") == nil)
            #expect(try await store.userAndNotification(named: "alice", id: "n1", visibleAt: .max)?.1 == nil)
        }
    }

    @Test(
        "Registrations: one row per device token, taken over by whoever registers it again; deleted only by their owner",
        arguments: StoreEngine.allCases)
    func registrations(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            for name in ["alice", "bob"] { try await store.addUser(UserRecord(name: name, passwordHash: "h", role: .user)) }
            let first = RegistrationRecord(id: "r1", owner: "alice", deviceToken: "0a0b", installationID: "apns-x", updatedAt: 10)
            try await store.saveRegistration(first)
            try await store.saveRegistration(
                RegistrationRecord(id: "r2", owner: "alice", deviceToken: "0c0d", installationID: "apns-y", updatedAt: 20))
            #expect(try await store.registration(id: "r1") == first)
            #expect(try await store.registration(deviceToken: "0a0b") == first)
            #expect(try await store.registrations(owner: "alice").map(\.id) == ["r1", "r2"])

            let moved = RegistrationRecord(id: "r3", owner: "bob", deviceToken: "0a0b", installationID: "apns-x", updatedAt: 30)
            try await store.saveRegistration(moved)
            #expect(try await store.registration(id: "r1") == nil)
            #expect(try await store.registration(deviceToken: "0a0b") == moved)
            #expect(try await store.registrations(owner: "alice").map(\.id) == ["r2"])
            #expect(try await !store.deleteRegistration(id: "r3", owner: "alice"))
            #expect(try await store.deleteRegistration(id: "r3", owner: "bob"))
            #expect(try await store.registration(deviceToken: "0a0b") == nil)

            // An Android phone's FCM token keeps its case and its platform; registered again as an
            // iPhone's (the same text), the row takes the new platform.
            let android = RegistrationRecord(
                id: "r4", owner: "alice", deviceToken: "cAbC:APA91b_x-y", platform: .fcmv1, installationID: "fcmv1-z", updatedAt: 40)
            try await store.saveRegistration(android)
            #expect(try await store.registration(deviceToken: "cAbC:APA91b_x-y") == android)
            #expect(try await store.registrations(owner: "alice").map(\.platform) == [.apns, .fcmv1])
            var apple = android
            apple.platform = .apns
            try await store.saveRegistration(apple)
            #expect(try await store.registration(id: "r4")?.platform == .apns)
        }
    }

    @Test(
        "Notifications: ids unique, read by their recipient only, marked read once, newest first, swept by age (a scheduled one once its time has passed too)",
        arguments: StoreEngine.allCases)
    func notifications(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            for name in ["alice", "bob"] { try await store.addUser(UserRecord(name: name, passwordHash: "h", role: .user)) }
            let rich = NotificationRecord(
                id: "n1", sender: "bob", recipient: "alice", content: .rich(richType: "img", resource: "sunset.png", message: "Sunset 🌅 \"pier\""),
                createdAt: 100)
            try await store.addNotification(rich)
            await expectConflict { () async throws(StoreError) in try await store.addNotification(rich) }
            // Three in the same millisecond: listed newest first all the same.
            for index in 2...4 {
                try await store.addNotification(
                    NotificationRecord(id: "n\(index)", sender: "alice", recipient: "alice", content: .secure(payload: "s\(index)"), createdAt: 200))
            }
            #expect(try await store.userAndNotification(named: "alice", id: "n1", visibleAt: .max)?.1 == rich)
            #expect(try await store.userAndNotification(named: "bob", id: "n1", visibleAt: .max)?.1 == nil)
            try await store.markRead(id: "n1", at: 150)
            try await store.markRead(id: "n1", at: 999)
            #expect(try await store.userAndNotification(named: "alice", id: "n1", visibleAt: .max)?.1?.readAt == 150)
            #expect(try await store.notifications(recipient: "alice", visibleAt: .max, limit: 10).map(\.id) == ["n4", "n3", "n2", "n1"])
            #expect(try await store.notifications(recipient: "alice", visibleAt: .max, limit: 2).map(\.id) == ["n4", "n3"])
            // The sweep deletes in batches, oldest first.
            for index in 0..<5 {
                try await store.addNotification(
                    NotificationRecord(
                        id: "old\(index)", sender: "bob", recipient: "alice", content: .secure(payload: "o"), createdAt: 10 + Int64(index)))
            }
            // Created long ago but scheduled for later: kept until its send time too has passed.
            try await store.addNotification(
                NotificationRecord(id: "due", sender: "bob", recipient: "alice", content: .secure(payload: "d"), createdAt: 5, sendAt: 1_000))
            for _ in 0..<3 { #expect(try await store.deleteNotifications(pastBefore: 150, limit: 2) == 2) }
            #expect(try await store.deleteNotifications(pastBefore: 150, limit: 2) == 0)
            #expect(try await store.userAndNotification(named: "alice", id: "due", visibleAt: .max)?.1?.sendAt == 1_000)
            try await store.deleteNotification(id: "due")
            #expect(try await store.userAndNotification(named: "alice", id: "n1", visibleAt: .max)?.1 == nil)
            try await store.deleteNotification(id: "n3")
            #expect(try await store.notifications(recipient: "alice", visibleAt: .max, limit: 10).map(\.id) == ["n4", "n2"])

            // A scheduled one is seen from its time on; the hub's id and final word are kept once given.
            let later = NotificationRecord(
                id: "n5", sender: "alice", recipient: "alice", content: .secure(payload: "s5"), createdAt: 300, sendAt: 5_000)
            try await store.addNotification(later)
            #expect(try await store.notifications(recipient: "alice", visibleAt: 4_999, limit: 10).map(\.id) == ["n4", "n2"])
            #expect(try await store.userAndNotification(named: "alice", id: "n5", visibleAt: 4_999)?.1 == nil)
            #expect(try await store.notifications(recipient: "alice", visibleAt: 5_000, limit: 10).map(\.id) == ["n5", "n4", "n2"])
            #expect(try await store.userAndNotification(named: "alice", id: "n5", visibleAt: 5_000)?.1 == later)
            // Its sender sees it from the start, with the others they sent, newest first.
            #expect(try await store.notifications(sender: "alice", limit: 10).map(\.id) == ["n5", "n4", "n2"])
            #expect(try await store.notifications(sender: "alice", limit: 1).map(\.id) == ["n5"])
            #expect(try await store.notifications(sender: "bob", limit: 10).isEmpty)
            try await store.recordDelivery(id: "n4", hubMessageID: "hub-1", outcome: nil)
            try await store.recordDelivery(id: "n4", hubMessageID: nil, outcome: #"{"state":"Completed"}"#)
            let recorded = try #require(try await store.userAndNotification(named: "alice", id: "n4", visibleAt: .max)?.1)
            #expect(recorded.hubMessageID == "hub-1" && recorded.delivery == #"{"state":"Completed"}"# && recorded.sendAt == nil)

            // The caller and the notification in one round trip: the user whatever the id, the
            // notification only when it is theirs and visible.
            let alice = UserRecord(name: "alice", passwordHash: "h", role: .user)
            let both = try #require(try await store.userAndNotification(named: "alice", id: "n4", visibleAt: .max))
            #expect(both.0 == alice && both.1 == recorded)
            let scheduled = try #require(try await store.userAndNotification(named: "alice", id: "n5", visibleAt: 4_999))
            #expect(scheduled.0 == alice && scheduled.1 == nil)
            #expect(try await store.userAndNotification(named: "alice", id: "n5", visibleAt: 5_000)?.1 == later)
            // Its sender sees it from the start, with the others they sent, newest first.
            #expect(try await store.notifications(sender: "alice", limit: 10).map(\.id) == ["n5", "n4", "n2"])
            #expect(try await store.notifications(sender: "alice", limit: 1).map(\.id) == ["n5"])
            #expect(try await store.notifications(sender: "bob", limit: 10).isEmpty)
            let notBobs = try #require(try await store.userAndNotification(named: "bob", id: "n4", visibleAt: .max))
            #expect(notBobs.0.name == "bob" && notBobs.1 == nil)
            #expect(try await store.userAndNotification(named: "alice", id: "", visibleAt: .max)?.1 == nil)
            #expect(try await store.userAndNotification(named: "zed", id: "n4", visibleAt: .max) == nil)
        }
    }

    @Test(
        "Activity tokens and channels: saved, replaced by token, deleted by owner or by anyone; channel ids unique", arguments: StoreEngine.allCases)
    func activitiesAndChannels(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.addUser(UserRecord(name: "alice", passwordHash: "h", role: .user))
            let start = ActivityRecord(id: "a1", owner: "alice", kind: .pushToStart, token: "ab", updatedAt: 1)
            try await store.saveActivity(start)
            #expect(try await store.activity(id: "a1") == start)
            let again = ActivityRecord(id: "a2", owner: "alice", kind: .activity, token: "ab", updatedAt: 2)
            try await store.saveActivity(again)
            #expect(try await store.activity(id: "a1") == nil)
            #expect(try await store.activity(id: "a2") == again)
            #expect(try await !store.deleteActivity(id: "a2", owner: "bob"))
            #expect(try await store.deleteActivity(id: "a2", owner: nil))

            let channel = ChannelRecord(id: "c1", apnsChannelID: "Y2hhbm5lbA==", creator: "bob", storagePolicy: 1, createdAt: 3)
            try await store.addChannel(channel)
            #expect(try await store.channel(id: "c1") == channel)
            await expectConflict { () async throws(StoreError) in
                try await store.addChannel(ChannelRecord(id: "c2", apnsChannelID: "Y2hhbm5lbA==", creator: "bob", storagePolicy: 0, createdAt: 4))
            }
            #expect(try await store.deleteChannel(id: "c1"))
            #expect(try await store.channel(id: "c1") == nil)
        }
    }

    @Test("API keys: added for an existing user only, listed by owner, revoked one by one, removed with their owner", arguments: StoreEngine.allCases)
    func apiKeys(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.addUser(UserRecord(name: "news", passwordHash: "!", role: .sender))
            try await store.addUser(UserRecord(name: "alice", passwordHash: "$scrypt$a", role: .user))
            let first = APIKey.generate(owner: "news"), second = APIKey.generate(owner: "news"), third = APIKey.generate(owner: "alice")
            for key in [first, second, third] { try await store.addAPIKey(key.record) }
            do throws(StoreError) {
                try await store.addAPIKey(APIKey.generate(owner: "nobody").record)
                Issue.record("a key for no user was added")
            } catch {
                #expect(error.code == .notFound)
            }
            #expect(try await store.apiKeyOwner(id: first.record.id).map { $0.0 } == first.record)
            #expect(try await store.apiKeyOwner(id: first.record.id)?.1.role == .sender)
            #expect(try await store.apiKeys().map(\.owner) == ["alice", "news", "news"])
            #expect(try await store.removeAPIKey(id: first.record.id))
            #expect(try await !store.removeAPIKey(id: first.record.id))
            #expect(try await store.apiKeyOwner(id: first.record.id) == nil)
            #expect(try await store.removeUser(named: "news"))
            #expect(try await store.apiKeys().map(\.id) == [third.record.id])
        }
    }

    @Test("200 concurrent writes and reads through one store lose nothing", arguments: StoreEngine.allCases)
    func concurrency(engine: StoreEngine) async throws {
        // What is checked is that nothing is lost, not how soon: 200 calls queue for PostgreSQL's
        // pool, and on a loaded machine the last of them waited past the 5 s deadline in CI.
        try await withStore(engine, operationTimeout: .seconds(60)) { store in
            try await store.addUser(UserRecord(name: "alice", passwordHash: "x", role: .user))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let id = String(format: "%032x", index)
                        try await store.addNotification(
                            NotificationRecord(
                                id: id, sender: "alice", recipient: "alice", content: .secure(payload: "n\(index)"), createdAt: Int64(index)))
                        try await store.markRead(id: id, at: 1)
                        let read = try await store.userAndNotification(named: "alice", id: id, visibleAt: .max)?.1
                        #expect(read?.readAt == 1 && read?.content == .secure(payload: "n\(index)"))
                    }
                }
                try await group.waitForAll()
            }
            let all = try await store.notifications(recipient: "alice", visibleAt: .max, limit: 1000)
            #expect(all.count == 200 && Set(all.map(\.id)).count == 200 && all.first?.createdAt == 199)
        }
    }

    @Test(
        "The device cap holds under concurrent registrations: 16 at once for a user with 4 of 5 store one; on PostgreSQL through two stores (two instances) as well",
        arguments: StoreEngine.allCases)
    func deviceCapUnderConcurrency(engine: StoreEngine) async throws {
        #if DEBUG
        // Two PostgreSQL stores at once under AddressSanitizer were among the tests running each
        // time its run hung (see scripts/test-asan); the release run checks them.
        if engine == .postgres { return }
        #endif
        func registration(_ index: Int) -> RegistrationRecord {
            let token = String(format: "%064x", index)
            return RegistrationRecord(
                id: String(format: "%032x", index), owner: "alice", deviceToken: token, platform: .apns,
                installationID: RegistrationRecord.installationID(deviceToken: token, platform: .apns), updatedAt: Int64(index))
        }
        let first: any BackendStore
        // On PostgreSQL a second store on the same database: another instance of the backend.
        var second: (any BackendStore)?
        if engine == .postgres {
            let url = try await TestPostgres.makeDatabase()
            first = try await PostgresBackendStore.open(url: url, connectTimeout: .seconds(60), operationTimeout: .seconds(60))
            second = try await PostgresBackendStore.open(url: url, connectTimeout: .seconds(60), operationTimeout: .seconds(60))
        } else {
            first = try await engine.open()
        }
        do {
            try await first.addUser(UserRecord(name: "alice", passwordHash: "x", role: .user))
            for index in 0..<4 { #expect(try await first.saveRegistration(registration(index), maximumPerOwner: 5)) }
            let stores = [first, second ?? first]
            // Connections opened beforehand, so that the registrations below run side by side
            // rather than one after another while a pool opens its connections.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<32 { group.addTask { _ = try await stores[index % 2].registrations(owner: "alice") } }
                try await group.waitForAll()
            }
            let saved = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 4..<20 {
                    group.addTask { try await stores[index % 2].saveRegistration(registration(index), maximumPerOwner: 5) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(saved == 1)
            #expect(try await first.registrations(owner: "alice").count == 5)
            // At the cap: a token already the owner's is saved again; a new one is not.
            #expect(try await first.saveRegistration(registration(0), maximumPerOwner: 5))
            #expect(try await !first.saveRegistration(registration(99), maximumPerOwner: 5))
        } catch {
            await second?.close()
            await first.close()
            throw error
        }
        await second?.close()
        await first.close()
    }

    @Test("PostgreSQL gone mid-run: a store call is refused as unavailable within its deadline, not after the pool's minute of retries")
    func postgresGone() async throws {
        let url = try await TestPostgres.makeDatabase()
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        let store = try await PostgresBackendStore.open(url: url, connectTimeout: .seconds(60))
        try await store.addUser(UserRecord(name: "alice", passwordHash: "h", role: .user))
        // As good as stopped for this store: its connections end and new ones are refused.
        try await TestPostgres.execute("ALTER DATABASE \(database) WITH ALLOW_CONNECTIONS false", database: "postgres")
        try await TestPostgres.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)'", database: "postgres")
        // A call may first meet a connection the server has just ended (57P01), which fails at
        // once; the next waits for a connection the server will not give.
        for _ in 0..<2 {
            let started = ContinuousClock.now
            do throws(StoreError) {
                _ = try await store.user(named: "alice")
                Issue.record("a store with no database answered")
            } catch {
                #expect(error.code == .unavailable && APIError.storage(error).status == 503, "\(error)")
            }
            let waited = ContinuousClock.now - started
            #expect(waited < PostgresBackendStore.operationTimeout + .seconds(5), "the call waited \(waited)")
        }
        await store.close()
        try await TestPostgres.execute("ALTER DATABASE \(database) WITH ALLOW_CONNECTIONS true", database: "postgres")
    }

    @Test("PostgreSQL: instances opening a new database at once migrate it once; a newer schema is refused; the password is never shown")
    func postgresMigrations() async throws {
        let url = try await TestPostgres.makeDatabase()
        let stores = try await withThrowingTaskGroup(of: PostgresBackendStore.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresBackendStore.open(url: url, connectTimeout: .seconds(60)) } }
            var stores: [PostgresBackendStore] = []
            for try await store in group { stores.append(store) }
            return stores
        }
        for store in stores {
            #expect(try await store.schemaVersion() == PostgresBackendStore.migrations.count)
        }
        // Each store sees what another wrote.
        try await stores[0].addUser(UserRecord(name: "alice", passwordHash: "h", role: .user))
        #expect(try await stores[3].user(named: "alice") != nil)
        for store in stores { await store.close() }

        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        try await TestPostgres.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)", database: database)
        do throws(StoreError) {
            _ = try await PostgresBackendStore.open(url: url, connectTimeout: .seconds(60))
            Issue.record("a newer schema was opened")
        } catch {
            #expect(error.code == .schemaTooNew)
        }
        try await TestPostgres.execute("DELETE FROM schema_migrations WHERE version = 99", database: database)

        let withPassword = url.replacingOccurrences(of: "postgres@", with: "postgres:s3cret-pw@")
        let store = try await PostgresBackendStore.open(url: withPassword, connectTimeout: .seconds(60))
        #expect(store.description == url.components(separatedBy: "?").first && !store.description.contains("s3cret"))
        await store.close()

        for bad in ["mysql://u@h/db", "postgres://h/db", "postgres://u@h/", "postgres://u:s3cret-pw@h/db?sslmode=maybe"] {
            do throws(StoreError) {
                _ = try await PostgresBackendStore.open(url: bad, connectTimeout: .seconds(60))
                Issue.record("\(bad) was taken")
            } catch {
                #expect(error.code == .unavailable && !error.message.contains("s3cret"))
            }
        }
        let unreachable = "postgres://u:s3cret-pw@127.0.0.1:1/db?sslmode=disable"
        do throws(StoreError) {
            _ = try await PostgresBackendStore.open(url: unreachable, connectTimeout: .seconds(2))
            Issue.record("nothing listens on port 1")
        } catch {
            #expect(error.code == .unavailable && !error.description.contains("s3cret"))
        }
    }
}
