import Foundation
import HTTPTypes
package import Hummingbird
import NIOCore
import NotificationHubs
import PushCore
import PushFCM
import PushInternals
import PushServerSupport
import Synchronization

/// A request to the emulator: Hummingbird's context, and for hub routes the tracking id of the
/// answer and the verified token.
package struct HubRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    var trackingID = ""
    var token: SASTokenInfo?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    /// The hub the route names, as ``HubGate`` found it.
    var hub: String { get throws { try parameters.require("hub") } }
}

/// How the hub refuses a request: `<Error><Code>…</Code><Detail>… TrackingId:…</Detail></Error>`.
struct HubError: HTTPResponseError {
    let status: HTTPResponse.Status
    let detail: String
    let trackingID: String
    var retryAfter: String?

    init(_ status: Int, _ detail: String, trackingID: String, retryAfter: String? = nil) {
        self.status = .init(code: status)
        self.detail = detail
        self.trackingID = trackingID
        self.retryAfter = retryAfter
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let escaped = xmlEscaped(detail)
        var fields: HTTPFields = [.contentType: "application/xml; charset=utf-8", .trackingID: trackingID]
        if let retryAfter { fields[.retryAfter] = retryAfter }
        let body = "<Error><Code>\(status.code)</Code><Detail>\(escaped) TrackingId:\(trackingID)</Detail></Error>"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

/// In front of every hub route, matched or not, in the order the service checks: the hub exists,
/// a queued fault answers instead, the SAS token is valid for the namespace's URI of the path;
/// then a path no route takes is 404. The test hooks under `/_emulator` pass straight through.
struct HubGate: RouterMiddleware {
    typealias Context = HubRequestContext
    let emulator: HubEmulator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        let firstSegment = path.split(separator: "/").first.map { $0.removingPercentEncoding ?? String($0) }
        if firstSegment == "_emulator" {
            do {
                return try await next(request, context)
            } catch let error as HTTPError where error.status == .notFound {
                throw HookRefusal(404, "no such test hook")
            }
        }
        var context = context
        context.trackingID = UUID().uuidString.lowercased()
        let trackingID = context.trackingID
        guard let hubName = firstSegment, let hub = emulator.hubs[hubName], let verifier = emulator.verifiers[hubName] else {
            throw HubError(404, "The hub \(firstSegment ?? "") does not exist in this namespace.", trackingID: trackingID)
        }
        var request = request
        let body = Array(try await request.collectBody(upTo: 1 << 20).readableBytesView)
        var headers: [String: String] = [:]
        for field in request.headers where field.name != .authorization {
            headers[field.name.canonicalName, default: ""] += (headers[field.name.canonicalName] == nil ? "" : ", ") + field.value
        }
        let record = HubRequestRecord(
            method: request.method.rawValue, target: request.uri.path + (request.uri.query.map { "?" + $0 } ?? ""), headers: headers, body: body)
        let fault = emulator.state.withLock { storage -> Fault? in
            storage.requests += 1
            if storage.requestLog.count == HubEmulator.requestLogCapacity { storage.requestLog.removeFirst() }
            storage.requestLog.append(record)
            return storage.faults.isEmpty ? nil : storage.faults.removeFirst()
        }
        switch fault {
        case .status(let status, let retryAfter)?:
            throw HubError(status, "Injected fault.", trackingID: trackingID, retryAfter: retryAfter)
        case .delay(let delay)?:
            try? await Task.sleep(for: delay)
        case nil:
            break
        }
        // Every request is signed for the namespace's https URI, whatever address it came to.
        do throws(SASError) {
            context.token = try verifier.verify(
                request.headers[.authorization] ?? "", uri: "https://\(hub.connection.host)\(path)", now: emulator.clock.now())
        } catch {
            let reason = error.code == .expired ? "ExpiredToken" : "InvalidSignature"
            throw HubError(401, "\(reason): \(error.message)", trackingID: trackingID)
        }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            throw HubError(404, "No route for \(request.method.rawValue) \(path).", trackingID: trackingID)
        }
    }
}

extension HTTPField.Name {
    static let trackingID = HTTPField.Name("TrackingId")!
}

