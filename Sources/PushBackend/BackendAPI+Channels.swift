import APNs
import HTTPTypes
import PushCore

/// The `liveActivities` tag's broadcast channels (sender role): created with APNs, broadcast to,
/// deleted; APNs delivery only, as activity tokens are (`BackendAPI+LiveActivities.swift`).
extension BackendAPI {
    /// `POST /api/channels`: created with APNs, then here; devices subscribe to its `channelId`
    /// through ActivityKit.
    func createChannel(_ input: Operations.CreateChannel.Input) async throws -> Operations.CreateChannel.Output {
        let (caller, apns) = (try RequestScope.caller, try directAPNs())
        let policy: APNsMessageStoragePolicy
        switch input.body {
        case .json(let body):
            switch body.storagePolicy {
            case nil, .some(Components.Schemas.ChannelRequest.StoragePolicyPayload.none): policy = .noStorage
            case .mostRecent: policy = .mostRecentMessage
            // The generator reads the enum's `null` as an empty string, which names no policy.
            case ._empty_: throw APIError.badRequest(.invalidField, "storagePolicy must be none or most-recent")
            }
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
        return .created(.init(body: .json(.init(id: record.id, channelId: channel.id))))
    }

    /// `DELETE /api/channels/{id}`: with APNs, then here.
    func deleteChannel(_ input: Operations.DeleteChannel.Input) async throws -> Operations.DeleteChannel.Output {
        let (id, apns) = (input.path.id, try directAPNs())
        let record = try await ownChannel(id: id, caller: try RequestScope.caller)
        do throws(APNsChannelError) {
            try await apns.client.deleteChannel(record.apnsChannelID, bundleID: apns.topic)
        } catch  where error.failure == .rejected(status: 404, reason: .channelNotRegistered) {
            // Gone from APNs already: the row follows.
        } catch {
            throw Self.apnsFailure(error)
        }
        _ = try await store.deleteChannel(id: id)
        return .noContent(.init())
    }

    /// `POST /api/channels/{id}/broadcasts`: an `update` or an `end` for every activity subscribed.
    func broadcast(_ input: Operations.Broadcast.Input) async throws -> Operations.Broadcast.Output {
        let (id, apns) = (input.path.id, try directAPNs())
        let update: LiveActivityRequest
        switch input.body {
        case .json(let body): update = try LiveActivityRequest(body)
        }
        let record = try await ownChannel(id: id, caller: try RequestScope.caller)
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
        return .ok(.init(body: .json(.init(requestId: result.requestID ?? ""))))
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
