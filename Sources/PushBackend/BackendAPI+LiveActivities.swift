import APNs
import Hummingbird
import Logging
import OpenAPIRuntime
import PushCore

#if canImport(FoundationEssentials)
import struct FoundationEssentials.Date
#else
import struct Foundation.Date
#endif

/// The `liveActivities` tag's activity tokens (its channels are in `BackendAPI+Channels.swift`):
/// what only APNs delivery offers (Notification Hubs has neither); with a hub these routes answer
/// 501 `apnsDeliveryRequired`. A payload whose `content-state` or `attributes` does not match the
/// declared types is refused with 422 `contentStateMismatch` before anything is sent.
extension BackendAPI {
    func directAPNs() throws(APIError) -> DirectDelivery {
        guard let apns = delivery.apns else { throw .apnsDeliveryRequired }
        return apns
    }

    // MARK: Activities

    /// `POST /api/activities`: the caller's push-to-start token, or one activity's own token.
    func registerActivityToken(_ input: Operations.RegisterActivityToken.Input) async throws -> Operations.RegisterActivityToken.Output {
        let caller = try RequestScope.caller
        _ = try directAPNs()
        let body: Components.Schemas.ActivityRegistration
        switch input.body {
        case .json(let json): body = json
        }
        let token = body.token.lowercased()
        guard Self.isAPNsToken(token) else {
            throw APIError.badRequest(.invalidToken, "token must be an ActivityKit push token in hex (64 to 200 digits)")
        }
        let kind: ActivityRecord.Kind = body.kind == .pushToStart ? .pushToStart : .activity
        try takeRegistrationBudget(caller)
        guard try await store.activityCount(owner: caller.name) < registrationLimits.maximumActivityTokens else {
            throw APIError(
                status: 409, code: .tooManyActivityTokens,
                "at most \(registrationLimits.maximumActivityTokens) activity tokens per user; delete one first")
        }
        let record = ActivityRecord(id: randomHex(bytes: 16), owner: caller.name, kind: kind, token: token, updatedAt: unixMilliseconds())
        try await store.saveActivity(record)
        return .created(.init(body: .json(.init(id: record.id))))
    }

    /// `DELETE /api/activities/{id}`: only the owner's.
    func deleteActivityToken(_ input: Operations.DeleteActivityToken.Input) async throws -> Operations.DeleteActivityToken.Output {
        guard try await store.deleteActivity(id: input.path.id, owner: try RequestScope.caller.name) else {
            throw APIError.notFound("no such activity")
        }
        return .noContent(.init())
    }

    /// `POST /api/activities/{id}/updates` (sender role): `start` to a push-to-start token, `update`
    /// or `end` to an activity's.
    func pushActivityUpdate(_ input: Operations.PushActivityUpdate.Input) async throws -> Operations.PushActivityUpdate.Output {
        let logger = RequestScope.logger
        let apns = try directAPNs()
        let update: LiveActivityRequest
        switch input.body {
        case .json(let body): update = try LiveActivityRequest(body)
        }
        guard let activity = try await store.activity(id: input.path.id) else { throw APIError.notFound("no such activity") }
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
        if result.isDelivered { return .ok(.init(body: .json(.init(apnsId: result.apnsID ?? "")))) }
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
    func checked(_ payload: APNsPayload, apns: DirectDelivery) throws(APIError) -> APNsPayload {
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

    static func apnsFailure(_ outcome: APNsSendOutcome) -> APIError {
        switch outcome {
        case .rejected(let status, let reason, _):
            APIError(status: 502, code: .apnsRejected, "APNs refused the push: \(status) \(reason)")
        case .failed(let failure, _):
            APIError(status: 502, code: .apnsUnavailable, "no answer from APNs (\(failure))")
        case .delivered:
            APIError(status: 500, code: .internalError, "a delivered push taken for a failure")
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

    init(_ body: Components.Schemas.LiveActivityRequest) throws(APIError) {
        var alert: Components.Schemas.LiveActivityAlert?
        var (timestamp, staleDate, dismissalDate): (Int?, Int?, Int?)
        var (attributesType, attributes, contentState, relevanceScore): (String?, JSON?, JSON?, Double?)
        var (inputPushToken, inputPushChannel): (Bool?, String?)
        switch body {
        case .start(let start):
            event = .start
            (attributesType, attributes, contentState) = (start.attributesType, Self.json(start.attributes), Self.json(start.contentState))
            (alert, timestamp, staleDate, relevanceScore) = (start.alert, start.timestamp, start.staleDate, start.relevanceScore)
            (inputPushToken, inputPushChannel) = (start.inputPushToken, start.inputPushChannel)
        case .update(let update):
            (event, contentState) = (.update, Self.json(update.contentState))
            (alert, timestamp, staleDate, relevanceScore) = (update.alert, update.timestamp, update.staleDate, update.relevanceScore)
        case .end(let end):
            (event, contentState) = (.end, end.contentState.map(Self.json))
            (alert, timestamp, dismissalDate) = (end.alert, end.timestamp, end.dismissalDate)
        }
        for (name, seconds) in [("timestamp", timestamp), ("staleDate", staleDate), ("dismissalDate", dismissalDate)] {
            if let seconds, !(0...Self.maximumSeconds).contains(seconds) {
                throw .badRequest(.invalidField, "\(name) must be Unix seconds, 0 to \(Self.maximumSeconds)")
            }
        }
        self.alert = alert.map { .fields(APNsAlertFields(title: $0.title.map(APNsAlertText.text), body: $0.body.map(APNsAlertText.text))) }
        self.timestamp = timestamp ?? Int(unixMilliseconds() / 1000)
        (self.staleDate, self.dismissalDate) = (staleDate, dismissalDate)
        (self.attributesType, self.attributes, self.contentState, self.relevanceScore) = (attributesType, attributes, contentState, relevanceScore)
        (self.inputPushToken, self.inputPushChannel) = (inputPushToken ?? false, inputPushChannel)
    }

    /// A broadcast: an `update` or an `end`.
    init(_ body: Components.Schemas.BroadcastRequest) throws(APIError) {
        switch body {
        case .update(let update): try self.init(Components.Schemas.LiveActivityRequest.update(update))
        case .end(let end): try self.init(Components.Schemas.LiveActivityRequest.end(end))
        }
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

    /// A free-form object of the request as the payload carries it. The generated decoding holds
    /// it as a dictionary: keys come out sorted, which the device's `Codable` decoding does not mind.
    private static func json(_ object: OpenAPIObjectContainer) -> JSON {
        json(object.value as (any Sendable)?)
    }

    private static func json(_ value: (any Sendable)?) -> JSON {
        switch value {
        case let value as Bool: .bool(value)
        case let value as Int: .number(JSONNumber(value))
        case let value as Double: (try? JSONNumber(value)).map(JSON.number) ?? .null
        case let value as String: .string(value)
        case let value as [(any Sendable)?]: .array(value.map(json))
        case let value as [String: (any Sendable)?]: .object(value.keys.sorted().map { JSONMember($0, json(value[$0]!)) })
        default: .null
        }
    }

    /// The last second of the year 2286: later than any activity, and short of any overflow.
    static let maximumSeconds = 9_999_999_999
}
