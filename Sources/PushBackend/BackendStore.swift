import Crypto
package import NIOCore
package import NotificationHubs
import PushInternals

/// What the backend keeps: users, device registrations and notifications. SQLite by default
/// (``SQLiteBackendStore``); another engine implements this protocol.
///
/// Every method is one atomic step (one statement in SQLite), so concurrent requests never see
/// or leave half an operation, and no transaction spans an `await`.
package protocol BackendStore: DeliveryQueueStore {
    /// Adds a user; `conflict` when the name is taken.
    func addUser(_ user: UserRecord) async throws(StoreError)
    func user(named name: String) async throws(StoreError) -> UserRecord?
    func users() async throws(StoreError) -> [UserRecord]
    /// Whether there was such a user. Their notifications, registrations and API keys go with them.
    func removeUser(named name: String) async throws(StoreError) -> Bool

    /// Adds an API key of an existing user; `notFound` when there is no such user.
    func addAPIKey(_ key: APIKeyRecord) async throws(StoreError)
    /// The key of this id, its owner and the owner's notification `id` (as
    /// ``userAndNotification(named:id:visibleAt:)`` reads it), in one round trip: what a request
    /// signed with an API key reads.
    func apiKeyOwnerAndNotification(
        keyID: String, id: String, visibleAt: Int64
    ) async throws(StoreError)
        -> (APIKeyRecord, UserRecord, NotificationRecord?)?
    /// Every key, by owner, then by age.
    func apiKeys() async throws(StoreError) -> [APIKeyRecord]
    /// Whether there was such a key; it stops working on the next request.
    func removeAPIKey(id: String) async throws(StoreError) -> Bool

    func registration(id: String) async throws(StoreError) -> RegistrationRecord?
    func registration(deviceToken: String) async throws(StoreError) -> RegistrationRecord?
    /// Creates the registration of its device token, or replaces the one there was (a device token
    /// names one device: the row takes the new id, owner and installation), unless the owner holds
    /// `maximumPerOwner` registrations of other tokens already. Counting and saving are one step,
    /// across instances too: concurrent registrations cannot pass the cap together.
    /// - Returns: False when the owner was at the cap and nothing was saved.
    func saveRegistration(_ registration: RegistrationRecord, maximumPerOwner: Int) async throws(StoreError) -> Bool
    /// Whether the owner had a registration with this id.
    func deleteRegistration(id: String, owner: String) async throws(StoreError) -> Bool
    /// The user's registrations, oldest first: the devices a send goes to.
    func registrations(owner: String) async throws(StoreError) -> [RegistrationRecord]

    /// Creates the record of its token, or replaces the one there was (as for registrations).
    func saveActivity(_ activity: ActivityRecord) async throws(StoreError)
    func activity(id: String) async throws(StoreError) -> ActivityRecord?
    /// How many activity tokens the user has.
    func activityCount(owner: String) async throws(StoreError) -> Int
    /// Whether there was such an activity token; `owner` nil for any owner's.
    func deleteActivity(id: String, owner: String?) async throws(StoreError) -> Bool

    /// `conflict` when the id or the APNs channel id is taken.
    func addChannel(_ channel: ChannelRecord) async throws(StoreError)
    func channel(id: String) async throws(StoreError) -> ChannelRecord?
    func deleteChannel(id: String) async throws(StoreError) -> Bool

    /// `conflict` when the id is taken (ids are random; it means a broken generator).
    func addNotification(_ notification: NotificationRecord) async throws(StoreError)
    /// The user named `name` and, when it is addressed to them and visible at `visibleAt`, the
    /// notification `id`, in one round trip: an authenticated fetch checks the caller's current
    /// password hash and reads the row together.
    func userAndNotification(named name: String, id: String, visibleAt: Int64) async throws(StoreError) -> (UserRecord, NotificationRecord?)?
    /// Sets the read time unless already set.
    func markRead(id: String, at time: Int64) async throws(StoreError)
    /// The recipient's notifications, newest first; those scheduled for later than `visibleAt` are left out.
    func notifications(recipient: String, visibleAt: Int64, limit: Int) async throws(StoreError) -> [NotificationRecord]
    /// The notifications `sender` sent, newest first, scheduled ones included.
    func notifications(sender: String, limit: Int) async throws(StoreError) -> [NotificationRecord]
    /// Keeps what the hub said of a notification's push: its id for the send (once sent), and its
    /// final outcome (once the hub has one).
    func recordDelivery(id: String, hubMessageID: String?, outcome: String?) async throws(StoreError)
    func deleteNotification(id: String) async throws(StoreError)
    /// Deletes at most `limit` of the notifications past by `time`, oldest first; how many it
    /// deleted. A notification is past when it was created and, when scheduled, its send time came
    /// before `time`: a scheduled one is kept until its retention runs from the time it is sent.
    /// Callers delete a backlog in batches, so that no statement holds the database long.
    func deleteNotifications(pastBefore time: Int64, limit: Int) async throws(StoreError) -> Int

    /// An uploaded image's row, before its first chunk: not complete, not served, not listed.
    func addImage(_ image: ImageRecord) async throws(StoreError)
    /// The image's next chunk of bytes (`index` from 0, in order).
    func addImageChunk(imageID: String, index: Int, bytes: ByteBuffer) async throws(StoreError)
    /// Marks an upload complete, with its size and digests: from now on it is served and listed.
    func completeImage(id: String, size: Int, entityTag: String, digest: String) async throws(StoreError)
    /// The image's row, complete or not.
    func image(id: String) async throws(StoreError) -> ImageRecord?
    /// A complete image's row and its bytes in one buffer, in one round trip.
    func imageBytes(id: String) async throws(StoreError) -> (ImageRecord, ByteBuffer)?
    /// The owner's images, complete and uploading, newest first.
    func images(owner: String) async throws(StoreError) -> [ImageRecord]
    /// Whether there was such an image (its chunks go with it); `owner` nil for any owner's.
    func deleteImage(id: String, owner: String?) async throws(StoreError) -> Bool
    /// Deletes at most `limit` images that no notification names: complete ones created before
    /// `unreferencedBefore`, uploads that never completed started before `incompleteBefore`.
    func deleteUnusedImages(unreferencedBefore: Int64, incompleteBefore: Int64, limit: Int) async throws(StoreError) -> Int

    /// Whether the database answers now: `GET /ready` asks. The default reads a user no name
    /// can match, one round trip through the engine.
    func checkAvailable() async throws(StoreError)

    func close() async
}

