import APNsEmulator
import Foundation
import HTTPTypes
import HubEmulator
import NIOHTTP1
import OpenAPIRuntime
import PushBackend
import PushClient
import PushCore
import PushTestSupport
import RichPushImages
import Synchronization
import Testing

/// The phone's half of the flows: PushClient against the backend on a loopback port.
@Suite("The app side: PushClient through the rich, rich-alert and secure flows, and its faults", .serialized)
struct AppSideTests {
    static let logo = try! RichPushImages.registry.resource(named: "pushcore-logo.png")
    static let sunset = try! RichPushImages.registry.resource(named: "sunset.png")

    static func client(
        _ base: String, user: String = "alice", withPassword: String? = nil, transport: (any ClientTransport)? = nil
    )
        -> PushBackendClient
    {
        PushBackendClient(
            serverURL: URL(string: base)!, credentials: FixedCredentials(PushCredentials(user: user, password: withPassword ?? password(user))),
            transport: transport)
    }

    /// The deadline of a call whose deadline is not the point: room for a machine busy with the
    /// rest of the suite, which runs at the same time.
    static let patience = Duration.seconds(60)

    static func deviceToken() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255) } }

    /// A fresh file name in a fresh directory.
    static func destination() throws -> URL { URL(fileURLWithPath: try temporaryDirectory()).appendingPathComponent("image.png") }

    /// Runs the four flows as a phone would: each push is parsed by PushClient, which fetches what it names.
    static func runFlows(
        base: String, pushes: @Sendable (String) throws -> [[UInt8]], send: @Sendable (String) async throws -> String
    )
        async throws
    {
        let phone = client(base)
        let token = deviceToken()
        let registration = try await phone.registerDevice(token: token, within: Self.patience)
        #expect(PushMessage.isBackendID(registration.id) && registration.reachable && registration.reason == nil)
        #expect(registration.deviceToken == token.map { String(format: "%02x", $0) }.joined())
        let hex = token.map { String(format: "%02x", $0) }.joined()

        let richID = try await send(#"{"kind": "rich", "message": "Sunset at \"the pier\"", "resource": "sunset.png", "to": "alice"}"#)
        let alertID = try await send(#"{"kind": "richAlert", "message": "Look up 🌅", "to": "alice"}"#)
        let secureID = try await send(#"{"kind": "secure", "payload": "Your code is 4242", "to": "alice"}"#)
        let secureAlertID = try await send(#"{"kind": "secureAlert", "payload": "Door code 9090", "placeholder": "New message", "to": "alice"}"#)
        let pushed = try pushes(hex)
        #expect(
            pushed.map(PushMessage.init(json:)) == [
                .richSilent(id: richID, type: "img", message: "Sunset at \"the pier\""),
                .richAlert(id: alertID, type: "img", alert: PushAlert(body: PushAlertText(text: "Look up 🌅"))),
                .secure(id: secureID),
                .secureAlert(
                    id: secureAlertID, placeholder: PushAlert(body: PushAlertText(text: "New message", localizationKey: "PUSH_SECURE_ALERT"))),
            ])
        #expect(
            // The phrases, not "4242" alone, which a random hex id holds now and then.
            !pushed.contains {
                String(decoding: $0, as: UTF8.self).contains("Door code") || String(decoding: $0, as: UTF8.self).contains("code is 4242")
            })

        let file = try destination()
        let sunset = try await phone.downloadImage(id: richID, to: file, maximumBytes: 1 << 20, within: Self.patience)
        #expect(sunset.contentType == "image/png" && sunset.byteCount == Self.sunset.count)
        #expect(try Data(contentsOf: file) == Data(Self.sunset.bytes))
        let logo = try await phone.downloadImage(id: alertID, to: file, maximumBytes: 1 << 20, within: Self.patience)
        #expect(try logo.byteCount == Self.logo.count && Data(contentsOf: file) == Data(Self.logo.bytes))
        #expect(try await phone.secureBody(id: secureID, within: Self.patience) == "Your code is 4242")
        #expect(try await phone.secureBody(id: secureAlertID, within: Self.patience) == "Door code 9090")
        await #expect(throws: PushClientError.unsupportedType("a secure body, not an image")) {
            try await phone.downloadImage(id: secureID, to: file, maximumBytes: 1 << 20, within: Self.patience)
        }

        // Fetched, not seen: nothing is read until the app says the user saw it.
        var listed = try await phone.notifications(within: Self.patience)
        #expect(listed.map(\.id) == [secureAlertID, secureID, alertID, richID] && !listed.contains(where: \.read))
        for id in [secureID, alertID] {
            try await phone.markRead(id: id, within: Self.patience)
            try await phone.markRead(id: id, within: Self.patience)
        }
        listed = try await phone.notifications(within: Self.patience)
        #expect(listed.map(\.read) == [false, true, true, false])
        await #expect(throws: PushClientError.notFound) { try await phone.markRead(id: String(repeating: "0", count: 32), within: Self.patience) }
        await #expect(throws: PushClientError.notFound) {
            try await Self.client(base, user: "bob").markRead(id: richID, within: Self.patience)
        }
        #expect(listed.map(\.kind) == [.secure, .secure, .rich, .rich] && listed[3].message == "Sunset at \"the pier\"")
        try await phone.unregisterDevice(registrationID: registration.id, within: Self.patience)
        await #expect(throws: PushClientError.notFound) { try await phone.unregisterDevice(registrationID: registration.id, within: Self.patience) }
    }

    @Test("Through the hub: a silent rich push, a rich alert, a secure push and a secure alert, each shown as the app would")
    func hubFlows() async throws {
        try await withBackend(overSockets: true) { backend in
            try await Self.runFlows(
                base: backend.base,
                pushes: { token in backend.emulator.deliveries.filter { $0.deviceHandle == token }.map(\.payload) },
                send: { json in try await backend.notify(as: "bob", json) })
        }
    }

    @Test("Straight to APNs: the same four flows")
    func apnsFlows() async throws {
        try await withAPNsBackend(live: true) { backend in
            try await Self.runFlows(
                base: backend.base,
                pushes: { token in backend.emulator.deliveries.filter { $0.deviceToken == token }.map(\.payload) },
                send: { json in try backend.created(try await backend.call(.POST, "/api/notifications", as: "bob", json: json)) })
        }
    }

    @Test("The registration keeper: one request per token, the old token's registration deleted, sign-out forgets it")
    func registrationKeeper() async throws {
        try await withBackend(overSockets: true) { backend in
            let directory = URL(fileURLWithPath: try temporaryDirectory())
            let file = directory.appendingPathComponent("registration.json")
            let keeper = PushRegistrationKeeper(backend: Self.client(backend.base), store: FileRegistrationStore(file: file))
            let first = Self.deviceToken()
            let registered = try await keeper.tokenReceived(first, within: Self.patience)
            #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
            // Each launch hands the same token over: the registration kept, no request.
            let installations = backend.emulator.installations(in: "hub").count
            for _ in 0..<3 { #expect(try await keeper.tokenReceived(first, within: Self.patience) == registered) }
            let relaunched = PushRegistrationKeeper(backend: Self.client(backend.base), store: FileRegistrationStore(file: file))
            #expect(try await relaunched.tokenReceived(first, within: Self.patience) == registered)
            #expect(backend.emulator.installations(in: "hub").count == installations)
            // A new token: registered, and the old one's registration deleted.
            let second = try await relaunched.tokenReceived(Self.deviceToken(), within: Self.patience)
            #expect(second.id != registered.id && second.deviceToken != registered.deviceToken)
            await #expect(throws: PushClientError.notFound) {
                try await Self.client(backend.base).unregisterDevice(registrationID: registered.id, within: Self.patience)
            }
            #expect(await relaunched.current == second)
            // Signing out deletes it and forgets it; the next user's token is registered anew.
            try await relaunched.signOut(within: Self.patience)
            #expect(await relaunched.current == nil && !FileManager.default.fileExists(atPath: file.path))
            await #expect(throws: PushClientError.notFound) {
                try await Self.client(backend.base).unregisterDevice(registrationID: second.id, within: Self.patience)
            }
            try await relaunched.signOut(within: Self.patience)
        }
    }

    @Test("Live Activity tokens: registered from their bytes, deleted by id")
    func activityTokens() async throws {
        try await withAPNsBackend(live: true) { backend in
            let phone = Self.client(backend.base)
            let id = try await phone.registerActivityToken(Self.deviceToken(), kind: .pushToStart, within: Self.patience)
            try await phone.deleteActivityToken(id: id, within: Self.patience)
            await #expect(throws: PushClientError.notFound) { try await phone.deleteActivityToken(id: id, within: Self.patience) }
        }
        try await withBackend(overSockets: true) { backend in
            await #expect(throws: PushClientError.refused(status: 501, code: "apnsDeliveryRequired")) {
                try await Self.client(backend.base).registerActivityToken(Self.deviceToken(), kind: .activity, within: Self.patience)
            }
        }
    }

    // MARK: Faults

    @Test("A connection dropped mid-image: the retry asks for the byte it reached, with If-Range, and the file is whole")
    func droppedMidImage() async throws {
        try await withBackend(overSockets: true) { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "richAlert", "message": "m", "resource": "sunset.png"}"#)
            let transport = FaultyTransport { attempt, response, body in
                attempt == 0 ? (response, body.cut(after: 1000)) : (response, body)
            }
            let file = try Self.destination()
            let image = try await Self.client(backend.base, transport: transport).downloadImage(
                id: id, to: file, maximumBytes: 1 << 20, within: Self.patience)
            #expect(try image.byteCount == Self.sunset.count && Data(contentsOf: file) == Data(Self.sunset.bytes))
            let requests = transport.requests
            #expect(requests.count == 2 && requests[0].headerFields[.range] == nil)
            #expect(requests[1].headerFields[.range] == "bytes=1000-" && requests[1].headerFields[.ifRange] == Self.sunset.entityTag.headerValue)
            #expect(transport.statuses == [200, 206])
        }
    }

    @Test("A body that ends short of its length without an error is resumed as a drop")
    func shortBody() async throws {
        try await withBackend(overSockets: true) { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "m", "resource": "sunset.png"}"#)
            let transport = FaultyTransport { attempt, response, body in attempt == 0 ? (response, body.ending(after: 2000)) : (response, body) }
            let file = try Self.destination()
            _ = try await Self.client(backend.base, transport: transport).downloadImage(
                id: id, to: file, maximumBytes: 1 << 20, within: Self.patience)
            #expect(try Data(contentsOf: file) == Data(Self.sunset.bytes))
            #expect(transport.requests.last?.headerFields[.range] == "bytes=2000-" && transport.statuses == [200, 206])
        }
    }

    @Test("The ETag changed between attempts: the server sends the whole image, and the download restarts from 0")
    func changedEntityTag() async throws {
        try await withBackend(overSockets: true) { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "m", "resource": "sunset.png"}"#)
            // The first answer names another version of the image than the server holds by the retry.
            let transport = FaultyTransport { attempt, response, body in
                guard attempt == 0 else { return (response, body) }
                var changed = response
                changed.headerFields[.eTag] = #""an-older-version""#
                return (changed, body.cut(after: 3000))
            }
            let file = try Self.destination()
            _ = try await Self.client(backend.base, transport: transport).downloadImage(
                id: id, to: file, maximumBytes: 1 << 20, within: Self.patience)
            #expect(try Data(contentsOf: file) == Data(Self.sunset.bytes))
            #expect(transport.requests.last?.headerFields[.ifRange] == #""an-older-version""#)
            #expect(transport.requests.last?.headerFields[.range] == "bytes=3000-" && transport.statuses == [200, 200])
        }
    }

    @Test(
        "A server that answers every request 416, or a first request 206, ends the download after a few attempts with growing waits, no file left",
        arguments: [416, 206])
    func answersThatNeverFit(status: Int) async throws {
        try await withBackend(overSockets: true) { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "m", "resource": "sunset.png"}"#)
            let length = Self.sunset.count
            let transport = FaultyTransport { _, response, body in
                var changed = response
                changed.status = .init(code: status)
                changed.headerFields[.contentRange] = status == 416 ? "bytes */\(length)" : "bytes 0-\(length - 1)/\(length)"
                return (changed, body)
            }
            let file = try Self.destination()
            let started = ContinuousClock.now
            await #expect(throws: PushClientError.invalidResponse("the image's answers do not continue the part already downloaded")) {
                try await Self.client(backend.base, transport: transport).downloadImage(
                    id: id, to: file, maximumBytes: 1 << 20, within: Self.patience)
            }
            #expect(transport.requests.count == PushBackendClient.maximumAttempts)
            #expect(ContinuousClock.now - started < Self.patience)
            #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path).isEmpty)
        }
    }

    @Test("An image over the limit: refused from its Content-Length before a byte is read; a body longer than its length, once the count crosses it")
    func oversizeImage() async throws {
        try await withBackend(overSockets: true) { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "m", "resource": "sunset.png"}"#)
            let file = try Self.destination()
            let honest = FaultyTransport { _, response, body in (response, body) }
            await #expect(throws: PushClientError.tooLarge(limit: 5000, length: Self.sunset.count)) {
                try await Self.client(backend.base, transport: honest).downloadImage(id: id, to: file, maximumBytes: 5000, within: Self.patience)
            }
            #expect(honest.bytesRead == 0)
            // A length that understates the body: the count stops it at that length.
            let lying = FaultyTransport { _, response, body in (response, body.claiming(length: 4000)) }
            await #expect(throws: PushClientError.invalidResponse("the image's body runs past its length of 4000 bytes")) {
                try await Self.client(backend.base, transport: lying).downloadImage(id: id, to: file, maximumBytes: 5000, within: Self.patience)
            }
            #expect(lying.bytesRead <= 4000 + 4096)  // the chunk that would cross the length is not written
            #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path).isEmpty)
        }
    }

    @Test("An image of a type no attachment takes is refused by its type, unread")
    func unsupportedImageType() async throws {
        try await withBackend(overSockets: true) { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "m"}"#)
            let transport = FaultyTransport { _, response, body in
                var changed = response
                changed.headerFields[.contentType] = "image/webp"
                return (changed, body)
            }
            let file = try Self.destination()
            await #expect(throws: PushClientError.unsupportedType("image/webp")) {
                try await Self.client(backend.base, transport: transport).downloadImage(
                    id: id, to: file, maximumBytes: 1 << 20, within: Self.patience)
            }
            #expect(transport.bytesRead == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path).isEmpty)
        }
    }

    @Test("One corrupted byte: digest mismatch, no file left, an older file untouched")
    func corruptedByte() async throws {
        try await withBackend(overSockets: true) { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "m"}"#)
            let transport = FaultyTransport { _, response, body in (response, body.flipping(byte: 500)) }
            let file = try Self.destination()
            try Data("older".utf8).write(to: file)
            await #expect(throws: PushClientError.digestMismatch) {
                try await Self.client(backend.base, transport: transport).downloadImage(
                    id: id, to: file, maximumBytes: 1 << 20, within: Self.patience)
            }
            #expect(try Data(contentsOf: file) == Data("older".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path) == ["image.png"])
        }
    }

    @Test("A wrong password is unauthorized; another user's id is not found; nobody signed in sends nothing")
    func refusals() async throws {
        try await withBackend(overSockets: true) { backend in
            let bobs = try await backend.notify(as: "bob", #"{"kind": "secure", "payload": "bob's own"}"#)
            await #expect(throws: PushClientError.unauthorized) {
                try await Self.client(backend.base, withPassword: "wrong").secureBody(id: bobs, within: Self.patience)
            }
            await #expect(throws: PushClientError.notFound) { try await Self.client(backend.base).secureBody(id: bobs, within: Self.patience) }
            await #expect(throws: PushClientError.notFound) {
                try await Self.client(backend.base).downloadImage(id: "1", to: try Self.destination(), maximumBytes: 1 << 20, within: Self.patience)
            }
            let nobody = PushBackendClient(serverURL: URL(string: backend.base)!, credentials: SignedOut())
            await #expect(throws: PushClientError.unauthorized) { try await nobody.notifications(within: Self.patience) }
        }
    }

    @Test("A Retry-After within the deadline is waited out; one past it fails at once")
    func retryAfter() async throws {
        try await withBackend(
            overSockets: true, configure: { $0.registrations = RegistrationLimits(rate: RateLimit(burst: 1, perSecond: 1)) }
        ) { backend in
            let phone = Self.client(backend.base)
            _ = try await phone.registerDevice(token: Self.deviceToken(), within: Self.patience)
            let clock = ContinuousClock()
            let waited = try await clock.measure { _ = try await phone.registerDevice(token: Self.deviceToken(), within: Self.patience) }
            #expect(waited >= .milliseconds(500))
        }
        try await withBackend(
            overSockets: true, configure: { $0.registrations = RegistrationLimits(rate: RateLimit(burst: 1, perSecond: 1.0 / 60)) }
        ) { backend in
            let phone = Self.client(backend.base)
            _ = try await phone.registerDevice(token: Self.deviceToken(), within: Self.patience)
            let clock = ContinuousClock()
            let started = clock.now
            await #expect(throws: PushClientError.throttled(retryAfter: .seconds(60))) {
                try await phone.registerDevice(token: Self.deviceToken(), within: Self.patience)
            }
            #expect(clock.now - started < .seconds(5))
        }
    }

    @Test("The deadline reached mid-download: deadline exceeded, no file left")
    func deadlineMidDownload() async throws {
        try await withBackend(overSockets: true) { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "m", "resource": "sunset.png"}"#)
            let transport = FaultyTransport { _, response, body in (response, body.trickled(every: .milliseconds(200), size: 500)) }
            let file = try Self.destination()
            let clock = ContinuousClock()
            let started = clock.now
            await #expect(throws: PushClientError.deadlineExceeded) {
                try await Self.client(backend.base, transport: transport).downloadImage(id: id, to: file, maximumBytes: 1 << 20, within: .seconds(1))
            }
            #expect(clock.now - started < .seconds(5))
            #expect(transport.bytesRead > 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path).isEmpty)
        }
    }
}

