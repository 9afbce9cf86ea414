import APNs
import Hummingbird
import Logging
import PushCore

#if canImport(FoundationEssentials)
import struct FoundationEssentials.Date
#else
import struct Foundation.Date
#endif

/// Live Activities and broadcast channels, which only APNs delivery offers (Notification Hubs
/// has neither); with a hub these routes answer 501 `apnsDeliveryRequired`.
///
/// - `POST /api/activities` `{"token": "hex", "kind": "pushToStart" | "activity"}` → `201 {"id": "…"}`:
///   the caller's push-to-start token, or one activity's own token.
/// - `DELETE /api/activities/{id}` → `204`; only the owner's.
/// - `POST /api/activities/{id}/updates` (sender role) with a ``LiveActivityRequest`` → `200 {"apnsId": "…"}`:
///   `start` to a push-to-start token, `update` or `end` to an activity's.
/// - `POST /api/channels` (sender role) `{"storagePolicy": "none" | "most-recent"}` → `201 {"id": "…", "channelId": "…"}`;
///   devices subscribe to `channelId` through ActivityKit.
/// - `POST /api/channels/{id}/broadcasts` (sender role) with an `update` or `end` → `200 {"requestId": "…"}`.
/// - `DELETE /api/channels/{id}` (sender role) → `204`.
///
/// A payload whose `content-state` or `attributes` does not match the declared types is refused
/// with 422 `contentStateMismatch` before anything is sent.
extension BackendAPI {
    private func directAPNs() throws(APIError) -> APNsDelivery {
        guard let apns = delivery.apns else {
            throw APIError(
                status: 501, code: .apnsDeliveryRequired, "Live Activities and channels need APNs delivery; this server sends through a hub")
        }
        return apns
    }

    // MARK: Activities

    func registerActivity(_ body: JSONValue, caller: Authenticator.User) async throws -> Response {
        _ = try directAPNs()
        try RequestBody.allowKeys(["token", "kind"], in: body)
        let token = try RequestBody.string("token", in: body).lowercased()
        guard Self.isAPNsToken(token) else {
            throw APIError.badRequest(.invalidToken, "token must be an ActivityKit push token in hex (64 to 200 digits)")
        }
        guard let kind = ActivityRecord.Kind(rawValue: try RequestBody.string("kind", in: body)) else {
            throw APIError.badRequest(.invalidField, "kind must be pushToStart or activity")
        }
        try takeRegistrationBudget(caller)
        guard try await store.activityCount(owner: caller.name) < registrationLimits.maximumActivityTokens else {
            throw APIError(
                status: 409, code: .tooManyActivityTokens,
                "at most \(registrationLimits.maximumActivityTokens) activity tokens per user; delete one first")
        }
        let record = ActivityRecord(id: randomHex(bytes: 16), owner: caller.name, kind: kind, token: token, updatedAt: unixMilliseconds())
        try await store.saveActivity(record)
        return .json(201, .object([JSONMember("id", .string(record.id))]))
    }

    func updateActivity(id: String, _ update: LiveActivityRequest, caller: Authenticator.User, logger: Logger) async throws -> Response {
        let apns = try directAPNs()
        guard let activity = try await store.activity(id: id) else { throw APIError.notFound("no such activity") }
        switch (update.event, activity.kind) {
        case (.start, .pushToStart), (.update, .activity), (.end, .activity): break
        case (.start, _):
            throw APIError(status: 409, code: .wrongActivityKind, "start goes to a push-to-start token")
        default:
            throw APIError(status: 409, code: .wrongActivityKind, "\(update.event.rawValue) goes to an activity's own token")
        }
        let payload = try checked(update.payload(), apns: apns)
        let result: APNsSendResult
        do throws(APNsClientError) {
            result = try await metrics.push(.liveActivity, delivered: \.isDelivered) { () async throws(APNsClientError) in
                try await apns.client.send(payload, headers: APNsHeaders(for: payload, topic: apns.topic), to: [activity.token])[0]
            }
        } catch {
            throw APIError(status: 500, code: .internalError, "the push could not be sent: \(error.message)")
        }
        if result.isDelivered { return .json(200, .object([JSONMember("apnsId", .string(result.apnsID ?? ""))])) }
        let actions = await apns.tokenActions(
            for: [result], registeredAt: [activity.updatedAt], recipient: activity.owner, askOtherEnvironment: false, logger: logger)
        if case .delete(let reason) = actions[0],
            try await store.deleteActivity(id: activity.id, owner: nil)
        {
            logger.notice("pruned a dead activity token", metadata: ["activity": "\(activity.id)", "reason": "\(reason)"])
            throw APIError(status: 410, code: .activityGone, "APNs says the token is no longer valid (\(result.summary)); it was removed")
        }
        throw Self.apnsFailure(result.outcome)
    }

