import Foundation
import HTTPTypes
public import Hummingbird
package import NIOCore
import NIOSSL
import PushAPNs
import PushAPNsTokens
package import PushJSON
package import PushServerSupport
import Synchronization

/// How APNs refuses a request: a status, `{"reason": …}` (with `timestamp` for 410) and the
/// request's id: `apns-id` for device sends, `apns-request-id` for channels and broadcasts.
struct APNsRefusal: HTTPResponseError {
    let status: HTTPResponse.Status
    let reason: String
    var apnsID: String?
    var idHeader: HTTPField.Name
    var timestamp: Int64?
    var retryAfter: String?

    init(
        _ status: Int, _ reason: String, apnsID: String? = nil, idHeader: HTTPField.Name = .apnsID, timestamp: Int64? = nil,
        retryAfter: String? = nil
    ) {
        self.status = .init(code: status)
        self.reason = reason
        self.apnsID = apnsID
        self.idHeader = idHeader
        self.timestamp = timestamp
        self.retryAfter = retryAfter
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var members = [JSONMember("reason", .string(reason))]
        if let timestamp { members.append(JSONMember("timestamp", .number(JSONNumber(Int(timestamp))))) }
        var json: [UInt8] = []
        try? JSON.object(members).write(into: &json)
        var headers: HTTPFields = [.contentType: "application/json"]
        if let apnsID { headers[idHeader] = apnsID }
        if let retryAfter { headers[.retryAfter] = retryAfter }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}

/// Hummingbird's basic context and the request's stream channel, whose parent is the connection:
/// connection faults act on it, and certificate authentication reads its client certificate.
public struct APNsEmulatorRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// Whether the request came on an HTTP/2 stream. A stream's parent is its connection, whose
    /// own parent is the listener; an HTTP/1 connection's parent is the listener itself.
    package var isHTTP2: Bool { channel.parent?.parent != nil }

    /// The HTTP/2 connection (the stream's parent), or the channel itself over HTTP/1.
    package var connection: any Channel {
        guard isHTTP2, let parent = channel.parent else { return channel }
        return parent
    }
}

extension HTTPField.Name {
    static let apnsID = HTTPField.Name("apns-id")!
    static let apnsUniqueID = HTTPField.Name("apns-unique-id")!
    static let apnsTopic = HTTPField.Name("apns-topic")!
    static let apnsPushType = HTTPField.Name("apns-push-type")!
    static let apnsPriority = HTTPField.Name("apns-priority")!
    static let apnsExpiration = HTTPField.Name("apns-expiration")!
    static let apnsCollapseID = HTTPField.Name("apns-collapse-id")!
    static let apnsRequestID = HTTPField.Name("apns-request-id")!
    static let apnsChannelID = HTTPField.Name("apns-channel-id")!
}

extension APNsEmulator {
    package func router() -> Router<APNsEmulatorRequestContext> {
        let router = Router(context: APNsEmulatorRequestContext.self)
        // APNs answers `BadPath` for a path it does not serve, `MethodNotAllowed` for another method on a device's.
        router.add(
            middleware: UnroutedRequestGate { request in
                let path = request.uri.path
                let isDevicePath = path.hasPrefix("/3/device/") && path.split(separator: "/").count == 3
                return isDevicePath ? APNsRefusal(405, "MethodNotAllowed") : APNsRefusal(404, "BadPath")
            })
        router.post("3/device/:device") { [self] request, context in
            let device = try context.parameters.require("device")
            if isBenchmark { return try await benchmarkSend(request, context: context, deviceToken: device) }
            return try await applyingFaults(context: context) { try await authorisedSend(request, context: context, deviceToken: device) }
        }
        addChannelRoutes(to: router)
        let hooks = router.group("_emulator")
        hooks.addRecordingHooks(for: self)
        guard allowsFaultInjection else { return router }
        hooks.put("devices/:device") { [self] request, context in
            let device = try context.parameters.require("device")
            guard Self.isWellFormedDeviceToken(device) else { throw HookRefusal(400, "a device token is 64 to 200 hexadecimal digits") }
            setState(try Self.deviceState(from: try await request.hookBody(upTo: 1024)), for: device)
            return Response(status: .noContent)
        }
        hooks.addFaultHook(for: self)
        return router
    }