struct SignedOut: PushCredentialStore {
    func credentials() async throws -> PushCredentials? { nil }
}

/// The platform transport, with each response's body passed through `fault` (by attempt, from 0),
/// recording the requests, the statuses and the body bytes the client pulled.
final class FaultyTransport: ClientTransport, Sendable {
    typealias Fault = @Sendable (_ attempt: Int, HTTPResponse, Body) -> (HTTPResponse, Body)
    let inner = PushBackendClient.platformTransport()
    let fault: Fault
    private let state = Mutex<(requests: [HTTPRequest], statuses: [Int], bytesRead: Int)>(([], [], 0))

    init(_ fault: @escaping Fault) { self.fault = fault }

    var requests: [HTTPRequest] { state.withLock { $0.requests } }
    var statuses: [Int] { state.withLock { $0.statuses } }
    var bytesRead: Int { state.withLock { $0.bytesRead } }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let attempt = state.withLock { state in
            state.requests.append(request)
            return state.requests.count - 1
        }
        let (response, responseBody) = try await inner.send(request, body: body, baseURL: baseURL, operationID: operationID)
        state.withLock { $0.statuses.append(response.status.code) }
        guard let responseBody else { return (response, nil) }
        let (changed, faulty) = fault(attempt, response, Body(responseBody))
        // Counted as the client pulls them, not as the network delivers them.
        let counted = faulty.chunks.map { chunk in
            self.state.withLock { $0.bytesRead += chunk.count }
            return chunk
        }
        return (changed, HTTPBody(counted, length: faulty.length, iterationBehavior: .single))
    }

    /// A response body being rewritten.
    struct Body: Sendable {
        let chunks: AsyncThrowingStream<ArraySlice<UInt8>, any Error>
        let length: HTTPBody.Length

        /// The real body, read to its end whatever the client does: a fault drops the connection
        /// for the client only. Abandoning AsyncHTTPClient's body mid-stream, many times over under
        /// the address sanitizer, once left its shared client answering nobody, and every later test
        /// that used it waited forever.
        init(_ body: HTTPBody) {
            self.init(
                AsyncThrowingStream { continuation in
                    Task {
                        do {
                            for try await chunk in body { continuation.yield(chunk) }
                            continuation.finish()
                        } catch {
                            continuation.finish(throwing: error)
                        }
                    }
                }, length: body.length)
        }

        init(_ chunks: AsyncThrowingStream<ArraySlice<UInt8>, any Error>, length: HTTPBody.Length) {
            self.chunks = chunks
            self.length = length
        }

        /// Each byte through `rewrite`, which yields what to pass on and whether to go on.
        private func mapped(
            length: HTTPBody.Length? = nil, _ rewrite: @escaping @Sendable (_ offset: Int, ArraySlice<UInt8>) async throws -> ArraySlice<UInt8>?
        ) -> Body {
            let source = chunks
            return Body(
                AsyncThrowingStream { continuation in
                    let task = Task {
                        do {
                            var offset = 0
                            for try await chunk in source {
                                guard let out = try await rewrite(offset, chunk) else {
                                    continuation.finish(throwing: DroppedConnection())
                                    return
                                }
                                offset += chunk.count
                                continuation.yield(out)
                            }
                            continuation.finish()
                        } catch {
                            continuation.finish(throwing: error)
                        }
                    }
                    continuation.onTermination = { _ in task.cancel() }
                }, length: length ?? self.length)
        }

        /// The first `count` bytes, then the connection drops.
        func cut(after count: Int) -> Body {
            let delivered = Mutex(false)
            return mapped { offset, chunk in
                guard !delivered.withLock({ $0 }) else { return nil }
                guard offset + chunk.count > count else { return chunk }
                delivered.withLock { $0 = true }
                return chunk.prefix(count - offset)
            }
        }

        /// The first `count` bytes, then the end of the body, as if the server had closed cleanly.
        func ending(after count: Int) -> Body {
            let source = chunks
            return Body(
                AsyncThrowingStream { continuation in
                    let task = Task {
                        var offset = 0
                        do {
                            for try await chunk in source where offset < count {
                                continuation.yield(chunk.prefix(count - offset))
                                offset += chunk.count
                            }
                        } catch {}
                        continuation.finish()
                    }
                    continuation.onTermination = { _ in task.cancel() }
                }, length: length)
        }

        /// The byte at `index` inverted.
        func flipping(byte index: Int) -> Body {
            mapped { offset, chunk in
                guard (offset..<offset + chunk.count).contains(index) else { return chunk }
                var changed = chunk
                changed[changed.startIndex + index - offset] ^= 0xFF
                return changed
            }
        }

        /// The same bytes under a `Content-Length` that understates them.
        func claiming(length: Int) -> Body { mapped(length: .known(Int64(length))) { _, chunk in chunk } }

        /// The bytes in pieces of `size`, one every `interval`.
        func trickled(every interval: Duration, size: Int) -> Body {
            let source = chunks
            return Body(
                AsyncThrowingStream { continuation in
                    let task = Task {
                        do {
                            for try await chunk in source {
                                var rest = chunk
                                while !rest.isEmpty {
                                    try await Task.sleep(for: interval)
                                    continuation.yield(rest.prefix(size))
                                    rest = rest.dropFirst(size)
                                }
                            }
                            continuation.finish()
                        } catch {
                            continuation.finish(throwing: error)
                        }
                    }
                    continuation.onTermination = { _ in task.cancel() }
                }, length: length)
        }
    }

    struct DroppedConnection: Error {}
}