    /// The payload if APNs would take it and the device could decode it; 422 otherwise.
    private func checked(_ payload: APNsPayload, apns: APNsDelivery) throws(APIError) -> APNsPayload {
        do throws(APNsPayloadError) {
            _ = try payload.encoded(limit: APNsPushType.liveactivity.payloadLimit)
        } catch {
            throw APIError(status: 422, code: .invalidPayload, error.message)
        }
        if let errors = apns.liveActivity?.errors(in: payload), !errors.isEmpty {
            throw APIError(
                status: 422, code: .contentStateMismatch,
                "the device could not decode this push: " + errors.map(\.message).joined(separator: "; "))
        }
        return payload
    }

    private static func apnsFailure(_ outcome: APNsSendOutcome) -> APIError {
        switch outcome {
        case .rejected(let status, let reason, _):
            APIError(status: 502, code: .apnsRejected, "APNs refused the push: \(status) \(reason)")
        case .failed(let failure, _):
            APIError(status: 502, code: .apnsUnavailable, "no answer from APNs (\(failure))")
        case .delivered:
            APIError(status: 500, code: .internalError, "a delivered push taken for a failure")
        }
    }

    // MARK: Channels

    func createChannel(_ body: JSONValue, caller: Authenticator.User) async throws -> Response {
        let apns = try directAPNs()
        try RequestBody.allowKeys(["storagePolicy"], in: body)
        let policy: APNsMessageStoragePolicy
        switch try RequestBody.optionalString("storagePolicy", in: body) ?? "none" {
        case "none": policy = .noStorage
        case "most-recent": policy = .mostRecentMessage
        default: throw APIError.badRequest(.invalidField, "storagePolicy must be none or most-recent")
        }
        let channel: APNsChannel
        do throws(APNsChannelError) {
            channel = try await apns.client.createChannel(bundleID: apns.topic, storagePolicy: policy)
        } catch {
            throw Self.apnsFailure(error)
        }
        let record = ChannelRecord(
            id: randomHex(bytes: 16), apnsChannelID: channel.id, creator: caller.name, storagePolicy: policy.rawValue, createdAt: unixMilliseconds())
        try await store.addChannel(record)
        return .json(201, .object([JSONMember("id", .string(record.id)), JSONMember("channelId", .string(channel.id))]))
    }

    func deleteChannel(id: String, caller: Authenticator.User) async throws -> Response {
        let apns = try directAPNs()
        let record = try await ownChannel(id: id, caller: caller)
        do throws(APNsChannelError) {
            try await apns.client.deleteChannel(record.apnsChannelID, bundleID: apns.topic)
        } catch  where error.failure == .rejected(status: 404, reason: .channelNotRegistered) {
            // Gone from APNs already: the row follows.
        } catch {
            throw Self.apnsFailure(error)
        }
        _ = try await store.deleteChannel(id: id)
        return Response(status: .noContent)
    }

    func broadcast(id: String, _ update: LiveActivityRequest, caller: Authenticator.User) async throws -> Response {
        let apns = try directAPNs()
        guard update.event != .start else {
            throw APIError.badRequest(.invalidField, "a broadcast updates or ends activities; start them with input-push-channel")
        }
        let record = try await ownChannel(id: id, caller: caller)
        let payload = try checked(update.payload(), apns: apns)
        let result: APNsBroadcastResult
        do throws(APNsClientError) {
            // A channel that stores nothing takes expiration 0 only: deliver now or never.
            result = try await metrics.push(.broadcast, delivered: \.isDelivered) { () async throws(APNsClientError) in
                try await apns.client.broadcast(
                    payload, to: record.apnsChannelID, bundleID: apns.topic, expiration: record.storagePolicy == 0 ? 0 : nil)
            }
        } catch {
            throw APIError(status: 500, code: .internalError, "the broadcast could not be sent: \(error.message)")
        }
        guard result.isDelivered else {
            if case .rejected(404, .channelNotRegistered, _) = result.outcome {
                _ = try await store.deleteChannel(id: id)
                throw APIError(status: 410, code: .channelGone, "APNs no longer knows this channel; it was removed")
            }
            throw Self.apnsFailure(result.outcome)
        }
        return .json(200, .object([JSONMember("requestId", .string(result.requestID ?? ""))]))
    }

    /// The caller's channel: another sender's is answered as missing, as another user's activity is.
    private func ownChannel(id: String, caller: Authenticator.User) async throws -> ChannelRecord {
        guard let record = try await store.channel(id: id), record.creator == caller.name else { throw APIError.notFound("no such channel") }
        return record
    }

    private static func apnsFailure(_ error: APNsChannelError) -> APIError {
        switch error.failure {
        case .rejected(let status, let reason): APIError(status: 502, code: .apnsRejected, "APNs refused the channel request: \(status) \(reason)")
        case .unanswered(let failure, _): APIError(status: 502, code: .apnsUnavailable, "no answer from APNs (\(failure))")
        case .unreadableAnswer, .invalidRequest: APIError(status: 502, code: .apnsRejected, "\(error)")
        }
    }
}

