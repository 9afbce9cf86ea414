import AsyncHTTPClient
import Foundation
import HubEmulator
import HubTestSupport
import NIOCore
import NIOHTTP1
import NotificationHubs
import PushCore
import PushInternals
import Testing

@Suite("Scheduled sends, the emulator's clock, and what became of a send")
struct ScheduleTests {
    @Test("A scheduled send is delivered when the emulator's clock reaches its time and not before; a cancelled one never")
    func schedules() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            try await hub.createOrUpdate(Installation(installationID: "iphone", pushChannel: alice, tags: ["username:alice"]))
            let payload = APNsPayload(aps: APNsAPS(alert: .text("Your table is ready")))
            let now = unixSeconds()
            let held = try await hub.schedule(payload, at: now + 3600, to: .tag("username:alice"))
            #expect(held.scheduledNotificationID != nil && held.notificationID == nil)
            emulator.advanceClock(by: .seconds(3590))
            #expect(emulator.deliveries.isEmpty && emulator.scheduledSendCount == 1)

            // The test hook moves the same clock.
            var advance = HTTPClientRequest(url: base + "/_emulator/clock")
            advance.method = .POST
            advance.body = .bytes(ByteBuffer(string: #"{"advanceSeconds": 30}"#))
            #expect(try await HTTPClient.shared.execute(advance, timeout: .seconds(30)).status.code == 204)
            #expect(emulator.deliveries.map(\.deviceHandle) == [alice])
            #expect(emulator.deliveries.first?.payload == (try payload.encoded()))
            emulator.advanceClock(by: .seconds(3600))
            #expect(emulator.deliveries.count == 1 && emulator.scheduledSendCount == 0)

            // Cancelled before its time: never sent; cancelling again finds nothing.
            let cancelled = try await hub.schedule(templateProperties: ["message": "x"], at: now + 90_000, to: .broadcast)
            let id = try #require(cancelled.scheduledNotificationID)
            try await hub.cancelScheduled(id: id)
            emulator.advanceClock(by: .seconds(200_000))
            #expect(emulator.deliveries.count == 1 && emulator.scheduledSendCount == 0)
            await #expect(throws: NotificationHubError.self) { try await hub.cancelScheduled(id: id) }
        }
    }

    @Test("Only sends to tags or everybody are scheduled, at a time from 1970 to 9999, sent as the hub's UTC format")
    func requests() throws {
        let endpoint = try HubEndpoint(connection: ConnectionString(fullAccess), hubName: "hub")
        let payload = APNsPayload(aps: APNsAPS(alert: .text("Hi")))
        let send = try endpoint.sendRequest(payload, headers: APNsHeaders(for: payload), to: .tag("a"), authorization: "t")
        let scheduled = try endpoint.scheduledSendRequest(send, at: 1_795_331_629)
        #expect(scheduled.url.hasSuffix("/hub/schedulednotifications?api-version=2020-06") && scheduled.body == send.body)
        #expect(scheduled.header("ServiceBusNotification-ScheduleTime") == "2026-11-22T07:13:49")
        #expect(scheduled.header("ServiceBusNotification-Tags") == "a" && scheduled.header("ServiceBusNotification-Format") == "apple")
        let direct = try endpoint.directSendRequest(payload, headers: APNsHeaders(for: payload), deviceHandle: alice, authorization: "t")
        #expect(throws: NotificationHubError.self) { try endpoint.scheduledSendRequest(direct, at: 1_795_331_629) }
        #expect(throws: NotificationHubError.self) { try endpoint.scheduledSendRequest(send, at: -1) }
        #expect(
            try endpoint.cancelScheduledRequest(id: "s 1", authorization: "t").url.hasSuffix("/hub/schedulednotifications/s%201?api-version=2020-06"))
    }

    @Test("A send's details: its state, its platforms and each platform's outcome counts, read from the hub's XML")
    func details() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            try await TemplateTests.registerAlicesPhones(hub)
            let properties = [
                "title": "Sunset", "message": "at the pier", "count": "2", "richId": "4f1c", "blob": String(repeating: "b", count: 4200),
            ]
            let sent = try await hub.send(templateProperties: properties, to: .tag("username:alice"))
            let details = try await hub.notificationDetails(id: try #require(sent.notificationID))
            #expect(details.state == .completed && details.notificationID == sent.notificationID)
            #expect(details.targetPlatforms == ["apple", "fcmv1"] && details.enqueueTime.flatMap(UTCTime.parse) != nil)
            #expect(details.outcomeCounts == ["Apns": ["InvalidNotificationSize": 1], "FcmV1": ["Success": 1]])

            let nobody = try await hub.send(APNsPayload(aps: APNsAPS(alert: .text("Hi"))), to: .tag("username:nobody"))
            #expect(try await hub.notificationDetails(id: try #require(nobody.notificationID)).state == .noTargetFound)
            do throws(NotificationHubError) {
                _ = try await hub.notificationDetails(id: "404")
                Issue.record("an unknown notification had details")
            } catch {
                #expect(error.code == .notFound && error.status == 404)
            }
            #expect(emulator.deliveries.count == 1)
        }
    }

    @Test("A test send reaches at most ten devices and lists each one's result, failures with the platform's reason")
    func testSends() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            for index in 0..<12 {
                try await hub.createOrUpdate(
                    Installation(
                        installationID: "phone-\(index < 10 ? "0" : "")\(index)", pushChannel: String(format: "%064x", index), tags: ["team"]))
            }
            let outcome = try await hub.testSend(APNsPayload(aps: APNsAPS(alert: .text("Hi"))), to: .tag("team"))
            #expect(outcome.success == 10 && outcome.failure == 0 && outcome.results.count == 10)
            #expect(outcome.results.first?.platform == "apple" && outcome.results.first?.registrationID == "phone-00")
            #expect(outcome.results.first?.pnsHandle == String(format: "%064x", 0) && emulator.deliveries.count == 10)

            emulator.reset()
            try await TemplateTests.registerAlicesPhones(hub)
            let templated = try await hub.testSend(
                templateProperties: ["title": "T", "message": "M", "count": "1", "richId": "r", "blob": String(repeating: "b", count: 4200)],
                to: .tag("username:alice"))
            #expect(templated.success == 1 && templated.failure == 1)
            #expect(templated.results.map(\.platform) == ["apple", "fcmv1"] && templated.results[0].outcome.contains("too large"))
            #expect(emulator.deliveries.map(\.deviceHandle) == [TemplateTests.pixel])
        }
    }
}
