import APNs
import APNsEmulator
import AsyncHTTPClient
import Crypto
import FCM
import FCMEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MetricsTestKit
import NIOCore
import NIOHTTP1
import NIOSSL
import PushAPNsTokens
import PushBackend
import PushCore
import PushTestSupport
import RichPushImages
import ServiceLifecycle
import Synchronization
import Testing
import _CryptoExtras

/// The backend sending straight to an in-process APNs emulator, driven through its router; `other`
/// is the other environment, which the backend asks before it prunes a token the first calls bad.
struct APNsBackend: BackendEndpoint {
    let client: any TestClientProtocol
    let emulator: APNsEmulator
    let other: APNsEmulator
    let store: SQLiteBackendStore
    let logs: CapturedLogs
    let metrics: TestMetrics
    /// The delivery queue's worker, run after each request until nothing is due: what a request
    /// queued is sent before the test looks, as a server's worker sends it moments later.
    let worker: DeliveryWorker
    /// FCM's emulator, with direct delivery (`withFCM`); nil with APNs delivery alone.
    let fcm: FCMEmulator?

    static let topic = "com.example.pushcore"

    /// The address of a backend started with `withAPNsBackend(live: true)`.
    var base: String { "http://127.0.0.1:\(client.port!)" }

    func execute(_ request: HTTPClientRequest) async throws -> Reply {
        let reply = try await executeInProcess(request, on: client)
        while await worker.runOnce() > 0 {}
        return reply
    }

    /// The id in a 201's `{"id": …}`.
    func created(_ reply: Reply) throws -> String {
        try #require(reply.status == 201, "\(reply.status) \(reply.text)")
        return try #require(try reply.json().root["id"]?.string)
    }
}

/// Log messages at notice level and above, for tests of what the backend says. Each logger gets a
/// handler of its own (a value, as swift-log's handlers are), so that metadata set on one request's
/// logger never races another's; the lines go to one shared list.
final class CapturedLogs: Sendable {
    private let lines = Mutex<[String]>([])

    var messages: [String] { lines.withLock { $0 } }

    func handler() -> some LogHandler { Handler(logs: self) }

    private struct Handler: LogHandler {
        let logs: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .notice

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            logs.lines.withLock { $0.append("\(event.message)") }
        }
    }
}

/// A verifying emulator of each environment, served on free ports from one identity, and an APNs
/// client of each.
struct EmulatorPair {
    let development: APNsEmulator
    let production: APNsEmulator
    let signingKey: APNsSigningKey

    init(bundleIDs: [String] = [APNsBackend.topic]) throws {
        let key = P256.Signing.PrivateKey()
        signingKey = try APNsSigningKey(privateKey: key, keyID: "TESTKEY001", teamID: "TEAM123456")
        let verification = try APNsVerificationKey(publicKey: key.publicKey, keyID: "TESTKEY001", teamID: "TEAM123456")
        development = APNsEmulator(keys: [verification], bundleIDs: bundleIDs, isDevelopment: true)
        production = APNsEmulator(keys: [verification], bundleIDs: bundleIDs, isDevelopment: false)
    }

    /// Runs both until `body` returns; `body` gets a client of each (development first).
    func run(logger: Logger, _ body: @Sendable (APNsClient, APNsClient) async throws -> Void) async throws {
        let identity = try APNsEmulatorIdentity.generate()
        let (ports, continuation) = AsyncStream.makeStream(of: (Int, Bool).self)
        // Stopped gracefully, as a deployment stops them: cancelling a server whose connections are
        // still closing can trap inside NIO (an async channel dropped unfinished).
        let services = ServiceGroup(
            services: [
                try development.application(port: 0, identity: identity, logger: logger) { continuation.yield(($0, true)) },
                try production.application(port: 0, identity: identity, logger: logger) { continuation.yield(($0, false)) },
            ], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            var endpoints: [Bool: String] = [:]
            for await (port, isDevelopment) in ports {
                endpoints[isDevelopment] = "https://127.0.0.1:\(port)"
                if endpoints.count == 2 { break }
            }
            let tokens = APNsTokenCache(key: signingKey)
            let roots = [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)]
            let clients = try [true, false].map { isDevelopment in
                APNsClient(
                    configuration: APNsClientConfiguration(
                        endpoint: try #require(endpoints[isDevelopment]), authentication: .token(tokens), trustRoots: roots,
                        // Answers, not timing, are under test: under ASan on two busy cores a send to 1,000
                        // devices can keep some requests waiting past the 10 s default.
                        requestTimeout: .seconds(60), connectTimeout: .seconds(60), retry: APNsRetryPolicy(baseDelay: .milliseconds(10))),
                    logger: logger)
            }
            let result: Result<Void, any Error>
            do {
                try await body(clients[0], clients[1])
                result = .success(())
            } catch {
                result = .failure(error)
            }
            for client in clients { try? await client.shutdown() }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            try result.get()
        }
    }
}