extension Response {
    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A hub's answer without a body.
    static func hub(_ status: HTTPResponse.Status, trackingID: String) -> Response {
        Response(status: status, headers: [.trackingID: trackingID])
    }
}

extension HubEmulator {
    /// The routes: the test hooks, then the hub's routes behind ``HubGate``.
    package func router() -> Router<HubRequestContext> {
        let router = Router(context: HubRequestContext.self)
        router.add(middleware: HubGate(emulator: self))

        let hooks = router.group("_emulator")
        hooks.get("deliveries") { [self] request, _ in try deliveriesList(query: request.uri.query ?? "") }
        hooks.delete("deliveries") { [self] _, _ in
            reset()
            return Response(status: .noContent)
        }
        hooks.get("requests") { [self] _, _ in Response.json(Array(String(requestCount).utf8)) }
        // Off in a demo, where anyone on the machine reaches the port: moving the clock would
        // release every scheduled send at once.
        if allowsFaultInjection {
            hooks.post("faults") { [self] request, _ in try await queueFaults(body(of: request)) }
            hooks.post("clock") { [self] request, _ in try await advanceClock(body(of: request)) }
        }

        let hub = router.group(":hub")
        hub.post("messages") { [self] request, context in try await send(request, context: context, batch: false) }
        hub.get("messages/:id") { [self] request, context in
            try notificationDetails(request, hub: context.hub, id: try context.parameters.require("id"), trackingID: context.trackingID)
        }
        hub.post("schedulednotifications") { [self] request, context in try await schedule(request, context: context) }
        hub.delete("schedulednotifications/:id") { [self] _, context in
            try cancelScheduled(hub: context.hub, id: try context.parameters.require("id"), trackingID: context.trackingID)
        }
        hub.post("messages/$batch") { [self] request, context in try await send(request, context: context, batch: true) }
        for method in [HTTPRequest.Method.put, .patch, .get, .delete, .post, .head, .options] {
            hub.on("installations/:id", method: method) { [self] request, context in
                let id = try context.parameters.require("id")
                return try await installation(
                    method: request.method, hub: context.hub, id: id.removingPercentEncoding ?? id, body: body(of: request),
                    trackingID: context.trackingID)
            }
        }
        return router
    }

    private func body(of request: Request) async throws -> [UInt8] {
        var request = request
        return Array(try await request.collectBody(upTo: 1 << 20).readableBytesView)
    }

    // MARK: Sends

    /// `POST /{hub}/messages` (`?direct`, `$batch?direct`; with or without a final `/`): checked now, delivered now.
    private func send(_ request: Request, context: HubRequestContext, batch: Bool) async throws -> Response {
        var (hub, dispatch) = try await parseSend(request, context: context, batch: batch)
        dispatch.isTest = (request.uri.query ?? "").split(separator: "&").contains("test")
        let (id, results) = self.dispatch(dispatch, hub: hub)
        // As the service answers: an APNs batch's id under `messages/$batch/`, an FCM batch's under `messages/`.
        var isAppleBatch = false
        if batch, case .native(.apns, _, _) = dispatch.content { isAppleBatch = true }
        var response = created(request, hub: hub, path: isAppleBatch ? "messages/$batch" : "messages", id: id, trackingID: context.trackingID)
        if dispatch.isTest {
            response.headers[.contentType] = "application/xml; charset=utf-8"
            response.body = ResponseBody(byteBuffer: ByteBuffer(string: Self.testSendOutcome(results)))
        }
        return response
    }

    /// `POST /{hub}/schedulednotifications`: checked now, held until the emulator's clock reaches
    /// `ServiceBusNotification-ScheduleTime` (ISO 8601, UTC without a zone), its devices found then.
    private func schedule(_ request: Request, context: HubRequestContext) async throws -> Response {
        let trackingID = context.trackingID
        guard let time = request.headers[HTTPField.Name("ServiceBusNotification-ScheduleTime")!], let due = UTCTime.parse(time) else {
            throw HubError(
                400, "A scheduled send needs ServiceBusNotification-ScheduleTime, an ISO 8601 time (yyyy-MM-ddTHH:mm:ss[.fff][Z|±hh:mm]).",
                trackingID: trackingID)
        }
        let (hub, dispatch) = try await parseSend(request, context: context, batch: false)
        guard dispatch.handles == nil else { throw HubError(400, "A scheduled send goes to tags, not to device handles.", trackingID: trackingID) }
        let id = state.withLock { storage -> String in
            storage.scheduledCount += 1
            let id = "scheduled-\(storage.scheduledCount)"
            storage.scheduled[hub + "/" + id] = ScheduledSend(id: id, hub: hub, due: due, dispatch: dispatch)
            return id
        }
        releaseDueSends()
        return created(request, hub: hub, path: "schedulednotifications", id: id, trackingID: trackingID)
    }

