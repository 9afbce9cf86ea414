import Foundation
import PushClient
import PushTestSupport
import Testing

#if canImport(Glibc)
import Glibc

@Suite("PushClient: errors an app can act on")
struct PushClientErrorTests {
    static let token: [UInt8] = Array(repeating: 0xAB, count: 32)
    static let credentials = FixedCredentials(PushCredentials(user: "alice", password: "hunter2-secret"))

    func client(port: UInt16, credentials: any PushCredentialStore = Self.credentials) -> PushBackendClient {
        PushBackendClient(serverURL: URL(string: "http://127.0.0.1:\(port)")!, credentials: credentials)
    }

    /// Runs `call`, expecting it to fail with `expected`; returns how long it took.
    func failure(
        _ expected: PushClientError, _ call: () async throws(PushClientError) -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Duration {
        let start = ContinuousClock.now
        do {
            try await call()
            Issue.record("succeeded, expected \(expected)", sourceLocation: sourceLocation)
        } catch {
            #expect(error == expected, sourceLocation: sourceLocation)
        }
        return ContinuousClock.now - start
    }

    @Test("A refused connection fails at once with cannotConnect, long before the deadline")
    func refusedConnection() async throws {
        let port = try TCPListener.unusedPort()
        let client = client(port: port)
        var times: [Duration] = []
        for _ in 0..<3 {
            times.append(
                await failure(.cannotConnect) { () async throws(PushClientError) in
                    _ = try await client.registerDevice(token: Self.token, within: .seconds(120))
                })
        }
        // At once, not at the deadline: a few milliseconds alone; 6 s leaves room for a machine
        // busy with the rest of the suite, and is short of the 10 s a retrying client waits out,
        // every time. The quickest of three, as a benchmark takes it: the suite's first seconds,
        // when every test starts at once, have held one call up for 7 s on a thread. Under a
        // sanitizer, beside the suite, a call can wait longer than that.
        #expect(runningUnderSanitizer || times.min()! < .seconds(6), "took \(times)")
    }

    @Test("A connection the server drops mid-call is connectionLost")
    func droppedConnection() async throws {
        let listener = try TCPListener { socket in
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = read(socket, &buffer, buffer.count)
        }
        defer { listener.close() }
        _ = await failure(.connectionLost) { () async throws(PushClientError) in
            _ = try await client(port: listener.port).registerDevice(token: Self.token, within: .seconds(120))
        }
    }

    @Test("Cancelling the calling task is cancelled, not a transport failure or the deadline")
    func cancelled() async throws {
        let listener = try TCPListener { socket in
            // Reads the request and never answers.
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = read(socket, &buffer, buffer.count)
            sleep(5)
        }
        defer { listener.close() }
        let client = client(port: listener.port)
        let call = Task { () async throws(PushClientError) -> PushRegistration in
            try await client.registerDevice(token: Self.token, within: .seconds(120))
        }
        try await Task.sleep(for: .milliseconds(200))
        call.cancel()
        let start = ContinuousClock.now
        await #expect(throws: PushClientError.cancelled) { try await call.value }
        // At once, not at the deadline (120 s), with room for a machine busy with the rest of the suite.
        #expect(runningUnderSanitizer || ContinuousClock.now - start < .seconds(10))
    }

    @Test("A credential store that cannot be read is credentialsUnavailable, and its error's text is not kept")
    func credentialsUnavailable() async throws {
        struct Locked: PushCredentialStore {
            struct KeychainLocked: Error, CustomStringConvertible { var description: String { "item com.example.push password hunter2" } }
            func credentials() async throws -> PushCredentials? { throw KeychainLocked() }
        }
        let port = try TCPListener.unusedPort()
        _ = await failure(.credentialsUnavailable) { () async throws(PushClientError) in
            _ = try await client(port: port, credentials: Locked()).registerDevice(token: Self.token, within: .seconds(120))
        }
        #expect(!"\(PushClientError.credentialsUnavailable)".contains("hunter2"))
    }

    @Test("The file credential store: mode 0600, replaced whole, a damaged file credentialsUnavailable without its contents")
    func fileCredentialStore() async throws {
        let directory = URL(fileURLWithPath: try temporaryDirectory())
        let file = directory.appendingPathComponent("credentials.json")
        let store = FileCredentialStore(file: file)
        #expect(try await store.credentials() == nil)
        try store.save(PushCredentials(user: "alice", password: "first"))
        try store.save(PushCredentials(user: "alice", password: "hunter2-secret"))
        #expect(try await store.credentials() == PushCredentials(user: "alice", password: "hunter2-secret"))
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["credentials.json"])
        try Data("{\"user\": \"alice\", \"pass".utf8).write(to: file)
        do {
            _ = try await store.credentials()
            Issue.record("a damaged file was read")
        } catch {
            #expect(error as? PushClientError == .credentialsUnavailable && !"\(error)".contains("alice"))
        }
        try store.delete()
        try store.delete()
        #expect(try await store.credentials() == nil)
    }

    @Test("The platforms' network failures map to the cases an app tells apart")
    func mappedFailures() {
        #expect(PushBackendClient.mapped(URLError(.notConnectedToInternet)) == .offline)
        #expect(PushBackendClient.mapped(URLError(.cannotConnectToHost)) == .cannotConnect)
        #expect(PushBackendClient.mapped(URLError(.cannotFindHost)) == .cannotConnect)
        #expect(PushBackendClient.mapped(URLError(.networkConnectionLost)) == .connectionLost)
        #expect(PushBackendClient.mapped(URLError(.timedOut)) == .deadlineExceeded)
        #expect(PushBackendClient.mapped(URLError(.cancelled)) == .cancelled)
        #expect(PushBackendClient.mapped(CancellationError()) == .cancelled)
        #expect(PushBackendClient.mapped(PushClientError.notFound) == .notFound)
    }

    @Test("Every case reads as a short sentence an app can show, never the type's name or a server's words")
    func localizedDescriptions() {
        let cases: [PushClientError] = [
            .unauthorized, .notFound, .throttled(retryAfter: .seconds(30)), .tooLarge(limit: 10, length: 20), .unsupportedType("text/html; evil"),
            .digestMismatch, .deadlineExceeded, .cancelled, .credentialsUnavailable, .offline, .cannotConnect, .connectionLost,
            .transport("IOError hunter2"), .refused(status: 400, code: "server-words"), .invalidResponse("server detail"),
        ]
        var seen: Set<String> = []
        for error in cases {
            let text = (error as any Error).localizedDescription
            #expect(text.hasSuffix(".") && text.first?.isUppercase == true, "\(text)")
            for leak in ["PushClientError", "hunter2", "evil", "server-words", "detail"] { #expect(!text.contains(leak), "\(text)") }
            #expect(text.count < 80, "\(text)")
            seen.insert(text)
        }
        #expect(seen.count == cases.count, "two cases share a text")
    }
}
#endif