    // MARK: Sends

    /// Refuses HTTP/1, as APNs does; counts the request and applies the next queued fault, if its
    /// turn has come, around `handle`.
    func applyingFaults(
        context: APNsEmulatorRequestContext, _ handle: () async throws -> Response
    ) async throws -> Response {
        guard context.isHTTP2 else { throw HookRefusal(505, "APNs takes requests over HTTP/2 only") }
        let fault = state.withLock { storage -> APNsFault? in
            storage.requests += 1
            return storage.faults.next()
        }
        switch fault {
        case .status(let status, let reason, let retryAfter)?: throw APNsRefusal(status, reason, retryAfter: retryAfter)
        case .connection(let fault)?: return try await EmulatorConnectionFaults.answer(after: fault, context: context, handle)
        case nil: return try await handle()
        }
    }

    private func authorisedSend(_ request: Request, context: APNsEmulatorRequestContext, deviceToken: String) async throws -> Response {
        let headers = request.headers
        let requestedID = headers[.apnsID]
        for name in [HTTPField.Name.authorization, .apnsID, .apnsTopic, .apnsPushType, .apnsPriority, .apnsExpiration, .apnsCollapseID]
        where headers[values: name].count > 1 {
            throw APNsRefusal(400, "DuplicateHeaders", apnsID: requestedID)
        }
        let apnsID = requestedID?.lowercased() ?? UUID().uuidString.lowercased()
        let (connection, tokenIssuedAt) = try await authenticate(headers, context: context, answerID: apnsID, idHeader: .apnsID)

        // The headers.
        guard let pushTypeText = headers[.apnsPushType], let pushType = APNsPushType(rawValue: pushTypeText) else {
            throw APNsRefusal(400, "InvalidPushType", apnsID: apnsID)
        }
        guard let topic = headers[.apnsTopic], !topic.isEmpty else { throw APNsRefusal(400, "MissingTopic", apnsID: apnsID) }
        let bundleID = pushType.topicSuffix.map { topic.hasSuffix($0) ? String(topic.dropLast($0.count)) : topic } ?? topic
        guard bundleIDs.contains(bundleID) else { throw APNsRefusal(400, "TopicDisallowed", apnsID: apnsID) }
        var priority = APNsHeaders.defaultPriority(for: pushType)
        if let text = headers[.apnsPriority] {
            guard let value = Int(text) else { throw APNsRefusal(400, "BadPriority", apnsID: apnsID) }
            priority = value
        }
        var expiration: Int?
        if let text = headers[.apnsExpiration] {
            guard let value = Int(text) else { throw APNsRefusal(400, "BadExpirationDate", apnsID: apnsID) }
            expiration = value
        }
        let apnsHeaders = APNsHeaders(
            pushType: pushType, priority: priority, expiration: expiration, collapseID: headers[.apnsCollapseID], id: requestedID, topic: topic)
        do throws(APNsHeaders.ValidationError) {
            try apnsHeaders.validate()
        } catch {
            let reason =
                switch error.code {
                case .invalidPriority: "BadPriority"
                case .invalidExpiration: "BadExpirationDate"
                case .invalidCollapseID: "BadCollapseId"
                case .invalidID: "BadMessageId"
                case .invalidTopic: "DeviceTokenNotForTopic"
                }
            throw APNsRefusal(400, reason, apnsID: apnsID)
        }

        // The payload.
        guard let payload: [UInt8] = try await request.collectBytes(upTo: pushType.payloadLimit) else {
            throw APNsRefusal(413, "PayloadTooLarge", apnsID: apnsID)
        }
        guard !payload.isEmpty else { throw APNsRefusal(400, "PayloadEmpty", apnsID: apnsID) }
        var parser = JSONParser()
        guard let document = try? parser.parse(payload), document.root.kind == .object else {
            throw APNsRefusal(400, "BadPayload", apnsID: apnsID)
        }

        // The device.
        guard Self.isWellFormedDeviceToken(deviceToken) else { throw APNsRefusal(400, "BadDeviceToken", apnsID: apnsID) }
        let device = deviceToken.lowercased()
        let accepted = state.withLock { storage -> APNsDeviceState? in
            let deviceState = storage.devices[device] ?? .active
            guard deviceState == .active else { return deviceState }
            if let app = storage.deviceApps[device], app != bundleID { return nil }
            let delivery = APNsDelivery(
                sequence: storage.nextSequence, connection: connection, deviceToken: device, apnsID: apnsID, topic: topic, pushType: pushType,
                priority: priority, collapseID: apnsHeaders.collapseID, expiration: expiration, payload: payload, tokenIssuedAt: tokenIssuedAt,
                channelID: nil)
            storage.record(delivery, capacity: deliveryCapacity)
            return .active
        }
        switch accepted {
        case nil:
            throw APNsRefusal(400, "DeviceTokenNotForTopic", apnsID: apnsID)
        case .active:
            var fields: HTTPFields = [.apnsID: apnsID]
            if isDevelopment { fields[.apnsUniqueID] = UUID().uuidString.lowercased() }
            return Response(status: .ok, headers: fields)
        case .bad:
            throw APNsRefusal(400, "BadDeviceToken", apnsID: apnsID)
        case .unregistered(let since):
            throw APNsRefusal(410, "Unregistered", apnsID: apnsID, timestamp: since)
        }
    }

