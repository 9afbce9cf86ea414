import PushFCM
import PushJSON
import Testing

@Suite("FCM v1 messages: the writer")
struct FCMMessageTests {
    static let full = FCMMessage(
        notification: FCMNotification(title: "Sunset at \"the pier\"", body: "Look up 🌅", image: "https://example.com/s.png"),
        data: ["richId": "42", "richType": "img"],
        android: FCMAndroidConfig(
            collapseKey: "sunsets", priority: .high, ttl: .seconds(3600), restrictedPackageName: "com.example.app", data: ["channel": "news"],
            notification: FCMAndroidNotification(color: "#ff8800", sound: "default", tag: "t", clickAction: "OPEN", channelID: "photos"),
            directBootOK: false),
        apns: FCMAPNsConfig(headers: ["apns-priority": "10"], payload: try! RawJSON(#"{"aps":{"alert":"Look up"}}"#)),
        webpush: FCMWebpushConfig(
            headers: ["Urgency": "high"], data: ["k": "v"], notification: try! RawJSON(#"{"title":"t"}"#), link: "https://example.com/p"),
        analyticsLabel: "campaign_7")

    @Test("Every part in its fixed order, minified; the size oracle counts exactly what is written")
    func encodesEveryPart() throws {
        let bytes = try Self.full.encoded()
        let expected =
            #"{"message":{"notification":{"title":"Sunset at \"the pier\"","body":"Look up 🌅","image":"https://example.com/s.png"},"#
            + #""data":{"richId":"42","richType":"img"},"#
            + #""android":{"collapse_key":"sunsets","priority":"HIGH","ttl":"3600s","restricted_package_name":"com.example.app","#
            + ##""data":{"channel":"news"},"notification":{"color":"#ff8800","sound":"default","tag":"t","click_action":"OPEN","##
            + #""channel_id":"photos"},"direct_boot_ok":false},"#
            + #""apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"alert":"Look up"}}},"#
            + #""webpush":{"headers":{"Urgency":"high"},"data":{"k":"v"},"notification":{"title":"t"},"fcm_options":{"link":"https://example.com/p"}},"#
            + #""fcm_options":{"analytics_label":"campaign_7"}}}"#
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        #expect(try Self.full.encodedSize() == bytes.count)
        #expect(try FCMLinter.lint(bytes).isEmpty)
    }

    @Test("A target when given; an empty message is still a message")
    func targets() throws {
        #expect(try FCMMessage(target: .token("abc")).encoded() == Array(#"{"message":{"token":"abc"}}"#.utf8))
        #expect(try FCMMessage(target: .topic("news")).encoded() == Array(#"{"message":{"topic":"news"}}"#.utf8))
        let condition = FCMMessage(target: .condition("'a' in topics && 'b' in topics"))
        #expect(try condition.encoded() == Array(#"{"message":{"condition":"'a' in topics && 'b' in topics"}}"#.utf8))
        #expect(try FCMMessage().encoded() == Array(#"{"message":{}}"#.utf8))
    }

    @Test("ttl as protobuf writes durations: whole seconds, or 3, 6 or 9 digits of fraction")
    func durations() throws {
        func ttl(_ duration: Duration) throws -> String {
            let bytes = try FCMMessage(android: FCMAndroidConfig(ttl: duration)).encoded()
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(try ttl(.zero) == #"{"message":{"android":{"ttl":"0s"}}}"#)
        #expect(try ttl(.milliseconds(1500)) == #"{"message":{"android":{"ttl":"1.500s"}}}"#)
        #expect(try ttl(.microseconds(2_000_001)) == #"{"message":{"android":{"ttl":"2.000001s"}}}"#)
        #expect(try ttl(.nanoseconds(1)) == #"{"message":{"android":{"ttl":"0.000000001s"}}}"#)
        #expect(try ttl(FCMLimits.maximumTTL) == #"{"message":{"android":{"ttl":"2419200s"}}}"#)
        for refused: Duration in [.seconds(-1), FCMLimits.maximumTTL + .seconds(1)] {
            #expect(throws: FCMMessageError(.invalidTTL, path: "message.android.ttl", "")) { try ttl(refused) }
        }
    }

    @Test("Reserved data keys are refused in data maps, not in headers", arguments: ["from", "notification", "message_type", "google.c.a", "gcm.n"])
    func reservedKeys(key: String) throws {
        #expect(throws: FCMMessageError(.reservedDataKey, path: "message.data", "")) {
            try FCMMessage(data: FCMStringMap([.init(key, "x")])).encoded()
        }
        #expect(throws: FCMMessageError(.reservedDataKey, path: "message.android.data", "")) {
            try FCMMessage(android: FCMAndroidConfig(data: FCMStringMap([.init(key, "x")]))).encoded()
        }
        #expect(throws: FCMMessageError(.reservedDataKey, path: "message.webpush.data", "")) {
            try FCMMessage(webpush: FCMWebpushConfig(data: FCMStringMap([.init(key, "x")]))).encoded()
        }
        _ = try FCMMessage(apns: FCMAPNsConfig(headers: FCMStringMap([.init(key, "x")]))).encoded()
        // Near misses are the app's own.
        _ = try FCMMessage(data: ["fromCity": "Oslo", "google": "x", "gcm": "y", "Google.x": "z"]).encoded()
    }

    @Test("Values FCM refuses: a color that is not #rrggbb, a link that is not HTTPS, a malformed analytics label")
    func invalidValues() {
        #expect(throws: FCMMessageError(.invalidValue, path: "message.android.notification.color", "")) {
            try FCMMessage(android: FCMAndroidConfig(notification: FCMAndroidNotification(color: "orange"))).encoded()
        }
        #expect(throws: FCMMessageError(.invalidValue, path: "message.webpush.fcm_options.link", "")) {
            try FCMMessage(webpush: FCMWebpushConfig(link: "http://example.com")).encoded()
        }
        for label in ["", "has space", String(repeating: "a", count: 51)] {
            #expect(throws: FCMMessageError(.invalidValue, path: "message.fcm_options.analytics_label", "")) {
                try FCMMessage(analyticsLabel: label).encoded()
            }
        }
    }

