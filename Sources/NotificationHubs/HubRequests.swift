public import PushAPNs
public import PushFCM
import PushInternals
import PushJSON
public import PushSAS

/// One hub's address and credentials: what every request is built from.
public struct HubEndpoint: Sendable {
    public let connection: ConnectionString
    public let hubName: String
    /// Where requests go: the namespace's `https://` endpoint, or an override (the hub emulator).
    public let baseURL: String
    /// The REST API version sent with every request.
    public let apiVersion: String

    /// - Parameters:
    ///   - connection: The namespace's parsed connection string.
    ///   - hubName: The hub inside the namespace.
    ///   - apiVersion: The REST API version sent with every request.
    ///   - endpointOverride: send here instead (e.g. `http://127.0.0.1:8080/`); tokens are still
    ///     signed for the namespace, exactly as for Azure.
    /// - Throws: ``NotificationHubError`` `badRequest` for a hub name outside `A-Z a-z 0-9 . _ -`.
    public init(
        connection: ConnectionString, hubName: String, endpointOverride: String? = nil, apiVersion: String = "2020-06"
    ) throws(NotificationHubError) {
        guard !hubName.isEmpty, hubName.utf8.count <= 260,
            hubName.utf8.allSatisfy(HubEndpoint.isHubNameByte)
        else {
            throw NotificationHubError(
                .badRequest, "hub name \(hubName.prefix(40).debugDescription) must be 1 to 260 characters of A-Z a-z 0-9 . _ -")
        }
        self.connection = connection
        self.hubName = hubName
        let base = endpointOverride ?? connection.endpoint
        self.baseURL = base.hasSuffix("/") ? base : base + "/"
        self.apiVersion = apiVersion
    }

    /// What SAS tokens for this hub are signed for: `https://{namespace host}/{hub}`; the hub
    /// accepts such a token for every path below it.
    public var tokenResource: String { "https://\(connection.host)/\(hubName)" }

    private static func isHubNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    func url(_ path: String, query: String = "") -> String {
        baseURL + hubName + path + "?" + (query.isEmpty ? "" : query + "&") + "api-version=" + apiVersion
    }
}

/// An HTTP request to the hub, ready for any HTTP client.
public struct HubRequest: Sendable, Hashable {
    public struct Header: Sendable, Hashable {
        public let name: String
        public let value: String

        /// Refuses a value with a control character: it could end the header and start another.
        static func check(name: String, value: String) throws(NotificationHubError) {
            guard !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw NotificationHubError(.badRequest, "the \(name) header would contain a control character")
            }
        }
    }

    public let method: String
    public let url: String
    public let headers: [Header]
    public let body: [UInt8]

    /// Whether sending it twice has no further effect. Sends are not: a repeated POST notifies twice.
    public var isIdempotent: Bool { method != "POST" }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The same request with `token` as its `Authorization` value.
    func authorized(_ token: String) throws(NotificationHubError) -> HubRequest {
        try Header.check(name: "Authorization", value: token)
        let headers = self.headers.map { $0.name == "Authorization" ? Header(name: $0.name, value: token) : $0 }
        return HubRequest(method: method, url: url, headers: headers, body: body)
    }
}

/// Who receives a notification. There is no default: broadcasting is always asked for by name.
public enum SendTarget: Sendable, Hashable {
    /// Every device registered with the hub.
    case broadcast
    case tag(String)
    /// Devices with any of these tags (at most 20).
    case tags([String])
    case expression(TagExpression)

    /// The `ServiceBusNotification-Tags` value, validated; nil for a broadcast.
    func tagsHeader() throws(NotificationHubError) -> String? {
        let expression: TagExpression
        switch self {
        case .broadcast: return nil
        case .tag(let tag): expression = .tag(tag)
        case .tags(let tags):
            guard let any = TagExpression.any(of: tags) else {
                throw NotificationHubError(.invalidTag, "an empty list of tags targets nobody; use .broadcast to target everybody")
            }
            expression = any
        case .expression(let given): expression = given
        }
        try expression.validate()
        return expression.description
    }
}

extension HubEndpoint {
    /// Direct batch sends carry at most this many device handles per request.
    public static let maximumBatchSize = 1000

