import AsyncHTTPClient
import Foundation
import HubEmulator
import HubTestSupport
import NIOCore
import NIOHTTP1
import NotificationHubs
import PushCore
import PushFCM
import Testing

/// One call of a recording: what the .NET SDK asked, and what the service answered.
struct RecordedCall {
    /// The path and query, with the recording's hub name replaced by the emulator's (`hub`).
    let target: String
    let status: Int
    let headers: [String: String]
    let body: String?

    /// The calls of `Recordings/{name}.http`, leaving out the first `skipping` (the SDK's tests
    /// begin by deleting every registration, an API PushCore does not use).
    static func load(_ name: String, skipping: Int = 0) throws -> [RecordedCall] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recordings/\(name).http")
        var parser = JSONParser()
        // The files begin with a byte order mark.
        let document = try parser.parse(Array(try Data(contentsOf: url).drop { $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }))
        let calls = try #require(document.root["HttpCalls"])
        return try calls.elements.dropFirst(skipping).map { call in
            var headers: [String: String] = [:]
            if let fields = call["Headers"] {
                for member in fields.members { headers[member.key.string ?? ""] = member.value.string }
            }
            let path = try #require(call["RequestUriPath"]?.string)
            return RecordedCall(
                target: "/hub/" + path.split(separator: "/", maxSplits: 2).dropFirst().joined(separator: "/"),
                status: try #require(call["StatusCode"]?.int), headers: headers, body: call["Content"]?.string)
        }
    }

    /// The path, and the query's parameters other than `api-version` (whose value is the SDK's version).
    static func normalized(_ target: String) -> (path: String, query: Set<String>) {
        let parts = target.split(separator: "?", maxSplits: 1)
        let query = parts.count > 1 ? parts[1].split(separator: "&").map(String.init).filter { !$0.hasPrefix("api-version=") } : []
        return (String(parts[0]), Set(query))
    }

    /// The `Location` the service gave, as a path with the hub and the id left out, and its query's parameters but the version.
    static func locationShape(_ location: String?) -> (path: String, query: Set<String>)? {
        guard let location, let url = URL(string: location) else { return nil }
        var segments = url.path.split(separator: "/").map(String.init)
        guard segments.count >= 3 else { return nil }
        segments.removeLast()  // the id
        segments.removeFirst()  // the hub
        let query = (url.query ?? "").split(separator: "&").map(String.init).filter { !$0.hasPrefix("api-version=") }
        return (segments.joined(separator: "/"), Set(query))
    }
}

/// A signed `GET` of the emulator, read raw: what a client sees before it parses anything.
func rawGet(_ base: String, path: String) async throws -> (status: Int, body: [UInt8]) {
    let connection = try ConnectionString(fullAccess)
    var request = HTTPClientRequest(url: base + path + "?api-version=2020-06")
    request.headers.add(name: "Authorization", value: try SASSigner(connection).token(for: "https://\(connection.host)\(path)", ttl: 600))
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    return (Int(response.status.code), Array(try await response.body.collect(upTo: 1 << 20).readableBytesView))
}

/// A JSON text as an owned value with every object's keys sorted, for comparing documents
/// whatever their key order.
func json(_ bytes: [UInt8]) throws -> JSON {
    func sorted(_ value: JSON) -> JSON {
        switch value {
        case .object(let members): .object(members.map { JSONMember($0.key, sorted($0.value)) }.sorted { $0.key < $1.key })
        case .array(let elements): .array(elements.map(sorted))
        default: value
        }
    }
    var parser = JSONParser()
    return sorted(try JSON(try parser.parse(bytes).root))
}

@Suite("Recorded exchanges of Microsoft's .NET SDK with the service: the client asks as the SDK did, the emulator answers as the service did")
struct RecordedExchangeTests {
    /// The device token of the SDK's test settings.
    static let appleToken = "62BCD3484834B7E2DC56733AC5509259230CC1BA82BA1AE7D06E91908A05A8FA"
    /// The SDK's tests use `amzn1.adm-registration.v2.123`, which is no FCM token (PushCore checks
    /// a token's form before sending): a token of FCM's form stands in for it.
    static let fcmToken = "fKx8:APA91bH-" + String(repeating: "a1B2_", count: 30)
    static let alert = APNsPayload(aps: APNsAPS(alert: .text("alert!")))

