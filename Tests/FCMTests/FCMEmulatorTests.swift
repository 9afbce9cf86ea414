import APNsEmulator
import AsyncHTTPClient
import FCM
import FCMEmulator
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Testing

/// The emulator as a client that is not ours sees it: raw HTTP/1.1 and HTTP/2 requests.
@Suite("FCM emulator: the token endpoint and messages:send as Google answers them", .serialized)
struct FCMEmulatorTests {
    struct Server {
        let emulator: FCMEmulator
        let base: String
        let http: HTTPClient

        func post(_ path: String, _ body: String, headers: [(String, String)] = []) async throws -> (Int, [String: Any]) {
            var request = HTTPClientRequest(url: base + path)
            request.method = .POST
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await http.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            let json = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
            return (Int(response.status.code), json)
        }

        func grant(_ assertion: String) async throws -> (Int, [String: Any]) {
            try await post(
                "/token", "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion,
                headers: [("content-type", "application/x-www-form-urlencoded")])
        }

        func send(_ body: String, token: String, project: String = "demo-project") async throws -> (Int, [String: Any]) {
            try await post(
                "/v1/projects/\(project)/messages:send", body, headers: [("authorization", "Bearer " + token), ("content-type", "application/json")])
        }
    }

    func withServer(
        httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic, allowsFaultInjection: Bool = true,
        _ body: (Server, FCMServiceAccount) async throws -> Void
    ) async throws {
        let account = try makeServiceAccount()
        let identity = try APNsEmulatorIdentity.generate()
        let emulator = FCMEmulator(serviceAccount: account, allowsFaultInjection: allowsFaultInjection)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let service = ServiceGroup(
            services: [try emulator.application(port: 0, identity: identity) { continuation.yield($0) }],
            logger: Logger(label: "fcm-emulator", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)])
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
            configuration.httpVersion = httpVersion
            let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            do {
                try await body(Server(emulator: emulator, base: "https://127.0.0.1:\(port)", http: http), account)
                try await http.shutdown()
            } catch {
                try? await http.shutdown()
                await service.triggerGracefulShutdown()
                throw error
            }
            await service.triggerGracefulShutdown()
        }
    }

    @Test("Assertions are checked as Google checks them: the key, the audience, the scope, the lifetime", arguments: [true, false])
    func assertions(http2: Bool) async throws {
        try await withServer(httpVersion: http2 ? .automatic : .http1Only) { server, account in
            let now = Int64(Date().timeIntervalSince1970)
            let good = try await server.grant(try account.assertion(scope: "https://www.googleapis.com/auth/firebase.messaging", issuedAt: now))
            #expect(good.0 == 200 && good.1["token_type"] as? String == "Bearer" && good.1["expires_in"] as? Int == 3600)
            let token = try #require(good.1["access_token"] as? String)
            // Firebase Admin asks for cloud-platform and firebase, not firebase.messaging.
            let broad = try await server.grant(
                try account.assertion(
                    scope: "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/firebase", issuedAt: now))
            #expect(broad.0 == 200)

            let stranger = try makeServiceAccount()
            let signedByAnother = try await server.grant(try stranger.assertion(scope: FCMAccessScope.messaging, issuedAt: now))
            #expect(signedByAnother.0 == 400 && signedByAnother.1["error"] as? String == "invalid_grant")
            var elsewhere = account
            elsewhere.tokenURI = "https://example.com/token"
            let wrongAudience = try await server.grant(try elsewhere.assertion(scope: FCMAccessScope.messaging, issuedAt: now))
            #expect(wrongAudience.0 == 400 && (wrongAudience.1["error_description"] as? String)?.contains("aud") == true)
            let otherScope = try await server.grant(try account.assertion(scope: "https://www.googleapis.com/auth/drive", issuedAt: now))
            #expect(otherScope.0 == 400 && otherScope.1["error"] as? String == "invalid_scope")
            let expired = try await server.grant(try account.assertion(scope: FCMAccessScope.messaging, issuedAt: now - 7200))
            #expect(expired.0 == 400 && expired.1["error"] as? String == "invalid_grant")
            let garbage = try await server.grant("not.a.jwt")
            #expect(garbage.0 == 400)
            let wrongGrant = try await server.post("/token", "grant_type=client_credentials")
            #expect(wrongGrant.0 == 400 && wrongGrant.1["error"] as? String == "unsupported_grant_type")
            #expect(server.emulator.tokenRequestCount == 8)

            // messages:send, over the same HTTP version.
            let target = registrationToken(1)
            let sent = try await server.send(#"{"message":{"token":"\#(target)","data":{"a":"b"}}}"#, token: token)
            #expect(sent.0 == 200 && sent.1["name"] as? String == "projects/demo-project/messages/1")
            #expect(server.emulator.deliveries.map(\.httpVersion) == [http2 ? "2" : "1.1"])
        }
    }

    @Test("messages:send refuses what FCM refuses, with Google's error body and its FcmError detail")
    func refusals() async throws {
        try await withServer { server, account in
            let now = Int64(Date().timeIntervalSince1970)
            let token = try #require(
                try await server.grant(try account.assertion(scope: FCMAccessScope.messaging, issuedAt: now)).1["access_token"] as? String)
            let target = registrationToken(2)
            func code(_ answer: (Int, [String: Any])) -> String? {
                let details = (answer.1["error"] as? [String: Any])?["details"] as? [[String: Any]]
                return details?.first?["errorCode"] as? String
            }
            func status(_ answer: (Int, [String: Any])) -> String? { (answer.1["error"] as? [String: Any])?["status"] as? String }

            let noBearer = try await server.post("/v1/projects/demo-project/messages:send", #"{"message":{"topic":"a"}}"#)
            #expect(noBearer.0 == 401 && status(noBearer) == "UNAUTHENTICATED" && code(noBearer) == nil)
            let otherProject = try await server.send(#"{"message":{"topic":"a"}}"#, token: token, project: "someone-else")
            #expect(otherProject.0 == 403 && status(otherProject) == "PERMISSION_DENIED")
            let notJSON = try await server.send("{", token: token)
            #expect(notJSON.0 == 400 && code(notJSON) == "INVALID_ARGUMENT")
            let twoTargets = try await server.send(#"{"message":{"topic":"a","token":"\#(target)"}}"#, token: token)
            #expect(twoTargets.0 == 400 && code(twoTargets) == "INVALID_ARGUMENT")
            let noTarget = try await server.send(#"{"message":{"data":{"a":"b"}}}"#, token: token)
            #expect(noTarget.0 == 400)
            let reserved = try await server.send(#"{"message":{"topic":"a","data":{"from":"x"}}}"#, token: token)
            #expect(reserved.0 == 400)
            let tooBig = try await server.send(#"{"message":{"topic":"a","data":{"a":"\#(String(repeating: "x", count: 4200))"}}}"#, token: token)
            #expect(tooBig.0 == 400)
            let malformedToken = try await server.send(#"{"message":{"token":"short","data":{}}}"#, token: token)
            #expect(malformedToken.0 == 400 && code(malformedToken) == "INVALID_ARGUMENT")
            server.emulator.setState(.unregistered, for: target)
            let unregistered = try await server.send(#"{"message":{"token":"\#(target)"}}"#, token: token)
            #expect(unregistered.0 == 404 && status(unregistered) == "NOT_FOUND" && code(unregistered) == "UNREGISTERED")
            let dryRun = try await server.send(#"{"validate_only":true,"message":{"topic":"a"}}"#, token: token)
            #expect(dryRun.0 == 200 && dryRun.1["name"] as? String == "projects/demo-project/messages/fake_message_id")
            #expect(server.emulator.deliveries.isEmpty)

            server.emulator.inject([.status(429, retryAfter: "7")])
            var request = HTTPClientRequest(url: server.base + "/v1/projects/demo-project/messages:send")
            request.method = .POST
            request.headers.add(name: "authorization", value: "Bearer " + token)
            request.body = .bytes(ByteBuffer(string: #"{"message":{"topic":"a"}}"#))
            let throttled = try await server.http.execute(request, timeout: .seconds(60))
            #expect(throttled.status.code == 429 && throttled.headers.first(name: "retry-after") == "7")
            server.emulator.revokeAccessTokens()
            let revoked = try await server.send(#"{"message":{"topic":"a"}}"#, token: token)
            #expect(revoked.0 == 401)
        }
    }

    @Test("With faults off (--demo) the hooks that change answers are not served; the read-only ones are")
    func demoHooks() async throws {
        try await withServer(allowsFaultInjection: false) { server, _ in
            for path in ["/_emulator/faults", "/_emulator/revoke"] {
                #expect(try await server.post(path, #"{"status":503}"#).0 == 404, "\(path)")
            }
            var request = HTTPClientRequest(url: server.base + "/_emulator/tokens/" + registrationToken(3))
            request.method = .PUT
            request.body = .bytes(ByteBuffer(string: #"{"state":"unregistered"}"#))
            #expect(try await server.http.execute(request, timeout: .seconds(60)).status.code == 404)
            let deliveries = try await server.http.execute(HTTPClientRequest(url: server.base + "/_emulator/deliveries"), timeout: .seconds(60))
            #expect(deliveries.status.code == 200)
        }
    }
}