extension BackendStore {
    /// Saves `registration` with no cap on its owner's registrations.
    package func saveRegistration(_ registration: RegistrationRecord) async throws(StoreError) {
        _ = try await saveRegistration(registration, maximumPerOwner: .max)
    }

    package func checkAvailable() async throws(StoreError) {
        _ = try await user(named: "")
    }

    /// The key of this id and its owner, in one round trip (no notification id matches `""`).
    package func apiKeyOwner(id: String) async throws(StoreError) -> (APIKeyRecord, UserRecord)? {
        try await apiKeyOwnerAndNotification(keyID: id, id: "", visibleAt: 0).map { ($0.0, $0.1) }
    }
}

package enum UserRole: String, Sendable, Hashable, CaseIterable {
    /// Notifies themselves only.
    case user
    /// May notify anybody.
    case sender
}

/// A credential a user gives a service (a sending service, a script): it authenticates as its
/// owner, with the owner's role and budgets. The secret is kept only as its SHA-256: a key holds
/// 256 random bits, which no guessing reaches, so a slow hash would buy nothing.
package struct APIKeyRecord: Sendable, Hashable {
    /// 16 lowercase hex digits: the part of the key that names it, safe to show.
    package let id: String
    package let owner: String
    /// The SHA-256 of the secret part, in lowercase hex.
    package let secretHash: String
    /// Unix milliseconds.
    package let createdAt: Int64

    package init(id: String, owner: String, secretHash: String, createdAt: Int64) {
        self.id = id
        self.owner = owner
        self.secretHash = secretHash
        self.createdAt = createdAt
    }
}

/// An image a user uploaded, for rich notifications; its bytes are kept in chunks beside it.
package struct ImageRecord: Sendable, Hashable {
    package let id: String
    package let owner: String
    package let contentType: String
    /// Its length in bytes, once complete.
    package var size: Int
    /// The strong entity tag (XXH3-128, as the embedded images'), once complete.
    package var entityTag: String?
    /// Its `Repr-Digest`, `sha-256=:…:`, once complete.
    package var digest: String?
    package var complete: Bool
    package let createdAt: Int64

    package init(
        id: String, owner: String, contentType: String, size: Int = 0, entityTag: String? = nil, digest: String? = nil,
        complete: Bool = false, createdAt: Int64
    ) {
        self.id = id
        self.owner = owner
        self.contentType = contentType
        self.size = size
        self.entityTag = entityTag
        self.digest = digest
        self.complete = complete
        self.createdAt = createdAt
    }
}