/// The body of an activity update or a broadcast:
/// `{"event": "start" | "update" | "end", "contentState": {…}, "attributesType": "…", "attributes": {…},
/// "alert": {"title": "…", "body": "…"}, "timestamp": SECONDS, "staleDate": SECONDS, "dismissalDate": SECONDS,
/// "relevanceScore": NUMBER, "inputPushToken": true, "inputPushChannel": "…"}`. `timestamp` defaults
/// to now; `attributesType` and `attributes` are for `start` only, which needs them.
struct LiveActivityRequest {
    let event: APNsLiveActivityEvent
    let contentState: JSON?
    let attributesType: String?
    let attributes: JSON?
    let alert: APNsAlert?
    let timestamp: Int
    let staleDate: Int?
    let dismissalDate: Int?
    let relevanceScore: Double?
    let inputPushToken: Bool
    let inputPushChannel: String?

    init(_ body: JSONValue) throws(APIError) {
        try RequestBody.allowKeys(
            [
                "event", "contentState", "attributesType", "attributes", "alert", "timestamp", "staleDate", "dismissalDate", "relevanceScore",
                "inputPushToken", "inputPushChannel",
            ], in: body)
        guard let event = APNsLiveActivityEvent(rawValue: try RequestBody.string("event", in: body)) else {
            throw .badRequest(.invalidField, "event must be start, update or end")
        }
        self.event = event
        contentState = try Self.object("contentState", in: body)
        attributes = try Self.object("attributes", in: body)
        attributesType = try RequestBody.optionalString("attributesType", in: body)
        if event == .start {
            guard attributesType != nil, attributes != nil, contentState != nil else {
                throw .badRequest(.missingField, "start needs attributesType, attributes and contentState")
            }
        } else {
            let isGiven = { (key: String) in body[key].map { !$0.isNull } ?? false }
            guard attributesType == nil, attributes == nil, !isGiven("inputPushToken"), !isGiven("inputPushChannel") else {
                throw .badRequest(.invalidField, "attributes, attributesType, inputPushToken and inputPushChannel are for start only")
            }
            if event == .update && contentState == nil { throw .badRequest(.missingField, "update needs contentState") }
        }
        if let alert = body["alert"], !alert.isNull {
            guard alert.kind == .object else { throw .badRequest(.invalidField, "alert must be {\"title\": …, \"body\": …}") }
            try RequestBody.allowKeys(["title", "body"], in: alert)
            let title = try RequestBody.optionalString("title", in: alert)
            let text = try RequestBody.optionalString("body", in: alert)
            self.alert = .fields(APNsAlertFields(title: title.map(APNsAlertText.text), body: text.map(APNsAlertText.text)))
        } else {
            alert = nil
        }
        timestamp = try Self.seconds("timestamp", in: body) ?? Int(unixMilliseconds() / 1000)
        staleDate = try Self.seconds("staleDate", in: body)
        dismissalDate = try Self.seconds("dismissalDate", in: body)
        if dismissalDate != nil && event != .end { throw .badRequest(.invalidField, "dismissalDate is for end only") }
        if let score = body["relevanceScore"], !score.isNull {
            guard let value = score.double, value.isFinite else { throw .badRequest(.invalidField, "relevanceScore must be a number") }
            relevanceScore = value
        } else {
            relevanceScore = nil
        }
        // An end push carries neither; taking them would drop them without a word.
        if event == .end && (staleDate != nil || relevanceScore != nil) {
            throw .badRequest(.invalidField, "staleDate and relevanceScore are for start and update")
        }
        if let flag = body["inputPushToken"], !flag.isNull {
            guard let value = flag.bool else { throw .badRequest(.invalidField, "inputPushToken must be true or false") }
            inputPushToken = value
        } else {
            inputPushToken = false
        }
        inputPushChannel = try RequestBody.optionalString("inputPushChannel", in: body)
    }

    func payload() -> APNsPayload {
        switch event {
        case .start:
            .liveActivityStart(
                attributesType: attributesType ?? "", attributes: attributes ?? [:], contentState: contentState ?? [:], timestamp: timestamp,
                alert: alert, staleDate: staleDate, relevanceScore: relevanceScore, inputPushToken: inputPushToken,
                inputPushChannel: inputPushChannel)
        case .update:
            .liveActivityUpdate(
                contentState: contentState ?? [:], timestamp: timestamp, alert: alert, staleDate: staleDate, relevanceScore: relevanceScore)
        case .end:
            .liveActivityEnd(contentState: contentState, timestamp: timestamp, dismissalDate: dismissalDate, alert: alert)
        }
    }

    private static func object(_ key: String, in body: JSONValue) throws(APIError) -> JSON? {
        guard let value = body[key], !value.isNull else { return nil }
        guard value.kind == .object, let owned = try? JSON(value) else { throw .badRequest(.invalidField, "\(key) must be an object") }
        return owned
    }

    /// The last second of the year 2286: later than any activity, and short of any overflow.
    static let maximumSeconds = 9_999_999_999

    private static func seconds(_ key: String, in body: JSONValue) throws(APIError) -> Int? {
        guard let value = body[key], !value.isNull else { return nil }
        guard let seconds = RequestBody.wholeNumber(value), (0...maximumSeconds).contains(seconds) else {
            throw .badRequest(.invalidField, "\(key) must be Unix seconds, 0 to \(maximumSeconds)")
        }
        return seconds
    }
}
