import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NotificationHubs
import PushCore

/// The HTTP API: routing, authentication, the two flows, and one log line per request.
///
/// Routes (all behind HTTP Basic):
/// - `POST /api/register` `{"deviceToken": "hex"}` → `201 {"id": "…"}`: a fresh registration id, whether
///   the token was known or not; the device's one installation now carries the caller's tag.
/// - `DELETE /api/register/{id}` → `204`; only the owner's.
/// - `POST /api/notifications` (rich or secure, see ``NotificationRequest``) → `201 {"id": "…"}`.
/// - `GET /api/notifications` → `{"notifications": [...]}`, newest first (`?limit=`, 1–1000, default 100).
/// - `GET|HEAD /api/notifications/{id}` → the image (ranges, ETag) or `{"Payload": "…"}`; marks it read.
final class BackendAPI: Sendable {
    /// An answer before it becomes a `Response`.
    struct Answer {
        var status: Int
        var headers: [(String, String)] = []
        var body: Body = .bytes([])

        enum Body {
            case bytes([UInt8])
            /// Part of an embedded image, written chunk by chunk from one buffer shared by every response.
            case image(EmbeddedResource, ByteBuffer, Range<Int>)
        }

        static func json(_ status: Int, _ value: JSON, headers: [(String, String)] = []) -> Answer {
            var bytes: [UInt8] = []
            try? value.write(into: &bytes)  // values built here hold valid strings and unique keys
            return Answer(status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers, body: .bytes(bytes))
        }
    }

    static let maximumRequestBody = 64 << 10
    /// Small chunks: 200 downloads at once hold 200 chunks at most, and each write waits for the socket.
    static let imageChunkSize = 4096

    /// Rounds of bringing a device's installation in line with its stored registration before
    /// giving up (each round is one hub call; more than one only while another process sharing the
    /// store registers the same token, since this one registers a token one request at a time).
    static let maximumSyncRounds = 8

    let store: any BackendStore
    let authenticator: Authenticator
    let hub: NotificationHubClient
    let images: ResourceRegistry
    let defaultImage: String
    let logger: Logger
    /// Registrations of one device token, one at a time in this process: each stores its row and
    /// brings the hub in line before the next starts, so the hub's writes keep the rows' order.
    private let registrations = KeyedSerializer<String>()
    /// Notifications each user may create: a burst, then a steady rate.
    private let sendBudget: RateLimiter<String>
    /// Each embedded image once as a `ByteBuffer`: responses send slices of it, never copies.
    private let imageBuffers: [String: ByteBuffer]

    init(
        store: any BackendStore, authenticator: Authenticator, hub: NotificationHubClient, images: ResourceRegistry, defaultImage: String,
        sendQuota: RateLimit, logger: Logger
    ) {
        self.store = store
        self.authenticator = authenticator
        self.hub = hub
        self.images = images
        self.defaultImage = defaultImage
        self.logger = logger
        sendBudget = RateLimiter(sendQuota)
        var buffers: [String: ByteBuffer] = [:]
        for name in images.names {
            if let resource = try? images.resource(named: name) { buffers[name] = ByteBuffer(bytes: resource.bytes) }
        }
        imageBuffers = buffers
    }

    func respond(to request: Request, client: String) async -> Response {
        let clock = ContinuousClock()
        let started = clock.now
        let requestID = randomHex(bytes: 8)
        var logger = self.logger
        logger[metadataKey: "request-id"] = "\(requestID)"
        var user: Authenticator.User?
        let answer: Answer
        do throws(APIError) {
            answer = try await route(request, client: client, user: &user, logger: logger)
        } catch {
            if let detail = error.detail { logger.log(level: error.status >= 500 ? .error : .notice, "\(error.code): \(detail)") }
            answer = Answer(status: error.status, headers: [("Content-Type", "application/json; charset=utf-8")] + error.headers, body: .bytes(error.body))
        }
        let elapsed = (clock.now - started).components
        let milliseconds = Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15
        // Never the Authorization header, a password, a token or a secure payload: the method, path and outcome.
        logger.info(
            "\(request.method.rawValue) \(request.uri.path) \(answer.status)",
            metadata: ["user": "\(user?.name ?? "-")", "status": "\(answer.status)", "latency-ms": "\(milliseconds)"])
        return response(answer, requestID: requestID, isHead: request.method == .head)
    }