    /// Checks the emulator's latest request against the recorded call, and its answer's status and
    /// `Location` against the service's.
    func check(
        _ call: RecordedCall, method: String, format: String? = nil, tags: String? = nil, handle: String? = nil,
        answer: (status: Int, location: String?), emulator: HubEmulator, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let request = try #require(emulator.requestLog.last, sourceLocation: sourceLocation)
        let ours = RecordedCall.normalized(request.target)
        let theirs = RecordedCall.normalized(call.target)
        #expect(request.method == method, sourceLocation: sourceLocation)
        #expect(ours.path == theirs.path && ours.query == theirs.query, "\(request.target) against \(call.target)", sourceLocation: sourceLocation)
        if let format { #expect(request.headers["servicebusnotification-format"] == format, sourceLocation: sourceLocation) }
        if let tags { #expect(request.headers["servicebusnotification-tags"] == tags, sourceLocation: sourceLocation) }
        if let handle { #expect(request.headers["servicebusnotification-devicehandle"] == handle, sourceLocation: sourceLocation) }
        #expect(answer.status == call.status, sourceLocation: sourceLocation)
        let recorded = RecordedCall.locationShape(call.headers["Location"])
        let given = RecordedCall.locationShape(answer.location)
        #expect(
            recorded?.path == given?.path && recorded?.query == given?.query, "\(answer.location ?? "no Location")", sourceLocation: sourceLocation)
    }

    @Test("Installations: put, read back (with the service's added fields), delete, then not found")
    func installations() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            // CreateOrUpdateInstallationAsync_CreateInstallationWithExpiryInTemplate_…
            var calls = try RecordedCall.load(
                "CreateOrUpdateInstallationAsync_CreateInstallationWithExpiryInTemplate_GetCreatedInstallationWithExpiryInTemplateBack", skipping: 2)
            let id = "95e4cf2e-685f-4141-98e2-4c5f71d1a696"
            let installation = Installation(
                installationID: id, platform: .apns, pushChannel: Self.appleToken, tags: ["tag1"],
                templates: ["Template Name": .init(body: #"{"aps":{"alert":"alert!"}}"#, expiry: "2018-11-07T16:18:32.6641371-08:00")],
                pushVariables: ["var1": "value1"])
            try await hub.createOrUpdate(installation)
            try check(calls[0], method: "PUT", answer: (200, nil), emulator: emulator)
            let body = try #require(emulator.requestLog.last?.body)
            #expect(try Installation(json: body) == installation)

            let read = try await hub.installation(id: id)
            try check(calls[1], method: "GET", answer: (200, nil), emulator: emulator)
            // The service's answer, key for key and value for value.
            let answer = try await rawGet(base, path: "/hub/installations/\(id)")
            #expect(try json(answer.body) == json(Array(try #require(calls[1].body).utf8)), "\(String(decoding: answer.body, as: UTF8.self))")
            #expect(read.pushVariables == ["var1": "value1"] && read.templates["Template Name"]?.tags == ["Template Name"])

            // CreateOrUpdateInstallationAsync_CreateInstallationWithUserId_…
            calls = try RecordedCall.load(
                "CreateOrUpdateInstallationAsync_CreateInstallationWithUserId_GetCreatedInstallationWithUserIdBack", skipping: 2)
            let withUser = Installation(
                installationID: "08c88ecf-32b5-412b-aba2-29be97ce34c3", pushChannel: Self.appleToken, userID: "d798d460-79d2-449a-b2fc-fa5bf4090f38")
            try await hub.createOrUpdate(withUser)
            try check(calls[0], method: "PUT", answer: (200, nil), emulator: emulator)
            let userAnswer = try await rawGet(base, path: "/hub/installations/\(withUser.installationID)")
            #expect(try json(userAnswer.body) == json(Array(try #require(calls[1].body).utf8)), "\(String(decoding: userAnswer.body, as: UTF8.self))")

            // DeleteInstallationAsync_CreateAndDeleteInstallation_InstallationIsDeleted
            calls = try RecordedCall.load("DeleteInstallationAsync_CreateAndDeleteInstallation_InstallationIsDeleted", skipping: 2)
            let plain = Installation(installationID: "94018932-9656-48dd-aea1-0c2253b4e093", pushChannel: Self.appleToken)
            try await hub.createOrUpdate(plain)
            try check(calls[0], method: "PUT", answer: (200, nil), emulator: emulator)
            _ = try await hub.installation(id: plain.installationID)
            try check(calls[1], method: "GET", answer: (200, nil), emulator: emulator)
            let plainAnswer = try await rawGet(base, path: "/hub/installations/\(plain.installationID)")
            #expect(
                try json(plainAnswer.body) == json(Array(try #require(calls[1].body).utf8)), "\(String(decoding: plainAnswer.body, as: UTF8.self))")
            try await hub.deleteInstallation(id: plain.installationID)
            try check(calls[2], method: "DELETE", answer: (204, nil), emulator: emulator)
            await #expect(throws: NotificationHubError.self) { try await hub.installation(id: plain.installationID) }
            try check(calls[3], method: "GET", answer: (404, nil), emulator: emulator)
            let missing = try await rawGet(base, path: "/hub/installations/\(plain.installationID)")
            #expect(
                missing.status == 404
                    && String(decoding: missing.body, as: UTF8.self).hasPrefix("<Error><Code>404</Code><Detail>Installation not found."))
            #expect(try #require(calls[3].body).hasPrefix("<Error><Code>404</Code><Detail>Installation not found."))
        }
    }

    @Test("Sends: native to an installation id, template, direct, direct batch (APNs and FCM), scheduled")
    func sends() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            let installationTarget = SendTarget.tag("$InstallationId:{0c6ce9ef-7d4c-4bb2-9e8d-6a7a4b1c4f00}")

            var call = try RecordedCall.load("SendNotificationAsync_SendAppleNativeNotification_ByInstallationId_GetSuccessfulResultBack")[0]
            var result = try await hub.send(Self.alert, headers: APNsHeaders(pushType: .alert, priority: 5), to: installationTarget)
            try check(
                call, method: "POST", format: "apple", tags: "$InstallationId:{0c6ce9ef-7d4c-4bb2-9e8d-6a7a4b1c4f00}",
                answer: (201, result.location), emulator: emulator)
            #expect(emulator.requestLog.last?.body == Array(#"{"aps":{"alert":"alert!"}}"#.utf8))

            // The SDK's FcmNotification went as `gcm`, before FCM v1: the request is the same but for the format.
            call = try RecordedCall.load("SendNotificationAsync_SendGcmNativeNotification_ByInstallationId_GetSuccessfulResultBack")[0]
            result = try await hub.send(FCMMessage(data: ["message": "Message"]), to: installationTarget)
            try check(call, method: "POST", format: "fcmv1", answer: (201, result.location), emulator: emulator)

            call = try RecordedCall.load("SendNotificationAsync_SendTemplateNotification_GetSuccessfulResultBack")[0]
            let expression = try TagExpression(parsing: "someRandomTag1 && someRandomTag2")
            result = try await hub.send(templateProperties: [:], to: .expression(expression))
            try check(
                call, method: "POST", format: "template", tags: "someRandomTag1 && someRandomTag2", answer: (201, result.location),
                emulator: emulator)
            #expect(emulator.requestLog.last?.body == Array("{}".utf8))

            call = try RecordedCall.load("SendDirectNotificationAsync_SendDirectAppleNotification_GetSuccessfulResultBack")[0]
            result = try await hub.send(Self.alert, toDevice: Self.appleToken)
            try check(
                call, method: "POST", format: "apple", handle: Self.appleToken, answer: (201, result.location), emulator: emulator)

            call = try RecordedCall.load("SendDirectNotificationAsync_SendDirectAppleBatchNotification_GetSuccessfulResultBack")[0]
            var results = try await hub.send(Self.alert, headers: APNsHeaders(pushType: .alert, priority: 5), toDevices: [Self.appleToken])
            try check(call, method: "POST", format: "apple", answer: (201, results.first?.location), emulator: emulator)
            // The service puts this one's id under `$batch/`; the id is what follows.
            let recorded = SendResult(headers: [("Location", try #require(call.headers["Location"]))])
            #expect(recorded.notificationID == "b755f9e4bb0844c8a2881986777aadb0-20181107001827-33331921-16")
            let details = try await hub.notificationDetails(id: try #require(results.first?.notificationID))
            #expect(details.state == .completed)

            call = try RecordedCall.load("SendDirectNotificationAsync_SendDirectFcmBatchNotification_GetSuccessfulResultBack")[0]
            results = try await hub.send(FCMMessage(data: ["message": "Message"]), toDevices: [Self.fcmToken])
            try check(call, method: "POST", format: "fcmv1", answer: (201, results.first?.location), emulator: emulator)

            call = try RecordedCall.load("ScheduleNotificationAsync_SendAppleNativeNotification_GetSuccessfulResultBack")[0]
            result = try await hub.schedule(
                Self.alert, headers: APNsHeaders(pushType: .alert, priority: 5), at: Int64(Date().timeIntervalSince1970) + 86_400, to: .broadcast)
            try check(call, method: "POST", format: "apple", answer: (201, result.location), emulator: emulator)
            #expect(result.scheduledNotificationID != nil && emulator.requestLog.last?.headers["servicebusnotification-scheduletime"] != nil)
        }
    }
}
