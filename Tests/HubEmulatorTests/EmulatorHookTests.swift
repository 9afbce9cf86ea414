import AsyncHTTPClient
import HubEmulator
import HubTestSupport
import NIOCore
import NIOHTTP1
import NotificationHubs
import PushCore
import Testing

@Suite("Hub emulator: test hooks that cannot take it down")
struct EmulatorHookTests {
    @Test(
        "Fault requests are validated field by field; nothing traps",
        arguments: [
            #"{"status":5000}"#, #"{"status":99}"#, #"{"status":429.5}"#, #"{"delaySeconds":1e16}"#, #"{"delaySeconds":-1}"#,
            #"{"status":500,"count":1000000000000}"#, #"{"status":500,"count":0}"#, #"{"status":500,"count":100000000}"#,
            #"{"status":500,"retryAfter":"1\r\nX-Evil: 1"}"#, #"{"status":500,"delaySeconds":1}"#, #"{"count":1}"#, #"{"status":500,"extra":1}"#,
            "[1]", "nope",
        ])
    func faultValidation(_ body: String) async throws {
        try await withEmulator { emulator, base in
            var request = HTTPClientRequest(url: base + "/_emulator/faults")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(response.status.code == 400 || response.status.code == 409, "\(body)")
            // The emulator still sends as it should.
            _ = try await client(base).send(.silentSecurePush(secureId: "1"), to: .tag("username:x"))
            #expect(emulator.requestCount == 1)
        }
    }

    @Test("Deliveries are a bounded ring read with a cursor (?since=)")
    func deliveryRing() async throws {
        let emulator = HubEmulator(hubs: [EmulatedHub(name: "hub", connection: try ConnectionString(fullAccess))], deliveryCapacity: 3)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let server = Task { try await emulator.run(port: 0) { continuation.yield($0) } }
        defer { server.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let hub = try client("http://127.0.0.1:\(port)")
        for index in 0..<5 { _ = try await hub.send(.silentSecurePush(secureId: "\(index)"), toDevice: String(repeating: "a", count: 64)) }
        #expect(emulator.deliveries.map(\.sequence) == [3, 4, 5])
        #expect(emulator.deliveries(since: 4).map(\.sequence) == [5])
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/_emulator/deliveries?since=3"), timeout: .seconds(30))
        var parser = JSONParser()
        let listed = try parser.parse(Array(try await response.body.collect(upTo: 1 << 20).readableBytesView))
        #expect(listed.root.elements.map { $0["sequence"]?.int } == [4, 5])
    }
}