    /// `DELETE /{hub}/schedulednotifications/{id}`: 200 when it was still held, 404 otherwise.
    private func cancelScheduled(hub: String, id: String, trackingID: String) throws -> Response {
        releaseDueSends()
        guard state.withLock({ $0.scheduled.removeValue(forKey: hub + "/" + id) }) != nil else {
            throw HubError(404, "No scheduled notification \(id.debugDescription) is waiting.", trackingID: trackingID)
        }
        return .hub(.ok, trackingID: trackingID)
    }

    /// A send as the hub received it, before its devices are found.
    private func parseSend(_ request: Request, context: HubRequestContext, batch: Bool) async throws -> (hub: String, dispatch: Dispatch) {
        let trackingID = context.trackingID
        guard let token = context.token, !token.keyName.lowercased().contains("listen") else {
            throw HubError(403, "Unauthorized access. 'Send' claim(s) are required to perform this operation.", trackingID: trackingID)
        }
        let hub = try context.hub
        let headers = request.headers
        let direct = (request.uri.query ?? "").split(separator: "&").contains("direct")
        let body = try await body(of: request)
        var payload = body
        var handles: [String]?
        let format = headers[HTTPField.Name("ServiceBusNotification-Format")!]
        if format == "template" {
            guard !direct && !batch else { throw HubError(400, "A template send goes to tags, not to device handles.", trackingID: trackingID) }
            guard let document = parsedJSON(body), document.root.kind == .object else {
                throw HubError(400, "A template send's body is a JSON object of string properties.", trackingID: trackingID)
            }
            var properties: [String: String] = [:]
            for member in document.root.members {
                guard let name = member.key.string, let value = member.value.string else {
                    throw HubError(400, "A template send's properties are strings.", trackingID: trackingID)
                }
                properties[name] = value
            }
            return (
                hub,
                Dispatch(
                    content: .template(TemplateExpansion.Properties(properties)), expression: try tagExpression(headers, trackingID: trackingID),
                    tokenExpiry: token.expiry)
            )
        }
        guard let platform = format.flatMap(Installation.Platform.init(format:)) else {
            throw HubError(400, "ServiceBusNotification-Format must be apple, fcmv1 or template.", trackingID: trackingID)
        }
        if batch {
            guard direct, let parts = multipartParts(contentType: headers[.contentType] ?? "", body: body),
                let notification = parts["notification"], let devices = parts["devices"],
                let list = parsedJSON(devices), list.root.kind == .array
            else {
                throw HubError(400, "A batch send is multipart/mixed with a notification part and a devices part.", trackingID: trackingID)
            }
            payload = notification
            let listed = list.root.elements.compactMap { $0.string }
            guard listed.count <= HubEndpoint.maximumBatchSize else {
                throw HubError(400, "At most \(HubEndpoint.maximumBatchSize) devices per batch.", trackingID: trackingID)
            }
            handles = listed
        } else if direct {
            guard let handle = headers[HTTPField.Name("ServiceBusNotification-DeviceHandle")!] else {
                throw HubError(400, "A direct send needs ServiceBusNotification-DeviceHandle.", trackingID: trackingID)
            }
            handles = [handle]
        }
        if let refusal = Self.refusal(payload, for: platform, apnsPushType: headers[HTTPField.Name("apns-push-type")!]) {
            throw HubError(refusal.status, refusal.message, trackingID: trackingID)
        }
        var apnsHeaders: [String: String] = [:]
        for field in headers where field.name.canonicalName.hasPrefix("apns-") { apnsHeaders[field.name.canonicalName] = field.value }
        return (
            hub,
            Dispatch(
                content: .native(platform, payload: payload, apnsHeaders: apnsHeaders),
                expression: handles == nil ? try tagExpression(headers, trackingID: trackingID) : nil, handles: handles, tokenExpiry: token.expiry)
        )
    }

