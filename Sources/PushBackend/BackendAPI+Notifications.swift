import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NotificationHubs
import PushCore
import PushFCM
import Tracing

/// The `notifications` tag: sending, listing, marking read; and, written by hand, the fetch of
/// what a push names, whose image answers are slices of one shared buffer, with ranges and
/// validators, and which authenticates itself.
extension BackendAPI {
    /// `POST /api/notifications`: stored, then pushed to the recipient's devices.
    func createNotification(_ input: Operations.CreateNotification.Input) async throws -> Operations.CreateNotification.Output {
        let (caller, logger) = (try RequestScope.caller, RequestScope.logger)
        let request: NotificationRequest
        switch input.body {
        case .json(let body): request = try NotificationRequest(body)
        }
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
        // Fitted to FCM's limit too when an Android device may get it: one registered now, or, for a
        // push sent later, one registered by then.
        if devices.contains(where: { $0.platform == .fcmv1 }) || (sendAt != nil && delivery.reaches(.fcmv1)) {
            pushedMessage = try Self.fittedForFCM(kind, id: id, richType: richType, message: pushedMessage)
        }
        // The budget counts pushes: one notification to many devices costs one per device. A
        // scheduled one reaches the devices registered when it is sent, up to the device cap, so
        // it costs the cap: otherwise sends scheduled while the recipient has no device would
        // cost nothing and reach every device registered by then.
        sendBudget.charge(caller.name, count: (sendAt == nil ? devices.count : registrationLimits.maximumDevices) - 1)
        let record = NotificationRecord(
            id: id, sender: caller.name, recipient: recipient, content: content, createdAt: unixMilliseconds(), sendAt: sendAt)
        guard let hub = delivery.hubDelivery else {
            // Queued with its push, in one statement: the delivery worker sends it when it is due,
            // and retries while APNs or FCM falters, so the answer is the same whatever their state.
            let deadline = (sendAt ?? record.createdAt) + Self.deliveryDeadline
            // The job's span joins this request's trace, in whichever instance works it.
            var trace: [String: String] = [:]
            if let context = ServiceContext.current { InstrumentationSystem.instrument.inject(context, into: &trace, using: TraceFields()) }
            try await store.addNotification(record, queuing: QueuedPush(kind: kind, message: pushedMessage, deadline: deadline, trace: trace))
            let queued = Components.Schemas.DeliveryOutcome(state: DeliveryState.queued.rawValue, outcomes: .init(), attempts: 0)
            return .created(.init(headers: .init(location: "/api/notifications/\(id)"), body: .json(.init(id: id, delivery: queued))))
        }
        try await store.addNotification(record)
        let push = OutgoingPush(
            kind: kind, apnsPayload: payload, properties: HubTemplates.properties(kind, id: id, richType: richType, message: pushedMessage),
            sendAt: sendAt.map { ($0 + 999) / 1000 })
        // Stored before sending: the device may ask for it as soon as the push arrives.
        let hubMessageID: String?
        do {
            hubMessageID = try await metrics.push(.notification) { try await hub.send(push, to: recipient, devices: devices, logger: logger) }
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
        return .created(.init(headers: .init(location: "/api/notifications/\(id)"), body: .json(.init(id: id))))
    }

    /// Notification Hubs holds a scheduled send for at most seven days.
    static let maximumSchedule: Int64 = 7 * 24 * 3600 * 1000

    /// How long a queued push is retried before it is `failed`, from when it is due.
    static let deliveryDeadline: Int64 = 3600 * 1000

    /// `sendAt` when the push is to wait: nil for a time already passed (it goes now, as a
    /// scheduler does with a time it missed); refused when longer than the hub keeps a scheduled
    /// send (the delivery queue keeps to the same limit).
    private func checkedSendAt(_ sendAt: Int64?) throws(APIError) -> Int64? {
        guard let sendAt, sendAt > unixMilliseconds() else { return nil }
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

    /// `GET /api/notifications`: the caller's, newest first.
    func listNotifications(_ input: Operations.ListNotifications.Input) async throws -> Operations.ListNotifications.Output {
        let caller = try RequestScope.caller
        let limit = try Self.checkedLimit(input.query.limit)
        let records = try await store.notifications(recipient: caller.name, visibleAt: unixMilliseconds(), limit: limit)
        let deliveries = try await deliveries(of: records)
        let items = records.map { record in
            var summary = Components.Schemas.NotificationSummary(
                id: record.id, kind: record.kind == "rich" ? .rich : .secure, from: record.sender, createdAt: Int(record.createdAt),
                read: record.readAt != nil, sendAt: record.sendAt.map(Int.init), delivery: deliveries[record.id])
            if case .rich(let richType, let resource, let message) = record.content {
                (summary.richType, summary.resource, summary.message) = (richType, resource, message)
            }
            return summary
        }
        return .ok(.init(body: .json(.init(notifications: items))))
    }

    /// `GET /api/sent-notifications`: the caller's sends, newest first, scheduled ones included.
    func listSentNotifications(_ input: Operations.ListSentNotifications.Input) async throws -> Operations.ListSentNotifications.Output {
        let caller = try RequestScope.caller
        let records = try await store.notifications(sender: caller.name, limit: try Self.checkedLimit(input.query.limit))
        let deliveries = try await deliveries(of: records)
        let items = records.map { record in
            Components.Schemas.SentNotification(
                id: record.id, kind: record.kind == "rich" ? .rich : .secure, to: record.recipient, createdAt: Int(record.createdAt),
                sendAt: record.sendAt.map(Int.init), delivery: deliveries[record.id])
        }
        return .ok(.init(body: .json(.init(notifications: items))))
    }

    /// A list's `limit`, 100 by default. Strict, as bodies are: a misspelt or repeated parameter
    /// would otherwise be silently ignored.
    private static func checkedLimit(_ limit: Int?) throws(APIError) -> Int {
        let query = RequestScope.current?.query ?? ""
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false)
        guard query.isEmpty || (pairs.count == 1 && pairs[0].hasPrefix("limit=")), (1...1000).contains(limit ?? 100) else {
            throw APIError.badRequest(.invalidQuery, "the query takes one limit, a number from 1 to 1000")
        }
        return limit ?? 100
    }

    /// Where each record's push stands, by notification id: its queued job's state and answers,
    /// else what the hub reports of its send; records with neither are left out.
    private func deliveries(of records: [NotificationRecord]) async throws -> [String: Components.Schemas.DeliveryOutcome] {
        let reports = try await store.deliveryReports(notificationIDs: records.map(\.id))
        var deliveries = reports.mapValues { report in
            Components.Schemas.DeliveryOutcome(
                state: report.state.rawValue, outcomes: .init(additionalProperties: report.outcomes.mapValues { .init(additionalProperties: $0) }),
                attempts: report.attempts, failure: report.failure)
        }
        for (id, outcome) in await deliveryOutcomes(of: records.filter { reports[$0.id] == nil }) {
            deliveries[id] = Self.deliveryOutcome(outcome)
        }
        return deliveries
    }

    /// A delivery outcome as ``outcome(_:)`` builds it and the store keeps it.
    static func deliveryOutcome(_ value: JSON) -> Components.Schemas.DeliveryOutcome? {
        guard case .object(let members) = value, case .string(let state)? = members.first(where: { $0.key == "state" })?.value,
            case .object(let platforms)? = members.first(where: { $0.key == "outcomes" })?.value
        else { return nil }
        var outcomes: [String: Components.Schemas.DeliveryOutcome.OutcomesPayload.AdditionalPropertiesPayload] = [:]
        for platform in platforms {
            guard case .object(let counts) = platform.value else { return nil }
            var byName: [String: Int] = [:]
            for count in counts {
                guard case .number(let number) = count.value, let value = Int(number.spelling) else { return nil }
                byName[count.key] = value
            }
            outcomes[platform.key] = .init(additionalProperties: byName)
        }
        return .init(state: state, outcomes: .init(additionalProperties: outcomes))
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
            if details.isFinal { try? await store.recordDelivery(id: id, hubMessageID: nil, outcome: outcome.storedText) }
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

    // MARK: Written by hand

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
    func markNotificationRead(_ input: Operations.MarkNotificationRead.Input) async throws -> Operations.MarkNotificationRead.Output {
        let (caller, now) = (try RequestScope.caller, unixMilliseconds())
        guard let (_, found) = try await store.userAndNotification(named: caller.name, id: Self.notificationKey(input.path.id), visibleAt: now),
            let record = found
        else { throw APIError.notFound("no such notification") }
        if record.readAt == nil { try await store.markRead(id: record.id, at: now) }
        return .noContent(.init())
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

/// The body of `POST /api/notifications`:
/// `{"kind": "rich", "richType": "img", "message": "…", "resource": "logo.png", "to": "bob"}` or
/// `{"kind": "secure" | "secureAlert", "payload": "…", "placeholder": "…", "to": "bob"}`; `to`
/// defaults to the caller, `richType` to `img`, `resource` to the default embedded image, a secure
/// alert's `placeholder` to ``defaultPlaceholder``. Any may have `sendAt` (Unix milliseconds).
struct NotificationRequest {
    enum Content {
        /// `alert`: pushed as an alert the app's service extension completes, not a silent push.
        case rich(richType: String, resource: String?, message: String, alert: Bool)
        /// `placeholder`: pushed as an alert showing it until the app's service extension
        /// replaces it with the payload it fetches; nil for a silent push.
        case secure(payload: String, placeholder: String?)
    }

    /// What a secure alert shows when the app has no localized text for its `loc-key` and its
    /// extension could not fetch the payload: it must hold nothing secret.
    static let defaultPlaceholder = "You have a new message"
    /// A placeholder is a line of text: at most this many Unicode scalars (JSON Schema's count).
    static let maximumPlaceholder = 256

    /// The rich types served; `img` names an embedded image.
    static let richTypes: Set<String> = ["img"]
    /// A secure payload is stored and answered, never pushed; bounded all the same.
    static let maximumSecurePayload = 32 << 10

    let content: Content
    let to: String?
    /// When to push it, in Unix milliseconds; now when absent. Checked against the clock by the API.
    let sendAt: Int64?

    init(_ body: Components.Schemas.NotificationRequest) throws(APIError) {
        let to: String?
        let sendAt: Int?
        switch body {
        case .rich(let rich), .richAlert(let rich):
            let richType = rich.richType ?? "img"
            guard Self.richTypes.contains(richType) else {
                throw APIError(status: 422, code: .unsupportedRichType, "richType \(richType.debugDescription) is not served; use img")
            }
            content = .rich(richType: richType, resource: rich.resource, message: rich.message, alert: rich.kind == .richAlert)
            (to, sendAt) = (rich.to, rich.sendAt)
        case .secure(let secure):
            content = .secure(payload: try Self.checkedPayload(secure.payload), placeholder: nil)
            (to, sendAt) = (secure.to, secure.sendAt)
        case .secureAlert(let secure):
            let placeholder = secure.placeholder ?? Self.defaultPlaceholder
            guard !placeholder.isEmpty, placeholder.unicodeScalars.count <= Self.maximumPlaceholder else {
                throw .badRequest(.invalidField, "placeholder must be 1 to \(Self.maximumPlaceholder) characters")
            }
            content = .secure(payload: try Self.checkedPayload(secure.payload), placeholder: placeholder)
            (to, sendAt) = (secure.to, secure.sendAt)
        }
        if let to, !UserRecord.isValidName(to) {
            throw APIError(status: 422, code: .unknownRecipient, "there is no user named \(to.debugDescription)")
        }
        self.to = to
        if let sendAt, !(1...9_999_999_999_999).contains(sendAt) {
            throw .badRequest(.invalidField, "sendAt must be a time in Unix milliseconds, a whole number from 1 to 9999999999999")
        }
        self.sendAt = sendAt.map(Int64.init)
    }

    private static func checkedPayload(_ payload: String) throws(APIError) -> String {
        guard payload.utf8.count <= maximumSecurePayload else {
            throw APIError(status: 413, code: .payloadTooLarge, "a secure payload is at most \(maximumSecurePayload) bytes")
        }
        return payload
    }
}

extension JSON {
    /// The value as compact JSON text, as the store keeps it (a hub's outcome, a job's trace); nil
    /// when it cannot be written.
    var storedText: String? {
        var bytes: [UInt8] = []
        guard (try? write(into: &bytes)) != nil else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