    /// `POST /{hub}/messages/`: an APNs notification to a target.
    /// - Throws: ``NotificationHubError`` `payloadTooLarge` over the push type's limit (nothing is
    ///   sent), `invalidTag`/`tooManyTags`, or `badRequest` for invalid APNs headers.
    public func sendRequest(
        _ payload: APNsPayload, headers apnsHeaders: APNsHeaders, to target: SendTarget, authorization: String
    ) throws(NotificationHubError) -> HubRequest {
        try sendRequest(try HubNotification(payload, apnsHeaders), to: target, authorization: authorization)
    }

    /// `POST /{hub}/messages/`: an FCM v1 message (`ServiceBusNotification-Format: fcmv1`) to a
    /// target; the hub delivers it to the target's `fcmv1` installations.
    /// - Throws: ``NotificationHubError`` `payloadTooLarge` over FCM's limit, `badRequest` for a
    ///   message FCM would refuse (nothing is sent), `invalidTag`/`tooManyTags`.
    public func sendRequest(_ message: FCMMessage, to target: SendTarget, authorization: String) throws(NotificationHubError) -> HubRequest {
        try sendRequest(try HubNotification(message), to: target, authorization: authorization)
    }

    /// `POST /{hub}/messages?direct`: to one device handle (an APNs device token in hex).
    public func directSendRequest(
        _ payload: APNsPayload, headers apnsHeaders: APNsHeaders, deviceHandle: String, authorization: String
    ) throws(NotificationHubError) -> HubRequest {
        try directSendRequest(try HubNotification(payload, apnsHeaders), deviceHandle: deviceHandle, authorization: authorization)
    }

    /// `POST /{hub}/messages?direct`: to one FCM registration token.
    public func directSendRequest(_ message: FCMMessage, deviceHandle: String, authorization: String) throws(NotificationHubError) -> HubRequest {
        try directSendRequest(try HubNotification(message), deviceHandle: deviceHandle, authorization: authorization)
    }

    /// `POST /{hub}/messages/$batch?direct`: to many device handles, as many requests as it takes
    /// at ``maximumBatchSize`` handles each. The body is `multipart/mixed`: the notification, then
    /// the JSON array of handles.
    public func batchDirectSendRequests(
        _ payload: APNsPayload, headers apnsHeaders: APNsHeaders, deviceHandles: [String], authorization: String
    ) throws(NotificationHubError) -> [HubRequest] {
        try batchDirectSendRequests(try HubNotification(payload, apnsHeaders), deviceHandles: deviceHandles, authorization: authorization)
    }

    /// `POST /{hub}/messages/$batch?direct`: an FCM v1 message to many FCM registration tokens.
    public func batchDirectSendRequests(
        _ message: FCMMessage, deviceHandles: [String], authorization: String
    ) throws(NotificationHubError) -> [HubRequest] {
        try batchDirectSendRequests(try HubNotification(message), deviceHandles: deviceHandles, authorization: authorization)
    }

    /// `POST /{hub}/messages/` in the `template` format: the properties, which the hub puts into
    /// the templates of the target's installations (every platform's), one notification each.
    /// - Throws: ``NotificationHubError`` `badRequest` for an empty property name or no
    ///   properties, `invalidTag`/`tooManyTags`.
    public func templateSendRequest(
        properties: [String: String], to target: SendTarget, authorization: String
    ) throws(NotificationHubError) -> HubRequest {
        try sendRequest(try HubNotification(templateProperties: properties), to: target, authorization: authorization)
    }

    private func sendRequest(
        _ notification: HubNotification, to target: SendTarget, authorization: String
    ) throws(NotificationHubError)
        -> HubRequest
    {
        var headers = notification.headers(authorization: authorization)
        if let tags = try target.tagsHeader() { headers.append(.init(name: "ServiceBusNotification-Tags", value: tags)) }
        return try request("POST", url("/messages"), headers, body: notification.body)
    }

    private func directSendRequest(
        _ notification: HubNotification, deviceHandle: String, authorization: String
    ) throws(NotificationHubError) -> HubRequest {
        try notification.validateDeviceHandle(deviceHandle)
        var headers = notification.headers(authorization: authorization)
        headers.append(.init(name: "ServiceBusNotification-DeviceHandle", value: deviceHandle))
        return try request("POST", url("/messages", query: "direct"), headers, body: notification.body)
    }

