import FoundationEssentials
import NotificationHubs
import PushAPNs
import PushJSON
import PushSAS
import PushTestSupport
import Testing

@Suite("Notification Hubs requests")
struct HubRequestTests {
    let endpoint: HubEndpoint = try! HubEndpoint(
        connection: ConnectionString(
            "Endpoint=sb://my-ns.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey=c2VjcmV0"),
        hubName: "my-hub")
    let token = "SharedAccessSignature sr=x&sig=y&se=1&skn=z"
    let deviceToken = String(repeating: "ab12", count: 16)

    @Test("A send to a tag expression carries the APNs headers, the format and the tags")
    func send() throws {
        let payload = APNsPayload.silentRichPush(richId: "4f1c", richType: "img", richMessage: "New photo")
        let headers = APNsHeaders(for: payload, topic: "com.example.app", collapseID: "photos", expiration: 1_800_000_000)
        let target = SendTarget.expression(.tag("username:alice") && !.tag("muted"))
        let request = try endpoint.sendRequest(payload, headers: headers, to: target, authorization: token)
        #expect(request.method == "POST" && !request.isIdempotent)
        #expect(request.url == "https://my-ns.servicebus.windows.net/my-hub/messages?api-version=2020-06")
        #expect(request.header("Authorization") == token)
        #expect(request.header("Content-Type") == "application/json;charset=utf-8")
        #expect(request.header("ServiceBusNotification-Format") == "apple")
        #expect(request.header("ServiceBusNotification-Tags") == "username:alice && !muted")
        #expect(request.header("apns-push-type") == "background" && request.header("apns-priority") == "5")
        #expect(request.header("apns-topic") == "com.example.app" && request.header("apns-collapse-id") == "photos")
        #expect(request.header("apns-expiration") == "1800000000")
        #expect(request.body == (try payload.encoded()))
        #expect(endpoint.tokenResource == "https://my-ns.servicebus.windows.net/my-hub")
    }

    @Test("Broadcast is explicit; lists of tags become ||; bad targets are refused")
    func targets() throws {
        let payload = APNsPayload(aps: APNsAPS(alert: .text("Hi")))
        let headers = APNsHeaders(for: payload)
        let broadcast = try endpoint.sendRequest(payload, headers: headers, to: .broadcast, authorization: token)
        #expect(broadcast.header("ServiceBusNotification-Tags") == nil)
        let list = try endpoint.sendRequest(payload, headers: headers, to: .tags(["a", "b"]), authorization: token)
        #expect(list.header("ServiceBusNotification-Tags") == "a || b")
        // The hub's own tags of one installation or user are targets; other `$` tags are not.
        for system in ["$InstallationId:{95e4cf2e-685f-4141-98e2-4c5f71d1a696}", "$UserId:{alice@example.com}"] {
            let request = try endpoint.sendRequest(payload, headers: headers, to: .tag(system), authorization: token)
            #expect(request.header("ServiceBusNotification-Tags") == system)
        }
        for bad in [
            SendTarget.tags([]), .tag("$Other:{x}"), .tag("$InstallationId:{}"), .tag("$UserId:{a}b}"), .tag("a b"), .tags((0..<21).map { "t\($0)" }),
        ] {
            #expect(throws: NotificationHubError.self) { try endpoint.sendRequest(payload, headers: headers, to: bad, authorization: token) }
        }
    }

    @Test("A 5 KB payload is refused before anything is sent; VoIP allows 5120 bytes")
    func tooLarge() throws {
        var payload = APNsPayload(aps: APNsAPS(alert: .text("x")))
        payload["blob"] = .string(String(repeating: "b", count: 5000))
        do {
            _ = try endpoint.sendRequest(payload, headers: APNsHeaders(for: payload), to: .broadcast, authorization: token)
            Issue.record("a 5 KB payload was accepted")
        } catch {
            #expect(error.code == .payloadTooLarge && error.status == nil)
        }
        var voip = APNsHeaders(for: payload)
        voip.pushType = .voip
        voip.priority = 10
        #expect(try endpoint.sendRequest(payload, headers: voip, to: .broadcast, authorization: token).body.count > 4096)
    }