    /// Finds the send's devices (its handles, or the installations its tags reach), records a
    /// delivery for each and the send's outcome; its notification id, and each device's result.
    /// A test send stops at ``testSendLimit`` devices, as the service's does.
    func dispatch(_ dispatch: Dispatch, hub: String) -> (id: String, results: [DeviceResult]) {
        let installations = state.withLock { storage in
            (storage.installations[hub] ?? [:]).values.sorted { $0.installationID < $1.installationID }
        }
        var outcome = NotificationOutcome(enqueueTime: now(), delivered: [:], failures: [])
        var devices: [(platform: Installation.Platform, handle: String, payload: [UInt8], headers: [String: String])] = []
        var results: [DeviceResult] = []
        let limit = dispatch.isTest ? Self.testSendLimit : Int.max
        switch dispatch.content {
        case .native(let platform, let payload, let apnsHeaders):
            let targets: [(registration: String, handle: String)] =
                dispatch.handles?.map { ($0, $0) }
                ?? installations.compactMap { installation in
                    installation.platform == platform && dispatch.reaches(installation)
                        ? (installation.installationID, installation.pushChannel) : nil
                }
            for target in targets.prefix(limit) {
                devices.append((platform, target.handle, payload, apnsHeaders))
                results.append(DeviceResult(platform: platform, handle: target.handle, registration: target.registration, failure: nil))
            }
            if !targets.isEmpty { outcome.targetPlatforms = [platform] }
        case .template(let properties):
            for installation in installations {
                for name in installation.templates.keys.sorted() where results.count < limit {
                    let template = installation.templates[name]!
                    guard dispatch.reaches(installation, withTags: template.tags) else { continue }
                    outcome.targetPlatforms.insert(installation.platform)
                    switch Self.expand(template, for: installation.platform, properties: properties) {
                    case .success(let (payload, headers)):
                        devices.append((installation.platform, installation.pushChannel, payload, headers))
                        results.append(
                            DeviceResult(
                                platform: installation.platform, handle: installation.pushChannel, registration: installation.installationID,
                                failure: nil))
                    case .failure(let refusal):
                        outcome.failures.append(
                            .init(
                                installationID: installation.installationID, template: name, platform: installation.platform,
                                outcome: refusal.status == 413 ? "InvalidNotificationSize" : "InvalidNotificationFormat", reason: refusal.message))
                        results.append(
                            DeviceResult(
                                platform: installation.platform, handle: installation.pushChannel, registration: installation.installationID,
                                failure: refusal.message))
                    }
                }
            }
        }
        for device in devices { outcome.delivered[device.platform, default: 0] += 1 }
        let id = state.withLock { storage -> String in
            storage.notifications += 1
            let id = String(storage.notifications)
            storage.outcomes[hub + "/" + id] = outcome
            for device in devices {
                record(
                    { sequence in
                        Delivery(
                            sequence: sequence, hub: hub, notificationID: id, platform: device.platform, deviceHandle: device.handle,
                            apnsHeaders: device.headers, payload: device.payload, tokenExpiry: dispatch.tokenExpiry)
                    }, in: &storage)
            }
            return id
        }
        return (id, results)
    }

    /// A test send (`?test`) reaches at most this many devices, and lists each one's result.
    static let testSendLimit = 10

    /// One device of a send, as a test send's answer lists it.
    struct DeviceResult {
        let platform: Installation.Platform
        let handle: String
        let registration: String
        /// Why it was not sent; nil when it was.
        let failure: String?
    }

    /// A test send's answer: the service's `NotificationOutcome` XML.
    static func testSendOutcome(_ results: [DeviceResult]) -> String {
        var xml =
            #"<NotificationOutcome xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" "#
            + #"xmlns:i="http://www.w3.org/2001/XMLSchema-instance">"#
        xml += "<Success>\(results.count { $0.failure == nil })</Success><Failure>\(results.count { $0.failure != nil })</Failure><Results>"
        for result in results {
            xml += "<RegistrationResult><ApplicationPlatform>\(result.platform.format)</ApplicationPlatform>"
            xml += "<PnsHandle>\(xmlEscaped(result.handle))</PnsHandle><RegistrationId>\(xmlEscaped(result.registration))</RegistrationId>"
            xml += "<Outcome>\(xmlEscaped(result.failure ?? "The Notification was successfully sent to the Push Notification System"))</Outcome>"
            xml += "</RegistrationResult>"
        }
        return xml + "</Results></NotificationOutcome>"
    }

