import APNs
import APNsEmulator
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOSSL
import PushAPNsTokens
import PushBackend
import PushCore
import RichPushImages
import ServiceLifecycle
import Testing

/// The backend sending straight to an in-process APNs emulator, driven through its router.
struct APNsBackend: BackendEndpoint {
    let client: any TestClientProtocol
    let emulator: APNsEmulator
    let store: SQLiteBackendStore

    static let topic = "com.example.pushcore"

    func execute(_ request: HTTPClientRequest) async throws -> Reply {
        try await executeInProcess(request, on: client)
    }

    /// The id in a 201's `{"id": …}`.
    func created(_ reply: Reply) throws -> String {
        try #require(reply.status == 201, "\(reply.status) \(reply.text)")
        return try #require(try reply.json().root["id"]?.string)
    }
}

/// Runs `body` against a backend with APNs delivery to an emulator, and the users of ``backendUsers``.
func withAPNsBackend(liveActivity: APNsLiveActivitySchema? = nil, _ body: @Sendable (APNsBackend) async throws -> Void) async throws {
    var quiet = Logger(label: "push-backend")
    quiet.logLevel = .warning
    let logger = quiet
    let directory = try temporaryDirectory()
    let store = try await SQLiteBackendStore.open(dataDirectory: directory, logger: logger)
    for (name, role) in backendUsers {
        try await store.addUser(
            UserRecord(name: name, passwordHash: PasswordHash(hashing: password(name), parameters: .cheapForTests).encoded, role: role))
    }
    let key = P256.Signing.PrivateKey()
    let signingKey = try APNsSigningKey(privateKey: key, keyID: "TESTKEY001", teamID: "TEAM123456")
    let emulator = APNsEmulator(
        keys: [try APNsVerificationKey(publicKey: key.publicKey, keyID: "TESTKEY001", teamID: "TEAM123456")], bundleIDs: [APNsBackend.topic])
    let identity = try APNsEmulatorIdentity.generate()
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let authenticator = Authenticator(store: store, limits: LoginLimits())
    // Stopped gracefully, as a deployment stops it: cancelling a server whose connections are
    // still closing can trap inside NIO (an async channel dropped unfinished).
    let emulatorService = ServiceGroup(
        services: [try emulator.application(port: 0, identity: identity, logger: logger) { continuation.yield($0) }], logger: logger)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await emulatorService.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        let client = APNsClient(
            configuration: APNsClientConfiguration(
                endpoint: "https://127.0.0.1:\(port)", authentication: .token(APNsTokenCache(key: signingKey)),
                trustRoots: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)],
                // Answers, not timing, are under test: under ASan on two busy cores a send to 1,000
                // devices can keep some requests waiting past the 10 s default.
                requestTimeout: .seconds(60), connectTimeout: .seconds(60), retry: APNsRetryPolicy(baseDelay: .milliseconds(10))),
            logger: logger)
        let api = BackendAPI(
            store: store, authenticator: authenticator,
            sender: .apns(DirectAPNs(client: client, topic: APNsBackend.topic, liveActivity: liveActivity)), images: RichPushImages.registry,
            defaultImage: BackendConfiguration(dataDirectory: directory).defaultImage, sendQuota: RateLimit(burst: 10_000, perSecond: 1000))
        let result: Result<Void, any Error>
        do {
            try await Application(router: api.router(), logger: logger).test(.router) { testClient in
                try await body(APNsBackend(client: testClient, emulator: emulator, store: store))
            }
            result = .success(())
        } catch {
            result = .failure(error)
        }
        try? await client.shutdown()
        await emulatorService.triggerGracefulShutdown()
        try await group.waitForAll()
        try result.get()
    }
    await authenticator.shutdown()
    await store.close()
}

