import AsyncHTTPClient
import Foundation
import HubEmulator
import HubTestSupport
import NIOCore
import NIOHTTP1
import NotificationHubs
import PushCore
import PushFCM
import PushTestSupport
import Synchronization
import Testing

private let namespace = "Endpoint=sb://test-ns.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey="
private let listenOnly =
    "Endpoint=sb://test-ns.servicebus.windows.net/;SharedAccessKeyName=DefaultListenSharedAccessSignature;SharedAccessKey=bGlzdGVuLWtleQ=="

let alice = String(repeating: "a1", count: 32)
private let bob = String(repeating: "b2", count: 32)
private let carol = String(repeating: "c3", count: 32)

@Suite("Notification Hubs client against the emulator (real HTTP on 127.0.0.1)")
struct EmulatorClientTests {
    @Test("Installations: create, read, patch, delete")
    func installations() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            try await hub.createOrUpdate(Installation(installationID: "phone-1", pushChannel: alice, tags: ["username:alice"], userID: "alice"))
            var stored = try await hub.installation(id: "phone-1")
            #expect(stored.tags == ["username:alice"] && stored.pushChannel == alice && stored.userID == "alice")
            try await hub.patchInstallation(
                id: "phone-1", [.addTag("lang:fr"), .replacePushChannel(bob), .addTemplate(name: "t", .init(body: "{}"))])
            stored = try await hub.installation(id: "phone-1")
            #expect(stored.tags == ["username:alice", "lang:fr"] && stored.pushChannel == bob && stored.templates["t"]?.body == "{}")
            try await hub.deleteInstallation(id: "phone-1")
            do throws(NotificationHubError) {
                _ = try await hub.installation(id: "phone-1")
                Issue.record("a deleted installation was found")
            } catch {
                #expect(error.code == .notFound && error.status == 404 && error.trackingID != nil)
            }
            #expect(emulator.installations(in: "hub").isEmpty)
        }
    }

    @Test("Sends reach the devices a tag, a tag expression, a broadcast, a direct and a batch send name")
    func sends() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            try await hub.createOrUpdate(Installation(installationID: "a", pushChannel: alice, tags: ["username:alice", "lang:fr"]))
            try await hub.createOrUpdate(Installation(installationID: "b", pushChannel: bob, tags: ["username:bob"]))
            try await hub.createOrUpdate(Installation(installationID: "c", pushChannel: carol, tags: ["username:carol", "lang:fr"]))
            let rich = APNsPayload.silentRichPush(richId: "4f1c", richType: "img", richMessage: "New photo")

            let result = try await hub.send(rich, to: .tag("username:bob"))
            #expect(result.notificationID != nil && result.trackingID != nil)
            #expect(emulator.deliveries.map(\.deviceHandle) == [bob])
            #expect(
                emulator.deliveries[0].apnsHeaders["apns-push-type"] == "background" && emulator.deliveries[0].apnsHeaders["apns-priority"] == "5")
            #expect(emulator.deliveries[0].payload == (try rich.encoded()))

            emulator.reset()
            _ = try await hub.send(rich, to: .expression(.tag("lang:fr") && !.tag("username:carol")))
            #expect(emulator.deliveries.map(\.deviceHandle) == [alice])
            emulator.reset()
            _ = try await hub.send(rich, to: .tags(["username:bob", "username:carol"]))
            #expect(Set(emulator.deliveries.map(\.deviceHandle)) == [bob, carol])
            emulator.reset()
            _ = try await hub.send(rich, to: .broadcast)
            #expect(emulator.deliveries.count == 3)

            emulator.reset()
            _ = try await hub.send(rich, toDevice: carol)
            #expect(emulator.deliveries.map(\.deviceHandle) == [carol])
            emulator.reset()
            let many = (0..<2100).map { String(format: "%064x", $0) }
            let results = try await hub.send(rich, toDevices: many)
            #expect(results.count == 3 && emulator.deliveries.map(\.deviceHandle) == many)
        }
    }

    @Test("A bad key is refused with 401; a listen-only key cannot send (403)")
    func refusals() async throws {
        try await withEmulator { emulator, base in
            let forged = try client(base, connectionString: namespace + "d3Jvbmcta2V5")
            do throws(NotificationHubError) {
                _ = try await forged.send(APNsPayload(aps: APNsAPS(alert: .text("Hi"))), to: .broadcast)
                Issue.record("a wrong key was accepted")
            } catch {
                #expect(error.code == .unauthorized && error.status == 401 && error.message.contains("InvalidSignature"))
            }
            // Refused, then retried once with a fresh token, then refused for good.
            #expect(emulator.requestCount == 2 && emulator.deliveries.isEmpty)
        }
        try await withEmulator(connectionString: listenOnly) { emulator, base in
            let listener = try client(base, connectionString: listenOnly)
            do throws(NotificationHubError) {
                _ = try await listener.send(APNsPayload(aps: APNsAPS(alert: .text("Hi"))), to: .broadcast)
                Issue.record("a listen-only key could send")
            } catch {
                #expect(error.code == .forbidden && error.status == 403)
            }
            #expect(emulator.requestCount == 1, "403 without Retry-After is not retried")
            try await listener.createOrUpdate(Installation(installationID: "d", pushChannel: alice))  // listening rights manage devices
        }
    }

    @Test("Tokens are refreshed before they expire; a 401 gets one retry with a fresh token")
    func tokenRefresh() async throws {
        try await withEmulator { emulator, base in
            let now = Mutex(SASClock.system.now())
            let clock = SASClock { now.withLock { $0 } }
            let hub = try client(base, clock: clock)
            let payload = APNsPayload(aps: APNsAPS(alert: .text("Hi")))
            _ = try await hub.send(payload, toDevice: alice)
            _ = try await hub.send(payload, toDevice: alice)
            now.withLock { $0 += 19 * 60 }  // past the refresh point (expiry − 2 minutes)
            _ = try await hub.send(payload, toDevice: alice)
            let expiries = emulator.deliveries.map(\.tokenExpiry)
            #expect(expiries.count == 3 && expiries[0] == expiries[1] && expiries[2] == expiries[0] + 19 * 60)

            emulator.inject([.status(401, retryAfter: nil)])
            _ = try await hub.send(payload, toDevice: bob)
            #expect(emulator.deliveries.last?.deviceHandle == bob)
        }
    }

    @Test("429 with Retry-After is retried after the wait; 503 is retried; the budget ends it")
    func throttling() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base, retry: RetryPolicy(initialBackoff: .milliseconds(50), jitter: 0))
            let payload = APNsPayload(aps: APNsAPS(alert: .text("Hi")))
            emulator.inject([.status(429, retryAfter: "1")])
            let clock = ContinuousClock()
            let start = clock.now
            _ = try await hub.send(payload, toDevice: alice)
            #expect(clock.now - start >= .milliseconds(900), "Retry-After: 1 was honoured")
            #expect(emulator.requestCount == 2 && emulator.deliveries.count == 1)

            emulator.inject([.status(503, retryAfter: nil), .status(403, retryAfter: "0")])
            _ = try await hub.send(payload, toDevice: alice)
            #expect(emulator.requestCount == 5 && emulator.deliveries.count == 2)

            emulator.inject(Array(repeating: .status(503, retryAfter: nil), count: 10))
            do throws(NotificationHubError) {
                _ = try await hub.send(payload, toDevice: alice)
                Issue.record("a hub that stays unavailable was reported as a success")
            } catch {
                #expect(error.code == .serverError && error.status == 503)
            }
            #expect(emulator.requestCount == 9, "four attempts in all")
        }
    }

    @Test("A POST that timed out after it was written is not sent again")
    func timeoutNotRepeated() async throws {
        try await withEmulator { emulator, base in
            // A timeout the emulator's own answers stay well inside even while other suites load
            // both cores; the injected delay outlasts it.
            let hub = try client(base, timeout: .seconds(2))
            emulator.inject([.delay(.seconds(4))])
            do throws(NotificationHubError) {
                _ = try await hub.send(APNsPayload(aps: APNsAPS(alert: .text("Hi"))), toDevice: alice)
                Issue.record("a timed-out send was reported as a success")
            } catch {
                #expect(error.code == .transportFailed && error.status == nil && error.message.contains("may have been delivered"))
            }
            #expect(emulator.requestCount == 1)
            // PUT is idempotent, so the same timeout is retried (at least once: on a loaded machine
            // the retry itself may outlast the timeout and be retried again).
            emulator.inject([.delay(.seconds(4))])
            try await hub.createOrUpdate(Installation(installationID: "x", pushChannel: alice))
            #expect(emulator.requestCount >= 3)
        }
    }

    @Test("A 5 KB payload is refused before leaving the client; a payload the hub's lint refuses is a 400")
    func payloads() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            var big = APNsPayload(aps: APNsAPS(alert: .text("x")))
            big["blob"] = .string(String(repeating: "b", count: 5000))
            do throws(NotificationHubError) {
                _ = try await hub.send(big, to: .broadcast)
                Issue.record("a 5 KB payload was sent")
            } catch {
                #expect(error.code == .payloadTooLarge && error.status == nil)
            }
            #expect(emulator.requestCount == 0)

            var outOfRange = APNsPayload.silentSecurePush(secureId: "s-1")
            outOfRange.aps.relevanceScore = 7  // outside 0…1: the client's own encoder refuses it
            do throws(NotificationHubError) {
                _ = try await hub.send(outOfRange, to: .broadcast)
                Issue.record("an invalid payload was sent")
            } catch {
                #expect(error.code == .badRequest && error.status == nil)
            }
            #expect(emulator.requestCount == 0)

            // Pre-encoded JSON is passed through as it is; the hub's lint finds the duplicate key.
            var duplicated = APNsPayload(aps: APNsAPS(alert: .text("Hi")))
            duplicated["extra"] = .raw(try RawJSON(#"{"a":1,"a":2}"#))
            do throws(NotificationHubError) {
                _ = try await hub.send(duplicated, to: .broadcast)
                Issue.record("a payload with a duplicate key was accepted")
            } catch {
                #expect(error.code == .badRequest && error.status == 400 && error.trackingID != nil, "\(error)")
                #expect(error.message.contains("duplicateKey"))
            }
        }
    }
}