    private func response(_ answer: Answer, requestID: String, isHead: Bool) -> Response {
        var fields = HTTPFields()
        fields.append(HTTPField(name: HTTPField.Name("X-Request-Id")!, value: requestID))
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        let body: ResponseBody
        switch answer.body {
        case .bytes(let bytes):
            // Set here because HEAD sends no body yet must give the GET body's length (204 and 304: removed below).
            if !answer.headers.contains(where: { $0.0 == "Content-Length" }) {
                fields.append(HTTPField(name: .contentLength, value: String(bytes.count)))
            }
            body = isHead ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        case .image(let resource, let buffer, let range):
            body = isHead ? ResponseBody() : ResponseBody(contentLength: range.count) { writer in
                for chunk in try resource.chunks(in: range, size: Self.imageChunkSize) {
                    try await writer.write(buffer.getSlice(at: chunk.offset, length: chunk.bytes.count)!)
                }
                try await writer.finish(nil)
            }
        }
        var response = Response(status: HTTPResponse.Status(code: answer.status), headers: fields, body: body)
        // 204 and 304 carry no body and, here, no length (a 304's would have to be the full image's).
        if answer.status == 204 || answer.status == 304 { response.headers[.contentLength] = nil }
        return response
    }

    // MARK: Routing

    private func route(_ request: Request, client: String, user: inout Authenticator.User?, logger: Logger) async throws(APIError) -> Answer {
        let segments = request.uri.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard segments.first == "api", segments.count >= 2, segments.count <= 3, !segments.contains(where: \.isEmpty) else {
            throw .notFound()
        }
        let resource = segments.dropFirst().first!
        let id = segments.count == 3 ? String(segments.last!) : nil
        let method = request.method
        let allowed: [HTTPRequest.Method]
        switch (resource, id) {
        case ("register", nil): allowed = [.post]
        case ("register", _?): allowed = [.delete]
        case ("notifications", nil): allowed = [.get, .post]
        case ("notifications", _?): allowed = [.get, .head]
        default: throw .notFound()
        }
        guard allowed.contains(method) else {
            throw APIError(
                status: 405, code: "methodNotAllowed", "\(method.rawValue) is not allowed here",
                headers: [("Allow", allowed.map(\.rawValue).joined(separator: ", "))])
        }
        let caller = try await authenticator.authenticate(authorization: request.headers[.authorization], client: client)
        user = caller
        var request = request
        switch (resource, id, method) {
        case ("register", nil, _):
            return try await register(RequestBody.object(of: &request), caller: caller)
        case ("register", let id?, _):
            return try await unregister(id: id, caller: caller)
        case ("notifications", nil, .post):
            return try await send(NotificationRequest(RequestBody.object(of: &request)), caller: caller, logger: logger)
        case ("notifications", nil, _):
            return try await list(query: request.uri.query ?? "", caller: caller)
        case ("notifications", let id?, let method):
            return try await fetch(id: id, request: request, caller: caller, markRead: method == .get)
        default:
            throw .notFound()
        }
    }

    // MARK: Registration

    private func register(_ body: JSONValue, caller: Authenticator.User) async throws(APIError) -> Answer {
        try RequestBody.allowKeys(["deviceToken"], in: body)
        let deviceToken = try RequestBody.string("deviceToken", in: body).lowercased()
        let installationID = RegistrationRecord.installationID(deviceToken: deviceToken)
        do throws(NotificationHubError) {
            try Self.installation(installationID, deviceToken: deviceToken, owner: caller.name).validate()
        } catch {
            throw .badRequest("invalidDeviceToken", "deviceToken must be an APNs device token in hex (16 to 200 digits)")
        }
        // A device token names one device: registering it again (as whoever is signed in on it now)
        // moves it to the caller. The row is decided first; the installation then follows the row.
        let registration = RegistrationRecord(
            id: randomHex(bytes: 16), owner: caller.name, deviceToken: deviceToken, installationID: installationID, updatedAt: unixMilliseconds())
        try await registrations.run(deviceToken) { () async throws(APIError) in
            let previous: RegistrationRecord?
            do throws(StoreError) {
                previous = try await store.registration(deviceToken: deviceToken)
                try await store.saveRegistration(registration)
            } catch {
                throw .storage(error)
            }
            try await syncInstallation(deviceToken: deviceToken)
            if let previous { try await removeFormerInstallation(of: previous) }
        }
        // The same answer whether the token was known: a new id, 201.
        return .json(201, .object([JSONMember("id", .string(registration.id))]))
    }

