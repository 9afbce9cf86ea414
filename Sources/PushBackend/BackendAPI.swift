package import APNs
import Crypto
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
package import Metrics
package import NIOCore
import NotificationHubs
package import PushCore
import PushFCM
import PushInternals
import Tracing

#if canImport(FoundationEssentials)
import struct FoundationEssentials.Data
import struct FoundationEssentials.Date
#else
import struct Foundation.Data
import struct Foundation.Date
#endif

/// APNs straight from the backend: the client, the app's bundle ID, and the Live Activity types
/// pushes must decode into; and a client of the other environment, with the same key, for a
/// second opinion on the tokens this one calls bad.
package struct DirectAPNs: Sendable {
    let client: APNsClient
    let otherEnvironment: APNsClient?
    let topic: String
    let liveActivity: APNsLiveActivitySchema?
    let policy = APNsTokenPolicy()

    package init(client: APNsClient, otherEnvironment: APNsClient?, topic: String, liveActivity: APNsLiveActivitySchema?) {
        self.client = client
        self.otherEnvironment = otherEnvironment
        self.topic = topic
        self.liveActivity = liveActivity
    }

    /// What asks the other environment about a token: a background push with no content, so
    /// that a device of that environment is woken at most, and shown nothing.
    static let probe = APNsPayload(aps: APNsAPS(contentAvailable: true))

    /// The other environment's answers for the tokens this one called `BadDeviceToken`, by index
    /// into `results`; empty without a client of the other environment, or when it could not be
    /// asked (a token without an answer is then kept).
    func secondOpinions(on results: [APNsSendResult]) async -> [Int: APNsSendResult] {
        guard let otherEnvironment else { return [:] }
        let suspects = results.indices.filter {
            if case .rejected(_, .badDeviceToken, _) = results[$0].outcome { true } else { false }
        }
        guard !suspects.isEmpty else { return [:] }
        let headers = APNsHeaders(for: Self.probe, topic: topic)
        guard let answers = try? await otherEnvironment.send(Self.probe, headers: headers, to: suspects.map { results[$0].deviceToken }) else {
            return [:]
        }
        return Dictionary(uniqueKeysWithValues: zip(suspects, answers))
    }
}

