import AsyncHTTPClient
import Foundation
import HTTPTypes
import HubEmulator
import HubTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOHTTP1
import NotificationHubs
import PushBackend
import PushCore
import PushTestSupport
import RichPushImages
import ServiceLifecycle
import Testing

/// The users every backend test starts with (password = name + "-pw").
let backendUsers: [(name: String, role: UserRole)] = [("alice", .user), ("bob", .sender), ("carol", .user)]

func password(_ user: String) -> String { user + "-pw" }

/// Limits no test reaches unless it means to: tests register hundreds of devices for one user.
let generousRegistrationLimits = RegistrationLimits(
    maximumDevices: 10_000, maximumActivityTokens: 10_000, rate: RateLimit(burst: 100_000, perSecond: 1000))

/// Something that answers the API's requests; `call` and `notify` are what a client of the API does.
protocol BackendEndpoint: Sendable {
    func execute(_ request: HTTPClientRequest) async throws -> Reply
}

/// How a test reaches the backend.
enum BackendTransport: Sendable {
    /// Straight into the router, in process (HummingbirdTesting): no sockets, no client address.
    case router(any TestClientProtocol)
    /// HTTP on 127.0.0.1, for the tests of connections, addresses and concurrency.
    case sockets(base: String)
}

/// A running backend in this process (a real SQLite file) with its hub emulator.
struct Backend: BackendEndpoint {
    let transport: BackendTransport
    let emulator: HubEmulator
    let dataDirectory: String
    /// The emulator's address.
    let hubBase: String

    /// The address of a backend started with `withBackend(overSockets: true)`.
    var base: String {
        guard case .sockets(let base) = transport else { preconditionFailure("this backend runs in process: use withBackend(overSockets: true)") }
        return base
    }
    var port: Int { Int(base.split(separator: ":").last!)! }

    func execute(_ request: HTTPClientRequest) async throws -> Reply {
        switch transport {
        case .sockets(let base): return try await RemoteBackend(base: base).execute(request)
        case .router(let client): return try await executeInProcess(request, on: client)
        }
    }
}

/// `request` straight into a router through HummingbirdTesting.
func executeInProcess(_ request: HTTPClientRequest, on client: any TestClientProtocol) async throws -> Reply {
    var fields = HTTPFields()
    for (name, value) in request.headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
    var body: ByteBuffer?
    if let requestBody = request.body {
        body = ByteBuffer()
        for try await var part in requestBody { body!.writeBuffer(&part) }
    }
    let response = try await client.executeRequest(
        uri: request.url, method: HTTPRequest.Method(request.method.rawValue)!, headers: fields, body: body)
    var headers = HTTPHeaders()
    for field in response.headers { headers.add(name: field.name.rawName, value: field.value) }
    return Reply(status: response.status.code, headers: headers, body: Array(response.body.readableBytesView))
}

/// A backend in another process.
struct RemoteBackend: BackendEndpoint {
    let base: String
    var timeout: TimeAmount = .seconds(30)

    func execute(_ request: HTTPClientRequest) async throws -> Reply {
        var request = request
        request.url = base + request.url
        return try await Self.execute(request, timeout: timeout)
    }

    static func execute(_ request: HTTPClientRequest, timeout: TimeAmount = .seconds(30)) async throws -> Reply {
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Array(body.readableBytesView))
    }
}

/// An answer from the backend.
struct Reply: Sendable {
    let status: Int
    let headers: HTTPHeaders
    let body: [UInt8]

    func header(_ name: String) -> String? { headers.first(name: name) }
    var text: String { String(decoding: body, as: UTF8.self) }
    func json() throws -> JSONDocument {
        var parser = JSONParser()
        return try parser.parse(body)
    }
    var errorCode: String? { (try? json())?.root["error"]?["code"]?.string }
}

extension BackendEndpoint {
    func call(
        _ method: HTTPMethod, _ path: String, as user: String?, password: String? = nil, headers: [(String, String)] = [],
        json: String? = nil, contentType: String = "application/json"
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: path)
        request.method = method
        if let user {
            let credentials = Data("\(user):\(password ?? PushBackendTests.password(user))".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(credentials)")
        }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(string: json))
        }
        return try await execute(request)
    }

    /// Posts a notification as `user`; its id.
    func notify(as user: String, _ json: String) async throws -> String {
        let reply = try await call(.POST, "/api/notifications", as: user, json: json)
        try #require(reply.status == 201, "\(reply.status) \(reply.text)")
        return try #require(try reply.json().root["id"]?.string)
    }
}