    private func unregister(id: String, caller: Authenticator.User) async throws(APIError) -> Answer {
        let registration: RegistrationRecord?
        let deleted: Bool
        do {
            registration = try await store.registration(id: id)
            deleted = registration?.owner == caller.name ? try await store.deleteRegistration(id: id, owner: caller.name) : false
        } catch {
            throw .storage(error)
        }
        // Someone else's, or registered again (under a new id) since it was read.
        guard let registration, deleted else { throw .notFound("no such registration") }
        try await registrations.run(registration.deviceToken) { () async throws(APIError) in
            try await syncInstallation(deviceToken: registration.deviceToken)
            try await removeFormerInstallation(of: registration)
        }
        return Answer(status: 204)
    }

    /// Brings the hub's installation for `deviceToken` in line with the stored registration: the
    /// owner's tag, or no installation when there is no registration. The row is read again after
    /// each hub call until the two agree, so that whichever registration of a token is stored last,
    /// its owner is what the installation carries once every request has returned.
    private func syncInstallation(deviceToken: String) async throws(APIError) {
        let installationID = RegistrationRecord.installationID(deviceToken: deviceToken)
        var applied: String??  // the owner last written to the hub; .some(nil) once deleted
        for _ in 0..<Self.maximumSyncRounds {
            let owner: String?
            do {
                owner = try await store.registration(deviceToken: deviceToken)?.owner
            } catch {
                throw .storage(error)
            }
            if let applied, applied == owner { return }
            do throws(NotificationHubError) {
                if let owner {
                    try await hub.createOrUpdate(Self.installation(installationID, deviceToken: deviceToken, owner: owner))
                } else {
                    try await hub.deleteInstallation(id: installationID)
                }
            } catch {
                throw .hub(error)
            }
            applied = .some(owner)
        }
        throw APIError(status: 503, code: "registrationContended", "this device is being registered by others at the same time; try again")
    }

    /// Deletes the installation a registration from before token-derived installation ids was made under.
    private func removeFormerInstallation(of registration: RegistrationRecord) async throws(APIError) {
        guard registration.installationID != RegistrationRecord.installationID(deviceToken: registration.deviceToken) else { return }
        do throws(NotificationHubError) {
            try await hub.deleteInstallation(id: registration.installationID)
        } catch {
            throw .hub(error)
        }
    }

    private static func installation(_ id: String, deviceToken: String, owner: String) -> Installation {
        Installation(installationID: id, pushChannel: deviceToken, tags: ["username:\(owner)"], userID: owner)
    }

    // MARK: Notifications

    private func send(_ request: NotificationRequest, caller: Authenticator.User, logger: Logger) async throws(APIError) -> Answer {
        if let wait = sendBudget.take(caller.name) {
            throw APIError(
                status: 429, code: "rateLimited", "too many notifications; try again later", headers: [("Retry-After", String(wait.retryAfterSeconds))])
        }
        let recipient = request.to ?? caller.name
        if recipient != caller.name {
            guard caller.role == .sender else {
                throw APIError(status: 403, code: "forbidden", "notifying other users needs the sender role")
            }
            let known: Bool
            do {
                known = try await store.user(named: recipient) != nil
            } catch {
                throw .storage(error)
            }
            guard known else { throw APIError(status: 422, code: "unknownRecipient", "there is no user named \(recipient)") }
        }
        let id = randomHex(bytes: 16)
        let content: NotificationRecord.Content
        let payload: APNsPayload
        switch request.content {
        case .rich(let richType, let resource, let message):
            let resource = resource ?? defaultImage
            guard (try? images.resource(named: resource)) != nil else {
                throw .badRequest("unknownResource", "no embedded image is named \(resource); there are \(images.names.joined(separator: ", "))")
            }
            content = .rich(richType: richType, resource: resource, message: message)
            payload = .silentRichPush(richId: id, richType: richType, richMessage: message)
        case .secure(let secret):
            content = .secure(payload: secret)
            payload = .silentSecurePush(secureId: id)
        }
        // The message travels in the silent push, which has no alert the codec could shorten:
        // a push over APNs' limit is refused here, before anything is stored or sent.
        do throws(APNsPayloadError) {
            _ = try payload.encoded()
        } catch {
            throw APIError(status: 413, code: "payloadTooLarge", "the push would not fit: \(error.message); shorten the message")
        }
        let record = NotificationRecord(id: id, sender: caller.name, recipient: recipient, content: content, createdAt: unixMilliseconds())
        do {
            try await store.addNotification(record)
        } catch {
            throw .storage(error)
        }
        // Stored before sending: the device may ask for it as soon as the push arrives.
        do throws(NotificationHubError) {
            try await hub.send(payload, to: .tag("username:\(recipient)"))
        } catch {
            logger.notice("push not sent; notification withdrawn", metadata: ["notification": "\(id)"])
            try? await store.deleteNotification(id: id)
            throw .hub(error)
        }
        return .json(201, .object([JSONMember("id", .string(id))]), headers: [("Location", "/api/notifications/\(id)")])
    }