    private func batchDirectSendRequests(
        _ notification: HubNotification, deviceHandles: [String], authorization: String
    ) throws(NotificationHubError) -> [HubRequest] {
        for handle in deviceHandles { try notification.validateDeviceHandle(handle) }
        let boundary = Self.boundary(avoiding: notification.body)
        var headers = notification.headers(authorization: authorization)
        headers.removeAll { $0.name == "Content-Type" }
        headers.append(.init(name: "Content-Type", value: "multipart/mixed; boundary=\"\(boundary)\""))
        var requests: [HubRequest] = []
        var start = 0
        while start < deviceHandles.count {
            let batch = deviceHandles[start..<min(start + Self.maximumBatchSize, deviceHandles.count)]
            let devices = JSON.array(batch.map { .string($0) })
            var devicesJSON: [UInt8] = []
            try? devices.write(into: &devicesJSON)  // strings only: cannot fail
            let body = Self.multipart(boundary: boundary, parts: [("notification", notification.body), ("devices", devicesJSON)])
            requests.append(try request("POST", url("/messages/$batch", query: "direct"), headers, body: body))
            start += batch.count
        }
        return requests
    }

    /// `POST /{hub}/schedulednotifications`: `send` (a native or template send to a target, from
    /// ``sendRequest(_:to:authorization:)`` and its kin) held by the hub until `unixSeconds`,
    /// its devices found then. The time goes as `ServiceBusNotification-ScheduleTime`, UTC.
    public func scheduledSendRequest(_ send: HubRequest, at unixSeconds: Int64) throws(NotificationHubError) -> HubRequest {
        guard isSendToTarget(send) else { throw NotificationHubError(.badRequest, "only a send to tags or to everybody can be scheduled") }
        guard (0...253_402_300_799).contains(unixSeconds) else {
            throw NotificationHubError(.badRequest, "a schedule time is from 1970 to 9999")
        }
        let headers = send.headers + [.init(name: "ServiceBusNotification-ScheduleTime", value: UTCTime.format(unixSeconds))]
        return try request("POST", url("/schedulednotifications"), headers, body: send.body)
    }

    /// `POST /{hub}/messages?test`: `send` (to tags or to everybody) as a test send, which the hub
    /// delivers to a few devices (ten) and answers with each one's result.
    public func testSendRequest(_ send: HubRequest) throws(NotificationHubError) -> HubRequest {
        guard isSendToTarget(send) else { throw NotificationHubError(.badRequest, "only a send to tags or to everybody can be a test send") }
        return try request("POST", url("/messages", query: "test"), send.headers, body: send.body)
    }

    /// Whether `send` is one ``sendRequest(_:to:authorization:)`` or its kin made: to tags or to
    /// everybody, not to device handles.
    private func isSendToTarget(_ send: HubRequest) -> Bool {
        send.method == "POST" && send.url == url("/messages")
    }

    /// `DELETE /{hub}/schedulednotifications/{id}`: cancels a scheduled send that has not gone yet.
    public func cancelScheduledRequest(id: String, authorization: String) throws(NotificationHubError) -> HubRequest {
        guard !id.isEmpty else { throw NotificationHubError(.badRequest, "a scheduled notification id is not empty") }
        return try request(
            "DELETE", url("/schedulednotifications/" + Self.pathSegment(id)), [.init(name: "Authorization", value: authorization)], body: [])
    }

    /// `GET /{hub}/messages/{id}`: what became of a send (Standard tier hubs).
    public func notificationDetailsRequest(id: String, authorization: String) throws(NotificationHubError) -> HubRequest {
        guard !id.isEmpty else { throw NotificationHubError(.badRequest, "a notification id is not empty") }
        return try request("GET", url("/messages/" + Self.pathSegment(id)), [.init(name: "Authorization", value: authorization)], body: [])
    }

