import HubEmulator
import Logging
import PushBackend
import PushSAS
import ServiceLifecycle
import Synchronization

/// `serve --demo`'s hub: an emulated namespace with a fresh random key on a free loopback port, run
/// as a service beside the backend. Fault injection is off: anyone who can reach the emulator's
/// port could otherwise break sends.
final class DemoHub: Sendable {
    static let hubName = "pushcore-demo"

    let service: any Service
    private let connectionString: String
    private let boundPort = BoundPort()

    init(logger: Logger) throws {
        var generator = SystemRandomNumberGenerator()
        let key = (0..<4).map { _ in String(generator.next() as UInt64, radix: 36) }.joined()
        connectionString =
            "Endpoint=sb://pushcore-demo.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey=\(key)"
        let emulator = HubEmulator(
            hubs: [EmulatedHub(name: Self.hubName, connection: try ConnectionString(connectionString))], allowsFaultInjection: false)
        service = emulator.application(port: 0, logger: logger, connectionCap: demoConnectionCap(logger), onListening: boundPort.bound)
    }

    /// The emulator's port once it listens.
    var port: Int? { boundPort.port }

    /// The hub settings of the emulated namespace, once the emulator listens; the backend waits for
    /// them. Throws when the emulator stopped before it listened.
    func settings() async throws -> HubSettings {
        HubSettings(connectionString: connectionString, hubName: Self.hubName, endpoint: "http://127.0.0.1:\(try await boundPort.listening())")
    }
}

/// The cap on each in-process emulator's connections: the backend's clients need a few, a person
/// trying the demo a few more; idle ones beyond it wait in the kernel's backlog rather than take
/// the process's descriptors.
func demoConnectionCap(_ logger: Logger) -> ConnectionCap { ConnectionCap(maximum: 256, logger: logger) }

/// The port an emulator bound, once it listens: ``bound(_:)`` is its listening callback, and
/// ``listening()`` waits for it.
final class BoundPort: Sendable {
    let value = Mutex<Int?>(nil)
    private let ports: AsyncStream<Int>
    private let continuation: AsyncStream<Int>.Continuation

    init() {
        (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    }

    var port: Int? { value.withLock { $0 } }

    func bound(_ port: Int) {
        value.withLock { $0 = port }
        continuation.yield(port)
        continuation.finish()
    }

    /// The port once the emulator listens; throws when it stopped before it did.
    func listening() async throws -> Int {
        for await port in ports { return port }
        if let port { return port }
        throw CancellationError()
    }
}
