import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PushAPNs
import PushInternals
import PushJSON
import PushServerSupport
import Synchronization

/// Broadcast channels (iOS 18): the management routes, which APNs serves on its own hosts and
/// the emulator on the same port as sends, and broadcasts to every subscribed device.
extension APNsEmulator {
    func addChannelRoutes(to router: Router<APNsEmulatorRequestContext>) {
        let apps = router.group("1/apps/:bundle")
        apps.post("channels") { [self] request, context in
            try await applyingFaults(context: context) { try await createChannel(request, context: context) }
        }
        apps.get("channels") { [self] request, context in
            try await applyingFaults(context: context) { try await readChannel(request, context: context) }
        }
        apps.delete("channels") { [self] request, context in
            try await applyingFaults(context: context) { try await deleteChannel(request, context: context) }
        }
        apps.get("all-channels") { [self] request, context in
            try await applyingFaults(context: context) { try await listChannels(request, context: context) }
        }
        router.post("4/broadcasts/apps/:bundle") { [self] request, context in
            try await applyingFaults(context: context) { try await broadcast(request, context: context) }
        }
        let hooks = router.group("_emulator/subscriptions")
        hooks.post { [self] request, _ in try await changeSubscriptions(request, subscribing: true) }
        hooks.delete { [self] request, _ in try await changeSubscriptions(request, subscribing: false) }
    }

    /// What every management request and broadcast starts with: its `apns-request-id` (the
    /// client's, or a new one), authentication, and a bundle ID the team may use.
    private func admit(
        _ request: Request, context: APNsEmulatorRequestContext
    ) async throws(APNsRefusal) -> (requestID: String, bundleID: String, connection: Int, tokenIssuedAt: Int64?) {
        let headers = request.headers
        let requestID = headers[.apnsRequestID]?.lowercased() ?? UUID().uuidString.lowercased()
        for name in [HTTPField.Name.authorization, .apnsRequestID, .apnsChannelID, .apnsPushType, .apnsPriority, .apnsExpiration]
        where headers[values: name].count > 1 {
            throw APNsRefusal(400, "DuplicateHeaders", apnsID: requestID, idHeader: .apnsRequestID)
        }
        if let given = headers[.apnsRequestID], UUID(uuidString: given) == nil {
            throw APNsRefusal(400, "BadMessageId", apnsID: requestID, idHeader: .apnsRequestID)
        }
        let (connection, tokenIssuedAt) = try await authenticate(headers, context: context, answerID: requestID, idHeader: .apnsRequestID)
        let bundleID = context.parameters.get("bundle") ?? ""
        guard bundleIDs.contains(bundleID) else { throw APNsRefusal(400, "TopicDisallowed", apnsID: requestID, idHeader: .apnsRequestID) }
        return (requestID, bundleID, connection, tokenIssuedAt)
    }

    /// The channel named by `apns-channel-id`, which must belong to `bundleID`.
    private func channel(_ request: Request, bundleID: String, requestID: String) throws(APNsRefusal) -> (id: String, channel: BroadcastChannel) {
        guard let id = request.headers[.apnsChannelID] else {
            throw APNsRefusal(400, "MissingChannelId", apnsID: requestID, idHeader: .apnsRequestID)
        }
        guard Self.isWellFormedChannelID(id) else { throw APNsRefusal(400, "BadChannelId", apnsID: requestID, idHeader: .apnsRequestID) }
        guard let channel = state.withLock({ $0.channels[id] }), channel.bundleID == bundleID else {
            throw APNsRefusal(404, "ChannelNotRegistered", apnsID: requestID, idHeader: .apnsRequestID)
        }
        return (id, channel)
    }

