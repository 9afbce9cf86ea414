package import Hummingbird
package import PushJSON

/// An emulator that records what it delivered and counts what it was asked, for tests to read
/// through the hooks every emulator serves alike.
package protocol RecordingEmulator: Sendable {
    associatedtype RecordedDelivery
    /// The deliveries after sequence number `sequence`, oldest first.
    func deliveries(since sequence: Int) -> [RecordedDelivery]
    /// One delivery as `GET /_emulator/deliveries` lists it.
    static func hookJSON(_ delivery: RecordedDelivery) -> JSON
    /// Forgets the deliveries, the queued faults and the request count.
    func reset()
    var requestCount: Int { get }
}

/// An emulator that takes faults from tests through `POST /_emulator/faults`.
package protocol FaultInjectingEmulator: Sendable {
    associatedtype Fault: Sendable
    /// The faults that may wait at once.
    static var maximumQueuedFaults: Int { get }
    /// The faults a hook's body asks for, and how many requests pass untouched before the first.
    static func faults(from body: [UInt8]) throws(HookRefusal) -> (faults: [Fault], after: Int)
    /// Queues `faults` unless more than ``maximumQueuedFaults`` would then wait; false when not.
    func queue(_ faults: [Fault], after requests: Int) -> Bool
}

extension RouterGroup {
    /// `GET /_emulator/deliveries[?since=N]` (the deliveries after sequence number N, every one
    /// without it, in one JSON array), `DELETE /_emulator/deliveries` (``RecordingEmulator/reset()``)
    /// and `GET /_emulator/requests` (the count, as a number).
    package func addRecordingHooks(for emulator: some RecordingEmulator) {
        get("deliveries") { request, _ in try Self.deliveries(of: emulator, query: request.uri.query ?? "") }
        delete("deliveries") { _, _ in
            emulator.reset()
            return Response(status: .noContent)
        }
        get("requests") { _, _ in Response.json(Array(String(emulator.requestCount).utf8)) }
    }

    /// `POST /_emulator/faults`: queues what the body asks for (409 when too many would wait).
    package func addFaultHook(for emulator: some FaultInjectingEmulator) {
        post("faults") { request, _ in try Self.queueFaults(on: emulator, body: try await request.hookBody(upTo: 4096)) }
    }

    private static func queueFaults<Emulator: FaultInjectingEmulator>(on emulator: Emulator, body: [UInt8]) throws(HookRefusal) -> Response {
        let (faults, after) = try Emulator.faults(from: body)
        guard emulator.queue(faults, after: after) else {
            throw HookRefusal(409, "at most \(Emulator.maximumQueuedFaults) faults may be queued")
        }
        return Response(status: .noContent)
    }

    private static func deliveries<Emulator: RecordingEmulator>(of emulator: Emulator, query: String) throws(HookRefusal) -> Response {
        var since = 0
        for pair in query.split(separator: "&") where pair.hasPrefix("since=") {
            guard let value = Int(pair.dropFirst(6)), value >= 0 else { throw HookRefusal(400, "since is a sequence number, 0 or more") }
            since = value
        }
        var bytes: [UInt8] = []
        // Only JSON that repeats a key or holds a non-finite number fails to write: not these.
        try? JSON.array(emulator.deliveries(since: since).map(Emulator.hookJSON)).write(into: &bytes)
        return .json(bytes)
    }
}