    /// A template expanded for one device and checked by its platform's rules, or why it cannot be sent.
    private static func expand(
        _ template: Installation.Template, for platform: Installation.Platform, properties: TemplateExpansion.Properties
    ) -> Result<([UInt8], [String: String]), Refusal> {
        do throws(TemplateExpansion.Failure) {
            let payload = try TemplateExpansion.expand(template.body, properties: properties)
            var headers: [String: String] = [:]
            for (header, value) in template.headers { headers[header.lowercased()] = try TemplateExpansion.expandText(value, properties: properties) }
            if let refusal = refusal(payload, for: platform, apnsPushType: headers["apns-push-type"]) { return .failure(refusal) }
            return .success((payload, platform == .apns ? headers : [:]))
        } catch {
            return .failure(Refusal(status: 400, message: "The template does not expand: \(error.description)"))
        }
    }

    /// As the service keeps an installation: each template is also tagged with its own name.
    static func stored(_ installation: Installation) -> Installation {
        var installation = installation
        for (name, template) in installation.templates where !template.tags.contains(name) {
            installation.templates[name]!.tags.append(name)
        }
        return installation
    }

    /// An installation as the service answers a `GET`: with the channel's state and expiry, which
    /// the emulator never changes.
    static func answered(_ installation: Installation) -> JSON {
        guard case .object(var members) = installation.json else { return installation.json }
        members.insert(JSONMember("pushChannelExpired", .bool(false)), at: 3)
        members.insert(JSONMember("expirationTime", .string("9999-12-31T23:59:59.9999999Z")), at: 4)
        return .object(members)
    }

    struct Refusal: Error {
        let status: Int
        let message: String
    }

    private func created(_ request: Request, hub: String, path: String, id: String, trackingID: String) -> Response {
        let authority = request.head.authority ?? "127.0.0.1"
        // A direct send's id keeps `&direct`, as the service writes it.
        let direct = (request.uri.query ?? "").split(separator: "&").contains("direct") ? "&direct" : ""
        return Response(
            status: .created,
            headers: [
                .location: "http://\(authority)/\(hub)/\(path)/\(id)?api-version=2020-06\(direct)", .trackingID: trackingID,
                HTTPField.Name("x-ms-correlation-request-id")!: trackingID,
            ])
    }

    private func tagExpression(_ headers: HTTPFields, trackingID: String) throws -> TagExpression? {
        guard let tags = headers[HTTPField.Name("ServiceBusNotification-Tags")!] else { return nil }
        do throws(NotificationHubError) {
            return try TagExpression(parsing: tags)
        } catch {
            throw HubError(400, "Invalid tag expression: \(error.message)", trackingID: trackingID)
        }
    }

