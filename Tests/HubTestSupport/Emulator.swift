import HubEmulator
import NotificationHubs
import PushSAS

private let namespace = "Endpoint=sb://test-ns.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey="
package let fullAccess = namespace + "c2VjcmV0LWtleS1vbmU="

/// Runs `body` against a hub emulator serving real HTTP on 127.0.0.1 (a free port), then stops it.
/// The emulator plays the hub `hub` with the key of `connectionString`.
package func withEmulator<Result: Sendable>(
    connectionString: String = fullAccess, _ body: @Sendable (HubEmulator, String) async throws -> Result
) async throws -> Result {
    let emulator = HubEmulator(hubs: [EmulatedHub(name: "hub", connection: try ConnectionString(connectionString))])
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let server = Task { try await emulator.run(port: 0) { continuation.yield($0) } }
    defer { server.cancel() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw NotificationHubError(.serverError, "the emulator did not start") }
    return try await body(emulator, "http://127.0.0.1:\(port)")
}

package func client(
    _ base: String, connectionString: String = fullAccess, retry: RetryPolicy = RetryPolicy(), timeout: Duration = .seconds(5),
    clock: SASClock = .system
) throws -> NotificationHubClient {
    try NotificationHubClient(
        connectionString: connectionString, hubName: "hub", endpointOverride: base, retryPolicy: retry, timeout: timeout, clock: clock)
}
