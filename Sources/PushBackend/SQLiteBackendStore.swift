package import Logging
package import NIOCore
import NIOPosix
import NotificationHubs
import SQLiteNIO

#if canImport(Glibc)
// Since Foundation is in this module's graph, Glibc's `stat` and `timespec` are CoreFoundation's.
import CoreFoundation
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SQLite store: one file, `push-backend.sqlite`, in the data directory (created, mode 0700,
/// on first start). Write-ahead logging with `synchronous=FULL`, so a committed write survives a
/// crash or power loss; the schema is migrated forward on open, each version in its own transaction.
///
/// One connection serialises statements on SQLite's side; every operation is a single statement,
/// so concurrent requests interleave whole operations only.
package final class SQLiteBackendStore: BackendStore {
    package static let fileName = "push-backend.sqlite"

    /// The schema, one entry per version, applied in order and recorded in `schema_migrations`.
    /// Append new versions; never edit one that has shipped.
    package static let migrations: [[String]] = [
        [
            """
            CREATE TABLE users (
                name TEXT PRIMARY KEY NOT NULL,
                password_hash TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('user', 'sender')),
                created_at INTEGER NOT NULL
            ) STRICT
            """,
            """
            CREATE TABLE registrations (
                id TEXT PRIMARY KEY NOT NULL,
                owner TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                device_token TEXT NOT NULL UNIQUE,
                updated_at INTEGER NOT NULL
            ) STRICT
            """,
            """
            CREATE TABLE notifications (
                id TEXT PRIMARY KEY NOT NULL,
                sender TEXT NOT NULL,
                recipient TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind IN ('rich', 'secure')),
                rich_type TEXT,
                resource TEXT,
                message TEXT,
                payload TEXT,
                created_at INTEGER NOT NULL,
                read_at INTEGER
            ) STRICT
            """,
            "CREATE INDEX notifications_by_recipient ON notifications (recipient, created_at DESC)",
        ],
        [
            // Installations are named after their device token; rows from version 1 keep the id
            // their installation was created under until the token registers again.
            "ALTER TABLE registrations ADD COLUMN installation_id TEXT",
            "UPDATE registrations SET installation_id = id",
            // The retention sweep deletes by age.
            "CREATE INDEX notifications_by_age ON notifications (created_at)",
        ],
        [
            // A direct APNs send reads a user's registrations.
            "CREATE INDEX registrations_by_owner ON registrations (owner, updated_at)",
            """
            CREATE TABLE activities (
                id TEXT PRIMARY KEY NOT NULL,
                owner TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind IN ('pushToStart', 'activity')),
                token TEXT NOT NULL UNIQUE,
                updated_at INTEGER NOT NULL
            ) STRICT
            """,
            """
            CREATE TABLE channels (
                id TEXT PRIMARY KEY NOT NULL,
                apns_channel_id TEXT NOT NULL UNIQUE,
                creator TEXT NOT NULL,
                storage_policy INTEGER NOT NULL CHECK (storage_policy IN (0, 1)),
                created_at INTEGER NOT NULL
            ) STRICT
            """,
        ],
        [
            // Each user's activity tokens are counted against a cap.
            "CREATE INDEX activities_by_owner ON activities (owner)"
        ],
        [
            // Android phones register too; every earlier row is an APNs token.
            "ALTER TABLE registrations ADD COLUMN platform TEXT NOT NULL DEFAULT 'apns' CHECK (platform IN ('apns', 'fcmv1'))",
            // Scheduled pushes, and what the hub said of each send.
            "ALTER TABLE notifications ADD COLUMN send_at INTEGER",
            "ALTER TABLE notifications ADD COLUMN hub_message_id TEXT",
            "ALTER TABLE notifications ADD COLUMN delivery TEXT",
        ],
        [
            // Credentials users give services: each authenticates as its owner.
            """
            CREATE TABLE api_keys (
                id TEXT PRIMARY KEY NOT NULL,
                owner TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                secret_hash TEXT NOT NULL,
                created_at INTEGER NOT NULL
            ) STRICT
            """
        ],
        [
            // Images users upload for rich notifications, in chunks written as the body arrives.
            """
            CREATE TABLE images (
                id TEXT PRIMARY KEY NOT NULL,
                owner TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
                content_type TEXT NOT NULL,
                size INTEGER NOT NULL,
                etag TEXT,
                digest TEXT,
                complete INTEGER NOT NULL CHECK (complete IN (0, 1)),
                created_at INTEGER NOT NULL
            ) STRICT
            """,
            "CREATE INDEX images_by_owner ON images (owner, created_at)",
            "CREATE INDEX images_by_age ON images (created_at)",
            """
            CREATE TABLE image_chunks (
                image_id TEXT NOT NULL REFERENCES images(id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                data BLOB NOT NULL,
                PRIMARY KEY (image_id, seq)
            ) STRICT
            """,
            // The sweep asks whether any notification still names an image.
            "CREATE INDEX notifications_by_resource ON notifications (resource)",
        ],
        // The delivery queue (DeliveryQueue.swift): a notification carries its job.
        [
            "ALTER TABLE notifications ADD COLUMN delivery_state TEXT CHECK (delivery_state IN ('queued', 'sending', 'delivered', 'partly', 'failed'))",
            "ALTER TABLE notifications ADD COLUMN due_at INTEGER",
            "ALTER TABLE notifications ADD COLUMN deadline INTEGER",
            "ALTER TABLE notifications ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE notifications ADD COLUMN lease_owner TEXT",
            "ALTER TABLE notifications ADD COLUMN lease_expires INTEGER",
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
                answered_at INTEGER NOT NULL,
                PRIMARY KEY (notification_id, target)
            ) STRICT
            """,
        ],
        [
            // A sender reads the notifications they sent.
            "CREATE INDEX notifications_by_sender ON notifications (sender, created_at DESC)",
            // The request's trace, which its delivery job's span joins.
            "ALTER TABLE notifications ADD COLUMN trace_context TEXT",
        ],
    ]

    package let path: String
    private let connection: SQLiteConnection

    private init(path: String, connection: SQLiteConnection) {
        self.path = path
        self.connection = connection
    }

    /// Opens (creating when missing) the database in `dataDirectory` and migrates it to the current schema.
    ///
    /// The database and its `-wal` and `-shm` files are readable by their owner only (0600),
    /// whatever the directory and the umask: they hold password hashes and secure payloads. A
    /// directory that others may enter is logged as a warning; one that others may write to, or
    /// that another user owns, is refused, since whoever can write there can plant a symbolic link
    /// in place of a file. A file that is a symbolic link is refused too.
    package static func open(
        dataDirectory: String, logger: Logger = Logger(label: "push-backend.store")
    ) async throws(StoreError) -> SQLiteBackendStore {
        try createDirectory(dataDirectory)
        var info = stat()
        guard stat(dataDirectory, &info) == 0 else {
            throw StoreError(.unavailable, "cannot read the data directory \(dataDirectory): \(String(cString: strerror(errno)))")
        }
        guard info.st_uid == geteuid() else {
            throw StoreError(.unavailable, "the data directory \(dataDirectory) belongs to another user (uid \(info.st_uid)); use one of your own")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw StoreError(
                .unavailable,
                "the data directory \(dataDirectory) is writable by other users (mode \(String(info.st_mode & 0o777, radix: 8))), who could replace its files: chmod 700 it"
            )
        }
        let path = dataDirectory.hasSuffix("/") ? dataDirectory + fileName : dataDirectory + "/" + fileName
        try restrictFiles(path)
        if info.st_mode & 0o077 != 0 {
            logger.warning(
                "the data directory is open to other users; it holds password hashes and secure payloads: chmod 700 it",
                metadata: ["directory": "\(dataDirectory)", "mode": "\(String(info.st_mode & 0o777, radix: 8))"])
        }
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        } catch {
            throw StoreError(.unavailable, "cannot open \(path): \(error)")
        }
        let store = SQLiteBackendStore(path: path, connection: connection)
        do throws(StoreError) {
            // WAL lets readers go on while one writer commits; FULL syncs the log at every commit.
            _ = try await store.run("PRAGMA journal_mode = WAL")
            _ = try await store.run("PRAGMA synchronous = FULL")
            _ = try await store.run("PRAGMA foreign_keys = ON")
            try await store.migrate()
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    /// The schema version the file is at.
    package func schemaVersion() async throws(StoreError) -> Int {
        let rows = try await run("SELECT coalesce(max(version), 0) AS version FROM schema_migrations")
        return Int(rows.first?.column("version")?.integer ?? 0)
    }

    private func migrate() async throws(StoreError) {
        _ = try await run("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY NOT NULL, applied_at INTEGER NOT NULL) STRICT")
        // IMMEDIATE takes the write lock first: two processes opening a new file migrate one after the other.
        _ = try await run("BEGIN IMMEDIATE")
        do throws(StoreError) {
            let current = try await schemaVersion()
            guard current <= Self.migrations.count else {
                throw StoreError(.schemaTooNew, "\(path) is at schema version \(current); this program knows up to \(Self.migrations.count)")
            }
            for (index, statements) in Self.migrations.enumerated().dropFirst(current) {
                for statement in statements { _ = try await run(statement) }
                _ = try await run(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", [.integer(index + 1), .integer(Int(unixMilliseconds()))])
            }
            _ = try await run("COMMIT")
        } catch {
            _ = try? await run("ROLLBACK")
            throw error
        }
    }

    package func close() async {
        // A task of its own: SQLiteNIO skips work for a cancelled task, and a server stops by being
        // cancelled, yet the file must be closed all the same.
        let connection = self.connection
        await Task { try? await connection.close() }.value
    }

    // MARK: Users

    package func addUser(_ user: UserRecord) async throws(StoreError) {
        let inserted = try await run(
            "INSERT INTO users (name, password_hash, role, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING RETURNING name",
            [.text(user.name), .text(user.passwordHash), .text(user.role.rawValue), .integer(Int(unixMilliseconds()))])
        guard !inserted.isEmpty else { throw StoreError(.conflict, "a user named \(user.name) exists") }
    }

    package func user(named name: String) async throws(StoreError) -> UserRecord? {
        try await run("SELECT name, password_hash, role FROM users WHERE name = ?", [.text(name)]).first.flatMap(Self.user(from:))
    }

    package func users() async throws(StoreError) -> [UserRecord] {
        try await run("SELECT name, password_hash, role FROM users ORDER BY name").compactMap(Self.user(from:))
    }

    package func removeUser(named name: String) async throws(StoreError) -> Bool {
        !(try await run("DELETE FROM users WHERE name = ? RETURNING name", [.text(name)])).isEmpty
    }

    package func addAPIKey(_ key: APIKeyRecord) async throws(StoreError) {
        let inserted = try await run(
            """
            INSERT INTO api_keys (id, owner, secret_hash, created_at) SELECT ?1, ?2, ?3, ?4
            WHERE EXISTS (SELECT 1 FROM users WHERE name = ?2) RETURNING id
            """,
            [.text(key.id), .text(key.owner), .text(key.secretHash), .integer(Int(key.createdAt))])
        guard !inserted.isEmpty else { throw StoreError(.notFound, "no user named \(key.owner)") }
    }

    package func apiKeyOwnerAndNotification(
        keyID: String, id: String, visibleAt: Int64
    ) async throws(StoreError)
        -> (APIKeyRecord, UserRecord, NotificationRecord?)?
    {
        let rows = try await run(
            """
            SELECT api_keys.id AS key_id, api_keys.secret_hash, api_keys.created_at AS key_created_at,
                users.name AS user_name, users.password_hash, users.role, notifications.*
            FROM api_keys JOIN users ON users.name = api_keys.owner LEFT JOIN notifications
                ON notifications.id = ? AND notifications.recipient = users.name
                AND (notifications.send_at IS NULL OR notifications.send_at <= ?)
            WHERE api_keys.id = ?
            """,
            [.text(id), .integer(Int(visibleAt)), .text(keyID)])
        guard let row = rows.first, let keyID = row.column("key_id")?.string, let secretHash = row.column("secret_hash")?.string,
            let created = row.column("key_created_at")?.integer, let userName = row.column("user_name")?.string,
            let hash = row.column("password_hash")?.string, let role = row.column("role")?.string.flatMap(UserRole.init(rawValue:))
        else { return nil }
        return (
            APIKeyRecord(id: keyID, owner: userName, secretHash: secretHash, createdAt: Int64(created)),
            UserRecord(name: userName, passwordHash: hash, role: role), Self.notification(from: row)
        )
    }

    package func apiKeys() async throws(StoreError) -> [APIKeyRecord] {
        try await run("SELECT id, owner, secret_hash, created_at FROM api_keys ORDER BY owner, created_at").compactMap(Self.apiKey(from:))
    }

    package func removeAPIKey(id: String) async throws(StoreError) -> Bool {
        !(try await run("DELETE FROM api_keys WHERE id = ? RETURNING id", [.text(id)])).isEmpty
    }

    private static func apiKey(from row: SQLiteRow) -> APIKeyRecord? {
        guard let id = row.column("id")?.string, let owner = row.column("owner")?.string, let hash = row.column("secret_hash")?.string,
            let created = row.column("created_at")?.integer
        else { return nil }
        return APIKeyRecord(id: id, owner: owner, secretHash: hash, createdAt: Int64(created))
    }

    private static func user(from row: SQLiteRow) -> UserRecord? {
        guard let name = row.column("name")?.string, let hash = row.column("password_hash")?.string,
            let role = row.column("role")?.string.flatMap(UserRole.init(rawValue:))
        else { return nil }
        return UserRecord(name: name, passwordHash: hash, role: role)
    }

    // MARK: The delivery queue

    package func claimDeliveryJobs(owner: String, now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [DeliveryJob] {
        // One statement on the one connection: no other claim runs between the choice and the update.
        try await run(
            """
            UPDATE notifications SET delivery_state = 'sending', lease_owner = ?, lease_expires = ?, attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM notifications
                WHERE delivery_state IN ('queued', 'sending') AND due_at <= ? AND (delivery_state = 'queued' OR lease_expires <= ?)
                ORDER BY due_at, rowid LIMIT ?)
            RETURNING id, recipient, due_at, deadline, attempts, lease_expires, push_kind, push_message, trace_context, rich_type,
                rowid AS position
            """, [.text(owner), .integer(Int(leaseUntil)), .integer(Int(now)), .integer(Int(now)), .integer(max(limit, 0))]
        ).sorted {
            ($0.column("due_at")?.integer ?? 0, $0.column("position")?.integer ?? 0) < (
                $1.column("due_at")?.integer ?? 0, $1.column("position")?.integer ?? 0
            )
        }.compactMap { row in
            guard let id = row.column("id")?.string, let recipient = row.column("recipient")?.string,
                let due = row.column("due_at")?.integer, let deadline = row.column("deadline")?.integer,
                let attempts = row.column("attempts")?.integer, let expires = row.column("lease_expires")?.integer,
                let kind = row.column("push_kind")?.string.flatMap(OutgoingPush.Kind.init(rawValue:)),
                let message = row.column("push_message")?.string
            else { return nil }
            return DeliveryJob(
                notificationID: id, recipient: recipient,
                push: QueuedPush(
                    kind: kind, message: message, deadline: Int64(deadline), trace: QueuedPush.trace(fromText: row.column("trace_context")?.string)),
                richType: row.column("rich_type")?.string, dueAt: Int64(due), attempts: attempts, leaseExpiresAt: Int64(expires))
        }
    }

    package func renewDeliveryLease(notificationID: String, owner: String, until: Int64) async throws(StoreError) -> Bool {
        !(try await run(
            "UPDATE notifications SET lease_expires = ? WHERE id = ? AND lease_owner = ? AND delivery_state = 'sending' RETURNING id",
            [.integer(Int(until)), .text(notificationID), .text(owner)])).isEmpty
    }

    package func recordDeliveryAnswers(notificationID: String, answers: [DeliveryAnswer], at time: Int64) async throws(StoreError) {
        // 300 answers of 3 values a statement, well under SQLite's 32,766 variables.
        for start in stride(from: 0, to: answers.count, by: 300) {
            let batch = answers[start..<min(start + 300, answers.count)]
            var binds: [SQLiteData] = [.text(notificationID), .integer(Int(time))]
            for answer in batch { binds += [.text(answer.target), .text(answer.platform), .text(answer.outcome)] }
            binds.append(.text(notificationID))
            _ = try await run(
                """
                INSERT INTO delivery_answers (notification_id, answered_at, target, platform, outcome)
                SELECT ?, ?, column1, column2, column3 FROM (VALUES \(Array(repeating: "(?, ?, ?)", count: batch.count).joined(separator: ", ")))
                WHERE EXISTS (SELECT 1 FROM notifications WHERE id = ?)
                ON CONFLICT (notification_id, target) DO NOTHING
                """, binds)
        }
    }

    package func deliveryAnswers(notificationID: String) async throws(StoreError) -> [DeliveryAnswer] {
        try await run(
            "SELECT target, platform, outcome FROM delivery_answers WHERE notification_id = ? ORDER BY target", [.text(notificationID)]
        ).compactMap { row in
            guard let target = row.column("target")?.string, let platform = row.column("platform")?.string,
                let outcome = row.column("outcome")?.string
            else { return nil }
            return DeliveryAnswer(target: target, platform: platform, outcome: outcome)
        }
    }

    package func finishDeliveryJob(notificationID: String, owner: String, state: DeliveryState, failure: String?) async throws(StoreError) -> Bool {
        !(try await run(
            """
            UPDATE notifications SET delivery_state = ?, failure = ?, lease_owner = NULL, lease_expires = NULL
            WHERE id = ? AND lease_owner = ? AND delivery_state = 'sending' RETURNING id
            """, [.text(state.rawValue), failure.map { .text($0) } ?? .null, .text(notificationID), .text(owner)])).isEmpty
    }

    package func requeueDeliveryJob(notificationID: String, owner: String, dueAt: Int64, failure: String?) async throws(StoreError) -> Bool {
        !(try await run(
            """
            UPDATE notifications SET delivery_state = 'queued', due_at = ?, failure = ?, lease_owner = NULL, lease_expires = NULL
            WHERE id = ? AND lease_owner = ? AND delivery_state = 'sending' RETURNING id
            """, [.integer(Int(dueAt)), failure.map { .text($0) } ?? .null, .text(notificationID), .text(owner)])).isEmpty
    }

    package func deliveryReports(notificationIDs ids: [String]) async throws(StoreError) -> [String: DeliveryReport] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await run(
            """
            SELECT n.id, n.delivery_state, n.attempts, n.failure, a.platform, a.outcome, count(a.target) AS answers
            FROM notifications n LEFT JOIN delivery_answers a ON a.notification_id = n.id
            WHERE n.id IN (\(Array(repeating: "?", count: ids.count).joined(separator: ", "))) AND n.delivery_state IS NOT NULL
            GROUP BY n.id, a.platform, a.outcome
            """, ids.map { .text($0) })
        var reports: [String: DeliveryReport] = [:]
        for row in rows {
            guard let id = row.column("id")?.string, let state = row.column("delivery_state")?.string.flatMap(DeliveryState.init(rawValue:)),
                let attempts = row.column("attempts")?.integer
            else { continue }
            reports[id, default: DeliveryReport(state: state, attempts: attempts, failure: row.column("failure")?.string, outcomes: [:])]
                .add(platform: row.column("platform")?.string, outcome: row.column("outcome")?.string, count: row.column("answers")?.integer ?? 0)
        }
        return reports
    }

    package func deliveryBacklog(now: Int64) async throws(StoreError) -> (jobs: Int, oldestDueAt: Int64?) {
        let rows = try await run(
            "SELECT count(*) AS jobs, min(due_at) AS oldest FROM notifications WHERE delivery_state IN ('queued', 'sending') AND due_at <= ?",
            [.integer(Int(now))])
        return (rows.first?.column("jobs")?.integer ?? 0, rows.first?.column("oldest")?.integer.map(Int64.init))
    }

    // MARK: Images

    package func addImage(_ image: ImageRecord) async throws(StoreError) {
        let inserted = try await run(
            """
            INSERT INTO images (id, owner, content_type, size, complete, created_at) SELECT ?1, ?2, ?3, 0, 0, ?4
            WHERE EXISTS (SELECT 1 FROM users WHERE name = ?2) RETURNING id
            """,
            [.text(image.id), .text(image.owner), .text(image.contentType), .integer(Int(image.createdAt))])
        guard !inserted.isEmpty else { throw StoreError(.notFound, "no user named \(image.owner)") }
    }

    package func addImageChunk(imageID: String, index: Int, bytes: ByteBuffer) async throws(StoreError) {
        _ = try await run("INSERT INTO image_chunks (image_id, seq, data) VALUES (?, ?, ?)", [.text(imageID), .integer(index), .blob(bytes)])
    }

    package func completeImage(id: String, size: Int, entityTag: String, digest: String) async throws(StoreError) {
        let updated = try await run(
            "UPDATE images SET size = ?, etag = ?, digest = ?, complete = 1 WHERE id = ? RETURNING id",
            [.integer(size), .text(entityTag), .text(digest), .text(id)])
        guard !updated.isEmpty else { throw StoreError(.notFound, "no image \(id)") }
    }

    package func image(id: String) async throws(StoreError) -> ImageRecord? {
        try await run("SELECT * FROM images WHERE id = ?", [.text(id)]).first.flatMap(Self.image(from:))
    }

    package func imageBytes(id: String) async throws(StoreError) -> (ImageRecord, ByteBuffer)? {
        let rows = try await run(
            "SELECT images.*, image_chunks.data FROM images JOIN image_chunks ON image_chunks.image_id = images.id WHERE images.id = ? AND complete = 1 ORDER BY seq",
            [.text(id)])
        guard let first = rows.first, let image = Self.image(from: first) else { return nil }
        var bytes = ByteBufferAllocator().buffer(capacity: image.size)
        for row in rows {
            guard case .blob(var chunk) = row.column("data") else { return nil }
            bytes.writeBuffer(&chunk)
        }
        return (image, bytes)
    }

    package func images(owner: String) async throws(StoreError) -> [ImageRecord] {
        try await run("SELECT * FROM images WHERE owner = ? ORDER BY created_at DESC, id", [.text(owner)]).compactMap(Self.image(from:))
    }

    package func deleteImage(id: String, owner: String?) async throws(StoreError) -> Bool {
        !(try await run("DELETE FROM images WHERE id = ? AND (?2 IS NULL OR owner = ?2) RETURNING id", [.text(id), owner.map { .text($0) } ?? .null]))
            .isEmpty
    }

    package func deleteUnusedImages(unreferencedBefore: Int64, incompleteBefore: Int64, limit: Int) async throws(StoreError) -> Int {
        try await run(
            """
            DELETE FROM images WHERE id IN (
                SELECT id FROM images WHERE (complete = 1 AND created_at < ?1 OR complete = 0 AND created_at < ?2)
                AND NOT EXISTS (SELECT 1 FROM notifications WHERE notifications.resource = images.id) ORDER BY created_at LIMIT ?3
            ) RETURNING id
            """,
            [.integer(Int(unreferencedBefore)), .integer(Int(incompleteBefore)), .integer(limit)]
        ).count
    }

    private static func image(from row: SQLiteRow) -> ImageRecord? {
        guard let id = row.column("id")?.string, let owner = row.column("owner")?.string,
            let contentType = row.column("content_type")?.string, let size = row.column("size")?.integer,
            let complete = row.column("complete")?.integer, let created = row.column("created_at")?.integer
        else { return nil }
        return ImageRecord(
            id: id, owner: owner, contentType: contentType, size: size, entityTag: row.column("etag")?.string,
            digest: row.column("digest")?.string, complete: complete == 1, createdAt: Int64(created))
    }

    // MARK: Registrations

    package func registration(id: String) async throws(StoreError) -> RegistrationRecord? {
        try await run("SELECT id, owner, device_token, platform, installation_id, updated_at FROM registrations WHERE id = ?", [.text(id)])
            .first.flatMap(Self.registration(from:))
    }

    package func registration(deviceToken: String) async throws(StoreError) -> RegistrationRecord? {
        try await run(
            "SELECT id, owner, device_token, platform, installation_id, updated_at FROM registrations WHERE device_token = ?", [.text(deviceToken)]
        )
        .first.flatMap(Self.registration(from:))
    }

    package func saveRegistration(_ registration: RegistrationRecord, maximumPerOwner: Int) async throws(StoreError) -> Bool {
        // One statement on the one connection: nothing runs between the count and the insert.
        !(try await run(
            """
            INSERT INTO registrations (id, owner, device_token, platform, installation_id, updated_at)
            SELECT ?, ?, ?, ?, ?, ? WHERE (SELECT count(*) FROM registrations WHERE owner = ? AND device_token <> ?) < ?
            ON CONFLICT (device_token) DO UPDATE SET
                id = excluded.id, owner = excluded.owner, platform = excluded.platform, installation_id = excluded.installation_id,
                updated_at = excluded.updated_at
            RETURNING id
            """,
            [
                .text(registration.id), .text(registration.owner), .text(registration.deviceToken), .text(registration.platform.rawValue),
                .text(registration.installationID), .integer(Int(registration.updatedAt)), .text(registration.owner),
                .text(registration.deviceToken), .integer(maximumPerOwner),
            ])).isEmpty
    }

    package func deleteRegistration(id: String, owner: String) async throws(StoreError) -> Bool {
        !(try await run("DELETE FROM registrations WHERE id = ? AND owner = ? RETURNING id", [.text(id), .text(owner)])).isEmpty
    }

    package func registrations(owner: String) async throws(StoreError) -> [RegistrationRecord] {
        try await run(
            "SELECT id, owner, device_token, platform, installation_id, updated_at FROM registrations WHERE owner = ? ORDER BY updated_at, id",
            [.text(owner)]
        ).compactMap(Self.registration(from:))
    }

    private static func registration(from row: SQLiteRow) -> RegistrationRecord? {
        guard let id = row.column("id")?.string, let owner = row.column("owner")?.string,
            let token = row.column("device_token")?.string, let installationID = row.column("installation_id")?.string,
            let platform = row.column("platform")?.string.flatMap(Installation.Platform.init(rawValue:)),
            let updated = row.column("updated_at")?.integer
        else { return nil }
        return RegistrationRecord(
            id: id, owner: owner, deviceToken: token, platform: platform, installationID: installationID, updatedAt: Int64(updated))
    }

    // MARK: Live Activities

    package func saveActivity(_ activity: ActivityRecord) async throws(StoreError) {
        _ = try await run(
            """
            INSERT INTO activities (id, owner, kind, token, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (token) DO UPDATE SET id = excluded.id, owner = excluded.owner, kind = excluded.kind, updated_at = excluded.updated_at
            """,
            [.text(activity.id), .text(activity.owner), .text(activity.kind.rawValue), .text(activity.token), .integer(Int(activity.updatedAt))])
    }

    package func activity(id: String) async throws(StoreError) -> ActivityRecord? {
        guard let row = try await run("SELECT id, owner, kind, token, updated_at FROM activities WHERE id = ?", [.text(id)]).first,
            let owner = row.column("owner")?.string, let kind = row.column("kind")?.string.flatMap(ActivityRecord.Kind.init(rawValue:)),
            let token = row.column("token")?.string, let updated = row.column("updated_at")?.integer
        else { return nil }
        return ActivityRecord(id: id, owner: owner, kind: kind, token: token, updatedAt: Int64(updated))
    }

    package func activityCount(owner: String) async throws(StoreError) -> Int {
        try await run("SELECT count(*) AS n FROM activities WHERE owner = ?", [.text(owner)]).first?.column("n")?.integer ?? 0
    }

    package func deleteActivity(id: String, owner: String?) async throws(StoreError) -> Bool {
        let rows =
            if let owner {
                try await run("DELETE FROM activities WHERE id = ? AND owner = ? RETURNING id", [.text(id), .text(owner)])
            } else {
                try await run("DELETE FROM activities WHERE id = ? RETURNING id", [.text(id)])
            }
        return !rows.isEmpty
    }

    package func addChannel(_ channel: ChannelRecord) async throws(StoreError) {
        _ = try await run(
            "INSERT INTO channels (id, apns_channel_id, creator, storage_policy, created_at) VALUES (?, ?, ?, ?, ?)",
            [
                .text(channel.id), .text(channel.apnsChannelID), .text(channel.creator), .integer(channel.storagePolicy),
                .integer(Int(channel.createdAt)),
            ])
    }

    package func channel(id: String) async throws(StoreError) -> ChannelRecord? {
        guard
            let row = try await run("SELECT id, apns_channel_id, creator, storage_policy, created_at FROM channels WHERE id = ?", [.text(id)])
                .first,
            let apnsID = row.column("apns_channel_id")?.string, let creator = row.column("creator")?.string,
            let policy = row.column("storage_policy")?.integer, let created = row.column("created_at")?.integer
        else { return nil }
        return ChannelRecord(id: id, apnsChannelID: apnsID, creator: creator, storagePolicy: policy, createdAt: Int64(created))
    }

    package func deleteChannel(id: String) async throws(StoreError) -> Bool {
        !(try await run("DELETE FROM channels WHERE id = ? RETURNING id", [.text(id)])).isEmpty
    }

    // MARK: Notifications

    package func addNotification(_ notification: NotificationRecord) async throws(StoreError) {
        try await insert(notification, queuing: nil)
    }

    package func addNotification(_ notification: NotificationRecord, queuing push: QueuedPush) async throws(StoreError) {
        try await insert(notification, queuing: push)
    }

    private func insert(_ notification: NotificationRecord, queuing push: QueuedPush?) async throws(StoreError) {
        var binds: [SQLiteData] = [.text(notification.id), .text(notification.sender), .text(notification.recipient), .text(notification.kind)]
        switch notification.content {
        case .rich(let richType, let resource, let message):
            binds += [.text(richType), .text(resource), .text(message), .null]
        case .secure(let payload):
            binds += [.null, .null, .null, .text(payload)]
        }
        binds += [
            .integer(Int(notification.createdAt)), notification.readAt.map { .integer(Int($0)) } ?? .null,
            notification.sendAt.map { .integer(Int($0)) } ?? .null, notification.hubMessageID.map { .text($0) } ?? .null,
            notification.delivery.map { .text($0) } ?? .null,
        ]
        if let push {
            binds += [
                .text(DeliveryState.queued.rawValue), .integer(Int(notification.sendAt ?? notification.createdAt)), .integer(Int(push.deadline)),
                .text(push.kind.rawValue), .text(push.message), push.traceText.map { .text($0) } ?? .null,
            ]
        } else {
            binds += [.null, .null, .null, .null, .null, .null]
        }
        let inserted = try await run(
            """
            INSERT INTO notifications
                (id, sender, recipient, kind, rich_type, resource, message, payload, created_at, read_at, send_at, hub_message_id, delivery,
                 delivery_state, due_at, deadline, push_kind, push_message, trace_context)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id
            """, binds)
        guard !inserted.isEmpty else { throw StoreError(.conflict, "a notification with this id exists") }
    }

    package func userAndNotification(named name: String, id: String, visibleAt: Int64) async throws(StoreError) -> (UserRecord, NotificationRecord?)?
    {
        let rows = try await run(
            """
            SELECT users.name AS user_name, users.password_hash, users.role, notifications.*
            FROM users LEFT JOIN notifications
                ON notifications.id = ? AND notifications.recipient = users.name
                AND (notifications.send_at IS NULL OR notifications.send_at <= ?)
            WHERE users.name = ?
            """,
            [.text(id), .integer(Int(visibleAt)), .text(name)])
        guard let row = rows.first, let userName = row.column("user_name")?.string, let hash = row.column("password_hash")?.string,
            let role = row.column("role")?.string.flatMap(UserRole.init(rawValue:))
        else { return nil }
        return (UserRecord(name: userName, passwordHash: hash, role: role), Self.notification(from: row))
    }

    package func markRead(id: String, at time: Int64) async throws(StoreError) {
        _ = try await run("UPDATE notifications SET read_at = ? WHERE id = ? AND read_at IS NULL", [.integer(Int(time)), .text(id)])
    }

    package func notifications(recipient: String, visibleAt: Int64, limit: Int) async throws(StoreError) -> [NotificationRecord] {
        try await run(
            """
            SELECT * FROM notifications WHERE recipient = ? AND (send_at IS NULL OR send_at <= ?)
            ORDER BY created_at DESC, rowid DESC LIMIT ?
            """,
            [.text(recipient), .integer(Int(visibleAt)), .integer(limit)]
        ).compactMap(Self.notification(from:))
    }

    package func notifications(sender: String, limit: Int) async throws(StoreError) -> [NotificationRecord] {
        try await run("SELECT * FROM notifications WHERE sender = ? ORDER BY created_at DESC, rowid DESC LIMIT ?", [.text(sender), .integer(limit)])
            .compactMap(Self.notification(from:))
    }

    package func recordDelivery(id: String, hubMessageID: String?, outcome: String?) async throws(StoreError) {
        _ = try await run(
            "UPDATE notifications SET hub_message_id = coalesce(?, hub_message_id), delivery = coalesce(?, delivery) WHERE id = ?",
            [hubMessageID.map { .text($0) } ?? .null, outcome.map { .text($0) } ?? .null, .text(id)])
    }

    package func deleteNotification(id: String) async throws(StoreError) {
        _ = try await run("DELETE FROM notifications WHERE id = ?", [.text(id)])
    }

    package func deleteNotifications(pastBefore time: Int64, limit: Int) async throws(StoreError) -> Int {
        try await run(
            """
            DELETE FROM notifications WHERE id IN (
                SELECT id FROM notifications WHERE created_at < ? AND (send_at IS NULL OR send_at < ?) ORDER BY created_at LIMIT ?
            ) RETURNING id
            """,
            [.integer(Int(time)), .integer(Int(time)), .integer(limit)]
        ).count
    }

    private static func notification(from row: SQLiteRow) -> NotificationRecord? {
        guard let id = row.column("id")?.string, let sender = row.column("sender")?.string,
            let recipient = row.column("recipient")?.string, let created = row.column("created_at")?.integer
        else { return nil }
        let content: NotificationRecord.Content
        switch row.column("kind")?.string {
        case "rich":
            guard let richType = row.column("rich_type")?.string, let resource = row.column("resource")?.string,
                let message = row.column("message")?.string
            else { return nil }
            content = .rich(richType: richType, resource: resource, message: message)
        case "secure":
            guard let payload = row.column("payload")?.string else { return nil }
            content = .secure(payload: payload)
        default:
            return nil
        }
        return NotificationRecord(
            id: id, sender: sender, recipient: recipient, content: content, createdAt: Int64(created),
            readAt: row.column("read_at")?.integer.map(Int64.init), sendAt: row.column("send_at")?.integer.map(Int64.init),
            hubMessageID: row.column("hub_message_id")?.string, delivery: row.column("delivery")?.string)
    }

    // MARK: Plumbing

    private func run(_ sql: String, _ binds: [SQLiteData] = []) async throws(StoreError) -> [SQLiteRow] {
        do {
            return try await connection.query(sql, binds)
        } catch let error as SQLiteError where "\(error.reason)".hasPrefix("constraint") {
            throw StoreError(.conflict, error.message)
        } catch {
            throw StoreError(.storage, "\(error)")
        }
    }

    /// Creates the database file with mode 0600 before SQLite does (SQLite gives the `-wal` and
    /// `-shm` files the database's mode), and takes group and other access from files already there.
    /// None of them may be a symbolic link.
    private static func restrictFiles(_ path: String) throws(StoreError) {
        for (file, create) in [(path, true), (path + "-wal", false), (path + "-shm", false)] {
            switch makePrivate(file, create: create) {
            case nil, ENOENT?: continue
            case ELOOP?: throw StoreError(.unavailable, "\(file) is a symbolic link; the store opens only files of its own")
            case let number?: throw StoreError(.unavailable, "cannot make \(file) private (mode 0600): \(String(cString: strerror(number)))")
            }
        }
    }

    private static func createDirectory(_ path: String) throws(StoreError) {
        guard !path.isEmpty else { throw StoreError(.unavailable, "the data directory is an empty path") }
        if mkdir(path, 0o700) == 0 || errno == EEXIST {
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw StoreError(.unavailable, "\(path) is not a directory")
            }
            return
        }
        throw StoreError(.unavailable, "cannot create the data directory \(path): \(String(cString: strerror(errno)))")
    }
}

/// Gives `path` mode 0600, creating it first when asked; errno on failure (`ELOOP` for a symbolic
/// link, which is never followed). (Out here, `open` and `close` are the system's, not the store's.)
private func makePrivate(_ path: String, create: Bool) -> Int32? {
    let descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0o600)
    guard descriptor >= 0 else { return errno }
    defer { close(descriptor) }
    return fchmod(descriptor, 0o600) == 0 ? nil : errno
}

/// Milliseconds since 1970, the store's timestamps.
func unixMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
