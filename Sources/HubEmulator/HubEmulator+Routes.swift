import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NotificationHubs
import PushCore

extension HubEmulator {
    /// An answer before it becomes a `Response`.
    struct Answer {
        var status: Int
        var headers: [(String, String)] = []
        var body: [UInt8] = []

        static func error(_ status: Int, _ detail: String, trackingID: String, retryAfter: String? = nil) -> Answer {
            let escaped = detail.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
            var answer = Answer(
                status: status, headers: [("Content-Type", "application/xml; charset=utf-8"), ("TrackingId", trackingID)],
                body: Array("<Error><Code>\(status)</Code><Detail>\(escaped) TrackingId:\(trackingID)</Detail></Error>".utf8))
            if let retryAfter { answer.headers.append(("Retry-After", retryAfter)) }
            return answer
        }
    }

    func respond(to request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 1 << 20)
        let answer = await handle(
            method: request.method.rawValue, path: request.uri.path, query: request.uri.query ?? "",
            headers: request.headers, authority: request.head.authority ?? "127.0.0.1", body: Array(body.readableBytesView))
        var fields = HTTPFields()
        for (name, value) in answer.headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return Response(status: .init(code: answer.status), headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    func handle(method: String, path: String, query: String, headers: HTTPFields, authority: String, body: [UInt8]) async -> Answer {
        let segments = path.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        if segments.first == "_emulator" { return testHook(method: method, segments: segments, query: query, body: body) }
        let trackingID = UUID().uuidString.lowercased()
        guard let hubName = segments.first, let hub = hubs[hubName], let verifier = verifiers[hubName] else {
            return .error(404, "The hub \(segments.first ?? "") does not exist in this namespace.", trackingID: trackingID)
        }
        let fault = state.withLock { storage -> Fault? in
            storage.requests += 1
            return storage.faults.isEmpty ? nil : storage.faults.removeFirst()
        }
        switch fault {
        case .status(let status, let retryAfter)?:
            return .error(status, "Injected fault.", trackingID: trackingID, retryAfter: retryAfter)
        case .delay(let delay)?:
            try? await Task.sleep(for: delay)
        case nil:
            break
        }

        // Every request is signed for the namespace's https URI, whatever address it came to.
        let authorization = headers[.authorization] ?? ""
        let info: SASTokenInfo
        do throws(SASError) {
            info = try verifier.verify(authorization, uri: "https://\(hub.connection.host)\(path)", now: clock.now())
        } catch {
            let reason = error.code == .expired ? "ExpiredToken" : "InvalidSignature"
            return .error(401, "\(reason): \(error.message)", trackingID: trackingID)
        }
        let canSend = !info.keyName.lowercased().contains("listen")

        switch (method, segments.count > 1 ? segments[1] : "") {
        case ("POST", "messages"):
            guard canSend else {
                return .error(403, "Unauthorized access. 'Send' claim(s) are required to perform this operation.", trackingID: trackingID)
            }
            return send(hub: hubName, batch: segments.count > 2 && segments[2] == "$batch", direct: query.split(separator: "&").contains("direct"),
                        headers: headers, body: body, tokenExpiry: info.expiry, trackingID: trackingID, authority: authority)
        case (_, "installations") where segments.count == 3:
            return installation(method: method, hub: hubName, id: segments[2], body: body, trackingID: trackingID)
        default:
            return .error(404, "No route for \(method) \(path).", trackingID: trackingID)
        }
    }

    // MARK: Sends

    private func send(
        hub: String, batch: Bool, direct: Bool, headers: HTTPFields, body: [UInt8], tokenExpiry: Int64, trackingID: String, authority: String
    ) -> Answer {
        guard headers[HTTPField.Name("ServiceBusNotification-Format")!] == "apple" else {
            return .error(400, "ServiceBusNotification-Format must be apple for APNs payloads.", trackingID: trackingID)
        }
        var payload = body
        var handles: [String]
        if batch {
            guard direct, let parts = multipartParts(contentType: headers[.contentType] ?? "", body: body),
                  let notification = parts["notification"], let devices = parts["devices"],
                  let list = parsedJSON(devices), list.root.kind == .array
            else {
                return .error(400, "A batch send is multipart/mixed with a notification part and a devices part.", trackingID: trackingID)
            }
            payload = notification
            handles = list.root.elements.compactMap { $0.string }
            guard handles.count <= HubEndpoint.maximumBatchSize else {
                return .error(400, "At most \(HubEndpoint.maximumBatchSize) devices per batch.", trackingID: trackingID)
            }
        } else if direct {
            guard let handle = headers[HTTPField.Name("ServiceBusNotification-DeviceHandle")!] else {
                return .error(400, "A direct send needs ServiceBusNotification-DeviceHandle.", trackingID: trackingID)
            }
            handles = [handle]
        } else {
            let expression: TagExpression?
            if let tags = headers[HTTPField.Name("ServiceBusNotification-Tags")!] {
                do throws(NotificationHubError) {
                    expression = try TagExpression(parsing: tags)
                } catch {
                    return .error(400, "Invalid tag expression: \(error.message)", trackingID: trackingID)
                }
            } else {
                expression = nil
            }
            handles = state.withLock { storage in
                (storage.installations[hub] ?? [:]).values.sorted { $0.installationID < $1.installationID }.compactMap { installation in
                    let tags = Set(installation.tags + ["$InstallationId:{\(installation.installationID)}"])
                    return expression.map { $0.matches(tags) } ?? true ? installation.pushChannel : nil
                }
            }
        }

        let pushType = headers[HTTPField.Name("apns-push-type")!].flatMap(APNsPushType.init(rawValue:)) ?? .alert
        let findings: [APNsDiagnostic]
        do throws(JSONError) {
            findings = try APNsLinter.lint(payload, pushType: pushType).filter { $0.severity == .error }
        } catch {
            return .error(400, "Invalid APNs payload: \(error)", trackingID: trackingID)
        }
        if let tooLarge = findings.first(where: { $0.code == .payloadTooLarge }) {
            return .error(413, "The payload is too large: \(tooLarge.message)", trackingID: trackingID)
        }
        if let first = findings.first {
            return .error(400, "Invalid APNs payload: \(first.code) at byte \(first.offset): \(first.message)", trackingID: trackingID)
        }

        var apnsHeaders: [String: String] = [:]
        for field in headers where field.name.canonicalName.hasPrefix("apns-") { apnsHeaders[field.name.canonicalName] = field.value }
        let notificationID = state.withLock { storage -> String in
            storage.notifications += 1
            let id = String(storage.notifications)
            for handle in handles {
                record({ sequence in
                    Delivery(sequence: sequence, hub: hub, notificationID: id, deviceHandle: handle, apnsHeaders: apnsHeaders, payload: payload,
                             tokenExpiry: tokenExpiry)
                }, in: &storage)
            }
            return id
        }
        return Answer(status: 201, headers: [
            ("Location", "http://\(authority)/\(hub)/messages/\(notificationID)?api-version=2020-06"), ("TrackingId", trackingID),
            ("x-ms-correlation-request-id", trackingID),
        ])
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

    private func installation(method: String, hub: String, id: String, body: [UInt8], trackingID: String) -> Answer {
        switch method {
        case "PUT":
            do throws(NotificationHubError) {
                let installation = try Installation(json: body)
                try installation.validate()
                guard installation.installationID == id else {
                    return .error(400, "The installationId in the body must match the URI.", trackingID: trackingID)
                }
                state.withLock { $0.installations[hub, default: [:]][id] = installation }
                return Answer(status: 200, headers: [("TrackingId", trackingID)])
            } catch {
                return .error(400, "Invalid installation: \(error.message)", trackingID: trackingID)
            }
        case "GET":
            guard let installation = state.withLock({ $0.installations[hub]?[id] }) else {
                return .error(404, "Installation not found.", trackingID: trackingID)
            }
            var json: [UInt8] = []
            try? installation.json.write(into: &json)
            return Answer(status: 200, headers: [("Content-Type", "application/json"), ("TrackingId", trackingID)], body: json)
        case "DELETE":
            state.withLock { _ = $0.installations[hub]?.removeValue(forKey: id) }
            return Answer(status: 204, headers: [("TrackingId", trackingID)])
        case "PATCH":
            guard var installation = state.withLock({ $0.installations[hub]?[id] }) else {
                return .error(404, "Installation not found.", trackingID: trackingID)
            }
            guard let document = parsedJSON(body), document.root.kind == .array else {
                return .error(400, "A JSON Patch document is an array of operations.", trackingID: trackingID)
            }
            for operation in document.root.elements {
                guard let op = operation["op"]?.string, let path = operation["path"]?.string else {
                    return .error(400, "Each operation needs op and path.", trackingID: trackingID)
                }
                let value = operation["value"]
                switch (op, path) {
                case ("add", "/tags"): if let tag = value?.string, !installation.tags.contains(tag) { installation.tags.append(tag) }
                case ("remove", _) where path.hasPrefix("/tags/"): installation.tags.removeAll { $0 == String(path.dropFirst(6)) }
                case ("replace", "/tags"): installation.tags = value?.elements.compactMap { $0.string } ?? []
                case ("replace", "/pushChannel"): installation.pushChannel = value?.string ?? installation.pushChannel
                case ("replace", "/userId"): installation.userID = value?.string
                case ("add", _) where path.hasPrefix("/templates/"):
                    guard let text = value?.string, let template = parsedJSON(Array(text.utf8)), let templateBody = template.root["body"]?.string else {
                        return .error(400, "A template is a JSON text with a body.", trackingID: trackingID)
                    }
                    installation.templates[jsonPointerUnescaped(path.dropFirst(11))] = .init(body: templateBody, tags: template.root["tags"]?.elements.compactMap { $0.string } ?? [])
                case ("remove", _) where path.hasPrefix("/templates/"):
                    installation.templates[jsonPointerUnescaped(path.dropFirst(11))] = nil
                default:
                    return .error(400, "Unsupported operation \(op) \(path).", trackingID: trackingID)
                }
            }
            do throws(NotificationHubError) {
                try installation.validate()
            } catch {
                return .error(400, "Invalid installation after the patch: \(error.message)", trackingID: trackingID)
            }
            state.withLock { $0.installations[hub, default: [:]][id] = installation }
            return Answer(status: 200, headers: [("TrackingId", trackingID)])
        default:
            return .error(405, "\(method) is not allowed on an installation.", trackingID: trackingID)
        }
    }

    // MARK: Test hooks

    private func testHook(method: String, segments: [String], query: String, body: [UInt8]) -> Answer {
        switch (method, segments.dropFirst().first ?? "") {
        case ("GET", "deliveries"):
            var since = 0
            for pair in query.split(separator: "&") where pair.hasPrefix("since=") {
                guard let value = Int(pair.dropFirst(6)), value >= 0 else { return hookError(400, "since is a sequence number, 0 or more") }
                since = value
            }
            let list = JSON.array(deliveries(since: since).map { delivery in
                JSON.object([
                    JSONMember("sequence", .number(JSONNumber(delivery.sequence))),
                    JSONMember("hub", .string(delivery.hub)), JSONMember("notificationId", .string(delivery.notificationID)),
                    JSONMember("deviceHandle", .string(delivery.deviceHandle)),
                    JSONMember("headers", .object(delivery.apnsHeaders.keys.sorted().map { JSONMember($0, .string(delivery.apnsHeaders[$0]!)) })),
                    JSONMember("payload", .string(String(decoding: delivery.payload, as: UTF8.self))),
                    JSONMember("tokenExpiry", .number(JSONNumber(Int(delivery.tokenExpiry)))),
                ])
            })
            var json: [UInt8] = []
            try? list.write(into: &json)
            return Answer(status: 200, headers: [("Content-Type", "application/json")], body: json)
        case ("DELETE", "deliveries"):
            reset()
            return Answer(status: 204)
        case ("GET", "requests"):
            return Answer(status: 200, headers: [("Content-Type", "application/json")], body: Array(String(requestCount).utf8))
        case ("POST", "faults") where allowsFaultInjection:
            switch Self.faults(from: body) {
            case .success(let faults):
                let queued = state.withLock { storage in
                    guard storage.faults.count + faults.count <= Self.maximumQueuedFaults else { return false }
                    storage.faults += faults
                    return true
                }
                return queued ? Answer(status: 204) : hookError(409, "at most \(Self.maximumQueuedFaults) faults may be queued")
            case .failure(let message):
                return hookError(400, message.text)
            }
        default:
            return hookError(404, "no such test hook")
        }
    }

    struct HookMessage: Error {
        let text: String
    }

    /// `{"status": 100…599, "retryAfter": "…", "count": 1…}` or `{"delaySeconds": 0…300, "count": 1…}`,
    /// every field checked, so that nothing a client sends can trap the process.
    static func faults(from body: [UInt8]) -> Result<[Fault], HookMessage> {
        guard let document = parsedJSON(body), document.root.kind == .object else { return .failure(HookMessage(text: "the body is a JSON object")) }
        let root = document.root
        let known: Set<String> = ["status", "retryAfter", "delaySeconds", "count"]
        if let unknown = root.members.first(where: { !known.contains($0.key.string ?? "") }) {
            return .failure(HookMessage(text: "unknown field \((unknown.key.string ?? "").debugDescription)"))
        }
        var count = 1
        if let value = root["count"] {
            guard let number = value.int, (1...maximumQueuedFaults).contains(number) else {
                return .failure(HookMessage(text: "count is a whole number from 1 to \(maximumQueuedFaults)"))
            }
            count = number
        }
        let fault: Fault
        switch (root["status"], root["delaySeconds"]) {
        case (let status?, nil):
            guard let code = status.int, (100...599).contains(code) else { return .failure(HookMessage(text: "status is a whole number from 100 to 599")) }
            var retryAfter: String?
            if let value = root["retryAfter"] {
                guard let text = value.string, (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                    return .failure(HookMessage(text: "retryAfter is a header value: 1 to 64 printable ASCII characters"))
                }
                retryAfter = text
            }
            fault = .status(code, retryAfter: retryAfter)
        case (nil, let delay?):
            let limit = Double(maximumFaultDelay.components.seconds)
            guard root["retryAfter"] == nil, let seconds = delay.double, seconds.isFinite, (0...limit).contains(seconds) else {
                return .failure(HookMessage(text: "delaySeconds is a number from 0 to \(Int(limit)), without retryAfter"))
            }
            fault = .delay(.milliseconds(Int64(seconds * 1000)))
        default:
            return .failure(HookMessage(text: "give either status or delaySeconds"))
        }
        return .success(Array(repeating: fault, count: count))
    }

    private func hookError(_ status: Int, _ message: String) -> Answer {
        var json: [UInt8] = []
        try? JSON.object([JSONMember("error", .string(message))]).write(into: &json)
        return Answer(status: status, headers: [("Content-Type", "application/json")], body: json)
    }
}

/// The document for `bytes`, or nil when they are not JSON.
private func parsedJSON(_ bytes: some Collection<UInt8>) -> JSONDocument? {
    var parser = JSONParser()
    return try? parser.parse(Array(bytes))
}