    /// `PUT /{hub}/installations/{id}`: creates or replaces an installation.
    public func putInstallationRequest(_ installation: Installation, authorization: String) throws(NotificationHubError) -> HubRequest {
        try installation.validate()
        return try request(
            "PUT", url("/installations/" + Self.pathSegment(installation.installationID)),
            [.init(name: "Authorization", value: authorization), .init(name: "Content-Type", value: "application/json")],
            body: installation.jsonBytes())
    }

    /// `PATCH /{hub}/installations/{id}` with JSON Patch operations.
    public func patchInstallationRequest(
        id: String, _ operations: [InstallationPatch], authorization: String
    ) throws(NotificationHubError) -> HubRequest {
        try Installation.validateID(id)
        for operation in operations { try operation.validate() }
        var body: [UInt8] = []
        try? JSON.array(operations.map(\.json)).write(into: &body)  // strings only: cannot fail
        return try request(
            "PATCH", url("/installations/" + Self.pathSegment(id)),
            [.init(name: "Authorization", value: authorization), .init(name: "Content-Type", value: "application/json-patch+json")],
            body: body)
    }

    /// `GET /{hub}/installations/{id}`.
    public func getInstallationRequest(id: String, authorization: String) throws(NotificationHubError) -> HubRequest {
        try Installation.validateID(id)
        return try request("GET", url("/installations/" + Self.pathSegment(id)), [.init(name: "Authorization", value: authorization)], body: [])
    }

    /// `DELETE /{hub}/installations/{id}`.
    public func deleteInstallationRequest(id: String, authorization: String) throws(NotificationHubError) -> HubRequest {
        try Installation.validateID(id)
        return try request("DELETE", url("/installations/" + Self.pathSegment(id)), [.init(name: "Authorization", value: authorization)], body: [])
    }

    // MARK: Pieces

    /// Builds the request after checking that no header value could split the header block.
    private func request(_ method: String, _ url: String, _ headers: [HubRequest.Header], body: [UInt8]) throws(NotificationHubError) -> HubRequest {
        for header in headers { try HubRequest.Header.check(name: header.name, value: header.value) }
        return HubRequest(method: method, url: url, headers: headers, body: body)
    }

