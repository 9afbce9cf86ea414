import Crypto
import Foundation
import HTTPTypes
import OpenAPIRuntime
import PushClient
import PushTestSupport
import Synchronization
import Testing

@Suite("PushClient: the notification service helper")
struct NotificationServiceTests {
    static let id = "0123456789abcdef0123456789abcdef"
    static let image: [UInt8] = Array("\u{89}PNG\r\n\u{1a}\n".utf8) + (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    static let placeholder = NotificationContent(title: "Bank", body: "You have a new message")
    static let credentials = FixedCredentials(PushCredentials(user: "alice", password: "alice-pw"))

    /// A backend as a transport: each request is answered by `answer`.
    struct FakeBackend: ClientTransport {
        let answer: @Sendable (HTTPRequest) async throws -> (HTTPResponse, HTTPBody?)

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            try await answer(request)
        }
    }

    /// The image's answer: its headers, and its body as `body` streams it.
    static func imageAnswer(body: HTTPBody) -> (HTTPResponse, HTTPBody?) {
        var headers = HTTPFields()
        headers[.contentType] = "image/png"
        headers[.contentLength] = String(image.count)
        headers[.eTag] = "\"v1\""
        headers[.cacheControl] = "private, no-cache"
        headers[HTTPField.Name("Repr-Digest")!] = "sha-256=:\(Data(SHA256.hash(data: image)).base64EncodedString()):"
        return (HTTPResponse(status: .ok, headerFields: headers), body)
    }

    /// The first bytes of the image, then nothing until the reader gives up.
    static func stallingBody() -> HTTPBody {
        let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
            continuation.yield(image[0..<100])
        }
        return HTTPBody(stream, length: .known(Int64(image.count)), iterationBehavior: .single)
    }

    /// Helper, its image folder and what it delivered.
    final class Harness: Sendable {
        let helper: NotificationServiceHelper
        let directory: URL
        let delivered = Mutex<[NotificationContent]>([])

        init(timeLimit: Duration = .seconds(30), answer: @escaping @Sendable (HTTPRequest) async throws -> (HTTPResponse, HTTPBody?)) throws {
            directory = URL(fileURLWithPath: try temporaryDirectory())
            let backend = PushBackendClient(
                serverURL: URL(string: "https://push.example.com")!, credentials: NotificationServiceTests.credentials,
                transport: FakeBackend(answer: answer))
            helper = NotificationServiceHelper(backend: backend, imageDirectory: directory, timeLimit: timeLimit)
        }

        func receive(_ message: PushMessage, showing original: NotificationContent = NotificationServiceTests.placeholder) {
            helper.didReceive(message, showing: original) { content in self.delivered.withLock { $0.append(content) } }
        }

        /// Waits until something was delivered, at most `limit`.
        func firstDelivery(within limit: Duration = .seconds(120)) async throws -> NotificationContent {
            let deadline = ContinuousClock.now + limit
            while ContinuousClock.now < deadline {
                if let first = delivered.withLock({ $0.first }) { return first }
                try await Task.sleep(for: .milliseconds(5))
            }
            throw CancellationError()
        }

        var files: [String] { (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] }
    }

    @Test("A secure alert: the placeholder replaced by the body fetched, delivered once")
    func secureAlert() async throws {
        let harness = try Harness { request in
            #expect(request.path == "/api/notifications/\(Self.id)" && request.headerFields[.authorization]?.hasPrefix("Basic ") == true)
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.cacheControl] = "no-store"
            return (HTTPResponse(status: .ok, headerFields: headers), HTTPBody(#"{"Payload": "Door code 9090"}"#))
        }
        harness.receive(.secureAlert(id: Self.id, placeholder: PushAlert(body: PushAlertText(text: "You have a new message"))))
        await harness.helper.finished()
        #expect(harness.delivered.withLock { $0 } == [NotificationContent(title: "Bank", body: "Door code 9090")])
        harness.helper.timeWillExpire()
        #expect(harness.delivered.withLock { $0.count } == 1)
    }

    @Test("A rich alert: the image downloaded, verified and attached, delivered once")
    func richAlert() async throws {
        let harness = try Harness { _ in Self.imageAnswer(body: HTTPBody(Self.image)) }
        harness.receive(.richAlert(id: Self.id, type: "img", alert: PushAlert(body: PushAlertText(text: "Sunset"))))
        await harness.helper.finished()
        let delivered = harness.delivered.withLock { $0 }
        #expect(delivered.count == 1 && delivered.first?.body == "You have a new message")
        let image = try #require(delivered.first?.image)
        #expect(image.contentType == "image/png" && image.byteCount == Self.image.count)
        #expect(try Data(contentsOf: image.file) == Data(Self.image))
        #expect(harness.files == [Self.id])
    }

    @Test("A download that outlives the helper's time: the placeholder delivered once, at the limit; no file left")
    func downloadOutlivesTheLimit() async throws {
        let harness = try Harness(timeLimit: .milliseconds(500)) { _ in Self.imageAnswer(body: Self.stallingBody()) }
        let start = ContinuousClock.now
        harness.receive(.richAlert(id: Self.id, type: "img", alert: PushAlert(body: PushAlertText(text: "Sunset"))))
        #expect(try await harness.firstDelivery() == Self.placeholder)
        #expect(ContinuousClock.now - start >= .milliseconds(500))
        await harness.helper.finished()
        #expect(harness.delivered.withLock { $0.count } == 1)
        #expect(harness.files.isEmpty, "\(harness.files)")
    }

    @Test("The system's time runs out: the best attempt delivered at once, the download cancelled, no file left, never twice")
    func timeWillExpire() async throws {
        let requests = Atomic<Int>(0)
        let harness = try Harness { _ in
            requests.add(1, ordering: .relaxed)
            return Self.imageAnswer(body: Self.stallingBody())
        }
        harness.receive(.richAlert(id: Self.id, type: "img", alert: PushAlert(body: PushAlertText(text: "Sunset"))))
        while requests.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let expired = ContinuousClock.now
        harness.helper.timeWillExpire()
        #expect(harness.delivered.withLock { $0 } == [Self.placeholder])
        #expect(runningUnderSanitizer || ContinuousClock.now - expired < .seconds(1))
        await harness.helper.finished()
        harness.helper.timeWillExpire()
        #expect(harness.delivered.withLock { $0.count } == 1)
        #expect(harness.files.isEmpty, "\(harness.files)")
        // Cancelled, not resumed over and over: one request, or a few before the cancellation was seen.
        #expect(requests.load(ordering: .relaxed) <= 2)
    }

    @Test("A fetch that fails, a silent push and another sender's push: the content as it came, at once")
    func fallbacks() async throws {
        let harness = try Harness { _ in (HTTPResponse(status: .notFound), nil) }
        harness.receive(.secureAlert(id: Self.id, placeholder: PushAlert(body: PushAlertText(text: "p"))))
        harness.receive(.secure(id: Self.id))
        harness.receive(.other)
        await harness.helper.finished()
        #expect(harness.delivered.withLock { $0 } == Array(repeating: Self.placeholder, count: 3))
        #expect(harness.files.isEmpty)
    }
}