/// Runs `body` against a backend with APNs delivery to a development emulator (its production twin
/// the other environment), and the users of ``backendUsers``.
/// - Parameter topic: The backend's topic: another of the team's apps than the devices' to
///   misconfigure it.
/// - Parameter live: Serve on a loopback port (``APNsBackend/base``), for clients of their own.
func withAPNsBackend(
    liveActivity: APNsLiveActivitySchema? = nil, topic: String = APNsBackend.topic,
    registrationLimits: RegistrationLimits = generousRegistrationLimits, live: Bool = false, withFCM: Bool = false,
    _ body: @Sendable (APNsBackend) async throws -> Void
) async throws {
    let logs = CapturedLogs()
    let logger = Logger(label: "push-backend", factory: { _ in logs.handler() })
    let directory = try temporaryDirectory()
    let store = try await SQLiteBackendStore.open(dataDirectory: directory, logger: logger)
    for (name, role) in backendUsers {
        try await store.addUser(
            UserRecord(name: name, passwordHash: PasswordHash(hashing: password(name), parameters: .cheapForTests).encoded, role: role))
    }
    let emulators = try EmulatorPair(bundleIDs: Array(Set([APNsBackend.topic, topic])))
    let authenticator = Authenticator(store: store, limits: LoginLimits())
    let metrics = TestMetrics()
    try await emulators.run(logger: logger) { client, other in
        try await withFCMEmulator(withFCM, logger: logger) { fcmEmulator, fcmClient in
            let delivery = DirectDelivery(
                DirectAPNs(client: client, otherEnvironment: other, topic: topic, liveActivity: liveActivity), fcm: fcmClient, store: store,
                metricsFactory: metrics)
            let worker = DeliveryWorker(store: store, delivery: delivery, logger: logger)
            let api = BackendAPI(
                store: store, authenticator: authenticator, delivery: delivery,
                images: RichPushImages.registry, defaultImage: BackendConfiguration(dataDirectory: directory).defaultImage,
                sendQuota: RateLimit(burst: 10_000, perSecond: 1000), registrationLimits: registrationLimits, metricsFactory: metrics)
            try await Application(router: api.router(), logger: logger).test(live ? .live : .router) { testClient in
                try await body(
                    APNsBackend(
                        client: testClient, emulator: emulators.development, other: emulators.production, store: store, logs: logs,
                        metrics: metrics, worker: worker, fcm: fcmEmulator))
            }
        }
    }
    await authenticator.shutdown()
    await store.close()
}