    @Test("Header values cannot smuggle a line break")
    func headerInjection() {
        let payload = APNsPayload(aps: APNsAPS(alert: .text("Hi")))
        let headers = APNsHeaders(for: payload, collapseID: "a\r\nX-Evil: 1")
        #expect(throws: NotificationHubError.self) { try endpoint.sendRequest(payload, headers: headers, to: .broadcast, authorization: token) }
        #expect(throws: NotificationHubError.self) {
            try endpoint.sendRequest(payload, headers: APNsHeaders(for: payload), to: .broadcast, authorization: token + "\n")
        }
    }

    @Test("Direct send names the device handle; batch direct send splits at 1000 handles into multipart bodies")
    func direct() throws {
        let payload = APNsPayload(aps: APNsAPS(alert: .text("Hi")))
        let headers = APNsHeaders(for: payload)
        let direct = try endpoint.directSendRequest(payload, headers: headers, deviceHandle: deviceToken, authorization: token)
        #expect(direct.url == "https://my-ns.servicebus.windows.net/my-hub/messages?direct&api-version=2020-06")
        #expect(direct.header("ServiceBusNotification-DeviceHandle") == deviceToken)
        #expect(throws: NotificationHubError.self) {
            try endpoint.directSendRequest(payload, headers: headers, deviceHandle: "not-hex", authorization: token)
        }

        let handles = (0..<2500).map { String(format6: $0) + String(repeating: "0", count: 58) }
        let batches = try endpoint.batchDirectSendRequests(payload, headers: headers, deviceHandles: handles, authorization: token)
        #expect(batches.count == 3)
        var sent: [String] = []
        for batch in batches {
            #expect(batch.url == "https://my-ns.servicebus.windows.net/my-hub/messages/$batch?direct&api-version=2020-06")
            let contentType = try #require(batch.header("Content-Type"))
            let boundary = try #require(contentType.split(separator: "\"").dropFirst().first.map(String.init))
            #expect(contentType == "multipart/mixed; boundary=\"\(boundary)\"")
            let text = String(decoding: batch.body, as: UTF8.self)
            let parts = text.components(separatedBy: "--\(boundary)")
            #expect(parts.count == 4 && parts[0].isEmpty && parts[3] == "--\r\n")
            #expect(
                parts[1] == "\r\nContent-Type: application/json;charset=utf-8\r\nContent-Disposition: inline; name=notification\r\n\r\n"
                    + String(decoding: try payload.encoded(), as: UTF8.self) + "\r\n")
            // "\r\n" is one Character, so one dropLast removes the line break.
            let devices = parts[2].components(separatedBy: "\r\n\r\n")[1].dropLast()
            var parser = JSONParser()
            let list = try parser.parse(Array(devices.utf8))
            sent += list.root.elements.compactMap(\.string)
        }
        #expect(sent == handles)
    }

    @Test("Installations: put, patch, get and delete requests; the JSON reads back")
    func installations() throws {
        let installation = Installation(
            installationID: "device/1 é", pushChannel: deviceToken, tags: ["username:alice"], userID: "alice",
            templates: ["greeting": .init(body: #"{"aps":{"alert":"$(message)"}}"#, tags: ["lang:en"])])
        let put = try endpoint.putInstallationRequest(installation, authorization: token)
        #expect(put.method == "PUT" && put.isIdempotent)
        #expect(put.url == "https://my-ns.servicebus.windows.net/my-hub/installations/device%2F1%20%C3%A9?api-version=2020-06")
        #expect(try Installation(json: put.body) == installation)
        #expect(
            String(decoding: put.body, as: UTF8.self).hasPrefix(
                #"{"installationId":"device/1 é","platform":"apns","pushChannel":""# + deviceToken
                    + #"","tags":["username:alice"],"userId":"alice","templates":{"greeting":{"body":"#))

        let patch = try endpoint.patchInstallationRequest(
            id: "device-1",
            [
                .addTag("lang:fr"), .removeTag("username:alice"), .replaceUserID("bob"), .replacePushChannel(deviceToken),
                .addTemplate(name: "a/b", .init(body: "{}")), .removeTemplate(name: "old"),
            ],
            authorization: token)
        #expect(patch.method == "PATCH" && patch.header("Content-Type") == "application/json-patch+json")
        #expect(
            String(decoding: patch.body, as: UTF8.self)
                == #"[{"op":"add","path":"/tags","value":"lang:fr"},{"op":"remove","path":"/tags/username:alice"},{"op":"replace","path":"/userId","value":"bob"},{"op":"replace","path":"/pushChannel","value":""#
                + deviceToken + #""},{"op":"add","path":"/templates/a~1b","value":"{\"body\":\"{}\"}"},{"op":"remove","path":"/templates/old"}]"#)
        #expect(try endpoint.getInstallationRequest(id: "d", authorization: token).method == "GET")
        #expect(try endpoint.deleteInstallationRequest(id: "d", authorization: token).method == "DELETE")

        var bad = installation
        bad.tags = ["has space"]
        #expect(throws: NotificationHubError.self) { try endpoint.putInstallationRequest(bad, authorization: token) }
        bad = installation
        bad.pushChannel = "zz"
        #expect(throws: NotificationHubError.self) { try endpoint.putInstallationRequest(bad, authorization: token) }
        #expect(throws: NotificationHubError.self) { try endpoint.getInstallationRequest(id: "", authorization: token) }
        #expect(throws: NotificationHubError.self) { try Installation(json: Array("{\"installationId\":1}".utf8)) }
    }

    @Test("An endpoint override (the emulator) changes where requests go, not what is signed")
    func override() throws {
        let local = try HubEndpoint(connection: endpoint.connection, hubName: "my-hub", endpointOverride: "http://127.0.0.1:8080")
        let request = try local.getInstallationRequest(id: "d", authorization: token)
        #expect(request.url == "http://127.0.0.1:8080/my-hub/installations/d?api-version=2020-06")
        #expect(local.tokenResource == "https://my-ns.servicebus.windows.net/my-hub")
        #expect(throws: NotificationHubError.self) { try HubEndpoint(connection: endpoint.connection, hubName: "a/b") }
    }

    @Test("Send results read the notification id from Location, and the tracking ids")
    func results() {
        let result = SendResult(headers: [
            ("location", "https://my-ns.servicebus.windows.net/my-hub/messages/1234567890?api-version=2020-06"),
            ("TrackingId", "t-1"), ("x-ms-correlation-request-id", "c-1"),
        ])
        #expect(result.notificationID == "1234567890" && result.trackingID == "t-1" && result.correlationID == "c-1")
        #expect(SendResult(headers: []).notificationID == nil)
    }
}

extension String {
    /// Six lowercase hex digits.
    fileprivate init(format6 value: Int) {
        let hex = String(value, radix: 16)
        self = String(repeating: "0", count: 6 - hex.count) + hex
    }
}