/// Runs `body` against a backend with an emulated hub and users from ``backendUsers`` (added when
/// the data directory does not have them yet), then stops both and closes the database. The
/// backend runs in process through HummingbirdTesting, or `overSockets` on a free port of 127.0.0.1.
func withBackend(
    dataDirectory: String? = nil, overSockets: Bool = false, configure: @Sendable (inout BackendConfiguration) -> Void = { _ in },
    _ body: @Sendable (Backend) async throws -> Void
) async throws {
    let directory = try dataDirectory ?? temporaryDirectory()
    let store = try await SQLiteBackendStore.open(dataDirectory: directory)
    for (name, role) in backendUsers where try await store.user(named: name) == nil {
        try await store.addUser(
            UserRecord(name: name, passwordHash: PasswordHash(hashing: password(name), parameters: .cheapForTests).encoded, role: role))
    }
    await store.close()

    try await withEmulator { emulator, hubBase in
        guard overSockets else {
            var configuration = BackendConfiguration(dataDirectory: directory, port: 0, registrations: generousRegistrationLimits)
            configure(&configuration)
            try await withRouter(configuration, hubBase: hubBase) { client in
                try await body(Backend(transport: .router(client), emulator: emulator, dataDirectory: directory, hubBase: hubBase))
            }
            return
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var configuration = BackendConfiguration(dataDirectory: directory, port: 0, registrations: generousRegistrationLimits)
        configure(&configuration)
        var logger = Logger(label: "push-backend")
        logger.logLevel = .warning
        let hub = HubSettings(connectionString: fullAccess, hubName: "hub", endpoint: hubBase)
        // Stopped gracefully, as SIGTERM stops `push-backend serve`: cancelling a server with
        // accepted connections still being set up (a test's 1,000 sockets) can trap inside NIO.
        let service = ServiceGroup(
            services: [PushBackendService(configuration, hub: hub, logger: logger) { continuation.yield($0) }], logger: logger)
        let server = Task { try await service.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw StoreError(.unavailable, "the backend did not start") }
        do {
            try await body(
                Backend(transport: .sockets(base: "http://127.0.0.1:\(port)"), emulator: emulator, dataDirectory: directory, hubBase: hubBase))
        } catch {
            await service.triggerGracefulShutdown()
            if case .failure(let serverError) = await server.result {
                Issue.record(serverError, "the in-process backend ended with an error as well")
            }
            throw error
        }
        await service.triggerGracefulShutdown()
        // The database is closed when this returns; an error the server ends with fails the test.
        try await server.value
    }
}

/// The backend's application, as `push-backend serve` builds it, driven through HummingbirdTesting's
/// router.
private func withRouter(
    _ configuration: BackendConfiguration, hubBase: String, _ body: @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    var logger = Logger(label: "push-backend")
    logger.logLevel = .warning
    let hub = HubSettings(connectionString: fullAccess, hubName: "hub", endpoint: hubBase)
    try await buildApplication(configuration, delivery: .hub(hub), logger: logger).test(.router, body)
}

/// What the iOS app does: registers its token, takes silent pushes from the hub, and fetches what
/// they name with its user's credentials.
struct DeviceSimulator: Sendable {
    let user: String
    let token: String
    let backend: Backend

    /// A device with a random 32-byte token, or the given one (the same phone, another user).
    init(user: String, backend: Backend, token: String? = nil) {
        self.user = user
        self.backend = backend
        var generator = SystemRandomNumberGenerator()
        self.token = token ?? (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    /// `POST /api/register`; the installation id.
    @discardableResult
    func register() async throws -> String {
        let reply = try await backend.call(.POST, "/api/register", as: user, json: #"{"deviceToken": "\#(token)"}"#)
        try #require(reply.status == 201, "\(reply.status) \(reply.text)")
        return try #require(try reply.json().root["id"]?.string)
    }

    /// The silent pushes delivered to this device so far, parsed by PushCore.
    func pushes() throws -> [JSONDocument] {
        try backend.emulator.deliveries.filter { $0.deviceHandle == token }.map { delivery in
            #expect(delivery.apnsHeaders["apns-push-type"] == "background" && delivery.apnsHeaders["apns-priority"] == "5")
            var parser = JSONParser()
            return try parser.parse(delivery.payload)
        }
    }

    /// The latest push, checked to be silent (content-available only).
    func lastPush() throws -> JSONDocument {
        let push = try #require(try pushes().last, "no push reached \(user)'s device")
        let aps = try #require(push.root["aps"])
        #expect(aps.count == 1 && aps["content-available"]?.int == 1)
        return push
    }

    /// `GET /api/notifications/{id}` with this device's credentials.
    func fetch(_ id: String, headers: [(String, String)] = []) async throws -> Reply {
        try await backend.call(.GET, "/api/notifications/\(id)", as: user, headers: headers)
    }
}