/// With `enabled`, runs an FCM emulator for a service account made here until `body` returns, and
/// gives `body` it and a client of it; else nil for both.
func withFCMEmulator(
    _ enabled: Bool, logger: Logger, _ body: @Sendable (FCMEmulator?, FCMClient?) async throws -> Void
) async throws {
    guard enabled else { return try await body(nil, nil) }
    let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    let fields = [
        "type": "service_account", "project_id": "backend-tests", "private_key_id": "key-1", "private_key": key.pemRepresentation,
        "client_email": "pusher@backend-tests.iam.gserviceaccount.com", "token_uri": FCMServiceAccount.defaultTokenURI,
    ]
    var account = try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: fields)))
    let emulator = FCMEmulator(serviceAccount: account)
    let identity = try APNsEmulatorIdentity.generate()
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let services = ServiceGroup(
        services: [try emulator.application(port: 0, identity: identity, logger: logger) { continuation.yield($0) }], logger: logger)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        account.tokenURI = "https://127.0.0.1:\(port)/token"
        let client = FCMClient(
            configuration: FCMClientConfiguration(
                endpoint: "https://127.0.0.1:\(port)", serviceAccount: account,
                trustRoots: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)],
                requestTimeout: .seconds(60), connectTimeout: .seconds(60), retry: FCMRetryPolicy(baseDelay: .milliseconds(10))),
            logger: logger)
        let result: Result<Void, any Error>
        do {
            try await body(emulator, client)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        try? await client.shutdown()
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
        try result.get()
    }
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
            #expect(try backend.emulator.subscribe(devices, to: channelID))
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
            // Another sender can neither broadcast on bob's channel nor delete it.
            try await backend.store.addUser(
                UserRecord(name: "dave", passwordHash: PasswordHash(hashing: password("dave"), parameters: .cheapForTests).encoded, role: .sender))
            let requests = backend.emulator.requestCount
            let foreign = try await backend.call(
                .POST, "/api/channels/\(id)/broadcasts", as: "dave", json: #"{"event":"update","contentState":{"score":3,"team":"Reds"}}"#)
            #expect(foreign.status == 404, "\(foreign.text)")
            #expect(try await backend.call(.DELETE, "/api/channels/\(id)", as: "dave").status == 404)
            #expect(backend.emulator.requestCount == requests && backend.emulator.channelIDs == [channelID])
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
                    backend.other.setState(.bad, for: device)
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

    /// Registers `count` devices for alice and returns their tokens.
    func registerDevices(_ count: Int, on backend: APNsBackend, prefix: String = "d") async throws -> [String] {
        let devices = (0..<count).map { token($0, prefix: prefix) }
        for device in devices {
            _ = try backend.created(try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken":"\#(device)"}"#))
        }
        return devices
    }

    func registeredDevices(_ backend: APNsBackend) async throws -> Set<String> {
        Set(try await backend.store.registrations(owner: "alice").map(\.deviceToken))
    }

    @Test("Direct delivery: one notification reaches Apple devices through APNs and Android ones through FCM; FCM's dead token is pruned")
    func directToBothPlatforms() async throws {
        try await withAPNsBackend(withFCM: true) { backend in
            let fcm = try #require(backend.fcm)
            let apple = try await registerDevices(2, on: backend)
            let android = (0..<3).map { "android\($0):APA91b" + String(repeating: "Q", count: 140) }
            for device in android {
                let reply = try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken":"\#(device)","platform":"fcmv1"}"#)
                let reachable = try reply.json().root["reachable"]?.bool
                #expect(reply.status == 201 && reachable == true, "\(reply.text)")
            }
            fcm.setState(.unregistered, for: android[2])
            // bob's device must not get alice's push.
            _ = try backend.created(try await backend.call(.POST, "/api/register", as: "bob", json: #"{"deviceToken":"\#(token(9, prefix: "e"))"}"#))
            let id = try await backend.notify(as: "bob", #"{"kind":"richAlert","message":"Both platforms","to":"alice"}"#)

            #expect(backend.emulator.deliveries.map(\.deviceToken).sorted() == apple.sorted())
            #expect(fcm.deliveries.map(\.target).sorted() == android[0..<2].sorted())
            let body = try #require(fcm.deliveries.first.map { String(decoding: $0.body, as: UTF8.self) })
            #expect(body.contains(#""richId":"\#(id)""#) && body.contains(#""body":"Both platforms""#), "\(body)")
            let delivery = try await backend.call(.GET, "/api/sent-notifications", as: "bob").json().root["notifications"]?[0]?["delivery"]
            #expect(delivery?["state"]?.string == "partly" && delivery?["outcomes"]?["apns"]?["delivered"]?.int == 2)
            #expect(delivery?["outcomes"]?["fcmv1"]?["delivered"]?.int == 2 && delivery?["outcomes"]?["fcmv1"]?["UNREGISTERED"]?.int == 1)
            // The dead token is gone; the others stay.
            let left = Set(try await backend.store.registrations(owner: "alice").map(\.deviceToken))
            #expect(left == Set(apple + android[0..<2]))
        }
    }

    @Test("Direct delivery: FCM unavailable leaves the Android devices unanswered; the retry sends only to them")
    func directRetriesFCMOnly() async throws {
        try await withAPNsBackend(withFCM: true) { backend in
            let fcm = try #require(backend.fcm)
            let apple = try await registerDevices(1, on: backend)
            let android = "android:APA91b" + String(repeating: "R", count: 140)
            _ = try backend.created(
                try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken":"\#(android)","platform":"fcmv1"}"#))
            // The client's own four tries all answered 503.
            fcm.inject(Array(repeating: .status(503, retryAfter: nil), count: 4))
            let id = try await backend.notify(as: "alice", #"{"kind":"secure","payload":"code 4242"}"#)
            let waiting = try await backend.store.deliveryReport(notificationID: id)
            #expect(waiting?.state == .queued && waiting?.outcomes == ["apns": ["delivered": 1]], "\(String(describing: waiting))")
            #expect(fcm.deliveries.isEmpty)
            try await Task.sleep(for: .milliseconds(1_100))
            #expect(await backend.worker.runOnce() == 1)
            let done = try await backend.store.deliveryReport(notificationID: id)
            #expect(done?.state == .delivered && done?.outcomes == ["apns": ["delivered": 1], "fcmv1": ["delivered": 1]])
            #expect(backend.emulator.deliveries.map(\.deviceToken) == apple && fcm.deliveries.map(\.target) == [android])
            // The payload never travels: only the id.
            #expect(!fcm.deliveries.contains { String(decoding: $0.body, as: UTF8.self).contains("4242") })
        }
    }

    @Test("Ten devices all answering BadDeviceToken, as every token does against the wrong environment: all ten are kept")
    func wrongEnvironmentKeepsEverything() async throws {
        try await withAPNsBackend { backend in
            let devices = try await registerDevices(10, on: backend)
            // The devices' app was built for the other environment: this one calls each token bad.
            for device in devices { backend.emulator.setState(.bad, for: device) }
            _ = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"alice"}"#)
            #expect(try await registeredDevices(backend) == Set(devices))
            #expect(backend.emulator.deliveries.isEmpty)
        }
    }

    @Test("3 bad of 10 in the right environment: the other environment refuses them too, and exactly those 3 are pruned")
    func badTokensConfirmedElsewhere() async throws {
        try await withAPNsBackend { backend in
            let devices = try await registerDevices(10, on: backend)
            let bad = Set(devices[2...4])
            for device in bad {
                backend.emulator.setState(.bad, for: device)
                backend.other.setState(.bad, for: device)
            }
            // Bad here and accepted there: the app of the other environment; kept, not pruned.
            backend.emulator.setState(.bad, for: devices[7])
            _ = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"alice"}"#)
            #expect(try await registeredDevices(backend) == Set(devices).subtracting(bad))
            #expect(backend.emulator.deliveries.count == 6)
            // The other environment was asked about the four bad tokens alone, with a push that shows nothing.
            let asked = backend.other.deliveries
            #expect(asked.map(\.deviceToken) == [devices[7]])
            #expect(backend.other.requestCount == 4)
            #expect(asked.allSatisfy { $0.pushType == .background && $0.priority == 5 })
            #expect(asked.allSatisfy { String(decoding: $0.payload, as: UTF8.self) == #"{"aps":{"content-available":1}}"# })
            #expect(backend.logs.messages.filter { $0 == "device token of the other APNs environment" }.count == 1)
        }
    }

    @Test("APNs unavailable: the notification is answered 201 and queued with why; once APNs answers, each device gets it once")
    func outageQueues() async throws {
        try await withAPNsBackend { backend in
            let devices = try await registerDevices(2, on: backend)
            // Two devices, three attempts each in the client: every request of the first claim is refused.
            backend.emulator.inject(Array(repeating: .status(503, reason: "ServiceUnavailable", retryAfter: nil), count: 6))
            let created = try await backend.call(.POST, "/api/notifications", as: "bob", json: #"{"kind":"secure","payload":"hi","to":"alice"}"#)
            try #require(created.status == 201, "\(created.text)")
            let answered = try created.json().root
            #expect(answered["delivery"]?["state"]?.string == "queued" && answered["delivery"]?["outcomes"]?.count == 0)
            let id = try #require(answered["id"]?.string)
            let waiting = try await backend.store.deliveryReport(notificationID: id)
            #expect(waiting?.state == .queued && waiting?.failure?.hasPrefix("2 device(s) unanswered") == true, "\(String(describing: waiting))")
            #expect(backend.emulator.deliveries.isEmpty)
            // The sender sees it waiting for a retry, and why.
            let sent = try await backend.call(.GET, "/api/sent-notifications", as: "bob").json().root["notifications"]?[0]?["delivery"]
            #expect(sent?["state"]?.string == "queued" && sent?["attempts"]?.int == 1)
            #expect(sent?["failure"]?.string?.hasPrefix("2 device(s) unanswered") == true)
            // The first retry's backoff is at most a second.
            try await Task.sleep(for: .milliseconds(1_100))
            #expect(await backend.worker.runOnce() == 1)
            #expect(try await backend.store.deliveryReport(notificationID: id)?.state == .delivered)
            for (path, user) in [("/api/sent-notifications", "bob"), ("/api/notifications", "alice")] {
                let delivery = try await backend.call(.GET, path, as: user).json().root["notifications"]?[0]?["delivery"]
                #expect(delivery?["state"]?.string == "delivered" && delivery?["outcomes"]?["apns"]?["delivered"]?.int == 2, "\(path)")
                #expect(delivery?["attempts"]?.int == 2 && delivery?["failure"] == nil, "\(path)")
            }
            #expect(backend.emulator.deliveries.map(\.deviceToken).sorted() == devices.sorted())
            #expect(try await registeredDevices(backend) == Set(devices))
        }
    }

    @Test("A wrong topic (another app of the team) prunes nothing; the brake's log line appears once and its metric counts each send")
    func wrongTopicPrunesNothing() async throws {
        try await withAPNsBackend(topic: APNsBackend.topic + ".other") { backend in
            let devices = try await registerDevices(10, on: backend)
            backend.emulator.bind(devices, toApp: APNsBackend.topic)
            for _ in 0..<2 {
                _ = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"alice"}"#)
            }
            #expect(try await registeredDevices(backend) == Set(devices))
            #expect(backend.emulator.requestCount == 20 && backend.emulator.deliveries.isEmpty)
            let suspect = backend.logs.messages.filter { $0.hasPrefix("APNs configuration suspect") }
            #expect(suspect.count == 1, "\(backend.logs.messages)")
            #expect(!backend.logs.messages.contains { $0.hasPrefix("pruned") })
            let held = backend.metrics.counterTotal(label: "push_backend_pruning_held_total", dimensions: [("reason", "DeviceTokenNotForTopic")])
            #expect(held == 2)
        }
    }

    @Test("After a healthy history, one device answering DeviceTokenNotForTopic is pruned; in a fresh process it waits")
    func brakeWeighsHistory() async throws {
        try await withAPNsBackend { backend in
            let devices = try await registerDevices(1, on: backend, prefix: "e")
            backend.emulator.bind(devices, toApp: APNsBackend.topic + ".other")
            // Nothing answered yet: one refusal is all this process has seen, and it is not trusted.
            _ = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"alice"}"#)
            #expect(try await registeredDevices(backend) == Set(devices))
            // Forty deliveries to carol's devices, then the same refusal is the device's own.
            for index in 0..<40 {
                _ = try backend.created(
                    try await backend.call(.POST, "/api/register", as: "carol", json: #"{"deviceToken":"\#(token(index, prefix: "f"))"}"#))
            }
            _ = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"carol"}"#)
            _ = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"alice"}"#)
            #expect(try await registeredDevices(backend).isEmpty)
        }
    }

    @Test("One recipient's junk tokens, however many, do not hold pruning back for everyone: the brake judges recipients, not answers")
    func brakeJudgesRecipients() async throws {
        try await withAPNsBackend { backend in
            // Two recipients whose pushes are delivered.
            for (user, prefix) in [("carol", "c"), ("bob", "b")] {
                _ = try backend.created(
                    try await backend.call(.POST, "/api/register", as: user, json: #"{"deviceToken":"\#(token(0, prefix: prefix))"}"#))
                _ = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"\#(user)"}"#)
            }
            // Then alice's twenty junk tokens, bad in both environments: twenty answers against two,
            // but one recipient of three.
            let junk = try await registerDevices(20, on: backend, prefix: "e")
            for device in junk {
                backend.emulator.setState(.bad, for: device)
                backend.other.setState(.bad, for: device)
            }
            _ = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"alice"}"#)
            #expect(try await registeredDevices(backend).isEmpty)
            #expect(!backend.logs.messages.contains { $0.hasPrefix("APNs configuration suspect") })
            #expect(backend.metrics.counterTotal(label: "push_backend_pruning_held_total", dimensions: [("reason", "BadDeviceToken")]) == 0)
        }
    }

    @Test("While the brake holds, a token APNs calls unregistered since its registration is still pruned; one unregistered before it is kept")
    func brakeLetsUnregisteredPrune() async throws {
        try await withAPNsBackend(topic: APNsBackend.topic + ".other") { backend in
            // A wrong topic: every device answers DeviceTokenNotForTopic, but for two 410s.
            let devices = try await registerDevices(10, on: backend)
            backend.emulator.bind(devices.filter { $0 != devices[3] && $0 != devices[4] }, toApp: APNsBackend.topic)
            let registeredAt = try await backend.store.registrations(owner: "alice").map(\.updatedAt)
            backend.emulator.setState(.unregistered(sinceMilliseconds: registeredAt.max()! + 60_000), for: devices[3])
            backend.emulator.setState(.unregistered(sinceMilliseconds: registeredAt.min()! - 60_000), for: devices[4])
            _ = try await backend.notify(as: "bob", #"{"kind":"secure","payload":"hi","to":"alice"}"#)
            #expect(try await registeredDevices(backend) == Set(devices).subtracting([devices[3]]))
            #expect(backend.logs.messages.contains { $0.hasPrefix("APNs configuration suspect") })
        }
    }

    @Test("The start-up check: a key that signs and a check device APNs takes pass; the wrong environment, topic or device refuse to start")
    func startupCheck() async throws {
        let emulators = try EmulatorPair(bundleIDs: [APNsBackend.topic, APNsBackend.topic + ".other"])
        let logger = Logger(label: "push-backend", factory: { _ in SwiftLogNoOpLogHandler() })
        try await emulators.run(logger: logger) { development, production in
            let tokens = APNsTokenCache(key: emulators.signingKey)
            func check(_ device: String?, topic: String = APNsBackend.topic, otherEnvironment: Bool = true) async -> String? {
                let apns = DirectAPNs(
                    client: development, otherEnvironment: otherEnvironment ? production : nil, topic: topic, liveActivity: nil)
                do {
                    try await PushBackendService.checkAPNs(apns, tokens: tokens, device: device, logger: logger)
                    return nil
                } catch {
                    return error.message
                }
            }
            #expect(await check(nil) == nil)
            #expect(emulators.development.requestCount == 0)  // without a check device, nothing is sent
            let device = token(1, prefix: "9")
            #expect(await check(device) == nil)
            let delivered = try #require(emulators.development.deliveries.last)
            #expect(delivered.deviceToken == device && delivered.pushType == .background)

            emulators.development.setState(.bad, for: device)
            #expect(await check(device)?.contains("the server points at the wrong environment") == true)
            #expect(await check(device, otherEnvironment: false)?.contains("no other environment is configured") == true)
            emulators.production.setState(.bad, for: device)
            #expect(await check(device)?.contains("in this environment and the other") == true)
            emulators.development.setState(.active, for: device)
            emulators.development.bind([device], toApp: APNsBackend.topic)
            #expect(await check(device, topic: APNsBackend.topic + ".other")?.contains("400 DeviceTokenNotForTopic") == true)
            #expect(await check(device, topic: "com.example.notours")?.contains("400 TopicDisallowed") == true)
            // The app is gone, but APNs knew the token for this topic: the settings are right.
            emulators.development.setState(.unregistered(sinceMilliseconds: 1), for: device)
            #expect(await check(device) == nil)
        }
    }

    @Test("With a hub, the Live Activity and channel routes answer 501, and the served contract leaves them out")
    func hubHasNoLiveActivities() async throws {
        try await withBackend { backend in
            let reply = try await backend.call(.POST, "/api/activities", as: "alice", json: #"{"token":"\#(token(1))","kind":"activity"}"#)
            #expect(reply.status == 501 && reply.errorCode == "apnsDeliveryRequired")
            #expect(try await backend.call(.POST, "/api/channels", as: "bob", json: "{}").status == 501)
            let contract = try await backend.call(.GET, "/openapi.yaml", as: nil)
            #expect(contract.status == 200 && contract.header("Content-Type") == "application/yaml")
            #expect(contract.text.contains("\nopenapi: 3.1.0\n") && contract.text.contains("\n  /api/notifications/{id}:\n"))
            #expect(!contract.text.contains("/api/activities") && !contract.text.contains("/api/channels"))
            #expect(!contract.text.contains("name: liveActivities") && contract.text.contains("\ncomponents:\n"))
        }
        try await withAPNsBackend { backend in
            let contract = try await backend.call(.GET, "/openapi.yaml", as: nil)
            #expect(contract.status == 200 && contract.text.contains("\n  /api/activities/{id}/updates:\n"))
            #expect(contract.text.contains("\n  /api/channels/{id}/broadcasts:\n"))
        }
    }

    @Test("Live Activity bodies: fields for another event are refused, an optional null is absent, whole seconds however written")
    func liveActivityBodies() async throws {
        try await withAPNsBackend { backend in
            let activity = try backend.created(
                try await backend.call(.POST, "/api/activities", as: "alice", json: #"{"token":"\#(token(7))","kind":"activity"}"#))
            let cases: [(json: String, status: Int)] = [
                (#"{"event":"update","contentState":{"score":1},"timestamp":1.8e9}"#, 200),
                (#"{"event":"update","contentState":{"score":1},"timestamp":1800000000.0,"alert":null,"staleDate":null}"#, 200),
                // A key for another event is refused, whatever its value.
                (#"{"event":"update","contentState":{"score":1},"inputPushToken":null}"#, 400),
                // The free-form objects go to the device as they are, U+0000 and all.
                (#"{"event":"update","contentState":{"score\u0000":"a\u0000b"}}"#, 200),
                (#"{"event":"update","contentState":{"score":1},"timestamp":1800000000.5}"#, 400),
                (#"{"event":"update","contentState":{"score":1},"timestamp":10000000000}"#, 400),
                (#"{"event":"update","contentState":{"score":1},"inputPushToken":false}"#, 400),
                (#"{"event":"end","staleDate":1800000000}"#, 400),
                (#"{"event":"end","relevanceScore":1}"#, 400),
                (#"{"event":"end","dismissalDate":1800000000}"#, 200),
            ]
            for (json, status) in cases {
                let reply = try await backend.call(.POST, "/api/activities/\(activity)/updates", as: "bob", json: json)
                #expect(reply.status == status, "\(json) → \(reply.status) \(reply.text)")
            }
        }
    }
}
