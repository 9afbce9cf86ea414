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

    @Test("A scheduled send's time in each SDK's spelling is taken, held to the same instant; text that is no time gets 400")
    func sdkTimeSpellings() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            try await hub.createOrUpdate(Installation(installationID: "iphone", pushChannel: alice, tags: ["username:alice"]))
            // An hour ahead, rounded down to the second, then written as each client writes it.
            let due = unixSeconds() / 60 * 60 + 3600
            let plain = UTCTime.format(due)
            let spellings = [
                plain + ".123Z",  // JavaScript's toISOString() (the official JS SDK)
                plain + ".123456+00:00",  // Python's datetime.isoformat()
                plain + ".1234567Z",  // .NET's "o" format
                UTCTime.format(due + 3600) + "+01:00",  // an offset east of UTC
                plain,  // the hub's own format (our client's)
            ]
            for (index, time) in spellings.enumerated() {
                #expect(try await postScheduled(base, time: time).status.code == 201, "\(time)")
                #expect(emulator.scheduledSendCount == index + 1)
            }
            for time in ["tomorrow", plain + "+1", plain + " Z", String(plain.dropLast(3))] {
                #expect(try await postScheduled(base, time: time).status.code == 400, "\(time)")
            }
            // All held to the same instant (the margins leave room for the wall clock's ticks).
            emulator.advanceClock(by: .seconds(due - unixSeconds() - 30))
            #expect(emulator.deliveries.isEmpty && emulator.scheduledSendCount == spellings.count)
            emulator.advanceClock(by: .seconds(60))
            #expect(emulator.deliveries.count == spellings.count && emulator.scheduledSendCount == 0)
        }
    }

    private func postScheduled(_ base: String, time: String) async throws -> HTTPClientResponse {
        try await postAsCurl(
            base + "/hub/schedulednotifications?api-version=2020-06",
            headers: ["ServiceBusNotification-Tags": "username:alice", "ServiceBusNotification-ScheduleTime": time],
            body: #"{"aps":{"alert":"Scheduled"}}"#)
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