    /// `GET /{hub}/messages/{id}`: the service's `NotificationDetails` of a send.
    private func notificationDetails(_ request: Request, hub: String, id: String, trackingID: String) throws -> Response {
        releaseDueSends()
        guard let outcome = state.withLock({ $0.outcomes[hub + "/" + id] }) else {
            throw HubError(404, "No notification \(id.debugDescription) in this hub.", trackingID: trackingID)
        }
        let authority = request.head.authority ?? "127.0.0.1"
        var xml =
            #"<NotificationDetails xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" "#
            + #"xmlns:i="http://www.w3.org/2001/XMLSchema-instance">"#
        xml += "<NotificationId>\(xmlEscaped(id))</NotificationId>"
        xml += "<Location>http://\(xmlEscaped(authority))/\(xmlEscaped(hub))/messages/\(xmlEscaped(id))?api-version=2020-06</Location>"
        xml += "<State>\(outcome.targetPlatforms.isEmpty ? "NoTargetFound" : "Completed")</State>"
        let time = UTCTime.format(outcome.enqueueTime) + "Z"
        xml += "<EnqueueTime>\(time)</EnqueueTime><StartTime>\(time)</StartTime><EndTime>\(time)</EndTime>"
        let platforms = outcome.targetPlatforms.sorted { $0.rawValue < $1.rawValue }
        xml += "<TargetPlatforms>\(platforms.map(\.format).joined(separator: ","))</TargetPlatforms>"
        for (platform, element) in [(Installation.Platform.apns, "ApnsOutcomeCounts"), (.fcmv1, "FcmV1OutcomeCounts")]
        where platforms.contains(platform) {
            var counts: [String: Int] = [:]
            if let delivered = outcome.delivered[platform] { counts["Success"] = delivered }
            for failure in outcome.failures where failure.platform == platform { counts[failure.outcome, default: 0] += 1 }
            xml += "<\(element)>"
            for name in counts.keys.sorted() { xml += "<Outcome><Name>\(name)</Name><Count>\(counts[name]!)</Count></Outcome>" }
            xml += "</\(element)>"
        }
        xml += "</NotificationDetails>"
        var response = Response(
            status: .ok, headers: [.contentType: "application/xml; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
        response.headers[.trackingID] = trackingID
        return response
    }

    /// Delivers the scheduled sends whose time has come, earliest first.
    func releaseDueSends() {
        let due = state.withLock { storage -> [ScheduledSend] in
            let now = clock.now() + storage.clockOffset
            let ready = storage.scheduled.values.filter { $0.due <= now }.sorted { ($0.due, $0.id) < ($1.due, $1.id) }
            for send in ready { storage.scheduled[send.hub + "/" + send.id] = nil }
            return ready
        }
        for send in due { _ = dispatch(send.dispatch, hub: send.hub) }
    }

    /// What the platform's service would answer a payload it refuses (413 over its limit, 400 for
    /// lint's errors), or nil; an APNs payload is checked as its `apns-push-type` (alert when none).
    static func refusal(_ payload: [UInt8], for platform: Installation.Platform, apnsPushType: String?) -> Refusal? {
        switch platform {
        case .apns:
            let findings: [APNsDiagnostic]
            do throws(JSONError) {
                let pushType = apnsPushType.flatMap(APNsPushType.init(rawValue:)) ?? .alert
                findings = try APNsLinter.lint(payload, pushType: pushType).filter { $0.severity == .error }
            } catch {
                return Refusal(status: 400, message: "Invalid APNs payload: \(error)")
            }
            if let tooLarge = findings.first(where: { $0.code == .payloadTooLarge }) {
                return Refusal(status: 413, message: "The payload is too large: \(tooLarge.message)")
            }
            return findings.first.map { Refusal(status: 400, message: "Invalid APNs payload: \($0.code) at byte \($0.offset): \($0.message)") }
        case .fcmv1:
            let findings: [FCMDiagnostic]
            do throws(JSONError) {
                findings = try FCMLinter.lint(payload).filter { $0.severity == .error }
            } catch {
                return Refusal(status: 400, message: "Invalid FCM v1 message: \(error)")
            }
            if let tooLarge = findings.first(where: { $0.code == .payloadTooLarge }) {
                return Refusal(status: 413, message: "The message is too large: \(tooLarge.message)")
            }
            return findings.first.map { Refusal(status: 400, message: "Invalid FCM v1 message: \($0.code) at byte \($0.offset): \($0.message)") }
        }
    }

    /// The parts of a `multipart/mixed` body by their `Content-Disposition` name.
    private func multipartParts(contentType: String, body: [UInt8]) -> [String: [UInt8]]? {
        guard let range = contentType.firstRange(of: "boundary=") else { return nil }
        let boundary = contentType[range.upperBound...].trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let text = String(decoding: body, as: UTF8.self)
        var parts: [String: [UInt8]] = [:]
        for section in text.components(separatedBy: "--" + boundary).dropFirst() {
            guard !section.hasPrefix("--"), let split = section.range(of: "\r\n\r\n") else { continue }
            let head = section[..<split.lowerBound]
            var content = section[split.upperBound...]
            if content.hasSuffix("\r\n") { content = content.dropLast() }  // "\r\n" is one Character
            guard let nameRange = head.range(of: "name=") else { continue }
            let name = head[nameRange.upperBound...].prefix { $0 != ";" && $0 != "\r" && $0 != "\n" }
                .trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            parts[name] = Array(content.utf8)
        }
        return parts
    }

    // MARK: Installations

    private func installation(method: HTTPRequest.Method, hub: String, id: String, body: [UInt8], trackingID: String) throws -> Response {
        switch method {
        case .put:
            let installation: Installation
            do throws(NotificationHubError) {
                installation = try Installation(json: body)
                try installation.validate()
            } catch {
                throw HubError(400, "Invalid installation: \(error.message)", trackingID: trackingID)
            }
            guard installation.installationID == id else {
                throw HubError(400, "The installationId in the body must match the URI.", trackingID: trackingID)
            }
            state.withLock { $0.installations[hub, default: [:]][id] = Self.stored(installation) }
            return .hub(.ok, trackingID: trackingID)
        case .get:
            guard let installation = state.withLock({ $0.installations[hub]?[id] }) else {
                throw HubError(404, "Installation not found.", trackingID: trackingID)
            }
            var json: [UInt8] = []
            try? Self.answered(installation).write(into: &json)
            var response = Response.json(json)
            response.headers[.trackingID] = trackingID
            return response
        case .delete:
            state.withLock { _ = $0.installations[hub]?.removeValue(forKey: id) }
            return .hub(.noContent, trackingID: trackingID)
        case .patch:
            guard var installation = state.withLock({ $0.installations[hub]?[id] }) else {
                throw HubError(404, "Installation not found.", trackingID: trackingID)
            }
            guard let document = parsedJSON(body), document.root.kind == .array else {
                throw HubError(400, "A JSON Patch document is an array of operations.", trackingID: trackingID)
            }
            for operation in document.root.elements {
                guard let op = operation["op"]?.string, let path = operation["path"]?.string else {
                    throw HubError(400, "Each operation needs op and path.", trackingID: trackingID)
                }
                let value = operation["value"]
                switch (op, path) {
                case ("add", "/tags"): if let tag = value?.string, !installation.tags.contains(tag) { installation.tags.append(tag) }
                case ("remove", _) where path.hasPrefix("/tags/"): installation.tags.removeAll { $0 == String(path.dropFirst(6)) }
                case ("replace", "/tags"): installation.tags = value?.elements.compactMap { $0.string } ?? []
                case ("replace", "/pushChannel"): installation.pushChannel = value?.string ?? installation.pushChannel
                case ("replace", "/userId"): installation.userID = value?.string
                case ("add", _) where path.hasPrefix("/templates/"):
                    guard let text = value?.string, let document = parsedJSON(Array(text.utf8)),
                        let template = Installation.Template(json: document.root)
                    else {
                        throw HubError(400, "A template is a JSON text with a body.", trackingID: trackingID)
                    }
                    installation.templates[jsonPointerUnescaped(path.dropFirst(11))] = template
                case ("remove", _) where path.hasPrefix("/templates/"):
                    installation.templates[jsonPointerUnescaped(path.dropFirst(11))] = nil
                default:
                    throw HubError(400, "Unsupported operation \(op) \(path).", trackingID: trackingID)
                }
            }
            do throws(NotificationHubError) {
                try installation.validate()
            } catch {
                throw HubError(400, "Invalid installation after the patch: \(error.message)", trackingID: trackingID)
            }
            state.withLock { $0.installations[hub, default: [:]][id] = Self.stored(installation) }
            return .hub(.ok, trackingID: trackingID)
        default:
            throw HubError(405, "\(method.rawValue) is not allowed on an installation.", trackingID: trackingID)
        }
    }

    // MARK: Test hooks

    private func deliveriesList(query: String) throws -> Response {
        var since = 0
        for pair in query.split(separator: "&") where pair.hasPrefix("since=") {
            guard let value = Int(pair.dropFirst(6)), value >= 0 else { throw HookRefusal(400, "since is a sequence number, 0 or more") }
            since = value
        }
        let list = JSON.array(
            deliveries(since: since).map { delivery in
                JSON.object([
                    JSONMember("sequence", .number(JSONNumber(delivery.sequence))),
                    JSONMember("hub", .string(delivery.hub)), JSONMember("notificationId", .string(delivery.notificationID)),
                    JSONMember("platform", .string(delivery.platform.rawValue)), JSONMember("deviceHandle", .string(delivery.deviceHandle)),
                    JSONMember("headers", .object(delivery.apnsHeaders.keys.sorted().map { JSONMember($0, .string(delivery.apnsHeaders[$0]!)) })),
                    JSONMember("payload", .string(String(decoding: delivery.payload, as: UTF8.self))),
                    JSONMember("tokenExpiry", .number(JSONNumber(Int(delivery.tokenExpiry)))),
                ])
            })
        var json: [UInt8] = []
        try? list.write(into: &json)
        return .json(json)
    }

    /// `POST /_emulator/clock` with `{"advanceSeconds": N}` (0 to ten years): moves the clock that
    /// scheduled sends wait for (token expiry keeps the real one), then delivers what is due.
    private func advanceClock(_ body: [UInt8]) throws -> Response {
        guard let document = parsedJSON(body), let seconds = document.root["advanceSeconds"]?.int, (0...315_360_000).contains(seconds) else {
            throw HookRefusal(400, "the body is {\"advanceSeconds\": N}, N from 0 to 315360000")
        }
        advanceClock(by: .seconds(seconds))
        return Response(status: .noContent)
    }

    private func queueFaults(_ body: [UInt8]) throws -> Response {
        let faults = try Self.faults(from: body)
        let queued = state.withLock { storage in
            guard storage.faults.count + faults.count <= Self.maximumQueuedFaults else { return false }
            storage.faults += faults
            return true
        }
        guard queued else { throw HookRefusal(409, "at most \(Self.maximumQueuedFaults) faults may be queued") }
        return Response(status: .noContent)
    }

    /// `{"status": 100…599, "retryAfter": "…", "count": 1…}` or `{"delaySeconds": 0…300, "count": 1…}`,
    /// every field checked, so that nothing a client sends can trap the process.
    static func faults(from body: [UInt8]) throws(HookRefusal) -> [Fault] {
        guard let document = parsedJSON(body), document.root.kind == .object else { throw HookRefusal(400, "the body is a JSON object") }
        let root = document.root
        let known: Set<String> = ["status", "retryAfter", "delaySeconds", "count"]
        if let unknown = root.members.first(where: { !known.contains($0.key.string ?? "") }) {
            throw HookRefusal(400, "unknown field \((unknown.key.string ?? "").debugDescription)")
        }
        var count = 1
        if let value = root["count"] {
            guard let number = value.int, (1...maximumQueuedFaults).contains(number) else {
                throw HookRefusal(400, "count is a whole number from 1 to \(maximumQueuedFaults)")
            }
            count = number
        }
        let fault: Fault
        switch (root["status"], root["delaySeconds"]) {
        case (let status?, nil):
            guard let code = status.int, (100...599).contains(code) else {
                throw HookRefusal(400, "status is a whole number from 100 to 599")
            }
            var retryAfter: String?
            if let value = root["retryAfter"] {
                guard let text = value.string, (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                    throw HookRefusal(400, "retryAfter is a header value: 1 to 64 printable ASCII characters")
                }
                retryAfter = text
            }
            fault = .status(code, retryAfter: retryAfter)
        case (nil, let delay?):
            let limit = Double(maximumFaultDelay.components.seconds)
            guard root["retryAfter"] == nil, let seconds = delay.double, seconds.isFinite, (0...limit).contains(seconds) else {
                throw HookRefusal(400, "delaySeconds is a number from 0 to \(Int(limit)), without retryAfter")
            }
            fault = .delay(.milliseconds(Int64(seconds * 1000)))
        default:
            throw HookRefusal(400, "give either status or delaySeconds")
        }
        return Array(repeating: fault, count: count)
    }
}

/// The document for `bytes`, or nil when they are not JSON.
/// Text as XML character data.
func xmlEscaped(_ text: String) -> String {
    text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
}

private func parsedJSON(_ bytes: some Collection<UInt8>) -> JSONDocument? {
    var parser = JSONParser()
    return try? parser.parse(Array(bytes))
}