    @Test("Over the limit: payloadTooLarge with the size and the limit, and the buffer as it was")
    func limit() throws {
        let message = FCMMessage(notification: FCMNotification(body: String(repeating: "x", count: 5000)))
        var buffer: [UInt8] = Array("kept".utf8)
        do throws(FCMMessageError) {
            try message.encode(into: &buffer)
            Issue.record("a 5 KB message was encoded")
        } catch {
            let size = try message.encodedSize()
            #expect(error.code == .payloadTooLarge && error.size == size && error.limit == FCMLimits.messageSize)
            #expect(error.offset == FCMLimits.messageSize)
        }
        #expect(buffer == Array("kept".utf8))
        try message.encode(into: &buffer, limit: .max)
        #expect(buffer.count == 4 + (try message.encodedSize()))
    }

    @Test("The flows' messages: the app reads the keys the APNs payloads carry, a data message wakes it at high priority")
    func flows() throws {
        var parser = JSONParser()
        let rich = try parser.parse(try FCMMessage.silentRichPush(richId: "r1", richType: "img", richMessage: "Sunset").encoded()).root["message"]
        #expect(rich?["data"]?["richId"]?.string == "r1" && rich?["data"]?["richType"]?.string == "img")
        #expect(rich?["data"]?["richMessage"]?.string == "Sunset" && rich?["notification"] == nil)
        #expect(rich?["android"]?["priority"]?.string == "HIGH")
        let alert = try parser.parse(try FCMMessage.richAlert(richId: "r2", richType: "img", message: "Look").encoded()).root["message"]
        #expect(alert?["notification"]?["body"]?.string == "Look" && alert?["data"]?.count == 2)
        let secure = try parser.parse(try FCMMessage.silentSecurePush(secureId: "s1").encoded()).root["message"]
        #expect(secure?["data"]?.count == 1 && secure?["data"]?["secureId"]?.string == "s1" && secure?["notification"] == nil)
        for message in [FCMMessage.silentRichPush(richId: "r", richType: "img", richMessage: "m"), .silentSecurePush(secureId: "s")] {
            #expect(try FCMLinter.lint(message.encoded()).isEmpty)
        }
    }
}