@Suite("hub-emulator command")
struct HubEmulatorCommandTests {
    @Test("It prints its address first, verifies tokens that pushcore signs, and records the delivery")
    func command() async throws {
        let (process, lines) = try await ServerProcess.start(
            PushCoreBinary.builtExecutable("hub-emulator"), ["--port", "0", "--hub", "hub", "--connection-string", fullAccess], readingLines: 1)
        defer { process.terminate() }
        let first = lines.first ?? ""
        #expect(first.hasPrefix("listening on http://127.0.0.1:"))
        let base = String(first.dropFirst("listening on ".count))

        let hub = try client(base)
        _ = try await hub.send(APNsPayload(aps: APNsAPS(alert: .text("Hi"))), toDevice: alice)

        // What `curl` sends with a token from `pushcore sas sign` (the README shows it).
        let posted = try await postAsCurl(
            base + "/hub/messages/?direct&api-version=2020-06", headers: ["ServiceBusNotification-DeviceHandle": bob],
            body: #"{"aps":{"alert":"Hi from curl"}}"#)
        #expect(posted.status.code == 201)

        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/_emulator/deliveries"), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        var parser = JSONParser()
        let deliveries = try parser.parse(Array(body.readableBytesView))
        #expect(deliveries.root.count == 2 && deliveries.root[0]?["deviceHandle"]?.string == alice)
        #expect(deliveries.root[1]?["payload"]?.string == #"{"aps":{"alert":"Hi from curl"}}"#)
    }
}

@Suite("README Notification Hubs example")
struct ReadmeHubExample {
    @Test("register, patch, send to a tag, an expression, a device, devices and everybody")
    func readme() async throws {
        try await withEmulator { emulator, base in
            let deviceToken = alice
            let tokens = [bob, carol]
            let id = "4f1c2a9e"

            let hub = try NotificationHubClient(connectionString: fullAccess, hubName: "hub", endpointOverride: base)

            // A device registers under its user's tag.
            try await hub.createOrUpdate(Installation(installationID: "phone-1", pushChannel: deviceToken, tags: ["username:alice"]))
            try await hub.patchInstallation(id: "phone-1", [.addTag("lang:fr")])

            // The rich-push flow's silent notification to one user; headers derived by the codec.
            let rich = APNsPayload.silentRichPush(richId: id, richType: "img", richMessage: "New photo")
            let result = try await hub.send(rich, to: .tag("username:alice"))  // result.notificationID, .trackingID
            try await hub.send(rich, to: .expression(.tag("lang:fr") && !.tag("muted")))
            try await hub.send(rich, toDevice: deviceToken)  // direct send
            try await hub.send(rich, toDevices: tokens)  // batch, 1000 per request
            try await hub.send(rich, to: .broadcast)  // only when asked for by name

            #expect(result.notificationID == "1" && result.trackingID != nil)
            #expect(emulator.deliveries.map(\.deviceHandle) == [alice, alice, alice, bob, carol, alice])
        }
    }

