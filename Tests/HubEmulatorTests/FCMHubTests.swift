import HubEmulator
import HubTestSupport
import NotificationHubs
import PushCore
import PushFCM
import Testing

@Suite("Notification Hubs client against the emulator: FCM v1")
struct FCMHubTests {
    static let pixel = "dGVzdC1waXhlbA:APA91bH" + String(repeating: "Pq-_3", count: 28)

    @Test("One user with an iPhone and an Android phone: each format reaches its own platform's installations")
    func platforms() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            try await hub.createOrUpdate(Installation(installationID: "iphone", pushChannel: alice, tags: ["username:alice"]))
            try await hub.createOrUpdate(Installation(installationID: "pixel", platform: .fcmv1, pushChannel: Self.pixel, tags: ["username:alice"]))
            #expect(try await hub.installation(id: "pixel").platform == .fcmv1)

            let message = FCMMessage(
                notification: FCMNotification(title: "Sunset", body: "at the pier"), data: ["richId": "4f1c", "richType": "img"],
                android: FCMAndroidConfig(priority: .high))
            let sent = try await hub.send(message, to: .tag("username:alice"))
            #expect(sent.notificationID != nil)
            #expect(emulator.deliveries.map(\.deviceHandle) == [Self.pixel] && emulator.deliveries[0].platform == .fcmv1)
            #expect(emulator.deliveries[0].payload == (try message.encoded()) && emulator.deliveries[0].apnsHeaders.isEmpty)

            emulator.reset()
            _ = try await hub.send(APNsPayload(aps: APNsAPS(alert: .text("Sunset"))), to: .tag("username:alice"))
            #expect(emulator.deliveries.map(\.deviceHandle) == [alice] && emulator.deliveries[0].platform == .apns)

            emulator.reset()
            _ = try await hub.send(message, toDevice: Self.pixel)
            #expect(emulator.deliveries.map(\.deviceHandle) == [Self.pixel])
            emulator.reset()
            let many = (0..<1200).map { Self.pixel + String($0) }
            let results = try await hub.send(message, toDevices: many)
            #expect(results.count == 2 && emulator.deliveries.map(\.deviceHandle) == many && emulator.deliveries.allSatisfy { $0.platform == .fcmv1 })
        }
    }

    @Test("The hub's lint refuses what FCM would: 400 with the code, and nothing delivered")
    func refusals() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            // Pre-encoded JSON is passed through as it is: an APNs payload that is not an object.
            let message = FCMMessage(apns: FCMAPNsConfig(payload: try RawJSON(#""not an object""#)))
            do throws(NotificationHubError) {
                _ = try await hub.send(message, toDevice: Self.pixel)
                Issue.record("an invalid message was accepted")
            } catch {
                #expect(error.code == .badRequest && error.status == 400 && error.trackingID != nil, "\(error)")
                #expect(error.message.contains("typeMismatch"))
            }
            #expect(emulator.deliveries.isEmpty)
        }
    }
}
