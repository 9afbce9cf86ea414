import FoundationEssentials
import NotificationHubs
import PushFCM
import PushJSON
import PushSAS
import Testing

@Suite("Notification Hubs requests: FCM v1")
struct FCMRequestTests {
    let endpoint: HubEndpoint = try! HubEndpoint(
        connection: ConnectionString(
            "Endpoint=sb://my-ns.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey=c2VjcmV0"),
        hubName: "my-hub")
    let token = "SharedAccessSignature sr=x&sig=y&se=1&skn=z"
    /// The shape of FCM's registration tokens: an instance id, a colon, then URL-safe base64.
    static let fcmToken = "cHQ3m1xZQk2v8Lr0Zy9xAb:APA91bH" + String(repeating: "xY-_7", count: 28)
    let message = FCMMessage(notification: FCMNotification(title: "Sunset", body: "at the pier"), data: ["richId": "4f1c"])

    @Test("A send in the fcmv1 format: the message as the body, no APNs headers, the tags")
    func send() throws {
        let request = try endpoint.sendRequest(message, to: .tag("username:alice"), authorization: token)
        #expect(request.method == "POST" && request.url == "https://my-ns.servicebus.windows.net/my-hub/messages?api-version=2020-06")
        #expect(request.header("ServiceBusNotification-Format") == "fcmv1")
        #expect(request.header("Content-Type") == "application/json;charset=utf-8" && request.header("Authorization") == token)
        #expect(request.header("ServiceBusNotification-Tags") == "username:alice")
        #expect(!request.headers.contains { $0.name.lowercased().hasPrefix("apns-") })
        #expect(request.body == (try message.encoded()))
    }

    @Test("Direct and batch direct sends carry FCM tokens; an APNs-only check does not apply, a malformed token is refused")
    func direct() throws {
        let direct = try endpoint.directSendRequest(message, deviceHandle: Self.fcmToken, authorization: token)
        #expect(direct.url == "https://my-ns.servicebus.windows.net/my-hub/messages?direct&api-version=2020-06")
        #expect(direct.header("ServiceBusNotification-DeviceHandle") == Self.fcmToken && direct.header("ServiceBusNotification-Format") == "fcmv1")
        let tokens = (0..<1500).map { Self.fcmToken + String($0) }
        let batches = try endpoint.batchDirectSendRequests(message, deviceHandles: tokens, authorization: token)
        #expect(batches.count == 2 && batches.allSatisfy { $0.url.hasSuffix("/messages/$batch?direct&api-version=2020-06") })
        #expect(batches[0].header("Content-Type")?.hasPrefix("multipart/mixed; boundary=") == true)
        #expect(String(decoding: batches[0].body, as: UTF8.self).contains(String(decoding: try message.encoded(), as: UTF8.self)))
        for bad in ["", "short", Self.fcmToken + " x", Self.fcmToken + "\n", String(repeating: "a", count: 4097)] {
            #expect(throws: NotificationHubError.self) { try endpoint.directSendRequest(message, deviceHandle: bad, authorization: token) }
        }
    }

    @Test("What FCM would refuse never leaves: a reserved data key is a bad request, over 4096 bytes too large")
    func refusals() throws {
        do throws(NotificationHubError) {
            _ = try endpoint.sendRequest(FCMMessage(data: ["from": "me"]), to: .broadcast, authorization: token)
            Issue.record("a reserved data key was sent")
        } catch {
            #expect(error.code == .badRequest && error.message.contains("message.data"))
        }
        do throws(NotificationHubError) {
            let big = FCMMessage(data: ["blob": String(repeating: "b", count: 5000)])
            _ = try endpoint.sendRequest(big, to: .broadcast, authorization: token)
            Issue.record("a 5 KB message was sent")
        } catch {
            #expect(error.code == .payloadTooLarge)
        }
    }

    @Test("An fcmv1 installation: its platform and token in the JSON, read back; other platforms are refused by name")
    func installations() throws {
        let installation = Installation(installationID: "pixel-7", platform: .fcmv1, pushChannel: Self.fcmToken, tags: ["username:alice"])
        let request = try endpoint.putInstallationRequest(installation, authorization: token)
        let json = String(decoding: request.body, as: UTF8.self)
        #expect(json.hasPrefix(#"{"installationId":"pixel-7","platform":"fcmv1","pushChannel":"\#(Self.fcmToken)""#))
        #expect(try Installation(json: request.body) == installation)
        // An APNs installation needs a hex token; an FCM token is not one.
        #expect(throws: NotificationHubError.self) {
            try endpoint.putInstallationRequest(Installation(installationID: "x", pushChannel: Self.fcmToken), authorization: token)
        }
        do throws(NotificationHubError) {
            _ = try Installation(json: Array(#"{"installationId":"w","platform":"wns","pushChannel":"https://x"}"#.utf8))
            Issue.record("a wns installation was read")
        } catch {
            #expect(error.code == .badRequest && error.message.contains("wns"))
        }
        #expect(try Installation(json: Array(#"{"installationId":"f","platform":"FCMV1","pushChannel":"t"}"#.utf8)).platform == .fcmv1)
    }
}