    /// `--benchmark`: the connection's provider token checked when it changes, then 200 to every
    /// well-formed request, recording nothing, so that a benchmark measures the client.
    private func benchmarkSend(_ request: Request, context: APNsEmulatorRequestContext, deviceToken: String) async throws -> Response {
        guard context.isHTTP2 else { throw HookRefusal(505, "APNs takes requests over HTTP/2 only") }
        let headers = request.headers
        let apnsID = headers[.apnsID] ?? UUID().uuidString.lowercased()
        let connection = ObjectIdentifier(context.connection)
        let authorization = headers[.authorization]
        if authorization == nil || state.withLock({ $0.benchmarkTokens[connection] }) != authorization {
            _ = try await authenticate(headers, context: context, answerID: apnsID, idHeader: .apnsID)
            state.withLock { $0.benchmarkTokens[connection] = authorization }
        }
        guard let pushType = headers[.apnsPushType].flatMap(APNsPushType.init(rawValue:)) else {
            throw APNsRefusal(400, "InvalidPushType", apnsID: apnsID)
        }
        guard let topic = headers[.apnsTopic], !topic.isEmpty else { throw APNsRefusal(400, "MissingTopic", apnsID: apnsID) }
        guard Self.isWellFormedDeviceToken(deviceToken) else { throw APNsRefusal(400, "BadDeviceToken", apnsID: apnsID) }
        guard let payload = try await request.collectBytes(upTo: pushType.payloadLimit) else {
            throw APNsRefusal(413, "PayloadTooLarge", apnsID: apnsID)
        }
        guard !payload.isEmpty else { throw APNsRefusal(400, "PayloadEmpty", apnsID: apnsID) }
        return Response(status: .ok, headers: [.apnsID: apnsID])
    }

    /// The provider token, or else a client certificate the TLS handshake verified: the request's
    /// connection number and the token's `iat` (nil for a certificate).
    func authenticate(
        _ headers: HTTPFields, context: APNsEmulatorRequestContext, answerID: String, idHeader: HTTPField.Name
    ) async throws(APNsRefusal) -> (connection: Int, tokenIssuedAt: Int64?) {
        let connection = connectionNumber(of: context.connection)
        if let authorization = headers[.authorization] {
            do throws(APNsRefusal) {
                return (connection, try authorise(authorization, on: connection, apnsID: answerID))
            } catch {
                var refusal = error
                refusal.idHeader = idHeader
                throw refusal
            }
        }
        if !clientCertificateRoots.isEmpty, (try? await context.connection.nioSSL_peerCertificate().get()) != nil {
            return (connection, nil)
        }
        throw APNsRefusal(403, "MissingProviderToken", apnsID: answerID, idHeader: idHeader)
    }

