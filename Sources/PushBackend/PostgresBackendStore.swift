import Foundation
package import Logging
package import NIOCore
import NIOSSL
import NotificationHubs
import PostgresNIO
import Synchronization

/// The PostgreSQL store, for several `push-backend` instances on one database. The same schema
/// versions as ``SQLiteBackendStore``, migrated on open under an advisory lock (instances starting
/// at once migrate once), and the same rule: every operation is one statement.
///
/// `open(url:)` takes `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`
/// (`prefer` by default, as libpq). The password never appears in a log line, an error or a
/// description: ``redacted(_:)`` gives the URL without it.
package final class PostgresBackendStore: BackendStore {
    /// The schema, one entry per version, applied in order and recorded in `schema_migrations`.
    /// Version for version what ``SQLiteBackendStore/migrations`` does, in PostgreSQL's terms.
    package static let migrations: [[String]] = [
        [
            """
            CREATE TABLE users (
                name TEXT PRIMARY KEY,
                password_hash TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('user', 'sender')),
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE registrations (
                id TEXT PRIMARY KEY,
                owner TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                device_token TEXT NOT NULL UNIQUE,
                updated_at BIGINT NOT NULL
            )
            """,
            // `sequence` orders notifications created in the same millisecond, as SQLite's rowid does.
            """
            CREATE TABLE notifications (
                id TEXT PRIMARY KEY,
                sender TEXT NOT NULL,
                recipient TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind IN ('rich', 'secure')),
                rich_type TEXT,
                resource TEXT,
                message TEXT,
                payload TEXT,
                created_at BIGINT NOT NULL,
                read_at BIGINT,
                sequence BIGSERIAL NOT NULL
            )
            """,
            "CREATE INDEX notifications_by_recipient ON notifications (recipient, created_at DESC, sequence DESC)",
        ],
        [
            "ALTER TABLE registrations ADD COLUMN installation_id TEXT",
            "UPDATE registrations SET installation_id = id",
            "CREATE INDEX notifications_by_age ON notifications (created_at)",
        ],
        [
            "CREATE INDEX registrations_by_owner ON registrations (owner, updated_at)",
            """
            CREATE TABLE activities (
                id TEXT PRIMARY KEY,
                owner TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind IN ('pushToStart', 'activity')),
                token TEXT NOT NULL UNIQUE,
                updated_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE channels (
                id TEXT PRIMARY KEY,
                apns_channel_id TEXT NOT NULL UNIQUE,
                creator TEXT NOT NULL,
                storage_policy INTEGER NOT NULL CHECK (storage_policy IN (0, 1)),
                created_at BIGINT NOT NULL
            )
            """,
        ],
        [
            "CREATE INDEX activities_by_owner ON activities (owner)"
        ],
        [
            "ALTER TABLE registrations ADD COLUMN platform TEXT NOT NULL DEFAULT 'apns' CHECK (platform IN ('apns', 'fcmv1'))",
            "ALTER TABLE notifications ADD COLUMN send_at BIGINT",
            "ALTER TABLE notifications ADD COLUMN hub_message_id TEXT",
            "ALTER TABLE notifications ADD COLUMN delivery TEXT",
        ],
        [
            """
            CREATE TABLE api_keys (
                id TEXT PRIMARY KEY,
                owner TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                secret_hash TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """
        ],
        [
            """
            CREATE TABLE images (
                id TEXT PRIMARY KEY,
                owner TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                content_type TEXT NOT NULL,
                size BIGINT NOT NULL,
                etag TEXT,
                digest TEXT,
                complete BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX images_by_owner ON images (owner, created_at)",
            "CREATE INDEX images_by_age ON images (created_at)",
            """
            CREATE TABLE image_chunks (
                image_id TEXT NOT NULL REFERENCES images(id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                data BYTEA NOT NULL,
                PRIMARY KEY (image_id, seq)
            )
            """,
            "CREATE INDEX notifications_by_resource ON notifications (resource)",
        ],
        // The delivery queue (DeliveryQueue.swift): a notification carries its job.
        [
            "ALTER TABLE notifications ADD COLUMN delivery_state TEXT CHECK (delivery_state IN ('queued', 'sending', 'delivered', 'partly', 'failed'))",
            "ALTER TABLE notifications ADD COLUMN due_at BIGINT",
            "ALTER TABLE notifications ADD COLUMN deadline BIGINT",
            "ALTER TABLE notifications ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE notifications ADD COLUMN lease_owner TEXT",
            "ALTER TABLE notifications ADD COLUMN lease_expires BIGINT",
            "ALTER TABLE notifications ADD COLUMN failure TEXT",
            "ALTER TABLE notifications ADD COLUMN push_kind TEXT",
            "ALTER TABLE notifications ADD COLUMN push_message TEXT",
            "CREATE INDEX notifications_due ON notifications (due_at) WHERE delivery_state IN ('queued', 'sending')",
            """
            CREATE TABLE delivery_answers (
                notification_id TEXT NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
                target TEXT NOT NULL,
                platform TEXT NOT NULL,
                outcome TEXT NOT NULL,
                answered_at BIGINT NOT NULL,
                PRIMARY KEY (notification_id, target)
            )
            """,
        ],
        [
            // A sender reads the notifications they sent.
            "CREATE INDEX notifications_by_sender ON notifications (sender, created_at DESC)",
            // The request's trace, which its delivery job's span joins.
            "ALTER TABLE notifications ADD COLUMN trace_context TEXT",
        ],
    ]

    /// The advisory lock migrations run under: any 64-bit number no other program on the database uses.
    static let migrationLock: Int64 = 0x7075_7368_636f_7265  // "pushcore"

    /// The URL with the password left out, for logs and messages.
    package let description: String
    private let configuration: PostgresClient.Configuration
    /// The driver's client and the task running its pool; replaced when calls stop being answered,
    /// until the store is closed.
    private let pool: Mutex<(client: PostgresClient, running: Task<Void, Never>, closed: Bool)>
    private let watchdog: StoreCallWatchdog
    private let logger: Logger

    private init(configuration: PostgresClient.Configuration, description: String, operationTimeout: Duration, logger: Logger) {
        self.configuration = configuration
        watchdog = StoreCallWatchdog(deadline: operationTimeout)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        pool = Mutex((client, Task { await client.run() }, false))
        self.description = description
        self.logger = logger
        watchdog.whenOverdue { [weak self] in self?.replaceClient() }
    }

    private var client: PostgresClient { pool.withLock { $0.client } }

    /// Replaces the client with a new one and shuts the old one's pool down, which fails every
    /// call still waiting in it: with the database gone, its pool would queue them for a minute.
    /// The watchdog may call this as the store closes: a pool started after `close()` would go on
    /// retrying its connections for as long as the process lives.
    private func replaceClient() {
        let old = pool.withLock { pool -> Task<Void, Never>? in
            guard !pool.closed else { return nil }
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            defer { pool = (client, Task { await client.run() }, false) }
            return pool.running
        }
        guard let old else { return }
        logger.warning("PostgreSQL calls are past their deadline: starting the connection pool afresh", metadata: ["database": "\(description)"])
        old.cancel()
    }

    /// Connects to the database and migrates it to the current schema.
    /// - Parameters:
    ///   - connectTimeout: How long to keep trying to reach the database at start (the driver's
    ///     pool would otherwise keep trying for as long as it is asked to wait).
    ///   - operationTimeout: How long a store call may take, its wait for a connection included.
    package static func open(
        url: String, connectTimeout: Duration = .seconds(10), operationTimeout: Duration = operationTimeout,
        logger: Logger = Logger(label: "push-backend")
    ) async throws(StoreError) -> PostgresBackendStore {
        let store = PostgresBackendStore(
            configuration: try configuration(url), description: redacted(url), operationTimeout: operationTimeout, logger: logger)
        let migrated: Result<Void, StoreError> = await withTaskGroup(of: Result<Void, StoreError>?.self) { group in
            group.addTask {
                do throws(StoreError) {
                    try await store.migrate()
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: connectTimeout)
                return Task.isCancelled ? nil : .failure(StoreError(.unavailable, "cannot reach the database at \(store.description)"))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(StoreError(.unavailable, "cannot reach the database at \(store.description)"))
        }
        if case .failure(let error) = migrated {
            await store.close()
            throw error
        }
        return store
    }

    /// `postgres://USER@HOST:PORT/DATABASE`: the URL without its password and query.
    package static func redacted(_ url: String) -> String {
        guard let components = URLComponents(string: url), let host = components.host else { return "postgres://…" }
        let user = components.user.map { $0 + "@" } ?? ""
        let port = components.port.map { ":\($0)" } ?? ""
        return "postgres://\(user)\(host)\(port)\(components.path)"
    }

    static func configuration(_ url: String) throws(StoreError) -> PostgresClient.Configuration {
        let usage = "the database URL is postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]"
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
            let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty
        else { throw StoreError(.unavailable, usage) }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !database.isEmpty, !database.contains("/") else { throw StoreError(.unavailable, usage) }
        var mode = "prefer"
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode", let value = item.value, ["disable", "prefer", "require"].contains(value) else {
                throw StoreError(.unavailable, usage)
            }
            mode = value
        }
        let tls: PostgresClient.Configuration.TLS =
            switch mode {
            case "disable": .disable
            case "require": .require(.makeClientConfiguration())
            default: .prefer(.makeClientConfiguration())
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password, database: database, tls: tls)
        // Each time a connection goes back to the pool idle, the driver starts a keep-alive timer
        // and an idle-timeout timer for it, and cancels both when the connection is leased again.
        // A cancelled `Task.sleep` keeps its task and dispatch timer until its deadline, so under
        // load the process holds ~800 bytes per request for as long as the timers would have run:
        // 30 and 60 s by default, some 350 MiB at 7,000 requests/s. At 10 s each it levels off
        // near 130 MiB. The pool keeps no connection open below its minimum of none, so one idle
        // for 10 s is closed (and opened again on demand) rather than left for a middlebox to drop.
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(10))
        configuration.options.connectionIdleTimeout = .seconds(10)
        return configuration
    }

    package func close() async {
        watchdog.stop()
        let running = pool.withLock { pool in
            pool.closed = true
            return pool.running
        }
        running.cancel()
        await running.value
    }

    package func schemaVersion() async throws(StoreError) -> Int {
        try await run {
            for try await version in try await client.query("SELECT coalesce(max(version), 0) FROM schema_migrations", logger: logger)
                .decode(Int.self)
            {
                return version
            }
            return 0
        }
    }

    /// Each pending version in its own transaction, all of them under the advisory lock on one
    /// connection, so that a second instance waits and then finds nothing left to do.
    private func migrate() async throws(StoreError) {
        let logger = self.logger
        // A migration may rebuild an index over many rows: it has the whole connect timeout of `open`.
        try await run(deadline: false) {
            try await client.withConnection { connection in
                try await connection.query("SELECT pg_advisory_lock(\(Self.migrationLock))", logger: logger)
                do {
                    try await connection.query(
                        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)", logger: logger)
                    var current = 0
                    for try await version in try await connection.query("SELECT coalesce(max(version), 0) FROM schema_migrations", logger: logger)
                        .decode(Int.self)
                    {
                        current = version
                    }
                    guard current <= Self.migrations.count else {
                        throw StoreError(
                            .schemaTooNew, "\(self.description) is at schema version \(current); this program knows up to \(Self.migrations.count)")
                    }
                    for (index, statements) in Self.migrations.enumerated().dropFirst(current) {
                        try await connection.query("BEGIN", logger: logger)
                        do {
                            for statement in statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                            try await connection.query(
                                "INSERT INTO schema_migrations (version, applied_at) VALUES (\(index + 1), \(unixMilliseconds()))", logger: logger)
                            try await connection.query("COMMIT", logger: logger)
                        } catch {
                            _ = try? await connection.query("ROLLBACK", logger: logger)
                            throw error
                        }
                    }
                } catch {
                    _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.migrationLock))", logger: logger)
                    throw error
                }
                try await connection.query("SELECT pg_advisory_unlock(\(Self.migrationLock))", logger: logger)
            }
        }
    }

    // MARK: Users

    package func addUser(_ user: UserRecord) async throws(StoreError) {
        let inserted = try await count(
            """
            INSERT INTO users (name, password_hash, role, created_at) VALUES (\(user.name), \(user.passwordHash), \(user.role.rawValue), \(unixMilliseconds()))
            ON CONFLICT (name) DO NOTHING RETURNING name
            """)
        guard inserted > 0 else { throw StoreError(.conflict, "a user named \(user.name) exists") }
    }

    package func user(named name: String) async throws(StoreError) -> UserRecord? {
        try await users("SELECT name, password_hash, role FROM users WHERE name = \(name)").first
    }

    package func users() async throws(StoreError) -> [UserRecord] {
        try await users("SELECT name, password_hash, role FROM users ORDER BY name")
    }

    package func removeUser(named name: String) async throws(StoreError) -> Bool {
        try await count("DELETE FROM users WHERE name = \(name) RETURNING name") > 0
    }

    package func addAPIKey(_ key: APIKeyRecord) async throws(StoreError) {
        let inserted = try await count(
            """
            INSERT INTO api_keys (id, owner, secret_hash, created_at) SELECT \(key.id), \(key.owner), \(key.secretHash), \(key.createdAt)
            WHERE EXISTS (SELECT 1 FROM users WHERE name = \(key.owner)) RETURNING id
            """)
        guard inserted > 0 else { throw StoreError(.notFound, "no user named \(key.owner)") }
    }

    // MARK: Images

    package func addImage(_ image: ImageRecord) async throws(StoreError) {
        let inserted = try await count(
            """
            INSERT INTO images (id, owner, content_type, size, complete, created_at)
            SELECT \(image.id), \(image.owner), \(image.contentType), 0, false, \(image.createdAt)
            WHERE EXISTS (SELECT 1 FROM users WHERE name = \(image.owner)) RETURNING id
            """)
        guard inserted > 0 else { throw StoreError(.notFound, "no user named \(image.owner)") }
    }

    package func addImageChunk(imageID: String, index: Int, bytes: ByteBuffer) async throws(StoreError) {
        _ = try await count("INSERT INTO image_chunks (image_id, seq, data) VALUES (\(imageID), \(index), \(bytes)) RETURNING seq")
    }

    package func completeImage(id: String, size: Int, entityTag: String, digest: String) async throws(StoreError) {
        let updated = try await count(
            "UPDATE images SET size = \(size), etag = \(entityTag), digest = \(digest), complete = true WHERE id = \(id) RETURNING id")
        guard updated > 0 else { throw StoreError(.notFound, "no image \(id)") }
    }

    static let imageColumns =
        "images.id, images.owner, images.content_type, images.size, images.etag, images.digest, images.complete, images.created_at"

    package func image(id: String) async throws(StoreError) -> ImageRecord? {
        try await images("SELECT \(unescaped: Self.imageColumns) FROM images WHERE id = \(id)").first
    }

    package func imageBytes(id: String) async throws(StoreError) -> (ImageRecord, ByteBuffer)? {
        try await run {
            var found: (ImageRecord, ByteBuffer)?
            let query: PostgresQuery = """
                SELECT \(unescaped: Self.imageColumns), image_chunks.data FROM images JOIN image_chunks ON image_chunks.image_id = images.id
                WHERE images.id = \(id) AND images.complete ORDER BY image_chunks.seq
                """
            for try await row in try await client.query(query, logger: logger) {
                let (id, owner, type, size, etag, digest, complete, created, chunk) = try row.decode(
                    (String, String, String, Int64, String?, String?, Bool, Int64, ByteBuffer).self)
                if found == nil {
                    let image = ImageRecord(
                        id: id, owner: owner, contentType: type, size: Int(size), entityTag: etag, digest: digest, complete: complete,
                        createdAt: created)
                    found = (image, ByteBufferAllocator().buffer(capacity: Int(size)))
                }
                var bytes = chunk
                found!.1.writeBuffer(&bytes)
            }
            return found
        }
    }

    package func images(owner: String) async throws(StoreError) -> [ImageRecord] {
        try await images("SELECT \(unescaped: Self.imageColumns) FROM images WHERE owner = \(owner) ORDER BY created_at DESC, id")
    }

    package func deleteImage(id: String, owner: String?) async throws(StoreError) -> Bool {
        try await count("DELETE FROM images WHERE id = \(id) AND (\(owner)::text IS NULL OR owner = \(owner)) RETURNING id") > 0
    }

    package func deleteUnusedImages(unreferencedBefore: Int64, incompleteBefore: Int64, limit: Int) async throws(StoreError) -> Int {
        try await count(
            """
            DELETE FROM images WHERE id IN (
                SELECT id FROM images WHERE (complete AND created_at < \(unreferencedBefore) OR NOT complete AND created_at < \(incompleteBefore))
                AND NOT EXISTS (SELECT 1 FROM notifications WHERE notifications.resource = images.id) ORDER BY created_at LIMIT \(limit)
            ) RETURNING id
            """)
    }

    private func images(_ query: PostgresQuery) async throws(StoreError) -> [ImageRecord] {
        try await run {
            var images: [ImageRecord] = []
            for try await (id, owner, type, size, etag, digest, complete, created) in try await client.query(query, logger: logger).decode(
                (String, String, String, Int64, String?, String?, Bool, Int64).self)
            {
                images.append(
                    ImageRecord(
                        id: id, owner: owner, contentType: type, size: Int(size), entityTag: etag, digest: digest, complete: complete,
                        createdAt: created))
            }
            return images
        }
    }

    package func apiKeyOwnerAndNotification(
        keyID: String, id: String, visibleAt: Int64
    ) async throws(StoreError)
        -> (APIKeyRecord, UserRecord, NotificationRecord?)?
    {
        try await run {
            var found: (APIKeyRecord, UserRecord, NotificationRecord?)?
            // Read to the end (one row at most): leaving the sequence early would cancel the query.
            for try await row in try await client.execute(
                NotificationLookup<KeyOwnerAndNotification>(who: keyID, id: id, visibleAt: visibleAt), logger: logger)
            {
                let (keyID, secretHash, created, userName, hash, roleName) = try row.decode((String, String, Int64, String, String, String).self)
                guard let role = UserRole(rawValue: roleName) else { continue }
                found = (
                    APIKeyRecord(id: keyID, owner: userName, secretHash: secretHash, createdAt: created),
                    UserRecord(name: userName, passwordHash: hash, role: role), try Self.notification(from: row, at: 6)
                )
            }
            return found
        }
    }

    /// ``UserAndNotification`` for a request signed with an API key: the key and its owner too.
    enum KeyOwnerAndNotification: NotificationQuery {
        static let name = "push-backend.key-owner-and-notification"
        static let sql = """
            SELECT api_keys.id, api_keys.secret_hash, api_keys.created_at, users.name, users.password_hash, users.role,
                \(PostgresBackendStore.notificationColumns)
            FROM api_keys JOIN users ON users.name = api_keys.owner \(PostgresBackendStore.visibleNotificationJoin)
            WHERE api_keys.id = $3
            """
    }

    package func apiKeys() async throws(StoreError) -> [APIKeyRecord] {
        try await apiKeys("SELECT id, owner, secret_hash, created_at FROM api_keys ORDER BY owner, created_at")
    }

    package func removeAPIKey(id: String) async throws(StoreError) -> Bool {
        try await count("DELETE FROM api_keys WHERE id = \(id) RETURNING id") > 0
    }

    private func apiKeys(_ query: PostgresQuery) async throws(StoreError) -> [APIKeyRecord] {
        try await run {
            var keys: [APIKeyRecord] = []
            for try await (id, owner, hash, created) in try await client.query(query, logger: logger).decode((String, String, String, Int64).self) {
                keys.append(APIKeyRecord(id: id, owner: owner, secretHash: hash, createdAt: created))
            }
            return keys
        }
    }

    private func users(_ query: PostgresQuery) async throws(StoreError) -> [UserRecord] {
        try await run {
            var users: [UserRecord] = []
            for try await (name, hash, role) in try await client.query(query, logger: logger).decode((String, String, String).self) {
                guard let role = UserRole(rawValue: role) else { continue }
                users.append(UserRecord(name: name, passwordHash: hash, role: role))
            }
            return users
        }
    }

    // MARK: Registrations

    package func registration(id: String) async throws(StoreError) -> RegistrationRecord? {
        try await registrations("SELECT id, owner, device_token, platform, installation_id, updated_at FROM registrations WHERE id = \(id)").first
    }

    package func registration(deviceToken: String) async throws(StoreError) -> RegistrationRecord? {
        try await registrations(
            "SELECT id, owner, device_token, platform, installation_id, updated_at FROM registrations WHERE device_token = \(deviceToken)"
        ).first
    }

    package func registrations(owner: String) async throws(StoreError) -> [RegistrationRecord] {
        try await registrations(
            "SELECT id, owner, device_token, platform, installation_id, updated_at FROM registrations WHERE owner = \(owner) ORDER BY updated_at, id")
    }

    package func saveRegistration(_ registration: RegistrationRecord, maximumPerOwner: Int) async throws(StoreError) -> Bool {
        try await run {
            try await client.withConnection { connection in
                // The owner's row is locked for the transaction, so that registrations for the
                // same owner, on any instance, count and insert one after another: a statement's
                // snapshot would not see a concurrent insert committed while it waited.
                try await connection.query("BEGIN", logger: logger)
                do {
                    try await connection.query("SELECT 1 FROM users WHERE name = \(registration.owner) FOR UPDATE", logger: logger)
                    var others = 0
                    for try await count in try await connection.query(
                        "SELECT count(*) FROM registrations WHERE owner = \(registration.owner) AND device_token <> \(registration.deviceToken)",
                        logger: logger
                    ).decode(Int.self) {
                        others = count
                    }
                    guard others < maximumPerOwner else {
                        try await connection.query("ROLLBACK", logger: logger)
                        return false
                    }
                    try await connection.query(
                        """
                        INSERT INTO registrations (id, owner, device_token, platform, installation_id, updated_at)
                        VALUES (\(registration.id), \(registration.owner), \(registration.deviceToken), \(registration.platform.rawValue),
                                \(registration.installationID), \(registration.updatedAt))
                        ON CONFLICT (device_token) DO UPDATE SET
                            id = excluded.id, owner = excluded.owner, platform = excluded.platform, installation_id = excluded.installation_id,
                            updated_at = excluded.updated_at
                        """, logger: logger)
                    try await connection.query("COMMIT", logger: logger)
                    return true
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        }
    }

    package func deleteRegistration(id: String, owner: String) async throws(StoreError) -> Bool {
        try await count("DELETE FROM registrations WHERE id = \(id) AND owner = \(owner) RETURNING id") > 0
    }

    private func registrations(_ query: PostgresQuery) async throws(StoreError) -> [RegistrationRecord] {
        try await run {
            var records: [RegistrationRecord] = []
            for try await (id, owner, token, platformName, installation, updated) in try await client.query(query, logger: logger)
                .decode((String, String, String, String, String?, Int64).self)
            {
                guard let platform = Installation.Platform(rawValue: platformName) else { continue }
                records.append(
                    RegistrationRecord(
                        id: id, owner: owner, deviceToken: token, platform: platform, installationID: installation ?? id, updatedAt: updated))
            }
            return records
        }
    }

    // MARK: Live Activities

    package func saveActivity(_ activity: ActivityRecord) async throws(StoreError) {
        _ = try await count(
            """
            INSERT INTO activities (id, owner, kind, token, updated_at)
            VALUES (\(activity.id), \(activity.owner), \(activity.kind.rawValue), \(activity.token), \(activity.updatedAt))
            ON CONFLICT (token) DO UPDATE SET id = excluded.id, owner = excluded.owner, kind = excluded.kind, updated_at = excluded.updated_at
            """)
    }

    package func activity(id: String) async throws(StoreError) -> ActivityRecord? {
        try await run {
            for try await (owner, kind, token, updated) in try await client.query(
                "SELECT owner, kind, token, updated_at FROM activities WHERE id = \(id)", logger: logger
            ).decode((String, String, String, Int64).self) {
                guard let kind = ActivityRecord.Kind(rawValue: kind) else { return nil }
                return ActivityRecord(id: id, owner: owner, kind: kind, token: token, updatedAt: updated)
            }
            return nil
        }
    }

    package func activityCount(owner: String) async throws(StoreError) -> Int {
        try await run {
            for try await count in try await client.query("SELECT count(*) FROM activities WHERE owner = \(owner)", logger: logger).decode(Int.self) {
                return count
            }
            return 0
        }
    }

    package func deleteActivity(id: String, owner: String?) async throws(StoreError) -> Bool {
        if let owner { return try await count("DELETE FROM activities WHERE id = \(id) AND owner = \(owner) RETURNING id") > 0 }
        return try await count("DELETE FROM activities WHERE id = \(id) RETURNING id") > 0
    }

    package func addChannel(_ channel: ChannelRecord) async throws(StoreError) {
        _ = try await count(
            """
            INSERT INTO channels (id, apns_channel_id, creator, storage_policy, created_at)
            VALUES (\(channel.id), \(channel.apnsChannelID), \(channel.creator), \(channel.storagePolicy), \(channel.createdAt))
            """)
    }

    package func channel(id: String) async throws(StoreError) -> ChannelRecord? {
        try await run {
            for try await (apnsID, creator, policy, created) in try await client.query(
                "SELECT apns_channel_id, creator, storage_policy, created_at FROM channels WHERE id = \(id)", logger: logger
            ).decode((String, String, Int, Int64).self) {
                return ChannelRecord(id: id, apnsChannelID: apnsID, creator: creator, storagePolicy: policy, createdAt: created)
            }
            return nil
        }
    }

    package func deleteChannel(id: String) async throws(StoreError) -> Bool {
        try await count("DELETE FROM channels WHERE id = \(id) RETURNING id") > 0
    }

    // MARK: Notifications

    package func addNotification(_ notification: NotificationRecord) async throws(StoreError) {
        try await insert(notification, queuing: nil)
    }

    package func addNotification(_ notification: NotificationRecord, queuing push: QueuedPush) async throws(StoreError) {
        try await insert(notification, queuing: push)
    }

    private func insert(_ notification: NotificationRecord, queuing push: QueuedPush?) async throws(StoreError) {
        var richType: String?
        var resource: String?
        var message: String?
        var payload: String?
        switch notification.content {
        case .rich(let type, let name, let text): (richType, resource, message) = (type, name, text)
        case .secure(let secret): payload = secret
        }
        let state = push == nil ? nil : DeliveryState.queued.rawValue
        let dueAt = push == nil ? nil : notification.sendAt ?? notification.createdAt
        let inserted = try await count(
            """
            INSERT INTO notifications
                (id, sender, recipient, kind, rich_type, resource, message, payload, created_at, read_at, send_at, hub_message_id, delivery,
                 delivery_state, due_at, deadline, push_kind, push_message, trace_context)
            VALUES (\(notification.id), \(notification.sender), \(notification.recipient), \(notification.kind), \(richType), \(resource),
                    \(message), \(payload), \(notification.createdAt), \(notification.readAt), \(notification.sendAt),
                    \(notification.hubMessageID), \(notification.delivery), \(state), \(dueAt), \(push?.deadline),
                    \(push?.kind.rawValue), \(push?.message), \(push?.traceText))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """)
        guard inserted > 0 else { throw StoreError(.conflict, "a notification with this id exists") }
    }

    // MARK: The delivery queue

    package func claimDeliveryJobs(owner: String, now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [DeliveryJob] {
        // SKIP LOCKED: instances claiming at once each take other rows instead of waiting on one
        // another's; a row is locked from the choice to the update, so no two take the same.
        try await run {
            var jobs: [(Int64, DeliveryJob)] = []
            let rows = try await client.query(
                """
                UPDATE notifications SET delivery_state = 'sending', lease_owner = \(owner), lease_expires = \(leaseUntil), attempts = attempts + 1
                WHERE id IN (
                    SELECT id FROM notifications
                    WHERE delivery_state IN ('queued', 'sending') AND due_at <= \(now) AND (delivery_state = 'queued' OR lease_expires <= \(now))
                    ORDER BY due_at, sequence LIMIT \(max(limit, 0)) FOR UPDATE SKIP LOCKED)
                RETURNING id, recipient, due_at, deadline, attempts, lease_expires, push_kind, push_message, trace_context, rich_type, sequence
                """, logger: logger)
            for try await (id, recipient, due, deadline, attempts, expires, kind, message, trace, richType, sequence) in rows.decode(
                (String, String, Int64, Int64, Int32, Int64, String?, String?, String?, String?, Int64).self)
            {
                guard let kind = kind.flatMap(OutgoingPush.Kind.init(rawValue:)), let message else { continue }
                jobs.append(
                    (
                        sequence,
                        DeliveryJob(
                            notificationID: id, recipient: recipient,
                            push: QueuedPush(kind: kind, message: message, deadline: deadline, trace: QueuedPush.trace(fromText: trace)),
                            richType: richType, dueAt: due, attempts: Int(attempts), leaseExpiresAt: expires)
                    ))
            }
            return jobs.sorted { ($0.1.dueAt, $0.0) < ($1.1.dueAt, $1.0) }.map(\.1)
        }
    }

    package func renewDeliveryLease(notificationID: String, owner: String, until: Int64) async throws(StoreError) -> Bool {
        try await count(
            """
            UPDATE notifications SET lease_expires = \(until)
            WHERE id = \(notificationID) AND lease_owner = \(owner) AND delivery_state = 'sending' RETURNING id
            """) > 0
    }

    package func recordDeliveryAnswers(notificationID: String, answers: [DeliveryAnswer], at time: Int64) async throws(StoreError) {
        guard !answers.isEmpty else { return }
        _ = try await count(
            """
            INSERT INTO delivery_answers (notification_id, answered_at, target, platform, outcome)
            SELECT \(notificationID), \(time), answer.target, answer.platform, answer.outcome
            FROM unnest(\(answers.map(\.target))::text[], \(answers.map(\.platform))::text[], \(answers.map(\.outcome))::text[])
                AS answer(target, platform, outcome)
            WHERE EXISTS (SELECT 1 FROM notifications WHERE id = \(notificationID))
            ON CONFLICT (notification_id, target) DO NOTHING RETURNING target
            """)
    }

    package func deliveryAnswers(notificationID: String) async throws(StoreError) -> [DeliveryAnswer] {
        try await run {
            var answers: [DeliveryAnswer] = []
            let rows = try await client.query(
                "SELECT target, platform, outcome FROM delivery_answers WHERE notification_id = \(notificationID) ORDER BY target", logger: logger)
            for try await (target, platform, outcome) in rows.decode((String, String, String).self) {
                answers.append(DeliveryAnswer(target: target, platform: platform, outcome: outcome))
            }
            return answers
        }
    }

    package func finishDeliveryJob(notificationID: String, owner: String, state: DeliveryState, failure: String?) async throws(StoreError) -> Bool {
        try await count(
            """
            UPDATE notifications SET delivery_state = \(state.rawValue), failure = \(failure), lease_owner = NULL, lease_expires = NULL
            WHERE id = \(notificationID) AND lease_owner = \(owner) AND delivery_state = 'sending' RETURNING id
            """) > 0
    }

    package func requeueDeliveryJob(notificationID: String, owner: String, dueAt: Int64, failure: String?) async throws(StoreError) -> Bool {
        try await count(
            """
            UPDATE notifications SET delivery_state = 'queued', due_at = \(dueAt), failure = \(failure), lease_owner = NULL, lease_expires = NULL
            WHERE id = \(notificationID) AND lease_owner = \(owner) AND delivery_state = 'sending' RETURNING id
            """) > 0
    }

    package func deliveryReports(notificationIDs ids: [String]) async throws(StoreError) -> [String: DeliveryReport] {
        guard !ids.isEmpty else { return [:] }
        return try await run {
            var reports: [String: DeliveryReport] = [:]
            let rows = try await client.query(
                """
                SELECT n.id, n.delivery_state, n.attempts, n.failure, a.platform, a.outcome, count(a.target)
                FROM notifications n LEFT JOIN delivery_answers a ON a.notification_id = n.id
                WHERE n.id = ANY(\(ids)::text[]) AND n.delivery_state IS NOT NULL
                GROUP BY n.id, a.platform, a.outcome
                """, logger: logger)
            for try await (id, name, attempts, failure, platform, outcome, answers) in rows.decode(
                (String, String, Int32, String?, String?, String?, Int64).self)
            {
                guard let state = DeliveryState(rawValue: name) else { continue }
                reports[id, default: DeliveryReport(state: state, attempts: Int(attempts), failure: failure, outcomes: [:])]
                    .add(platform: platform, outcome: outcome, count: Int(answers))
            }
            return reports
        }
    }

    package func deliveryBacklog(now: Int64) async throws(StoreError) -> (jobs: Int, oldestDueAt: Int64?) {
        try await run {
            var backlog: (jobs: Int, oldestDueAt: Int64?) = (0, nil)
            let rows = try await client.query(
                "SELECT count(*), min(due_at) FROM notifications WHERE delivery_state IN ('queued', 'sending') AND due_at <= \(now)",
                logger: logger)
            for try await (jobs, oldest) in rows.decode((Int64, Int64?).self) { backlog = (Int(jobs), oldest) }
            return backlog
        }
    }

    package func markRead(id: String, at time: Int64) async throws(StoreError) {
        _ = try await count("UPDATE notifications SET read_at = \(time) WHERE id = \(id) AND read_at IS NULL RETURNING id")
    }

    package func notifications(recipient: String, visibleAt: Int64, limit: Int) async throws(StoreError) -> [NotificationRecord] {
        try await notifications(
            """
            \(unescaped: Self.columns) FROM notifications WHERE recipient = \(recipient) AND (send_at IS NULL OR send_at <= \(visibleAt))
            ORDER BY created_at DESC, sequence DESC LIMIT \(limit)
            """)
    }

    package func notifications(sender: String, limit: Int) async throws(StoreError) -> [NotificationRecord] {
        try await notifications(
            "\(unescaped: Self.columns) FROM notifications WHERE sender = \(sender) ORDER BY created_at DESC, sequence DESC LIMIT \(limit)")
    }

    package func recordDelivery(id: String, hubMessageID: String?, outcome: String?) async throws(StoreError) {
        _ = try await count(
            """
            UPDATE notifications SET hub_message_id = coalesce(\(hubMessageID), hub_message_id), delivery = coalesce(\(outcome), delivery)
            WHERE id = \(id) RETURNING id
            """)
    }

    package func deleteNotification(id: String) async throws(StoreError) {
        _ = try await count("DELETE FROM notifications WHERE id = \(id) RETURNING id")
    }

    package func deleteNotifications(pastBefore time: Int64, limit: Int) async throws(StoreError) -> Int {
        try await count(
            """
            DELETE FROM notifications WHERE id IN (
                SELECT id FROM notifications WHERE created_at < \(time) AND (send_at IS NULL OR send_at < \(time)) ORDER BY created_at LIMIT \(limit)
            ) RETURNING id
            """
        )
    }

    static let columns = "SELECT " + notificationColumns
    /// A notification's columns, in the order ``notification(from:at:)`` reads them.
    static let notificationColumns = [
        "id", "sender", "recipient", "kind", "rich_type", "resource", "message", "payload", "created_at", "read_at", "send_at", "hub_message_id",
        "delivery",
    ].map { "notifications." + $0 }.joined(separator: ", ")

    private func notifications(_ query: PostgresQuery) async throws(StoreError) -> [NotificationRecord] {
        try await run {
            var records: [NotificationRecord] = []
            for try await row in try await client.query(query, logger: logger) {
                if let record = try Self.notification(from: row, at: 0) { records.append(record) }
            }
            return records
        }
    }

    package func userAndNotification(named name: String, id: String, visibleAt: Int64) async throws(StoreError) -> (UserRecord, NotificationRecord?)?
    {
        try await run {
            var found: (UserRecord, NotificationRecord?)?
            // Read to the end (one row at most): leaving the sequence early would cancel the query.
            for try await row in try await client.execute(
                NotificationLookup<UserAndNotification>(who: name, id: id, visibleAt: visibleAt), logger: logger)
            {
                let (userName, hash, roleName) = try row.decode((String, String, String).self)
                guard let role = UserRole(rawValue: roleName) else { continue }
                found = (UserRecord(name: userName, passwordHash: hash, role: role), try Self.notification(from: row, at: 3))
            }
            return found
        }
    }

    /// The read behind every authenticated fetch of a notification, the backend's busiest
    /// statement.
    enum UserAndNotification: NotificationQuery {
        // Spelled out: the protocol's default is `String(reflecting:)` of the type, a run-time
        // lookup of its name on every execution.
        static let name = "push-backend.user-and-notification"
        static let sql = """
            SELECT users.name, users.password_hash, users.role, \(PostgresBackendStore.notificationColumns)
            FROM users \(PostgresBackendStore.visibleNotificationJoin)
            WHERE users.name = $3
            """
    }

    /// The caller's notification `$1`, if visible at `$2`, joined to the caller's `users` row.
    static let visibleNotificationJoin = """
        LEFT JOIN notifications ON notifications.id = $1 AND notifications.recipient = users.name
            AND (notifications.send_at IS NULL OR notifications.send_at <= $2)
        """

    /// The SQL and name of a ``NotificationLookup``.
    protocol NotificationQuery {
        static var name: String { get }
        static var sql: String { get }
    }

    /// A caller's row joined with their notification `$1`, if visible at `$2`; the caller is `$3`
    /// (a user's name, or an API key's id). Prepared once per connection, so that PostgreSQL parses
    /// and plans it once instead of on every request.
    struct NotificationLookup<Query: NotificationQuery>: PostgresPreparedStatement {
        typealias Row = PostgresRow
        static var name: String { Query.name }
        static var sql: String { Query.sql }
        let who: String
        let id: String
        let visibleAt: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(id)
            bindings.append(visibleAt)
            bindings.append(who)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    /// The notification in the row's columns from `first` on (``notificationColumns``); nil when
    /// they are null (no notification joined) or hold an unknown kind.
    private static func notification(from row: PostgresRow, at first: Int) throws -> NotificationRecord? {
        var cells = row.makeIterator()
        for _ in 0..<first { _ = cells.next() }
        func text() throws -> String? { try cells.next()?.decode(String?.self) ?? nil }
        func number() throws -> Int64? { try cells.next()?.decode(Int64?.self) ?? nil }
        guard let id = try text(), let sender = try text(), let recipient = try text(), let kind = try text() else { return nil }
        let (richType, resource, message, payload) = (try text(), try text(), try text(), try text())
        guard let created = try number() else { return nil }
        let (read, sendAt, hubMessageID, delivery) = (try number(), try number(), try text(), try text())
        let content: NotificationRecord.Content
        switch kind {
        case "rich":
            guard let richType, let resource, let message else { return nil }
            content = .rich(richType: richType, resource: resource, message: message)
        case "secure":
            guard let payload else { return nil }
            content = .secure(payload: payload)
        default:
            return nil
        }
        return NotificationRecord(
            id: id, sender: sender, recipient: recipient, content: content, createdAt: created, readAt: read, sendAt: sendAt,
            hubMessageID: hubMessageID, delivery: delivery)
    }

    // MARK: Plumbing

    /// Rows a statement returned (its `RETURNING` rows), read to the end.
    private func count(_ query: PostgresQuery) async throws(StoreError) -> Int {
        try await run {
            var rows = 0
            for try await _ in try await client.query(query, logger: logger) { rows += 1 }
            return rows
        }
    }

    /// How long a store call may take, waiting for a connection included (give or take the
    /// watchdog's second). With the database down the pool would queue a request until its own
    /// breaker opens, about a minute; a request answers `503 storageUnavailable` after this instead.
    package static let operationTimeout = Duration.seconds(5)

    /// Runs `body` (within the operation timeout unless `deadline` is false), turning the driver's
    /// errors into ``StoreError``s: a unique key taken is a conflict; the database's own text, which
    /// may quote values, is never passed on.
    private func run<Result>(deadline: Bool = true, _ body: () async throws -> Result) async throws(StoreError) -> Result {
        let call = deadline ? watchdog.begin() : nil
        defer { if let call { watchdog.end(call) } }
        do {
            return try await body()
        } catch let error as StoreError {
            throw error
        } catch _ where call.map(watchdog.timedOut) == true {
            logger.error("PostgreSQL did not answer in time", metadata: ["database": "\(description)"])
            throw StoreError(.unavailable, "the database at \(description) did not answer within \(Self.operationTimeout)")
        } catch let error as PSQLError {
            if let state = error.serverInfo?[.sqlState] {
                if state == "23505" { throw StoreError(.conflict, "the name or id is taken") }
                // The server is going away or not taking connections (a restart, a shutdown): the
                // database is unavailable, not refusing this statement.
                if state.hasPrefix("08") || state.hasPrefix("57P") {
                    logger.error("PostgreSQL is going away", metadata: ["sqlstate": "\(state)"])
                    throw StoreError(.unavailable, "the database at \(description) is unavailable (SQLSTATE \(state))")
                }
                logger.error("PostgreSQL refused a statement", metadata: ["sqlstate": "\(state)"])
                throw StoreError(.storage, "the database refused a statement (SQLSTATE \(state))")
            }
            logger.error("PostgreSQL cannot be reached", metadata: ["database": "\(description)", "error": "\(error.code)"])
            throw StoreError(.unavailable, "cannot reach the database at \(description)")
        } catch is CancellationError {
            throw StoreError(.unavailable, "cannot reach the database at \(description)")
        } catch {
            throw StoreError(.storage, "the database failed: \(type(of: error))")
        }
    }
}

/// Watches store calls for ones that run past their deadline, and then calls for help once (the
/// store replaces its client, failing what waits in the old one). It looks once a second, so a
/// call may run up to a second longer; in exchange a call costs two dictionary updates, neither a
/// timer nor a task of its own.
final class StoreCallWatchdog: Sendable {
    private struct State {
        var calls: [Int: ContinuousClock.Instant] = [:]
        var timedOut: Set<Int> = []
        var next = 0
        var looking: Task<Void, Never>?
        var stopped = false
        var overdue: @Sendable () -> Void = {}
    }

    let deadline: Duration
    private let state = Mutex(State())

    init(deadline: Duration) { self.deadline = deadline }

    /// What a round that finds calls past their deadline does.
    func whenOverdue(_ overdue: @escaping @Sendable () -> Void) {
        state.withLock { $0.overdue = overdue }
    }

    /// Registers a call; the first one starts the watchdog's rounds.
    func begin() -> Int {
        state.withLock { state in
            state.next += 1
            state.calls[state.next] = .now
            if state.looking == nil && !state.stopped { state.looking = Task { [self] in await look() } }
            return state.next
        }
    }

    func end(_ call: Int) {
        state.withLock { state in
            state.calls[call] = nil
            state.timedOut.remove(call)
        }
    }

    /// Whether the call ran past its deadline.
    func timedOut(_ call: Int) -> Bool { state.withLock { $0.timedOut.contains(call) } }

    func stop() {
        let looking = state.withLock { state in
            state.stopped = true
            return state.looking
        }
        looking?.cancel()
    }

    private func look() async {
        while (try? await Task.sleep(for: .seconds(1))) != nil {
            let overdue = state.withLock { state -> (@Sendable () -> Void)? in
                let now = ContinuousClock.now
                let late = state.calls.filter { now - $0.value > deadline && !state.timedOut.contains($0.key) }.keys
                state.timedOut.formUnion(late)
                return late.isEmpty ? nil : state.overdue
            }
            overdue?()
        }
    }
}
