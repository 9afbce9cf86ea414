import Crypto
import Foundation
import HubTestSupport
import Hummingbird
import HummingbirdTesting
import NIOHTTP1
import NotificationHubs
import PushBackend
import PushCore
import PushTestSupport
import RichPushImages
import SQLiteNIO
import Testing

/// The operations of an OpenAPI document as this repository writes it (and as PyYAML writes the
/// derived one): a path is a key indented two spaces under `paths:`, its methods four, their
/// fields six. Enough for the two documents here, not a YAML parser.
private struct Operation: Hashable, CustomStringConvertible {
    let method: String
    let path: String
    var operationID = ""
    var hasBody = false

    var route: String { "\(method) \(path)" }
    var description: String { "\(route) (\(operationID))" }

    static func all(in document: String) -> [Operation] {
        let methods: Set<String> = ["get", "put", "post", "delete", "head", "patch", "options", "trace"]
        var operations: [Operation] = []
        var (inPaths, path) = (false, "")
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") { inPaths = line == "paths:" }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":"), methods.contains(String(line.dropFirst(4).dropLast())) {
                operations.append(Operation(method: line.dropFirst(4).dropLast().uppercased(), path: path))
            } else if line.hasPrefix("      operationId: "), !operations.isEmpty {
                operations[operations.count - 1].operationID = String(line.dropFirst("      operationId: ".count))
            } else if line == "      requestBody:", !operations.isEmpty {
                operations[operations.count - 1].hasBody = true
            }
        }
        return operations
    }
}

@Suite("The contract and the routes: one set of operations")
struct ContractRouteTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// Written by hand, the rest generated (docs/backend.md says why).
    static let handWritten: Set<String> = ["uploadImage", "fetchNotification", "headNotification"]

    static func document() throws -> String {
        try String(contentsOf: root.appendingPathComponent("Sources/PushBackend/openapi.yaml"), encoding: .utf8)
    }

    @Test("Every route the server has is an operation of the document, and every operation a route")
    func routesAreTheDocument() async throws {
        let operations = Operation.all(in: try Self.document())
        #expect(operations.count >= 19 && operations.allSatisfy { !$0.operationID.isEmpty })
        let store = try await SQLiteBackendStore.open(dataDirectory: try temporaryDirectory())
        let authenticator = Authenticator(store: store, limits: LoginLimits())
        let hub = try NotificationHubClient(connectionString: fullAccess, hubName: "hub", endpointOverride: "http://127.0.0.1:9")
        let api = BackendAPI(
            store: store, authenticator: authenticator, delivery: HubDelivery(hub: hub, store: store), images: RichPushImages.registry,
            defaultImage: "sunset.png", sendQuota: RateLimit(burst: 1, perSecond: 1))
        let routes = Set(try api.router().routes.map { "\($0.method.rawValue) \($0.path.description)" })
        let documented = Set(operations.map(\.route))
        #expect(routes.subtracting(documented).isEmpty, "routes the document lacks: \(routes.subtracting(documented).sorted())")
        #expect(documented.subtracting(routes).isEmpty, "operations without a route: \(documented.subtracting(routes).sorted())")
        await authenticator.shutdown()
        await store.close()
    }

    @Test("The generated operations: a body is JSON and comes with POST, which ContractInput holds to the strict parser")
    func generatedBodies() throws {
        for operation in Operation.all(in: try Self.document()) where !Self.handWritten.contains(operation.operationID) {
            #expect(operation.hasBody == (operation.method == "POST"), "\(operation)")
        }
    }

    @Test("With a hub, the served document is the source without the Live Activity operations, which answer 501")
    func hubDocument() async throws {
        try await withBackend { backend in
            let served = try await backend.call(.GET, "/openapi.yaml", as: nil)
            #expect(served.status == 200 && served.header("Content-Type") == "application/yaml")
            let full = Set(Operation.all(in: try Self.document()))
            let kept = Set(Operation.all(in: served.text))
            #expect(kept.isSubset(of: full) && kept.count >= 13)
            for operation in full.subtracting(kept) {
                #expect(operation.path.hasPrefix("/api/activities") || operation.path.hasPrefix("/api/channels"), "\(operation)")
                let path = operation.path.replacingOccurrences(of: "{id}", with: String(repeating: "a", count: 32))
                let method = HTTPMethod(rawValue: operation.method)
                let reply = try await backend.call(method, path, as: "carol", json: operation.hasBody ? #"{"event":"end"}"# : nil)
                #expect(reply.status == 501 && reply.errorCode == "apnsDeliveryRequired", "\(operation) → \(reply.status) \(reply.text)")
            }
        }
    }

    @Test("Generated answers go out as written: Location unescaped, compact JSON in a stable order, Accept disregarded")
    func generatedAnswers() async throws {
        try await withBackend { backend in
            let created = try await backend.call(.POST, "/api/notifications", as: "alice", json: #"{"kind": "secure", "payload": "x"}"#)
            let id = try #require(try created.json().root["id"]?.string)
            #expect(created.status == 201 && created.header("Location") == "/api/notifications/\(id)")
            #expect(created.text == #"{"id":"\#(id)"}"#)
            let registered = try await backend.call(
                .POST, "/api/register", as: "alice", headers: [("Accept", "text/html")],
                json: #"{"deviceToken": "\#(String(repeating: "ab", count: 32))"}"#)
            #expect(
                registered.status == 201 && registered.text.hasPrefix(#"{"id":""#)
                    && registered.text.hasSuffix(#"","platform":"apns","reachable":true}"#))
        }
    }

    @Test("The generated server and the hub's document are from the contract as it stands (scripts/generate-openapi)")
    func generatedServerIsCurrent() throws {
        let contract = try Data(contentsOf: Self.root.appendingPathComponent("Sources/PushBackend/openapi.yaml"))
        let digest = SHA256.hash(data: contract).map { String(format: "%02x", $0) }.joined()
        let generated = Self.root.appendingPathComponent("Sources/PushBackend/Generated")
        let files = try FileManager.default.contentsOfDirectory(atPath: generated.path)
        #expect(files.contains("Server.swift") && files.contains("openapi-hub.yaml"))
        for file in files {
            let text = try String(contentsOf: generated.appendingPathComponent(file), encoding: .utf8)
            #expect(
                text.contains("openapi.yaml SHA-256: \(digest)\n"), "\(file) is from another version of openapi.yaml: run scripts/generate-openapi")
        }
    }
}
