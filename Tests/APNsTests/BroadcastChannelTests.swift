import APNs
import APNsEmulator
import APNsTestSupport
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PushAPNs
import PushJSON
import Testing

@Suite("Broadcast channels against the emulator", .serialized)
struct BroadcastChannelTests {
    let update = APNsPayload.liveActivityUpdate(contentState: ["score": 2, "team": "Reds"], timestamp: 1_700_000_100)

    @Test("Channels are created, read, listed and deleted; refusals are typed and carry the request id")
    func management() async throws {
        try await withEmulatorAndClient(clock: SharedClock()) { emulator, client, _, _ in
            let quiet = try await client.createChannel(bundleID: TestKey.bundleID, storagePolicy: .noStorage)
            let kept = try await client.createChannel(bundleID: TestKey.bundleID, storagePolicy: .mostRecentMessage)
            #expect(quiet.id != kept.id && Data(base64Encoded: quiet.id)?.count == 16)
            #expect(Set(try await client.channelIDs(bundleID: TestKey.bundleID)) == [quiet.id, kept.id])
            #expect(try await client.channel(kept.id, bundleID: TestKey.bundleID) == kept)
            #expect(try await client.channel(quiet.id, bundleID: TestKey.bundleID).storagePolicy == .noStorage)

            try await client.deleteChannel(quiet.id, bundleID: TestKey.bundleID)
            #expect(try await client.channelIDs(bundleID: TestKey.bundleID) == [kept.id])
            await #expect {
                try await client.channel(quiet.id, bundleID: TestKey.bundleID)
            } throws: { error in
                guard let error = error as? APNsChannelError else { return false }
                return error.failure == .rejected(status: 404, reason: .channelNotRegistered) && error.requestID?.count == 36
            }
            await #expect {
                try await client.deleteChannel(quiet.id, bundleID: TestKey.bundleID)
            } throws: { ($0 as? APNsChannelError)?.failure == .rejected(status: 404, reason: .channelNotRegistered) }
            // Another team's app, and a channel id that is base64 but names nothing.
            await #expect {
                try await client.createChannel(bundleID: "com.example.other", storagePolicy: .noStorage)
            } throws: { ($0 as? APNsChannelError)?.failure == .rejected(status: 400, reason: .topicDisallowed) }
            await #expect {
                try await client.channel("AAAAAAAAAAAAAAAAAAAAAA==", bundleID: TestKey.bundleID)
            } throws: { ($0 as? APNsChannelError)?.failure == .rejected(status: 404, reason: .channelNotRegistered) }

            // What cannot go into a path or a header is never sent.
            let requests = emulator.requestCount
            for (channel, bundle) in [("a/b\r\nx: 1", TestKey.bundleID), (kept.id, "com.example/../x"), ("", TestKey.bundleID)] {
                await #expect {
                    try await client.channel(channel, bundleID: bundle)
                } throws: { error in
                    guard case .invalidRequest = (error as? APNsChannelError)?.failure else { return false }
                    return true
                }
            }
            #expect(emulator.requestCount == requests)
        }
    }

    @Test("A broadcast to a channel with 500 subscribed devices is one request and reaches all 500")
    func broadcastToFiveHundred() async throws {
        try await withEmulatorAndClient(clock: SharedClock()) { emulator, client, _, port in
            let channel = try await client.createChannel(bundleID: TestKey.bundleID, storagePolicy: .mostRecentMessage)
            let subscribers = (0..<500).map(deviceToken)
            // Subscribed through the HTTP hook, as a device's ActivityKit subscription is modelled.
            try await subscribe(subscribers, to: channel.id, port: port, emulator: emulator)
            let bystander = deviceToken(9999)
            _ = try await client.send(update, headers: APNsHeaders(for: update, topic: TestKey.bundleID), to: [bystander])
            emulator.reset()

            let result = try await client.broadcast(update, to: channel.id, bundleID: TestKey.bundleID)
            #expect(result.isDelivered && result.attempts == 1 && result.requestID?.count == 36)
            #expect(emulator.requestCount == 1)
            let deliveries = emulator.deliveries
            #expect(deliveries.count == 500)
            #expect(Set(deliveries.map(\.deviceToken)) == Set(subscribers))
            let encoded = try update.encoded()
            #expect(
                deliveries.allSatisfy {
                    $0.channelID == channel.id && $0.payload == encoded && $0.pushType == .liveactivity && $0.priority == 10
                        && $0.topic == TestKey.bundleID + ".push-type.liveactivity" && $0.apnsID == result.requestID
                })

            // Unsubscribed devices and a deleted channel's subscribers get nothing more.
            emulator.unsubscribe(Array(subscribers[0..<100]), from: channel.id)
            emulator.reset()
            #expect(try await client.broadcast(update, to: channel.id, bundleID: TestKey.bundleID).isDelivered)
            #expect(emulator.deliveries.count == 400)
            try await client.deleteChannel(channel.id, bundleID: TestKey.bundleID)
            emulator.reset()
            let afterDelete = try await client.broadcast(update, to: channel.id, bundleID: TestKey.bundleID)
            #expect(afterDelete.outcome == .rejected(status: 404, reason: .channelNotRegistered, unregisteredSinceMilliseconds: nil))
            #expect(emulator.deliveries.isEmpty)
        }
    }

    @Test("Subscriptions are capped per channel and in all: a batch past a cap is refused whole, in process and through the hook (422)")
    func subscriptionCaps() async throws {
        try await withEmulatorAndClient(clock: SharedClock()) { emulator, client, _, port in
            let perChannel = APNsEmulator.maximumSubscribersPerChannel
            let first = try await client.createChannel(bundleID: TestKey.bundleID, storagePolicy: .noStorage)
            #expect(try emulator.subscribe((0..<perChannel).map(deviceToken), to: first.id))
            // Already subscribed devices are no new subscriptions; one more device is.
            #expect(try emulator.subscribe([deviceToken(0)], to: first.id))
            #expect(throws: SubscriptionLimitExceeded.self) { try emulator.subscribe([deviceToken(perChannel)], to: first.id) }
            try await expectHookRefusal([deviceToken(perChannel)], to: first.id, port: port)

            // Across channels: fill up to the total, then the next channel takes nobody.
            var subscribed = perChannel
            while subscribed < APNsEmulator.maximumSubscriptions {
                let channel = try await client.createChannel(bundleID: TestKey.bundleID, storagePolicy: .noStorage)
                let count = min(perChannel, APNsEmulator.maximumSubscriptions - subscribed)
                #expect(try emulator.subscribe((subscribed..<subscribed + count).map(deviceToken), to: channel.id))
                subscribed += count
            }
            let last = try await client.createChannel(bundleID: TestKey.bundleID, storagePolicy: .noStorage)
            #expect(throws: SubscriptionLimitExceeded.self) { try emulator.subscribe([deviceToken(subscribed)], to: last.id) }
            // Leaving makes room again.
            #expect(emulator.unsubscribe([deviceToken(1)], from: first.id))
            #expect(try emulator.subscribe([deviceToken(subscribed)], to: last.id))
        }
    }

    private func expectHookRefusal(_ devices: [String], to channelID: String, port: Int) async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let http = patientHTTPClient(tls)
        var body: [UInt8] = []
        try JSON.object([JSONMember("channel", .string(channelID)), JSONMember("devices", .array(devices.map(JSON.string)))]).write(into: &body)
        var request = HTTPClientRequest(url: "https://127.0.0.1:\(port)/_emulator/subscriptions")
        request.method = .POST
        request.body = .bytes(ByteBuffer(bytes: body))
        let status = try? await http.execute(request, timeout: patientTimeout).status
        try await http.shutdown()
        #expect(status?.code == 422)
    }

    @Test("Broadcast rules: a Live Activity event only, expiration 0 on a channel that stores nothing, retried only when unaccepted")
    func broadcastRules() async throws {
        try await withEmulatorAndClient(clock: SharedClock()) { emulator, client, _, _ in
            let channel = try await client.createChannel(bundleID: TestKey.bundleID, storagePolicy: .noStorage)
            try emulator.subscribe([deviceToken(1), deviceToken(2)], to: channel.id)
            await #expect(throws: APNsClientError.self) {
                try await client.broadcast(.silentSecurePush(secureId: "1"), to: channel.id, bundleID: TestKey.bundleID)
            }
            await #expect(throws: APNsClientError.self) {
                try await client.broadcast(update, to: channel.id, bundleID: TestKey.bundleID, priority: 7)
            }
            let expiring = try await client.broadcast(update, to: channel.id, bundleID: TestKey.bundleID, expiration: 1_800_000_000)
            #expect(expiring.outcome == .rejected(status: 400, reason: .badExpirationDate, unregisteredSinceMilliseconds: nil))
            #expect(try await client.broadcast(update, to: channel.id, bundleID: TestKey.bundleID, expiration: 0).isDelivered)
            #expect(emulator.deliveries.count == 2)

            // A 503 is not an acceptance: sent again, delivered once.
            emulator.reset()
            emulator.inject([.status(503, reason: "ServiceUnavailable", retryAfter: nil)])
            let retried = try await client.broadcast(update, to: channel.id, bundleID: TestKey.bundleID, priority: 5)
            #expect(retried.isDelivered && retried.attempts == 2)
            #expect(emulator.deliveries.count == 2 && emulator.deliveries.allSatisfy { $0.priority == 5 })
        }
    }

    /// `POST /_emulator/subscriptions` over HTTPS.
    func subscribe(_ devices: [String], to channelID: String, port: Int, emulator: APNsEmulator) async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let http = patientHTTPClient(tls)
        do {
            var body: [UInt8] = []
            try JSON.object([JSONMember("channel", .string(channelID)), JSONMember("devices", .array(devices.map(JSON.string)))]).write(into: &body)
            var request = HTTPClientRequest(url: "https://127.0.0.1:\(port)/_emulator/subscriptions")
            request.method = .POST
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await http.execute(request, timeout: patientTimeout)
            #expect(response.status == .noContent)
            var unknown = HTTPClientRequest(url: "https://127.0.0.1:\(port)/_emulator/subscriptions")
            unknown.method = .POST
            unknown.body = .bytes(ByteBuffer(string: #"{"channel":"AAAA","devices":[]}"#))
            #expect(try await http.execute(unknown, timeout: patientTimeout).status == .notFound)
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }
}