    private func answer(_ status: HTTPResponse.Status, requestID: String, channelID: String? = nil, body: JSON? = nil) -> Response {
        var headers: HTTPFields = [.apnsRequestID: requestID]
        if let channelID { headers[.apnsChannelID] = channelID }
        guard let body else { return Response(status: status, headers: headers) }
        var bytes: [UInt8] = []
        try? body.write(into: &bytes)
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `POST /1/apps/{bundle}/channels` with `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`:
    /// 201 with the new channel's id in `apns-channel-id`.
    private func createChannel(_ request: Request, context: APNsEmulatorRequestContext) async throws -> Response {
        let (requestID, bundleID, _, _) = try await admit(request, context: context)
        func refuse(_ reason: String) -> APNsRefusal { APNsRefusal(400, reason, apnsID: requestID, idHeader: .apnsRequestID) }
        guard let body = try await request.collectBytes(upTo: 4096) else {
            throw APNsRefusal(413, "PayloadTooLarge", apnsID: requestID, idHeader: .apnsRequestID)
        }
        var parser = JSONParser()
        guard let document = try? parser.parse(body), document.root.kind == .object else { throw refuse("BadPayload") }
        guard let policy = document.root["message-storage-policy"]?.int, policy == 0 || policy == 1 else {
            throw refuse("BadMessageStoragePolicy")
        }
        guard let pushType = document.root["push-type"] else { throw refuse("MissingPushType") }
        guard pushType.stringEquals("LiveActivity") else { throw refuse("InvalidPushType") }
        let id = Self.newChannelID()
        let created = state.withLock { storage in
            guard storage.channels.values.count(where: { $0.bundleID == bundleID }) < Self.maximumChannels else { return false }
            storage.channels[id] = BroadcastChannel(bundleID: bundleID, storagePolicy: policy)
            return true
        }
        guard created else { throw refuse("CannotCreateChannelConfig") }
        return answer(.created, requestID: requestID, channelID: id)
    }

    /// `GET /1/apps/{bundle}/channels` with `apns-channel-id`: the channel's settings.
    private func readChannel(_ request: Request, context: APNsEmulatorRequestContext) async throws -> Response {
        let (requestID, bundleID, _, _) = try await admit(request, context: context)
        let (id, channel) = try channel(request, bundleID: bundleID, requestID: requestID)
        let body = JSON.object([
            JSONMember("message-storage-policy", .number(JSONNumber(channel.storagePolicy))), JSONMember("push-type", "LiveActivity"),
        ])
        return answer(.ok, requestID: requestID, channelID: id, body: body)
    }

    /// `DELETE /1/apps/{bundle}/channels` with `apns-channel-id`: 204; its subscriptions end.
    private func deleteChannel(_ request: Request, context: APNsEmulatorRequestContext) async throws -> Response {
        let (requestID, bundleID, _, _) = try await admit(request, context: context)
        let (id, _) = try channel(request, bundleID: bundleID, requestID: requestID)
        state.withLock { $0.channels[id] = nil }
        return answer(.noContent, requestID: requestID)
    }

    /// `GET /1/apps/{bundle}/all-channels`: `{"channels": [ID, …]}`.
    private func listChannels(_ request: Request, context: APNsEmulatorRequestContext) async throws -> Response {
        let (requestID, bundleID, _, _) = try await admit(request, context: context)
        let ids = state.withLock { storage in storage.channels.filter { $0.value.bundleID == bundleID }.keys.sorted() }
        return answer(.ok, requestID: requestID, body: .object([JSONMember("channels", .array(ids.map(JSON.string)))]))
    }

    /// `POST /4/broadcasts/apps/{bundle}` with `apns-channel-id` and a `liveactivity` payload:
    /// one delivery per subscribed device, 200 with `apns-request-id`.
    private func broadcast(_ request: Request, context: APNsEmulatorRequestContext) async throws -> Response {
        let (requestID, bundleID, connection, tokenIssuedAt) = try await admit(request, context: context)
        func refuse(_ reason: String) -> APNsRefusal { APNsRefusal(400, reason, apnsID: requestID, idHeader: .apnsRequestID) }
        let headers = request.headers
        guard headers[.apnsPushType] == APNsPushType.liveactivity.rawValue else { throw refuse("InvalidPushType") }
        let (id, channel) = try channel(request, bundleID: bundleID, requestID: requestID)
        var priority = APNsHeaders.defaultPriority(for: .liveactivity)
        if let text = headers[.apnsPriority] {
            guard let value = Int(text), [1, 5, 10].contains(value) else { throw refuse("BadPriority") }
            priority = value
        }
        var expiration: Int?
        if let text = headers[.apnsExpiration] {
            // A channel that stores nothing delivers now or never: only 0 makes sense for it.
            guard let value = Int(text), value >= 0, channel.storagePolicy == 1 || value == 0 else { throw refuse("BadExpirationDate") }
            expiration = value
        }
        guard let payload = try await request.collectBytes(upTo: APNsPushType.liveactivity.payloadLimit) else {
            throw APNsRefusal(413, "PayloadTooLarge", apnsID: requestID, idHeader: .apnsRequestID)
        }
        guard !payload.isEmpty else { throw refuse("PayloadEmpty") }
        var parser = JSONParser()
        guard let document = try? parser.parse(payload), document.root.kind == .object else { throw refuse("BadPayload") }
        let topic = APNsHeaders.topic(bundleID, for: .liveactivity)
        state.withLock { storage in
            // The channel's subscribers now: one deleted meanwhile has none.
            for device in storage.channels[id]?.subscribers ?? [] {
                let delivery = APNsDelivery(
                    sequence: storage.nextSequence, connection: connection, deviceToken: device, apnsID: requestID, topic: topic,
                    pushType: .liveactivity, priority: priority, collapseID: nil, expiration: expiration, payload: payload,
                    tokenIssuedAt: tokenIssuedAt, channelID: id)
                storage.record(delivery, capacity: deliveryCapacity)
            }
        }
        return answer(.ok, requestID: requestID)
    }

    /// `POST|DELETE /_emulator/subscriptions` with `{"channel": ID, "devices": [TOKEN, …]}`.
    private func changeSubscriptions(_ request: Request, subscribing: Bool) async throws -> Response {
        let usage = "the body is {\"channel\": ID, \"devices\": [TOKEN, …]}"
        var parser = JSONParser()
        guard let document = try? parser.parse(try await request.hookBody(upTo: 4 << 20)), document.root.kind == .object,
            let channelID = document.root["channel"]?.string, let list = document.root["devices"], list.kind == .array
        else { throw HookRefusal(400, usage) }
        var devices: [String] = []
        for element in list.elements {
            guard let token = element.string, Self.isWellFormedDeviceToken(token) else {
                throw HookRefusal(400, "a device token is 64 to 200 hexadecimal digits")
            }
            devices.append(token)
        }
        let known: Bool
        do {
            known = subscribing ? try subscribe(devices, to: channelID) : unsubscribe(devices, from: channelID)
        } catch {
            throw HookRefusal(422, "too many subscriptions: \(error)")
        }
        guard known else { throw HookRefusal(404, "no such channel") }
        return Response(status: .noContent)
    }

    /// 16 random bytes in base64, the form of APNs' channel ids.
    static func newChannelID() -> String {
        Base64.encodedString((0..<16).map { _ in UInt8.random(in: 0...255) })
    }

    /// Base64 of 1 to 64 bytes.
    static func isWellFormedChannelID(_ id: String) -> Bool {
        guard let bytes = Base64.decode(id.utf8) else { return false }
        return (1...64).contains(bytes.count)
    }
}
