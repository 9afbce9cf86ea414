import HTTPTypes
import HubEmulator
import HubTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushCore
import Testing

/// The emulator's routes in process (HummingbirdTesting): the refusals a client of the real
/// service sees, in the order the service checks.
@Suite("Hub emulator: routes and refusals, in process")
struct EmulatorRouteTests {
    let connection: ConnectionString
    let emulator: HubEmulator

    init() throws {
        connection = try ConnectionString(fullAccess)
        emulator = HubEmulator(hubs: [EmulatedHub(name: "hub", connection: connection)])
    }

    /// A header block signed for the namespace's URI of `path`.
    func signed(_ path: String) throws -> HTTPFields {
        let token = try SASSigner(connection).token(for: "https://\(connection.host)\(path)", ttl: 600)
        return [.authorization: token]
    }

    @Test("An unknown hub is 404 before anything else; a bad token 401; an unknown route 404, each with a tracking id")
    func hubRefusals() async throws {
        try await Application(router: emulator.router()).test(.router) { client in
            let noHub = try await client.execute(uri: "/other/installations/a", method: .get)
            #expect(noHub.status == .notFound && noHub.headers[HTTPField.Name("TrackingId")!] != nil)
            #expect(String(buffer: noHub.body).contains("<Code>404</Code><Detail>The hub other does not exist in this namespace."))

            let unsigned = try await client.execute(uri: "/hub/installations/a", method: .get)
            #expect(unsigned.status == .unauthorized && String(buffer: unsigned.body).contains("InvalidSignature"))

            let noRoute = try await client.execute(uri: "/hub/registrations", method: .get, headers: try signed("/hub/registrations"))
            #expect(noRoute.status == .notFound && String(buffer: noRoute.body).contains("No route for GET /hub/registrations."))
            #expect(emulator.requestCount == 2)  // the unknown hub is not counted
        }
    }

    @Test("Installations: PUT, GET, DELETE; other methods 405")
    func installations() async throws {
        try await Application(router: emulator.router()).test(.router) { client in
            let path = "/hub/installations/phone-1"
            let body = ByteBuffer(
                string: #"{"installationId":"phone-1","platform":"apns","pushChannel":"\#(String(repeating: "ab", count: 32))","tags":["a"]}"#)
            let put = try await client.execute(uri: path, method: .put, headers: try signed(path), body: body)
            #expect(put.status == .ok)
            let get = try await client.execute(uri: path, method: .get, headers: try signed(path))
            #expect(get.status == .ok && get.headers[.contentType] == "application/json")
            var parser = JSONParser()
            #expect(try parser.parse(Array(get.body.readableBytesView)).root["tags"]?.elements.map(\.string) == ["a"])
            let post = try await client.execute(uri: path, method: .post, headers: try signed(path))
            #expect(post.status == .methodNotAllowed && String(buffer: post.body).contains("POST is not allowed on an installation."))
            let delete = try await client.execute(uri: path, method: .delete, headers: try signed(path))
            #expect(delete.status == .noContent && emulator.installations(in: "hub").isEmpty)
        }
    }

    @Test("Test hooks need no token; an unknown one is a JSON 404")
    func hooks() async throws {
        try await Application(router: emulator.router()).test(.router) { client in
            let unknown = try await client.execute(uri: "/_emulator/nothing", method: .get)
            #expect(unknown.status == .notFound && String(buffer: unknown.body) == #"{"error":"no such test hook"}"#)
            let faults = try await client.execute(uri: "/_emulator/faults", method: .post, body: ByteBuffer(string: #"{"status":503,"count":2}"#))
            #expect(faults.status == .noContent)
            let first = try await client.execute(uri: "/hub/installations/a", method: .get)
            #expect(first.status == .serviceUnavailable && String(buffer: first.body).contains("Injected fault."))
            let requests = try await client.execute(uri: "/_emulator/requests", method: .get)
            #expect(String(buffer: requests.body) == "1")
        }
    }
}