    /// The number of the connection `channel` is, given when it sends its first request; its
    /// number and token slots are dropped when it closes.
    private func connectionNumber(of channel: any Channel) -> Int {
        let id = ObjectIdentifier(channel)
        let (number, isNew) = state.withLock { storage -> (Int, Bool) in
            if let number = storage.connectionNumbers[id] { return (number, false) }
            storage.connectionsSeen += 1
            storage.connectionNumbers[id] = storage.connectionsSeen
            return (storage.connectionsSeen, true)
        }
        if isNew {
            channel.closeFuture.whenComplete { _ in
                self.state.withLock { storage in
                    storage.connectionNumbers[id] = nil
                    storage.benchmarkTokens[id] = nil
                    storage.tokens = storage.tokens.filter { $0.key.connection != number }
                }
            }
        }
        return number
    }

    /// Checks a `bearer` provider token as APNs does and returns its `iat`.
    private func authorise(_ authorization: String, on connection: Int, apnsID: String) throws(APNsRefusal) -> Int64 {
        guard authorization.hasPrefix("bearer ") else { throw APNsRefusal(403, "InvalidProviderToken", apnsID: apnsID) }
        let token = String(authorization.dropFirst("bearer ".count))
        let now = clock.now()
        let claims: APNsProviderTokenClaims
        do throws(APNsTokenError) {
            if let verified = state.withLock({ $0.verifiedTokens[token] }) {
                try verifier.checkAge(issuedAt: verified.issuedAt, now: now)
                claims = verified
            } else {
                claims = try verifier.verify(token, now: now)
                state.withLock { storage in
                    if storage.verifiedTokens.count >= Self.maximumVerifiedTokens { storage.verifiedTokens.removeAll() }
                    storage.verifiedTokens[token] = claims
                }
            }
        } catch {
            throw APNsRefusal(403, error.code == .expired ? "ExpiredProviderToken" : "InvalidProviderToken", apnsID: apnsID)
        }
        let slot = TokenSlot(connection: connection, teamID: claims.teamID)
        let tooSoon = state.withLock { storage -> Bool in
            guard let last = storage.tokens[slot] else {
                storage.tokens[slot] = (token, now)
                return false
            }
            if last.token == token { return false }
            guard now - last.since >= Self.minimumTokenInterval else { return true }
            storage.tokens[slot] = (token, now)
            return false
        }
        if tooSoon { throw APNsRefusal(429, "TooManyProviderTokenUpdates", apnsID: apnsID) }
        return claims.issuedAt
    }

    /// 64 to 200 hexadecimal digits, an even number: today's tokens are 32 bytes, and Apple says
    /// they may grow.
    static func isWellFormedDeviceToken(_ token: String) -> Bool {
        let bytes = token.utf8
        return (64...200).contains(bytes.count) && bytes.count % 2 == 0
            && bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
    }

    // MARK: Test hooks

    /// A delivery as `GET /_emulator/deliveries` lists it.
    package static func hookJSON(_ delivery: APNsDelivery) -> JSON {
        var members = [
            JSONMember("sequence", .number(JSONNumber(delivery.sequence))),
            JSONMember("connection", .number(JSONNumber(delivery.connection))), JSONMember("deviceToken", .string(delivery.deviceToken)),
            JSONMember("apnsId", .string(delivery.apnsID)), JSONMember("topic", .string(delivery.topic)),
            JSONMember("pushType", .string(delivery.pushType.rawValue)), JSONMember("priority", .number(JSONNumber(delivery.priority))),
        ]
        if let collapseID = delivery.collapseID { members.append(JSONMember("collapseId", .string(collapseID))) }
        if let expiration = delivery.expiration { members.append(JSONMember("expiration", .number(JSONNumber(expiration)))) }
        members.append(JSONMember("payload", .string(String(decoding: delivery.payload, as: UTF8.self))))
        if let issuedAt = delivery.tokenIssuedAt { members.append(JSONMember("tokenIssuedAt", .number(JSONNumber(Int(issuedAt))))) }
        if let channelID = delivery.channelID { members.append(JSONMember("channelId", .string(channelID))) }
        return JSON.object(members)
    }