@Suite("Reference backend delivering straight to APNs", .serialized)
struct APNsDeliveryTests {
    static let schema = APNsLiveActivitySchema(
        contentState: try! APNsFieldSchema(json: #"{"score":"integer","team":"string","note":"string?"}"#),
        attributes: try! APNsFieldSchema(json: #"{"matchID":"string"}"#))

    func token(_ index: Int, prefix: String = "a") -> String {
        let hex = String(index, radix: 16)
        return prefix + String(repeating: "0", count: 63 - hex.count) + hex
    }

    @Test("A Live Activity from push-to-start through three updates to its end; an update the app could not decode is refused unsent")
    func liveActivity() async throws {
        try await withAPNsBackend(liveActivity: Self.schema) { backend in
            let pushToStart = token(1, prefix: "b")
            let startID = try backend.created(
                try await backend.call(.POST, "/api/activities", as: "alice", json: #"{"token":"\#(pushToStart)","kind":"pushToStart"}"#))
            let start = try await backend.call(
                .POST, "/api/activities/\(startID)/updates", as: "bob",
                json:
                    #"{"event":"start","attributesType":"MatchAttributes","attributes":{"matchID":"m1"},"contentState":{"score":0,"team":"Reds"},"alert":{"title":"Kick-off","body":"Reds v Blues"},"timestamp":1800000000,"inputPushToken":true}"#
            )
            #expect(start.status == 200, "\(start.text)")
            #expect(try start.json().root["apnsId"]?.string?.count == 36)

            // The new activity's own token, as the app would post it after ActivityKit hands it over.
            let activityToken = token(2, prefix: "c")
            let activityID = try backend.created(
                try await backend.call(.POST, "/api/activities", as: "alice", json: #"{"token":"\#(activityToken)","kind":"activity"}"#))
            for score in 1...3 {
                let update = try await backend.call(
                    .POST, "/api/activities/\(activityID)/updates", as: "bob",
                    json: #"{"event":"update","contentState":{"score":\#(score),"team":"Reds"},"timestamp":\#(1_800_000_000 + score * 60)}"#)
                #expect(update.status == 200, "\(update.text)")
            }
            let broken = try await backend.call(
                .POST, "/api/activities/\(activityID)/updates", as: "bob",
                json: #"{"event":"update","contentState":{"score":"four","team":"Reds"},"timestamp":1800000300}"#)
            #expect(broken.status == 422 && broken.errorCode == "contentStateMismatch", "\(broken.text)")
            #expect(broken.text.contains("aps.content-state.score is declared integer but holds a string"))
            let end = try await backend.call(
                .POST, "/api/activities/\(activityID)/updates", as: "bob",
                json:
                    #"{"event":"end","contentState":{"score":3,"team":"Reds","note":"Full time"},"timestamp":1800005400,"dismissalDate":1800009000}"#)
            #expect(end.status == 200, "\(end.text)")

            let deliveries = backend.emulator.deliveries
            #expect(deliveries.map(\.deviceToken) == [pushToStart] + Array(repeating: activityToken, count: 4))
            #expect(deliveries.allSatisfy { $0.pushType == .liveactivity && $0.topic == APNsBackend.topic + ".push-type.liveactivity" })
            var parser = JSONParser()
            let events = try deliveries.map { try parser.parse($0.payload).root["aps"]?["event"]?.string }
            #expect(events == ["start", "update", "update", "update", "end"])
            let scores = try deliveries.map { try parser.parse($0.payload).root["aps"]?["content-state"]?["score"]?.int }
            #expect(scores == [0, 1, 2, 3, 3])
            let first = try parser.parse(deliveries[0].payload).root["aps"]
            #expect(first?["attributes-type"]?.string == "MatchAttributes" && first?["input-push-token"]?.int == 1)
            #expect(first?["alert"]?["title"]?.string == "Kick-off")

            // The wrong kind of token for the event, a user without the sender role, a missing activity.
            let wrongKind = try await backend.call(
                .POST, "/api/activities/\(startID)/updates", as: "bob", json: #"{"event":"update","contentState":{"score":1,"team":"x"}}"#)
            #expect(wrongKind.status == 409 && wrongKind.errorCode == "wrongActivityKind")
            let notSender = try await backend.call(
                .POST, "/api/activities/\(activityID)/updates", as: "alice", json: #"{"event":"end"}"#)
            #expect(notSender.status == 403)
            let missing = try await backend.call(
                .POST, "/api/activities/\(String(repeating: "0", count: 32))/updates", as: "bob", json: #"{"event":"end"}"#)
            #expect(missing.status == 404)
            #expect(backend.emulator.deliveries.count == 5)

            // An activity token APNs calls dead is removed, and the caller is told so.
            backend.emulator.setState(.unregistered(sinceMilliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 60_000), for: activityToken)
            let gone = try await backend.call(
                .POST, "/api/activities/\(activityID)/updates", as: "bob", json: #"{"event":"end"}"#)
            #expect(gone.status == 410 && gone.errorCode == "activityGone", "\(gone.text)")
            #expect(try await backend.store.activity(id: activityID) == nil)
        }
    }

    @Test("A broadcast through the backend to a channel with 500 subscribed devices is one request and reaches all 500")
    func broadcast() async throws {
        try await withAPNsBackend(liveActivity: Self.schema) { backend in
            let created = try await backend.call(.POST, "/api/channels", as: "bob", json: #"{"storagePolicy":"most-recent"}"#)
            let id = try backend.created(created)
            let channelID = try #require(try created.json().root["channelId"]?.string)
            let devices = (0..<500).map { token($0) }
            #expect(backend.emulator.subscribe(devices, to: channelID))
            backend.emulator.reset()
            let sent = try await backend.call(
                .POST, "/api/channels/\(id)/broadcasts", as: "bob", json: #"{"event":"update","contentState":{"score":2,"team":"Reds"}}"#)
            #expect(sent.status == 200, "\(sent.text)")
            #expect(backend.emulator.requestCount == 1)
            #expect(Set(backend.emulator.deliveries.map(\.deviceToken)) == Set(devices))
            #expect(backend.emulator.deliveries.allSatisfy { $0.channelID == channelID })

            let broken = try await backend.call(
                .POST, "/api/channels/\(id)/broadcasts", as: "bob", json: #"{"event":"update","contentState":{"team":"Reds"}}"#)
            #expect(broken.status == 422 && broken.errorCode == "contentStateMismatch")
            let notSender = try await backend.call(.POST, "/api/channels", as: "alice", json: "{}")
            #expect(notSender.status == 403)
            #expect(try await backend.call(.DELETE, "/api/channels/\(id)", as: "bob").status == 204)
            #expect(backend.emulator.channelIDs.isEmpty)
            #expect(try await backend.call(.DELETE, "/api/channels/\(id)", as: "bob").status == 404)
        }
    }

    @Test(
        "A send to 1,000 registrations, 100 unregistered (half before, half after registering) and 20 bad, prunes exactly those; a re-registered token survives"
    )
    func pruning() async throws {
        try await withAPNsBackend { backend in
            let devices = (0..<1000).map { token($0) }
            for device in devices {
                _ = try backend.created(try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken":"\#(device)"}"#))
            }
            let registeredAt = try await backend.store.registrations(owner: "alice").map(\.updatedAt)
            let (earliest, latest) = (registeredAt.min()!, registeredAt.max()!)
            var pruned: Set<String> = []
            for (index, device) in devices.enumerated() {
                if index % 20 == 3 {
                    backend.emulator.setState(.unregistered(sinceMilliseconds: earliest - 60_000), for: device)
                } else if index % 20 == 8 {
                    backend.emulator.setState(.unregistered(sinceMilliseconds: latest + 60_000), for: device)
                    pruned.insert(device)
                } else if index % 50 == 11 {
                    backend.emulator.setState(.bad, for: device)
                    pruned.insert(device)
                }
            }
            #expect(pruned.count == 70)
            // Unregistered after its first registration, then registered again: the new registration wins.
            let reRegistered = devices[1]
            backend.emulator.setState(.unregistered(sinceMilliseconds: latest + 1), for: reRegistered)
            try await Task.sleep(for: .milliseconds(5))
            _ = try backend.created(try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken":"\#(reRegistered)"}"#))

            let id = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"alice"}"#)
            #expect(id.count == 32)
            #expect(backend.emulator.deliveries.count == 1000 - 100 - 1 - 20)
            let remaining = Set(try await backend.store.registrations(owner: "alice").map(\.deviceToken))
            #expect(remaining == Set(devices).subtracting(pruned))
            #expect(remaining.contains(reRegistered))
        }
    }

    @Test("With a hub, the Live Activity and channel routes answer 501")
    func hubHasNoLiveActivities() async throws {
        try await withBackend { backend in
            let reply = try await backend.call(.POST, "/api/activities", as: "alice", json: #"{"token":"\#(token(1))","kind":"activity"}"#)
            #expect(reply.status == 501 && reply.errorCode == "apnsDeliveryRequired")
            #expect(try await backend.call(.POST, "/api/channels", as: "bob", json: "{}").status == 501)
        }
    }
}
