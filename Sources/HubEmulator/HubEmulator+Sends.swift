import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NotificationHubs
import PushCore
import PushFCM
import PushInternals
import PushServerSupport
import Synchronization

// Sends: direct, batch, scheduled and test sends checked as the hub checks them, and delivered.
extension HubEmulator {
    /// `POST /{hub}/messages` (`?direct`, `$batch?direct`; with or without a final `/`): checked now, delivered now.
    func send(_ request: Request, context: HubRequestContext, batch: Bool) async throws -> Response {
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
    func schedule(_ request: Request, context: HubRequestContext) async throws -> Response {
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
    func cancelScheduled(hub: String, id: String, trackingID: String) throws -> Response {
        releaseDueSends()
        guard state.withLock({ $0.scheduled.removeValue(forKey: hub + "/" + id) }) != nil else {
            throw HubError(404, "No scheduled notification \(id.debugDescription) is waiting.", trackingID: trackingID)
        }
        return .hub(.ok, trackingID: trackingID)
    }

    /// A send as the hub received it, before its devices are found.
    func parseSend(_ request: Request, context: HubRequestContext, batch: Bool) async throws -> (hub: String, dispatch: Dispatch) {
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
    static func expand(
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

    func created(_ request: Request, hub: String, path: String, id: String, trackingID: String) -> Response {
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

    func tagExpression(_ headers: HTTPFields, trackingID: String) throws -> TagExpression? {
        guard let tags = headers[HTTPField.Name("ServiceBusNotification-Tags")!] else { return nil }
        do throws(NotificationHubError) {
            return try TagExpression(parsing: tags)
        } catch {
            throw HubError(400, "Invalid tag expression: \(error.message)", trackingID: trackingID)
        }
    }

    /// `GET /{hub}/messages/{id}`: the service's `NotificationDetails` of a send.
    func notificationDetails(_ request: Request, hub: String, id: String, trackingID: String) throws -> Response {
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
    func multipartParts(contentType: String, body: [UInt8]) -> [String: [UInt8]]? {
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
}