    static func deviceState(from body: [UInt8]) throws(HookRefusal) -> APNsDeviceState {
        var parser = JSONParser()
        guard let document = try? parser.parse(body), document.root.kind == .object, let name = document.root["state"]?.string else {
            throw HookRefusal(400, "the body is {\"state\": \"active\" | \"bad\" | \"unregistered\", \"since\": MILLISECONDS}")
        }
        switch name {
        case "active": return .active
        case "bad": return .bad
        case "unregistered":
            guard let since = document.root["since"]?.int, since >= 0 else {
                throw HookRefusal(400, "an unregistered device needs since, milliseconds since 1970")
            }
            return .unregistered(sinceMilliseconds: Int64(since))
        default:
            throw HookRefusal(400, "state is active, bad or unregistered")
        }
    }

    /// `{"status": 100…599, "reason": "…", "retryAfter": "…"}`, `{"delayMilliseconds": 0…300000}`
    /// or `{"connection": "goAway" | "drop" | "silence"}`, each with optional `"count": 1…` (that many
    /// requests in a row) and `"after": N` (requests that pass untouched first); every field checked.
    package static func faults(from body: [UInt8]) throws(HookRefusal) -> (faults: [APNsFault], after: Int) {
        var parser = JSONParser()
        guard let document = try? parser.parse(body), document.root.kind == .object else { throw HookRefusal(400, "the body is a JSON object") }
        let root = document.root
        let known: Set<String> = ["status", "reason", "retryAfter", "delayMilliseconds", "connection", "count", "after"]
        if let unknown = root.members.first(where: { !known.contains($0.key.string ?? "") }) {
            throw HookRefusal(400, "unknown field \((unknown.key.string ?? "").debugDescription)")
        }
        func whole(_ key: String, in range: ClosedRange<Int>, default value: Int) throws(HookRefusal) -> Int {
            guard let field = root[key] else { return value }
            guard let number = field.int, range.contains(number) else {
                throw HookRefusal(400, "\(key) is a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let count = try whole("count", in: 1...maximumQueuedFaults, default: 1)
        let after = try whole("after", in: 0...maximumRequestsBeforeFault, default: 0)
        func headerValue(_ key: String) throws(HookRefusal) -> String? {
            guard let value = root[key] else { return nil }
            guard let text = value.string, (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw HookRefusal(400, "\(key) is 1 to 64 printable ASCII characters")
            }
            return text
        }
        let fault: APNsFault
        switch (root["status"], root["delayMilliseconds"], root["connection"]) {
        case (let status?, nil, nil):
            guard let code = status.int, (100...599).contains(code) else { throw HookRefusal(400, "status is a whole number from 100 to 599") }
            fault = .status(code, reason: try headerValue("reason") ?? "InternalServerError", retryAfter: try headerValue("retryAfter"))
        case (nil, let delay?, nil):
            let limit = Int(maximumFaultDelay.components.seconds) * 1000
            guard root["retryAfter"] == nil, root["reason"] == nil, let milliseconds = delay.int, (0...limit).contains(milliseconds) else {
                throw HookRefusal(400, "delayMilliseconds is a whole number from 0 to \(limit), without reason or retryAfter")
            }
            fault = .connection(.delay(.milliseconds(milliseconds)))
        case (nil, nil, let connection?):
            guard root["retryAfter"] == nil, root["reason"] == nil else {
                throw HookRefusal(400, "connection takes no reason or retryAfter")
            }
            fault = .connection(try ConnectionFault(hookName: connection.string))
        default:
            throw HookRefusal(400, "give one of status, delayMilliseconds or connection")
        }
        return (Array(repeating: fault, count: count), after)
    }
}