    private func list(query: String, caller: Authenticator.User) async throws(APIError) -> Answer {
        var limit = 100
        for pair in query.split(separator: "&") where pair.hasPrefix("limit=") {
            guard let value = Int(pair.dropFirst(6)), (1...1000).contains(value) else {
                throw .badRequest("invalidQuery", "limit is a number from 1 to 1000")
            }
            limit = value
        }
        let records: [NotificationRecord]
        do {
            records = try await store.notifications(recipient: caller.name, limit: limit)
        } catch {
            throw .storage(error)
        }
        let items = records.map { record -> JSON in
            var members = [
                JSONMember("id", .string(record.id)), JSONMember("kind", .string(record.kind)), JSONMember("from", .string(record.sender)),
                JSONMember("createdAt", .number(JSONNumber(Int(record.createdAt)))), JSONMember("read", .bool(record.readAt != nil)),
            ]
            if case .rich(let richType, let resource, let message) = record.content {
                members += [JSONMember("richType", .string(richType)), JSONMember("resource", .string(resource)), JSONMember("message", .string(message))]
            }
            return .object(members)
        }
        return .json(200, .object([JSONMember("notifications", .array(items))]))
    }

    private func fetch(id: String, request: Request, caller: Authenticator.User, markRead: Bool) async throws(APIError) -> Answer {
        // Ids are 32 hex digits; anything else cannot exist, and is not worth a query.
        guard id.utf8.count == 32, id.utf8.allSatisfy({ hexDigitValue($0) <= 15 }) else { throw .notFound("no such notification") }
        let record: NotificationRecord?
        do {
            record = try await store.notification(id: id.lowercased(), recipient: caller.name)
        } catch {
            throw .storage(error)
        }
        guard let record else { throw .notFound("no such notification") }
        var answer: Answer
        switch record.content {
        case .rich(_, let resourceName, _):
            guard let resource = try? images.resource(named: resourceName), let buffer = imageBuffers[resourceName] else {
                throw APIError(status: 410, code: "resourceGone", "the image \(resourceName) is no longer served")
            }
            let headers = request.headers
            let plan = ResourceResponse(
                length: resource.count, entityTag: resource.entityTag, contentType: resource.contentType,
                range: headers[.range], ifNoneMatch: headers[.ifNoneMatch], ifRange: headers[.ifRange])
            answer = Answer(status: plan.status, headers: plan.headers.map { ($0.name, $0.value) } + [("Cache-Control", "private, no-cache")])
            answer.body = plan.bodyRange.isEmpty ? .bytes([]) : .image(resource, buffer, plan.bodyRange)
        case .secure(let payload):
            answer = .json(200, .object([JSONMember("Payload", .string(payload))]), headers: [("Cache-Control", "no-store")])
        }
        // Read once the client has the content: 200, 206, or 304 (it held the image already); not 416.
        guard markRead, record.readAt == nil, answer.status != 416 else { return answer }
        do {
            try await store.markRead(id: record.id, at: unixMilliseconds())
        } catch {
            throw .storage(error)
        }
        return answer
    }
}

/// `count` random bytes in lowercase hex: request ids, notification and installation ids (128 bits).
func randomHex(bytes count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    var text = ""
    text.reserveCapacity(count * 2)
    for _ in 0..<count {
        let byte = UInt8.random(in: .min ... .max, using: &generator)
        text.append(String(byte >> 4, radix: 16))
        text.append(String(byte & 0xF, radix: 16))
    }
    return text
}