/// The HTTP API's routes and the two flows behind them.
///
/// Routes (all behind HTTP Basic):
/// - `POST /api/register` `{"deviceToken": "hex"}` → `201 {"id": "…"}`: a fresh registration id, whether
///   the token was known or not; the device's one installation now carries the caller's tag.
/// - `DELETE /api/register/{id}` → `204`; only the owner's.
/// - `POST /api/notifications` (rich or secure, see ``NotificationRequest``) → `201 {"id": "…"}`.
/// - `GET /api/notifications` → `{"notifications": [...]}`, newest first (`?limit=`, 1–1000, default 100).
/// - `GET|HEAD /api/notifications/{id}` → the image (ranges, ETag) or `{"Payload": "…"}`.
/// - `PUT /api/notifications/{id}/read` → `204`: the user has seen it (fetching does not say so:
///   an extension fetches before anyone looks).
/// - Live Activities and broadcast channels, with APNs delivery: see `BackendAPI+LiveActivities.swift`.
///
/// Another method on these paths, whichever, is answered 405 with `Allow`, before authentication.
/// `BackendRouter.swift` adds the routes, a controller per resource.
package struct BackendAPI: Sendable {
    package typealias Context = BackendRequestContext

    static let maximumRequestBody = 64 << 10

    let store: any BackendStore
    let authenticator: Authenticator
    let delivery: any PushDeliverer
    let images: ResourceRegistry
    let defaultImage: String
    let metrics: BackendMetrics
    /// Registrations of one device token, one at a time in this process: each stores its row and
    /// brings the hub in line before the next starts, so the hub's writes keep the rows' order.
    private let registrations = KeyedSerializer<String>()
    /// Notifications each user may create: a burst, then a steady rate; one per device reached.
    private let sendBudget: RateLimiter<String>
    let registrationLimits: RegistrationLimits
    /// Registrations of devices and activity tokens each user may make.
    let registrationBudget: RateLimiter<String>
    /// Each embedded image as it is served, made once.
    private let servedImages: [String: ServedImage]
    /// What users may upload.
    let imageLimits: ImageLimits
    /// Uploaded images as they are served, read from the store once while they are in use.
    let uploadedImages: UploadedImageCache

    /// An image as every response serves it: embedded, or uploaded.
    package struct ServedImage: Sendable {
        /// The image's bytes in one buffer that every response shares: a response, or a range of
        /// one, is a slice of it, so no response copies the image and its body is one write. (The
        /// embedded images are compiled in and small; this second copy of each is made once.)
        package let bytes: ByteBuffer
        package let entityTag: EntityTag
        package let contentType: ContentType
        /// The `Repr-Digest` (RFC 9530): the SHA-256 a phone can check the whole image against,
        /// however many ranges it arrived in.
        package let digest: String

        package init(bytes: ByteBuffer, entityTag: EntityTag, contentType: ContentType, digest: String) {
            self.bytes = bytes
            self.entityTag = entityTag
            self.contentType = contentType
            self.digest = digest
        }
    }

    package init(
        store: any BackendStore, authenticator: Authenticator, delivery: any PushDeliverer, images: ResourceRegistry, defaultImage: String,
        sendQuota: RateLimit, registrationLimits: RegistrationLimits = RegistrationLimits(), imageLimits: ImageLimits = ImageLimits(),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.imageLimits = imageLimits
        uploadedImages = UploadedImageCache(capacity: imageLimits.cacheBytes)
        self.registrationLimits = registrationLimits
        registrationBudget = RateLimiter(registrationLimits.rate)
        self.store = store
        metrics = BackendMetrics(factory: metricsFactory)
        self.authenticator = authenticator
        self.delivery = delivery
        self.images = images
        self.defaultImage = defaultImage
        sendBudget = RateLimiter(sendQuota)
        var served: [String: ServedImage] = [:]
        for name in images.names {
            guard let resource = try? images.resource(named: name) else { continue }
            served[name] = ServedImage(
                bytes: ByteBuffer(bytes: resource.bytes), entityTag: resource.entityTag, contentType: resource.contentType,
                digest: "sha-256=:\(Base64.encodedString(SHA256.hash(data: resource.bytes))):")
        }
        servedImages = served
    }

    // MARK: Registration

    func register(_ body: JSONValue, caller: Authenticator.User) async throws -> Response {
        try RequestBody.allowKeys(["deviceToken", "platform"], in: body)
        let platformName = try RequestBody.optionalString("platform", in: body) ?? Installation.Platform.apns.rawValue
        guard let platform = Installation.Platform(rawValue: platformName) else {
            throw APIError.badRequest(.invalidField, "platform must be apns (an Apple device) or fcmv1 (an Android device)")
        }
        var deviceToken = try RequestBody.string("deviceToken", in: body)
        switch platform {
        case .apns:
            deviceToken = deviceToken.lowercased()
            guard Self.isAPNsToken(deviceToken) else {
                throw APIError.badRequest(.invalidDeviceToken, "deviceToken must be an APNs device token in hex (64 to 200 digits)")
            }
        case .fcmv1:
            guard (try? platform.validateDeviceHandle(deviceToken)) != nil else {
                throw APIError.badRequest(
                    .invalidDeviceToken, "deviceToken must be an FCM registration token (16 to 4096 of A-Z a-z 0-9 - _ :)")
            }
        }
        let installationID = RegistrationRecord.installationID(deviceToken: deviceToken, platform: platform)
        try takeRegistrationBudget(caller)
        // A device token names one device: registering it again (as whoever is signed in on it now)
        // moves it to the caller. The row is decided first; the installation then follows the row.
        let registration = RegistrationRecord(
            id: randomHex(bytes: 16), owner: caller.name, deviceToken: deviceToken, platform: platform, installationID: installationID,
            updatedAt: unixMilliseconds())
        try await registrations.run(deviceToken) {
            let previous = try await store.registration(deviceToken: deviceToken)
            guard try await store.saveRegistration(registration, maximumPerOwner: registrationLimits.maximumDevices) else {
                throw APIError(
                    status: 409, code: .tooManyDevices,
                    "at most \(registrationLimits.maximumDevices) devices per user; unregister one first")
            }
            try await delivery.registrationChanged(deviceToken: deviceToken, platform: platform, replacing: previous)
        }
        // The same answer whether the token was known: a new id, 201; and whether pushes reach it.
        var members = [
            JSONMember("id", .string(registration.id)), JSONMember("platform", .string(platform.rawValue)),
            JSONMember("reachable", .bool(delivery.reaches(platform))),
        ]
        if !delivery.reaches(platform) {
            members.append(
                JSONMember(
                    "reason",
                    .string("this server sends straight to APNs, which reaches Apple devices only; the registration is kept for hub delivery")))
        }
        return .json(201, .object(members))
    }

    /// Device and ActivityKit push tokens as APNs takes them: whole bytes in hex, at least the 32
    /// of today's tokens (Apple may lengthen them, to at most 100 bytes here). A shorter one would
    /// be accepted here only for APNs to refuse every push to it.
    static func isAPNsToken(_ token: String) -> Bool {
        let digits = token.utf8
        return (64...200).contains(digits.count) && digits.count % 2 == 0 && digits.allSatisfy { hexDigitValue($0) <= 15 }
    }

    /// One registration of the caller's budget, or 429 with how long to wait.
    func takeRegistrationBudget(_ caller: Authenticator.User) throws(APIError) {
        if let wait = registrationBudget.take(caller.name) {
            throw APIError(
                status: 429, code: .rateLimited, "too many registrations; try again later",
                headers: [("Retry-After", String(wait.retryAfterSeconds))])
        }
    }

    func unregister(id: String, caller: Authenticator.User) async throws -> Response {
        let registration = try await store.registration(id: id)
        let deleted = registration?.owner == caller.name ? try await store.deleteRegistration(id: id, owner: caller.name) : false
        // Someone else's, or registered again (under a new id) since it was read.
        guard let registration, deleted else { throw APIError.notFound("no such registration") }
        try await registrations.run(registration.deviceToken) {
            try await delivery.registrationChanged(deviceToken: registration.deviceToken, platform: registration.platform, replacing: registration)
        }
        return Response(status: .noContent)
    }

    // MARK: Notifications

    func send(_ request: NotificationRequest, caller: Authenticator.User, logger: Logger) async throws -> Response {
        if let wait = sendBudget.take(caller.name) {
            throw APIError(
                status: 429, code: .rateLimited, "too many notifications; try again later",
                headers: [("Retry-After", String(wait.retryAfterSeconds))])
        }
        let recipient = request.to ?? caller.name
        if recipient != caller.name {
            guard caller.role == .sender else {
                throw APIError(status: 403, code: .forbidden, "notifying other users needs the sender role")
            }
            guard try await store.user(named: recipient) != nil else {
                throw APIError(status: 422, code: .unknownRecipient, "there is no user named \(recipient)")
            }
        }
        let sendAt = try checkedSendAt(request.sendAt)
        let id = randomHex(bytes: 16)
        let content: NotificationRecord.Content
        let kind: OutgoingPush.Kind
        var pushedMessage = ""
        var richType = ""
        switch request.content {
        case .rich(let type, let resource, let message, let alert):
            var resource = resource ?? defaultImage
            if (try? images.resource(named: resource)) == nil {
                // An image the sender uploaded, by its id.
                let uploaded = Self.notificationKey(resource).isEmpty ? nil : try await store.image(id: resource.lowercased())
                guard let uploaded, uploaded.owner == caller.name, uploaded.complete else {
                    throw APIError(
                        status: 422, code: .unknownResource,
                        "no embedded image is named \(resource) (there are \(images.names.joined(separator: ", "))), nor is it an image you uploaded")
                }
                resource = uploaded.id
            }
            // Stored alike: the alert is only how it is pushed; the app fetches the same item.
            content = .rich(richType: type, resource: resource, message: message)
            kind = alert ? .richAlert : .rich
            (richType, pushedMessage) = (type, message)
        case .secure(let secret, let placeholder):
            // Stored alike: only the placeholder travels, never the payload.
            content = .secure(payload: secret)
            kind = placeholder == nil ? .secure : .secureAlert
            pushedMessage = placeholder ?? ""
        }
        var payload = kind.apnsPayload(id: id, richType: richType, message: pushedMessage)
        // A silent push has no alert the codec could shorten, so one over APNs' limit is refused
        // here, before anything is stored or sent; an alert's text is shortened to fit (the
        // whole message is stored, for the app to show once it fetches the item).
        do throws(APNsPayloadError) {
            if payload.aps.alert == nil { _ = try payload.encoded() } else { try payload.fit() }
        } catch {
            throw APIError(status: 413, code: .payloadTooLarge, "the push would not fit: \(error.message); shorten the message")
        }
        if case .text(let shortened)? = payload.aps.alert { pushedMessage = shortened }
        let devices = try await store.registrations(owner: recipient).filter { delivery.reaches($0.platform) }
        if devices.contains(where: { $0.platform == .fcmv1 }) {
            pushedMessage = try Self.fittedForFCM(kind, id: id, richType: richType, message: pushedMessage)
        }
        // The budget counts pushes: one notification to many devices costs one per device. A
        // scheduled one reaches the devices registered when it is sent, up to the device cap, so
        // it costs the cap: otherwise sends scheduled while the recipient has no device would
        // cost nothing and reach every device registered by then.
        sendBudget.charge(caller.name, count: (sendAt == nil ? devices.count : registrationLimits.maximumDevices) - 1)
        let record = NotificationRecord(
            id: id, sender: caller.name, recipient: recipient, content: content, createdAt: unixMilliseconds(), sendAt: sendAt)
        try await store.addNotification(record)
        let push = OutgoingPush(
            kind: kind, apnsPayload: payload, properties: HubTemplates.properties(kind, id: id, richType: richType, message: pushedMessage),
            sendAt: sendAt.map { ($0 + 999) / 1000 })
        // Stored before sending: the device may ask for it as soon as the push arrives.
        let hubMessageID: String?
        do {
            hubMessageID = try await metrics.push(.notification) { try await delivery.send(push, to: recipient, devices: devices, logger: logger) }
        } catch {
            logger.notice("push not sent; notification withdrawn", metadata: ["notification": "\(id)"])
            try? await store.deleteNotification(id: id)
            throw error
        }
        if let hubMessageID {
            do { try await store.recordDelivery(id: id, hubMessageID: hubMessageID, outcome: nil) } catch {
                logger.warning("the hub's id for the send was not kept", metadata: ["notification": "\(id)", "error": "\(error)"])
            }
        }
        return .json(201, .object([JSONMember("id", .string(id))]), headers: [("Location", "/api/notifications/\(id)")])
    }

    /// Notification Hubs holds a scheduled send for at most seven days.
    static let maximumSchedule: Int64 = 7 * 24 * 3600 * 1000

    /// `sendAt` when the push is to wait: nil for a time already passed (it goes now, as a
    /// scheduler does with a time it missed); refused when the delivery cannot wait (APNs) or
    /// longer than the hub keeps a scheduled send.
    private func checkedSendAt(_ sendAt: Int64?) throws(APIError) -> Int64? {
        guard let sendAt, sendAt > unixMilliseconds() else { return nil }
        guard delivery.schedules else {
            throw APIError(
                status: 422, code: .schedulingUnavailable, "sendAt needs hub delivery; this server sends straight to APNs, which sends at once")
        }
        guard sendAt - unixMilliseconds() <= Self.maximumSchedule else {
            throw APIError(status: 422, code: .scheduleTooFar, "sendAt is at most 7 days from now: the hub keeps a scheduled send no longer")
        }
        return sendAt
    }

    /// The text an alert's template gets: the APNs-fitted one, shortened further (with `…`) when
    /// the FCM message it expands into would be over FCM's limit; for a silent push, the message
    /// itself, refused (413) when it does not fit.
    static func fittedForFCM(_ kind: OutgoingPush.Kind, id: String, richType: String, message: String) throws(APIError) -> String {
        func size(_ text: String) -> Int {
            (try? kind.fcmMessage(id: id, richType: richType, message: text).encodedSize()) ?? Int.max
        }
        var text = message
        var overflow = size(text) - FCMLimits.messageSize
        guard overflow > 0 else { return text }
        guard kind == .richAlert else {
            throw APIError(status: 413, code: .payloadTooLarge, "the push would not fit FCM's \(FCMLimits.messageSize) bytes; shorten the message")
        }
        if text.hasSuffix("…") { text.removeLast() }
        // Each round drops at least the overflow's worth of characters, escapes counted as one byte.
        while overflow > 0, !text.isEmpty {
            var dropped = 0
            while dropped < overflow + 3, let last = text.popLast() { dropped += last.utf8.count }
            overflow = size(text + "…") - FCMLimits.messageSize
        }
        return text + "…"
    }

    func list(query: String, caller: Authenticator.User) async throws -> Response {
        // Strict, as bodies are: a misspelt parameter would otherwise be silently ignored.
        var limit: Int?
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) where !query.isEmpty {
            guard pair.hasPrefix("limit="), limit == nil, let value = Int(pair.dropFirst(6)), (1...1000).contains(value) else {
                throw APIError.badRequest(.invalidQuery, "the query takes one limit, a number from 1 to 1000")
            }
            limit = value
        }
        let records = try await store.notifications(recipient: caller.name, visibleAt: unixMilliseconds(), limit: limit ?? 100)
        let deliveries = await deliveryOutcomes(of: records)
        let items = records.map { record -> JSON in
            var members = [
                JSONMember("id", .string(record.id)), JSONMember("kind", .string(record.kind)), JSONMember("from", .string(record.sender)),
                JSONMember("createdAt", .number(JSONNumber(Int(record.createdAt)))), JSONMember("read", .bool(record.readAt != nil)),
            ]
            if case .rich(let richType, let resource, let message) = record.content {
                members += [
                    JSONMember("richType", .string(richType)), JSONMember("resource", .string(resource)), JSONMember("message", .string(message)),
                ]
            }
            if let sendAt = record.sendAt { members.append(JSONMember("sendAt", .number(JSONNumber(Int(sendAt))))) }
            if let delivery = deliveries[record.id] { members.append(JSONMember("delivery", delivery)) }
            return .object(members)
        }
        return .json(200, .object([JSONMember("notifications", .array(items))]))
    }

    /// The hub is asked about at most this many sends per list, the newest, and waited for at most
    /// ``outcomeWait``: a list is never held up long by a slow hub. A final outcome is kept, and
    /// not asked for again.
    static let outcomeLookups = 10
    static let outcomeWait = Duration.seconds(2)

    /// What the hub reports of each record's send, by notification id: kept final outcomes, and
    /// the hub's current word on up to ``outcomeLookups`` others.
    private func deliveryOutcomes(of records: [NotificationRecord]) async -> [String: JSON] {
        var outcomes: [String: JSON] = [:]
        var pending: [(id: String, hubMessageID: String)] = []
        for record in records {
            if let kept = record.delivery, let outcome = try? RawJSON(kept).value {
                outcomes[record.id] = outcome
            } else if let hubMessageID = record.hubMessageID, pending.count < Self.outcomeLookups {
                pending.append((record.id, hubMessageID))
            }
        }
        guard !pending.isEmpty else { return outcomes }
        enum Answer: Sendable {
            case details(id: String, NotificationDetails?)
            case timeUp
        }
        let delivery = delivery
        let answers = await withTaskGroup(of: Answer.self) { group -> [(String, NotificationDetails)] in
            for (id, hubMessageID) in pending {
                group.addTask { .details(id: id, await delivery.outcome(ofHubMessage: hubMessageID)) }
            }
            group.addTask {
                try? await Task.sleep(for: Self.outcomeWait)
                return .timeUp
            }
            var answers: [(String, NotificationDetails)] = []
            var waiting = pending.count
            while waiting > 0, let next = await group.next() {
                guard case .details(let id, let details) = next else { break }  // the rest are asked at the next list
                waiting -= 1
                if let details { answers.append((id, details)) }
            }
            group.cancelAll()
            return answers
        }
        for (id, details) in answers {
            let outcome = Self.outcome(details)
            outcomes[id] = outcome
            if details.isFinal { try? await store.recordDelivery(id: id, hubMessageID: nil, outcome: Self.text(outcome)) }
        }
        return outcomes
    }

    /// `{"state": "Completed", "outcomes": {"apns": {"Success": 1}, "fcmv1": {"InvalidNotificationSize": 1}}}`:
    /// the hub's state of the send and its counts per platform, under our platform names.
    static func outcome(_ details: NotificationDetails) -> JSON {
        let platforms = details.outcomeCounts.keys.sorted().map { platform -> JSONMember in
            let counts = details.outcomeCounts[platform]!.sorted { $0.key < $1.key }.map { JSONMember($0.key, .number(JSONNumber($0.value))) }
            // `Apns`, `FcmV1`: lowercased, the names installations use.
            return JSONMember(platform.lowercased(), .object(counts))
        }
        return .object([JSONMember("state", .string(details.state.rawValue)), JSONMember("outcomes", .object(platforms))])
    }

    private static func text(_ value: JSON) -> String? {
        var bytes: [UInt8] = []
        guard (try? value.write(into: &bytes)) != nil else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `GET|HEAD /api/notifications/{id}`, authenticated here rather than by the middleware: the
    /// caller's row (to check the credentials against the current password hash) and the
    /// notification are read in one store round trip.
    func fetch(id: String, request: Request, context: Context) async throws -> Response {
        let client = authenticator.clientAddress(
            peer: context.client, forwardedFor: request.headers[values: .xForwardedFor], forwarded: request.headers[values: .forwarded])
        // Ids are 32 hex digits; anything else cannot exist, and matches nothing (the credentials
        // are checked all the same, so that a bad id tells an unauthenticated client nothing).
        let (store, key, now) = (store, Self.notificationKey(id), unixMilliseconds())
        let (caller, found) = try await authenticator.authenticate(authorization: request.headers[.authorization], client: client) {
            principal throws(StoreError) -> (UserRecord, APIKeyRecord?, NotificationRecord?)? in
            switch principal {
            case .user(let name):
                guard let (user, notification) = try await store.userAndNotification(named: name, id: key, visibleAt: now) else { return nil }
                return (user, nil, notification)
            case .apiKey(let keyID):
                guard let (apiKey, user, notification) = try await store.apiKeyOwnerAndNotification(keyID: keyID, id: key, visibleAt: now)
                else { return nil }
                return (user, apiKey, notification)
            }
        }
        context.record.user = caller.name
        guard let record = found else { throw APIError.notFound("no such notification") }
        let isHead = request.method == .head
        let response: Response
        switch record.content {
        case .rich(_, let resourceName, _):
            let served = if let embedded = servedImages[resourceName] { embedded } else { try await uploadedImage(id: resourceName) }
            guard let image = served else {
                throw APIError(status: 410, code: .resourceGone, "the image \(resourceName) is no longer served")
            }
            response = imageResponse(image, request: request, isHead: isHead)
        case .secure(let payload):
            response = .json(200, .object([JSONMember("Payload", .string(payload))]), headers: [("Cache-Control", "no-store")], isHead: isHead)
        }
        return response
    }

    /// `PUT /api/notifications/{id}/read`: the caller's notification marked read, once; 204 again after.
    func markRead(id: String, caller: Authenticator.User) async throws -> Response {
        let now = unixMilliseconds()
        guard let (_, found) = try await store.userAndNotification(named: caller.name, id: Self.notificationKey(id), visibleAt: now),
            let record = found
        else { throw APIError.notFound("no such notification") }
        if record.readAt == nil { try await store.markRead(id: record.id, at: now) }
        return Response(status: .noContent)
    }

    /// Ids are 32 hex digits; anything else cannot exist, and matches nothing.
    static func notificationKey(_ id: String) -> String {
        id.utf8.count == 32 && id.utf8.allSatisfy { hexDigitValue($0) <= 15 } ? id.lowercased() : ""
    }

    /// The image, or the part a `Range` asks for.
    private func imageResponse(_ image: ServedImage, request: Request, isHead: Bool) -> Response {
        let headers = request.headers
        let plan = ResourceResponse(
            length: image.bytes.readableBytes, entityTag: image.entityTag, contentType: image.contentType,
            range: headers[.range], ifNoneMatch: headers[.ifNoneMatch], ifRange: headers[.ifRange])
        var fields = HTTPFields()
        fields.append(plan.headers.map { ($0.name, $0.value) } + [("Cache-Control", "private, no-cache")])
        // The digest of the whole image, on every answer that carries some of it.
        if plan.status == 200 || plan.status == 206 { fields.append([("Repr-Digest", image.digest)]) }
        // The plan's range lies within the image, whose bytes the buffer holds from index 0.
        let range = plan.bodyRange
        let body =
            isHead || range.isEmpty
            ? ResponseBody()
            : ResponseBody(byteBuffer: image.bytes.getSlice(at: range.lowerBound, length: range.count)!)
        if range.isEmpty && plan.status != 304 && fields[.contentLength] == nil { fields[.contentLength] = "0" }
        // A 304 carries no body and, here, no length (it would have to be the full image's).
        if plan.status == 304 { fields[.contentLength] = nil }
        return Response(status: .init(code: plan.status), headers: fields, body: body)
    }
}

/// `count` random bytes in lowercase hex: request ids, notification and installation ids (128 bits).
/// A multiple of eight: each draw from the system generator is a system call, and gives a word.
func randomHex(bytes count: Int) -> String {
    precondition(count % 8 == 0, "random ids are whole words")
    var generator = SystemRandomNumberGenerator()
    var text = ""
    for _ in 0..<count / 8 { text += Hex.lowercase(generator.next() as UInt64) }
    return text
}
