package import HubEmulator
import Logging
package import NotificationHubs
package import PushSAS
import ServiceLifecycle

private let namespace = "Endpoint=sb://test-ns.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey="
package let fullAccess = namespace + "c2VjcmV0LWtleS1vbmU="

/// Runs `body` against a hub emulator serving real HTTP on 127.0.0.1 (a free port), then stops it.
/// The emulator plays the hub `hub` with the key of `connectionString`.
package func withEmulator<Result: Sendable>(
    connectionString: String = fullAccess, _ body: @Sendable (HubEmulator, String) async throws -> Result
) async throws -> Result {
    let emulator = HubEmulator(hubs: [EmulatedHub(name: "hub", connection: try ConnectionString(connectionString))])
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    // Stopped gracefully: cancelling a Hummingbird server whose accepted connections are still
    // being set up can trap inside NIO ("Deinited NIOAsyncWriter without calling finish()").
    let service = ServiceGroup(
        services: [emulator.application(port: 0) { continuation.yield($0) }],
        logger: Logger(label: "hub-emulator", factory: { _ in SwiftLogNoOpLogHandler() }))
    let server = Task { try await service.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else {
        server.cancel()
        throw NotificationHubError(.serverError, "the emulator did not start")
    }
    do {
        let result = try await body(emulator, "http://127.0.0.1:\(port)")
        await service.triggerGracefulShutdown()
        _ = await server.result
        return result
    } catch {
        await service.triggerGracefulShutdown()
        _ = await server.result
        throw error
    }
}

package func client(
    _ base: String, connectionString: String = fullAccess, retry: RetryPolicy = RetryPolicy(), timeout: Duration = .seconds(5),
    clock: SASClock = .system
) throws -> NotificationHubClient {
    try NotificationHubClient(
        connectionString: connectionString, hubName: "hub", endpointOverride: base, retryPolicy: retry, timeout: timeout, clock: clock)
}