    static func pathSegment(_ text: String) -> String {
        var bytes: [UInt8] = []
        PercentEncoding.append(text.utf8, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func boundary(avoiding body: [UInt8]) -> String {
        var random = SystemRandomNumberGenerator()
        while true {
            let boundary = "pushcore-" + String(random.next() as UInt64, radix: 16) + String(random.next() as UInt64, radix: 16)
            if !body.contains(subsequence: Array(boundary.utf8)) { return boundary }
        }
    }

    static func multipart(boundary: String, parts: [(name: String, body: [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = []
        for part in parts {
            bytes += Array(
                "--\(boundary)\r\nContent-Type: application/json;charset=utf-8\r\nContent-Disposition: inline; name=\(part.name)\r\n\r\n".utf8)
            bytes += part.body
            bytes += Array("\r\n".utf8)
        }
        bytes += Array("--\(boundary)--\r\n".utf8)
        return bytes
    }
}

/// What the hub said about an accepted send.
public struct SendResult: Sendable, Hashable {
    /// From `Location` (`…/messages/{id}?api-version=…`), when the hub gave one (Standard tier).
    public let notificationID: String?
    /// From `Location` (`…/schedulednotifications/{id}?…`) of a scheduled send: what cancels it.
    public let scheduledNotificationID: String?
    public let trackingID: String?
    public let correlationID: String?
    /// The answer's `Location`, whole.
    public let location: String?

    /// Reads the ids from a response's headers (names compared case-insensitively).
    public init(headers: [(name: String, value: String)]) {
        func value(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
        trackingID = value("TrackingId")
        location = value("Location")
        correlationID = value("x-ms-correlation-request-id")
        func id(after marker: String) -> String? {
            guard let location = value("Location"), let range = location.firstRange(of: marker) else { return nil }
            let id = location[range.upperBound...].prefix { $0 != "?" && $0 != "/" }
            return id.isEmpty ? nil : String(id)
        }
        // The service answers some batch sends with `…/messages/$batch/{id}`.
        notificationID = id(after: "/messages/$batch/") ?? id(after: "/messages/")
        scheduledNotificationID = id(after: "/schedulednotifications/")
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return subsequence.isEmpty }
        return (0...(count - subsequence.count)).contains { self[$0..<$0 + subsequence.count].elementsEqual(subsequence) }
    }
}

/// A notification ready to go: its format's headers and its encoded body, checked once for every
/// request that carries it.
struct HubNotification {
    /// The platform of a native notification; nil for a template send's properties.
    let platform: Installation.Platform?
    let formatHeaders: [HubRequest.Header]
    let body: [UInt8]

    init(_ payload: APNsPayload, _ apnsHeaders: APNsHeaders) throws(NotificationHubError) {
        do throws(APNsHeaders.ValidationError) {
            try apnsHeaders.validate()
        } catch {
            throw NotificationHubError(.badRequest, "\(error.header) \(error.message)")
        }
        do throws(APNsPayloadError) {
            body = try payload.encoded(limit: apnsHeaders.pushType.payloadLimit)
        } catch {
            let code: NotificationHubError.Code = error.code == .payloadTooLarge ? .payloadTooLarge : .badRequest
            throw NotificationHubError(code, "the payload was not sent: \(error.message)")
        }
        platform = .apns
        formatHeaders = [Self.format(.apns)] + apnsHeaders.fields.map { .init(name: $0.name, value: $0.value) }
    }

    init(_ message: FCMMessage) throws(NotificationHubError) {
        do throws(FCMMessageError) {
            body = try message.encoded()
        } catch {
            let code: NotificationHubError.Code = error.code == .payloadTooLarge ? .payloadTooLarge : .badRequest
            throw NotificationHubError(code, "the message was not sent: \(error.path.isEmpty ? "" : error.path + ": ")\(error.message)")
        }
        platform = .fcmv1
        formatHeaders = [Self.format(.fcmv1)]
    }

    /// A template send: one JSON object of string properties, sorted so that the same properties
    /// make the same body.
    init(templateProperties properties: [String: String]) throws(NotificationHubError) {
        // None at all is a send the hub takes (each template's expressions then expand to nothing).
        guard !properties.keys.contains("") else {
            throw NotificationHubError(.badRequest, "each of a template send's properties needs a name")
        }
        var body: [UInt8] = []
        try? JSON.object(properties.keys.sorted().map { JSONMember($0, .string(properties[$0]!)) }).write(into: &body)  // strings only
        self.body = body
        platform = nil
        formatHeaders = [.init(name: "ServiceBusNotification-Format", value: "template")]
    }

    private static func format(_ platform: Installation.Platform) -> HubRequest.Header {
        .init(name: "ServiceBusNotification-Format", value: platform.format)
    }

    func headers(authorization: String) -> [HubRequest.Header] {
        [.init(name: "Authorization", value: authorization), .init(name: "Content-Type", value: "application/json;charset=utf-8")] + formatHeaders
    }

    /// A handle's form is the platform's; a template send has no handles to go to.
    func validateDeviceHandle(_ handle: String) throws(NotificationHubError) {
        guard let platform else { throw NotificationHubError(.badRequest, "a template send goes to tags, not to device handles") }
        try platform.validateDeviceHandle(handle)
    }
}

/// What the hub says became of a send (`GET /messages/{id}`, the service's `NotificationDetails`).
public struct NotificationDetails: Sendable, Hashable {
    @nonexhaustive
    public enum State: String, Sendable, Hashable, CustomStringConvertible {
        case enqueued = "Enqueued"
        case detailedStateAvailable = "DetailedStateAvailable"
        case processing = "Processing"
        case completed = "Completed"
        case abandoned = "Abandoned"
        case unknown = "Unknown"
        case noTargetFound = "NoTargetFound"
        case cancelled = "Cancelled"

        public var description: String { rawValue }
    }

    public let notificationID: String
    /// `unknown` for a state this version does not know.
    public let state: State
    /// Whether the state is the last one: the send is over (completed, abandoned, cancelled, or
    /// without a device to reach) and its counts will not change.
    public var isFinal: Bool { [.completed, .abandoned, .noTargetFound, .cancelled].contains(state) }
    /// As the hub writes them (ISO 8601, UTC).
    public let enqueueTime: String?
    public let startTime: String?
    public let endTime: String?
    /// The platforms the send went to, as the hub names them (`apple`, `fcmv1`, …).
    public let targetPlatforms: [String]
    /// Per platform (`Apns`, `FcmV1`, … from the `…OutcomeCounts` elements), each outcome's count
    /// (`Success`, and the names of failures).
    public let outcomeCounts: [String: [String: Int]]

    /// Reads the hub's XML.
    /// - Throws: ``NotificationHubError`` `badRequest` when it is not a `NotificationDetails` document.
    public init(xml bytes: [UInt8]) throws(NotificationHubError) {
        let text = String(decoding: bytes.prefix(1 << 20), as: UTF8.self)
        guard text.contains("<NotificationDetails"), let id = xmlElementText("NotificationId", in: text) else {
            throw NotificationHubError(.badRequest, "the answer is not a NotificationDetails document")
        }
        notificationID = id
        state = xmlElementText("State", in: text).flatMap(State.init(rawValue:)) ?? .unknown
        enqueueTime = xmlElementText("EnqueueTime", in: text)
        startTime = xmlElementText("StartTime", in: text)
        endTime = xmlElementText("EndTime", in: text)
        targetPlatforms = (xmlElementText("TargetPlatforms", in: text) ?? "").split(separator: ",").map {
            String($0.trimmingPrefix(" "))
        }
        var counts: [String: [String: Int]] = [:]
        var rest = Substring(text)
        while let open = rest.firstRange(of: "OutcomeCounts>"), let start = rest[..<open.lowerBound].lastIndex(of: "<") {
            let platform = String(rest[rest.index(after: start)..<open.lowerBound])
            guard !platform.hasPrefix("/"), let close = rest[open.upperBound...].firstRange(of: "</\(platform)OutcomeCounts>") else { break }
            var outcomes: [String: Int] = [:]
            var section = String(rest[open.upperBound..<close.lowerBound])
            while let item = section.firstRange(of: "</Outcome>") {
                let outcome = String(section[..<item.lowerBound])
                if let name = xmlElementText("Name", in: outcome), let count = xmlElementText("Count", in: outcome).flatMap({ Int($0) }) {
                    outcomes[name] = count
                }
                section = String(section[item.upperBound...])
            }
            counts[platform] = outcomes
            rest = rest[close.upperBound...]
        }
        outcomeCounts = counts
    }
}

/// A test send's answer (the service's `NotificationOutcome`): what became of each device it reached.
public struct TestSendOutcome: Sendable, Hashable {
    public struct DeviceResult: Sendable, Hashable {
        /// As the hub names it (`apple`, `fcmv1`, …).
        public let platform: String
        public let pnsHandle: String
        public let registrationID: String
        /// The hub's words for what happened.
        public let outcome: String
    }

    public let success: Int
    public let failure: Int
    public let results: [DeviceResult]

    /// Reads the hub's XML.
    /// - Throws: ``NotificationHubError`` `badRequest` when it is not a `NotificationOutcome` document.
    public init(xml bytes: [UInt8]) throws(NotificationHubError) {
        let text = String(decoding: bytes.prefix(1 << 20), as: UTF8.self)
        guard text.contains("<NotificationOutcome"), let success = xmlElementText("Success", in: text).flatMap({ Int($0) }),
            let failure = xmlElementText("Failure", in: text).flatMap({ Int($0) })
        else {
            throw NotificationHubError(.badRequest, "the answer is not a NotificationOutcome document")
        }
        self.success = success
        self.failure = failure
        var results: [DeviceResult] = []
        var rest = Substring(text)
        while let end = rest.firstRange(of: "</RegistrationResult>") {
            let item = String(rest[..<end.lowerBound])
            results.append(
                DeviceResult(
                    platform: xmlElementText("ApplicationPlatform", in: item) ?? "", pnsHandle: xmlElementText("PnsHandle", in: item) ?? "",
                    registrationID: xmlElementText("RegistrationId", in: item) ?? "", outcome: xmlElementText("Outcome", in: item) ?? ""))
            rest = rest[end.upperBound...]
        }
        self.results = results
    }
}
