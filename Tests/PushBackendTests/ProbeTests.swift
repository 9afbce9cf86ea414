import HubTestSupport
import Hummingbird
import HummingbirdTesting
import NIOHTTP1
import NotificationHubs
import PushBackend
import PushTestSupport
import RichPushImages
import SQLiteNIO
import Testing

@Suite("Reference backend: health and readiness probes")
struct ProbeTests {
    @Test("/health and /ready answer without credentials; other methods get 405")
    func probes() async throws {
        try await withBackend { backend in
            let health = try await backend.call(.GET, "/health", as: nil)
            #expect(health.status == 200 && health.text == #"{"status":"ok"}"#)
            let ready = try await backend.call(.GET, "/ready", as: nil)
            #expect(ready.status == 200 && ready.text == #"{"status":"ready"}"#)
            let post = try await backend.call(.POST, "/ready", as: nil)
            #expect(post.status == 405 && post.header("Allow") == "GET")
        }
    }

    @Test("Readiness: a failed write makes the store not ready until a write succeeds or 10 s pass; a check answers for a second")
    func storeHealth() {
        let health = StoreHealth()
        let start = ContinuousClock.now
        #expect(health.failingWrite(now: start) == nil)
        health.writeFailed(StoreError(.storage, "disk full"), at: start)
        #expect(health.failingWrite(now: start + .seconds(9))?.code == .storage)
        #expect(health.failingWrite(now: start + StoreHealth.writeFailureMemory) == nil)
        health.writeFailed(StoreError(.storage, "disk full"), at: start)
        health.writeSucceeded()
        #expect(health.failingWrite(now: start) == nil)
        // The last check's answer stands for a second, failures too: a flood of probes asks once.
        #expect(health.recentCheck(now: start) == nil)
        health.checked(.failure(StoreError(.unavailable, "down")), at: start)
        #expect(health.recentCheck(now: start + .milliseconds(999)).map { (try? $0.get()) == nil } == true)
        #expect(health.recentCheck(now: start + StoreHealth.checkInterval) == nil)
    }

    @Test("/ready is 503 while the store does not answer, and /health still 200")
    func notReady() async throws {
        let directory = try temporaryDirectory()
        let store = try await SQLiteBackendStore.open(dataDirectory: directory)
        await store.close()
        let authenticator = Authenticator(store: store, limits: LoginLimits())
        let hub = try NotificationHubClient(connectionString: fullAccess, hubName: "hub", endpointOverride: "http://127.0.0.1:9")
        let api = BackendAPI(
            store: store, authenticator: authenticator, delivery: HubDelivery(hub: hub, store: store), images: RichPushImages.registry,
            defaultImage: "sunset.png",
            sendQuota: RateLimit(burst: 1, perSecond: 1))
        try await Application(router: api.router()).test(.router) { client in
            try await client.execute(uri: "/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable && response.headers[.retryAfter] == "1")
                #expect(String(buffer: response.body).contains(#""code":"storageUnavailable""#))
            }
            try await client.execute(uri: "/health", method: .get) { response in #expect(response.status == .ok) }
        }
        await authenticator.shutdown()
    }
}
