import APNsEmulator
import Foundation
import HubEmulator
import NIOHTTP1
import NotificationHubs
import PushBackend
import PushCore
import PushTestSupport
import Testing

/// An FCM registration token as Android hands them out: mixed case, `:` and `_`, about 160 characters.
func fcmToken(_ seed: Int) -> String {
    "dQw4w9WgXcQ:APA91b" + String(format: "%08d", seed) + String(repeating: "Ab_-9z", count: 22)
}

@Suite("Reference backend: iPhones and Android phones, one template send to reach both, scheduled sends")
struct CrossPlatformTests {
    @Test("An iPhone and an Android phone register alike; each installation carries the flows' templates for its platform")
    func registration() async throws {
        try await withBackend { backend in
            let iPhone = DeviceSimulator(user: "alice", backend: backend)
            try await iPhone.register()
            let android = fcmToken(1)
            let reply = try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken": "\#(android)", "platform": "fcmv1"}"#)
            #expect(reply.status == 201, "\(reply.text)")
            let body = try reply.json().root
            #expect(body["platform"]?.string == "fcmv1" && body["reachable"]?.bool == true && body["reason"] == nil)

            let installations = backend.emulator.installations(in: "hub").sorted { $0.platform.rawValue < $1.platform.rawValue }
            #expect(installations.map(\.platform) == [.apns, .fcmv1])
            // The FCM token keeps its case, in the installation and in its id.
            #expect(installations[1].pushChannel == android)
            #expect(installations[1].installationID == RegistrationRecord.installationID(deviceToken: android, platform: .fcmv1))
            #expect(installations[1].installationID.hasPrefix("fcmv1-") && installations[0].installationID.hasPrefix("apns-"))
            for installation in installations {
                #expect(installation.tags == ["username:alice"])
                #expect(Set(installation.templates.keys) == ["rich", "richAlert", "secure", "secureAlert"])
                #expect(installation.templates["secure"]?.tags == ["push:secure", "secure"])  // the hub adds the name
            }
            #expect(installations[0].templates["richAlert"]?.headers == ["apns-push-type": "alert", "apns-priority": "10"])
            #expect(installations[1].templates["richAlert"]?.headers == [:])

            for (json, code) in [
                (#"{"deviceToken": "\#(android)", "platform": "gcm"}"#, "invalidField"),
                (#"{"deviceToken": "\#(android)", "platform": 1}"#, "invalidField"),
                (#"{"deviceToken": "has spaces and é in it", "platform": "fcmv1"}"#, "invalidDeviceToken"),
                (#"{"deviceToken": "short", "platform": "fcmv1"}"#, "invalidDeviceToken"),
                (#"{"deviceToken": "\#(android)"}"#, "invalidDeviceToken"),  // an FCM token is no APNs token
            ] {
                let refused = try await backend.call(.POST, "/api/register", as: "alice", json: json)
                #expect(refused.status == 400 && refused.errorCode == code, "\(json.prefix(60)) → \(refused.text)")
            }
        }
    }

    @Test("One template send reaches the iPhone and the Android phone, each with its own payload; the list shows the hub's outcome")
    func oneSendBothPlatforms() async throws {
        try await withBackend { backend in
            let iPhone = DeviceSimulator(user: "alice", backend: backend)
            try await iPhone.register()
            let android = fcmToken(2)
            _ = try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken": "\#(android)", "platform": "fcmv1"}"#)
            let message = "Sunset \"at\" 8 🌅\n\\"

            let richID = try await backend.notify(
                as: "bob", #"{"kind": "rich", "message": \#(jsonString(message)), "resource": "sunset.png", "to": "alice"}"#)
            var parser = JSONParser()
            var deliveries = backend.emulator.deliveries
            #expect(deliveries.count == 2 && Set(deliveries.map(\.notificationID)).count == 1)
            let apple = try #require(deliveries.first { $0.platform == .apns })
            let fcm = try #require(deliveries.first { $0.platform == .fcmv1 })
            #expect(apple.deviceHandle == iPhone.token && fcm.deviceHandle == android)
            // Byte for byte what the codec builds for a native send.
            #expect(apple.payload == (try APNsPayload.silentRichPush(richId: richID, richType: "img", richMessage: message).encoded()))
            #expect(apple.apnsHeaders["apns-push-type"] == "background" && apple.apnsHeaders["apns-priority"] == "5")
            let data = try parser.parse(fcm.payload).root["message"]
            #expect(data?["data"]?["richId"]?.string == richID && data?["data"]?["richMessage"]?.string == message)
            #expect(data?["notification"] == nil && data?["android"]?["priority"]?.string == "HIGH")

            let alertID = try await backend.notify(as: "alice", #"{"kind": "richAlert", "message": "Look up"}"#)
            deliveries = backend.emulator.deliveries.filter { $0.sequence > fcm.sequence }
            let alertFCM = try parser.parse(try #require(deliveries.first { $0.platform == .fcmv1 }).payload).root["message"]
            #expect(alertFCM?["notification"]?["body"]?.string == "Look up" && alertFCM?["data"]?["richId"]?.string == alertID)
            let alertApple = try parser.parse(try #require(deliveries.first { $0.platform == .apns }).payload).root
            #expect(alertApple["aps"]?["alert"]?.string == "Look up" && alertApple["aps"]?["mutable-content"]?.int == 1)

            let secureID = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": "code 4242"}"#)
            let secure = backend.emulator.deliveries.suffix(2)
            // The whole phrase: "4242" alone turns up in a random hex id about once in a hundred runs.
            #expect(secure.count == 2 && secure.allSatisfy { !String(decoding: $0.payload, as: UTF8.self).contains("code 4242") })
            let secureFCM = try parser.parse(try #require(secure.first { $0.platform == .fcmv1 }).payload).root["message"]
            #expect(secureFCM?["data"]?.count == 1 && secureFCM?["data"]?["secureId"]?.string == secureID)

            // The list asks the hub what became of each send, and keeps the final answers. A send
            // the hub did not answer for within the list's wait (a loaded machine) is asked about
            // at the next list, so list until all three are final.
            var list = try await backend.call(.GET, "/api/notifications", as: "alice").json().root["notifications"]
            for _ in 0..<20 where !(0..<3).allSatisfy({ list?[$0]?["delivery"]?["state"]?.string == "Completed" }) {
                list = try await backend.call(.GET, "/api/notifications", as: "alice").json().root["notifications"]
            }
            let item = try #require((0..<3).compactMap { list?[$0] }.first { $0["id"]?.string == richID })
            #expect(item["delivery"]?["state"]?.string == "Completed")
            #expect(item["delivery"]?["outcomes"]?["apns"]?["Success"]?.int == 1 && item["delivery"]?["outcomes"]?["fcmv1"]?["Success"]?.int == 1)
            let requests = backend.emulator.requestCount
            let again = try await backend.call(.GET, "/api/notifications", as: "alice").json().root["notifications"]
            #expect(again?[2]?["delivery"]?["state"]?.string == "Completed")
            #expect(backend.emulator.requestCount == requests)  // kept: the hub is not asked again
        }
    }

    @Test("An alert too long for FCM once wrapped is shortened for both; a silent push too long for FCM is refused, nothing sent")
    func fittedForBothPlatforms() async throws {
        try await withBackend { backend in
            _ = try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken": "\#(fcmToken(3))", "platform": "fcmv1"}"#)
            let long = String(repeating: "\"", count: 2100)  // each takes two bytes once escaped
            _ = try await backend.notify(as: "alice", #"{"kind": "richAlert", "message": \#(jsonString(long))}"#)
            let delivery = try #require(backend.emulator.deliveries.last)
            #expect(delivery.payload.count <= 4096)
            var parser = JSONParser()
            let body = try #require(try parser.parse(delivery.payload).root["message"]?["notification"]?["body"]?.string)
            #expect(body.hasSuffix("…") && long.hasPrefix(body.dropLast()))
            let outcome = try #require(backend.emulator.outcome(of: delivery.notificationID, in: "hub"))
            #expect(outcome.failures.isEmpty)

            let deliveries = backend.emulator.deliveries.count
            // Within APNs' 4096 bytes (109 around the message), over FCM's (130 around it).
            let silent = String(repeating: "x", count: 3980)
            let refused = try await backend.call(.POST, "/api/notifications", as: "alice", json: #"{"kind": "rich", "message": "\#(silent)"}"#)
            #expect(refused.status == 413 && refused.errorCode == "payloadTooLarge" && refused.text.contains("FCM"), "\(refused.text)")
            #expect(backend.emulator.deliveries.count == deliveries)
            // Sent later, it may reach an Android device registered by then: bob has none now.
            let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            let scheduled = try await backend.call(
                .POST, "/api/notifications", as: "bob", json: #"{"kind": "rich", "message": "\#(silent)", "to": "bob", "sendAt": \#(later)}"#)
            #expect(scheduled.status == 413 && scheduled.text.contains("FCM"), "\(scheduled.text)")
            let now = try await backend.call(.POST, "/api/notifications", as: "bob", json: #"{"kind": "rich", "message": "\#(silent)", "to": "bob"}"#)
            #expect(now.status == 201, "\(now.text)")
        }
    }

    @Test("sendAt: held by the hub until its time, and seen by the recipient from then on; a time passed sends now; over 7 days ahead is refused")
    func scheduled() async throws {
        // A scheduled send costs the device cap of the send quota: room for this test's few.
        try await withBackend(configure: { $0.sendQuota = RateLimit(burst: 100_000, perSecond: 1000) }) { backend in
            let iPhone = DeviceSimulator(user: "alice", backend: backend)
            try await iPhone.register()
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let inAMinute = now + 60_000
            let reply = try await backend.call(
                .POST, "/api/notifications", as: "bob", json: #"{"kind": "secure", "payload": "later", "to": "alice", "sendAt": \#(inAMinute)}"#)
            #expect(reply.status == 201, "\(reply.text)")
            let id = try #require(try reply.json().root["id"]?.string)
            #expect(backend.emulator.scheduledSendCount == 1 && backend.emulator.deliveries.isEmpty)
            #expect(try await backend.call(.GET, "/api/notifications", as: "alice").json().root["notifications"]?.count == 0)
            #expect(try await iPhone.fetch(id).status == 404)

            // The emulator's clock moved past the time: delivered, and only then.
            backend.emulator.advanceClock(by: .seconds(30))
            #expect(backend.emulator.deliveries.isEmpty)
            backend.emulator.advanceClock(by: .seconds(35))
            #expect(try iPhone.lastPush().root["secureId"]?.string == id)
            #expect(backend.emulator.scheduledSendCount == 0)

            // The backend's own clock decides what the recipient sees: hidden until its time, then
            // listed. Ten seconds ahead: under the sanitizer a send and a list took over four.
            let soon = Int64(Date().timeIntervalSince1970 * 1000) + 10_000
            let soonID = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": "soon", "sendAt": \#(soon)}"#)
            #expect(try await backend.call(.GET, "/api/notifications", as: "alice").json().root["notifications"]?.count == 0)
            try await Task.sleep(for: .milliseconds(max(0, soon - Int64(Date().timeIntervalSince1970 * 1000)) + 50))
            let item = try await backend.call(.GET, "/api/notifications", as: "alice").json().root["notifications"]?[0]
            #expect(item?["id"]?.string == soonID && item?["sendAt"]?.int == Int(soon))
            #expect(try await iPhone.fetch(soonID).status == 200)

            let passed = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": "x", "sendAt": \#(now - 1000)}"#)
            #expect(try iPhone.lastPush().root["secureId"]?.string == passed && backend.emulator.scheduledSendCount == 0)
            let far = try await backend.call(
                .POST, "/api/notifications", as: "alice", json: #"{"kind": "secure", "payload": "x", "sendAt": \#(now + 8 * 24 * 3600 * 1000)}"#)
            #expect(far.status == 422 && far.errorCode == "scheduleTooFar", "\(far.text)")
            for sendAt in ["\"tomorrow\"", "1.5", "0", "-5"] {
                let refused = try await backend.call(
                    .POST, "/api/notifications", as: "alice", json: #"{"kind": "secure", "payload": "x", "sendAt": \#(sendAt)}"#)
                #expect(refused.status == 400 && refused.errorCode == "invalidField", "\(sendAt) → \(refused.text)")
            }
        }
    }

    @Test("Straight to APNs: an Android registration is kept but answered unreachable, sends reach the Apple devices only, sendAt waits in the queue")
    func apnsDeliveryReachesAppleOnly() async throws {
        try await withAPNsBackend { backend in
            let android = try await backend.call(
                .POST, "/api/register", as: "alice", json: #"{"deviceToken": "\#(fcmToken(4))", "platform": "fcmv1"}"#)
            #expect(android.status == 201)
            let body = try android.json().root
            #expect(body["reachable"]?.bool == false && body["reason"]?.string?.contains("Apple devices only") == true)
            let iPhone = String(repeating: "ab", count: 32)
            let apple = try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken": "\#(iPhone)"}"#)
            #expect(try apple.json().root["reachable"]?.bool == true)

            _ = try backend.created(try await backend.call(.POST, "/api/notifications", as: "alice", json: #"{"kind": "secure", "payload": "x"}"#))
            #expect(backend.emulator.deliveries.map(\.deviceToken) == [iPhone])
            #expect(try await backend.store.registrations(owner: "alice").count == 2)

            // Queued until its time: not pushed, and due at `sendAt` exactly (claimed as a worker
            // would at that time; a minute ahead, so that a slow run cannot reach it first).
            let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            let scheduled = try backend.created(
                try await backend.call(.POST, "/api/notifications", as: "alice", json: #"{"kind": "secure", "payload": "x", "sendAt": \#(later)}"#))
            #expect(backend.emulator.deliveries.count == 1)
            #expect(try await backend.store.deliveryReport(notificationID: scheduled)?.state == .queued)
            #expect(try await backend.store.claimDeliveryJobs(owner: "probe", now: later - 1, leaseUntil: later, limit: 10).isEmpty)
            let due = try await backend.store.claimDeliveryJobs(owner: "probe", now: later, leaseUntil: later + 1, limit: 10)
            #expect(due.map(\.notificationID) == [scheduled] && due.first?.dueAt == later)
        }
    }

    @Test("After a restart, a device whose installation the hub lost (or got without templates) is written again before its first push")
    func installationsWrittenAgain() async throws {
        let directory = try temporaryDirectory()
        let token = fcmToken(5)
        try await withBackend(dataDirectory: directory) { backend in
            _ = try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken": "\#(token)", "platform": "fcmv1"}"#)
            #expect(backend.emulator.installations(in: "hub").count == 1)
        }
        // Another emulator: a hub that has none of the installations.
        try await withBackend(dataDirectory: directory) { backend in
            #expect(backend.emulator.installations(in: "hub").isEmpty)
            _ = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": "x"}"#)
            #expect(backend.emulator.deliveries.map(\.deviceHandle) == [token])
            #expect(backend.emulator.installations(in: "hub").first?.templates.count == 4)
        }
    }
}