    @Test("README: her Android phone too, an FCM v1 message, and one template send to both phones")
    func readmeAndroid() async throws {
        try await withEmulator { emulator, base in
            let (deviceToken, fcmToken, id) = (alice, FCMHubTests.pixel, "4f1c2a9e")
            let hub = try NotificationHubClient(connectionString: fullAccess, hubName: "hub", endpointOverride: base)
            // The apps register their templates with their installations.
            try await hub.createOrUpdate(
                Installation(
                    installationID: "phone-1", pushChannel: deviceToken, tags: ["username:alice"],
                    templates: ["alert": .init(body: #"{"aps":{"alert":"$(title)"}}"#)]))

            try await hub.createOrUpdate(Installation(installationID: "pixel-1", platform: .fcmv1, pushChannel: fcmToken, tags: ["username:alice"]))
            try await hub.send(FCMMessage(notification: FCMNotification(title: "New photo"), data: ["richId": id]), to: .tag("username:alice"))
            try await hub.patchInstallation(
                id: "pixel-1", [.addTemplate(name: "alert", .init(body: #"{"message":{"notification":{"title":"$(title)"}}}"#))])
            try await hub.send(templateProperties: ["title": "New photo"], to: .tag("username:alice"))  // each device's own template, iOS or Android

            #expect(emulator.deliveries.map(\.deviceHandle) == [fcmToken, deviceToken, fcmToken])
            #expect(
                emulator.deliveries.map { String(decoding: $0.payload, as: UTF8.self) }.suffix(2) == [
                    #"{"aps":{"alert":"New photo"}}"#, #"{"message":{"notification":{"title":"New photo"}}}"#,
                ])
        }
    }
}

/// A POST of an APNs payload to the emulator as `curl` sends it, with a token from `pushcore sas
/// sign` for the hub, `ServiceBusNotification-Format: apple`, and `headers`.
func postAsCurl(_ url: String, headers: [String: String], body: String) async throws -> HTTPClientResponse {
    let token = try SASSigner(ConnectionString(fullAccess)).token(for: "https://test-ns.servicebus.windows.net/hub", ttl: 60)
    var post = HTTPClientRequest(url: url)
    post.method = .POST
    post.headers.add(name: "Authorization", value: token)
    post.headers.add(name: "Content-Type", value: "application/json;charset=utf-8")
    post.headers.add(name: "ServiceBusNotification-Format", value: "apple")
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { post.headers.add(name: name, value: value) }
    post.body = .bytes(ByteBuffer(string: body))
    return try await HTTPClient.shared.execute(post, timeout: .seconds(30))
}