package struct UserRecord: Sendable, Hashable {
    package let name: String
    package var passwordHash: String
    package var role: UserRole

    package init(name: String, passwordHash: String, role: UserRole) {
        self.name = name
        self.passwordHash = passwordHash
        self.role = role
    }

    /// The hash of a user who has no password (made for an API key or by an identity token): it
    /// parses as no hash, so no Basic password matches it.
    package static let noPassword = "!"

    /// 1 to 64 of `A-Z a-z 0-9 . _ -`: the name goes into the tag `username:{name}` and into
    /// Basic credentials, where `:` would end it.
    package static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}

/// A device token, who owns it, and the hub installation that carries it.
package struct RegistrationRecord: Sendable, Hashable {
    /// Random per registration: what the owner deletes it by. Registering the token again gives a new one.
    package let id: String
    package var owner: String
    /// An APNs device token (lowercase hex) or an FCM registration token, as `platform` says.
    package var deviceToken: String
    package var platform: Installation.Platform
    /// The hub installation's id, derived from the token (``installationID(deviceToken:platform:)``)
    /// so that any number of registrations of one device, however they interleave, address one installation.
    package var installationID: String
    package var updatedAt: Int64

    package init(
        id: String, owner: String, deviceToken: String, platform: Installation.Platform = .apns, installationID: String, updatedAt: Int64
    ) {
        self.id = id
        self.owner = owner
        self.deviceToken = deviceToken
        self.platform = platform
        self.installationID = installationID
        self.updatedAt = updatedAt
    }

    /// The platform's name, `-`, and the first 16 bytes of SHA-256 of the token in hex: `apns-…`
    /// (of the token lowercased: APNs tokens are hex) or `fcmv1-…` (FCM tokens are case-sensitive).
    package static func installationID(deviceToken: String, platform: Installation.Platform = .apns) -> String {
        let token = platform == .apns ? deviceToken.lowercased() : deviceToken
        return "\(platform.rawValue)-"
            + Hex.lowercase(Array(SHA256.hash(data: Array(token.utf8))).prefix(16))
    }
}

/// A Live Activity push token a device gave the server: a push-to-start token (one per app on
/// the device, to start activities) or one activity's own token (to update and end it).
package struct ActivityRecord: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        case pushToStart
        case activity
    }

    /// Random per registration of the token, as for device registrations.
    package let id: String
    package var owner: String
    package var kind: Kind
    package var token: String
    package var updatedAt: Int64

    package init(id: String, owner: String, kind: Kind, token: String, updatedAt: Int64) {
        self.id = id
        self.owner = owner
        self.kind = kind
        self.token = token
        self.updatedAt = updatedAt
    }
}

/// A broadcast channel the server created on APNs, under an id of its own (APNs' ids are
/// base64, which does not fit a URL path).
package struct ChannelRecord: Sendable, Hashable {
    package let id: String
    /// `apns-channel-id`: what devices subscribe to through ActivityKit.
    package let apnsChannelID: String
    package let creator: String
    /// 0 (no storage) or 1 (the most recent message).
    package let storagePolicy: Int
    package let createdAt: Int64

    package init(id: String, apnsChannelID: String, creator: String, storagePolicy: Int, createdAt: Int64) {
        self.id = id
        self.apnsChannelID = apnsChannelID
        self.creator = creator
        self.storagePolicy = storagePolicy
        self.createdAt = createdAt
    }
}

package struct NotificationRecord: Sendable, Hashable {
    package enum Content: Sendable, Hashable {
        /// An embedded image, named in the registry, with the text shown beside it.
        case rich(richType: String, resource: String, message: String)
        /// Text that never travels through Apple or Azure.
        case secure(payload: String)
    }

    package let id: String
    package let sender: String
    package let recipient: String
    package let content: Content
    package let createdAt: Int64
    package var readAt: Int64?
    /// When its push is scheduled to go, in Unix milliseconds; nil when it went at `createdAt`.
    /// The recipient sees it from then on.
    package var sendAt: Int64?
    /// The hub's id for the send, to ask what became of it.
    package var hubMessageID: String?
    /// The hub's final word on the send, as the list shows it (JSON).
    package var delivery: String?

    package init(
        id: String, sender: String, recipient: String, content: Content, createdAt: Int64, readAt: Int64? = nil, sendAt: Int64? = nil,
        hubMessageID: String? = nil, delivery: String? = nil
    ) {
        self.id = id
        self.sender = sender
        self.recipient = recipient
        self.content = content
        self.createdAt = createdAt
        self.readAt = readAt
        self.sendAt = sendAt
        self.hubMessageID = hubMessageID
        self.delivery = delivery
    }

    package var kind: String {
        switch content {
        case .rich: "rich"
        case .secure: "secure"
        }
    }
}
