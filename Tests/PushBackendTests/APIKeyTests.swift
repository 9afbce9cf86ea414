import Foundation
import NIOHTTP1
import PushBackend
import PushClient
import PushCore
import PushTestSupport
import Synchronization
import Testing

/// API keys (`Authorization: Bearer pck_…`): a key acts as its owner, is read on every request,
/// and a wrong one spends its client's budget.
@Suite("push-backend API keys")
struct APIKeyTests {
    /// A key of `owner`, added to the store in `directory` (a second connection beside the server's).
    func addKey(for owner: String, role: UserRole, in directory: String) async throws -> (text: String, id: String) {
        let store = try await SQLiteBackendStore.open(dataDirectory: directory)
        if try await store.user(named: owner) == nil { try await store.addUser(UserRecord(name: owner, passwordHash: "!", role: role)) }
        let key = APIKey.generate(owner: owner)
        try await store.addAPIKey(key.record)
        await store.close()
        return (key.text, key.record.id)
    }

    func revoke(_ id: String, in directory: String) async throws {
        let store = try await SQLiteBackendStore.open(dataDirectory: directory)
        #expect(try await store.removeAPIKey(id: id))
        await store.close()
    }

    func bearer(_ key: String) -> [(String, String)] { [("Authorization", "Bearer " + key)] }

    @Test("A key acts as its owner: a service's sends, a user's list and registrations; revoked, it is refused on the next request")
    func actsAsOwner() async throws {
        let directory = try temporaryDirectory()
        try await withBackend(dataDirectory: directory) { backend in
            let billing = try await addKey(for: "billing", role: .sender, in: directory)
            let sent = try await backend.call(
                .POST, "/api/notifications", as: nil, headers: bearer(billing.text),
                json: #"{"to": "alice", "kind": "rich", "message": "invoice ready"}"#)
            #expect(sent.status == 201, "\(sent.text)")
            // The service's user has no password: Basic never lets it in.
            #expect(try await backend.call(.GET, "/api/notifications", as: "billing", password: "!").status == 401)

            let alice = try await addKey(for: "alice", role: .user, in: directory)
            let list = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(alice.text))
            #expect(list.status == 200 && list.text.contains("invoice ready"), "\(list.text)")
            // The image, read with the key, its owner and the notification in one statement; the
            // sender's key is not its recipient.
            let id = try #require(try sent.json().root["id"]?.string)
            let image = try await backend.call(.GET, "/api/notifications/\(id)", as: nil, headers: bearer(alice.text))
            #expect(image.status == 200 && image.header("Content-Type") == "image/png", "\(image.status)")
            #expect(try await backend.call(.GET, "/api/notifications/\(id)", as: nil, headers: bearer(billing.text)).status == 404)
            let token = String(repeating: "3c", count: 32)
            let registered = try await backend.call(
                .POST, "/api/register", as: nil, headers: bearer(alice.text), json: #"{"deviceToken": "\#(token)"}"#)
            #expect(registered.status == 201)
            // A user key cannot do what the user cannot: notify someone else.
            let refused = try await backend.call(
                .POST, "/api/notifications", as: nil, headers: bearer(alice.text), json: #"{"to": "carol", "kind": "rich", "message": "x"}"#)
            #expect(refused.status == 403)

            try await revoke(alice.id, in: directory)
            let revoked = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(alice.text))
            #expect(revoked.status == 401 && revoked.text.contains("unknown or revoked API key"))
            let challenges = revoked.headers["WWW-Authenticate"]
            #expect(challenges.contains { $0.hasPrefix("Basic ") } && challenges.contains { $0.hasPrefix("Bearer ") }, "\(challenges)")
            // The other key still works.
            #expect(try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(billing.text)).status == 200)
        }
    }

    @Test("A malformed, unknown or wrong key is refused, and spends the client's budget of login checks")
    func wrongKeys() async throws {
        let directory = try temporaryDirectory()
        try await withBackend(
            dataDirectory: directory, configure: { $0.logins = LoginLimits(perAddress: RateLimit(burst: 5, perSecond: 0.001)) }
        ) { backend in
            let key = try await addKey(for: "billing", role: .sender, in: directory)
            let id = String(key.text.dropFirst(4).prefix(16))
            let wrongSecret = "pck_\(id)_" + String(repeating: "0", count: 64)
            let malformed = [
                "pck_\(id)", String(key.text.dropLast()), key.text.uppercased(), "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.",
                "pck_" + String(repeating: "0", count: 16) + "_" + String(repeating: "0", count: 64),
            ]
            for text in [wrongSecret] + malformed.prefix(4) {
                let reply = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(text))
                #expect(reply.status == 401, "\(text): \(reply.status) \(reply.text)")
            }
            // Five refused: the sixth wrong key from this address waits.
            let limited = try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(malformed[4]))
            #expect(limited.status == 429 && limited.header("Retry-After") != nil, "\(limited.status)")
            // A right key spends nothing, and still works.
            #expect(try await backend.call(.GET, "/api/notifications", as: nil, headers: bearer(key.text)).status == 200)
        }
    }

    @Test(
        "PushClient with a token: a refused token is renewed once and the call sent again, a body too; nil or a token that could end its header sends nothing"
    )
    func pushClientToken() async throws {
        let directory = try temporaryDirectory()
        try await withBackend(dataDirectory: directory, overSockets: true) { backend in
            let key = try await addKey(for: "alice", role: .user, in: directory)
            let old = try await addKey(for: "alice", role: .user, in: directory)
            try await revoke(old.id, in: directory)
            let server = try #require(URL(string: backend.base))

            let asked = Mutex<[Bool]>([])
            let renewing = PushBackendClient(serverURL: server) { renew in
                asked.withLock { $0.append(renew) }
                return renew ? key.text : old.text
            }
            #expect(try await renewing.notifications(within: .seconds(30)).isEmpty)
            #expect(asked.withLock { $0 } == [false, true])
            let registration = try await renewing.registerDevice(token: [UInt8](repeating: 0xA5, count: 32), within: .seconds(30))
            #expect(registration.reachable && asked.withLock { $0 } == [false, true, false, true])

            let calls = Mutex(0)
            let refused = PushBackendClient(serverURL: server) { _ in
                calls.withLock { $0 += 1 }
                return old.text
            }
            await #expect(throws: PushClientError.unauthorized) { try await refused.notifications(within: .seconds(30)) }
            #expect(calls.withLock { $0 } == 2)

            let signedOut = PushBackendClient(serverURL: server) { _ in nil }
            await #expect(throws: PushClientError.unauthorized) { try await signedOut.notifications(within: .seconds(30)) }
            let injecting = PushBackendClient(serverURL: server) { _ in key.text + "\r\nX-Admin: 1" }
            await #expect(throws: PushClientError.credentialsUnavailable) { try await injecting.notifications(within: .seconds(30)) }
        }
    }

    @Test("Each scheme can be switched off: a request in it is refused, and a 401 offers only the other")
    func schemesOff() async throws {
        for (schemes, offered) in [(AuthenticationSchemes.apiKeys, "Bearer "), (.basic, "Basic ")] {
            let directory = try temporaryDirectory()
            try await withBackend(dataDirectory: directory, configure: { $0.authentication = schemes }) { backend in
                let key = try await addKey(for: "alice", role: .user, in: directory)
                let basic = try await backend.call(.GET, "/api/notifications", as: "alice")
                let bearer = try await backend.call(.GET, "/api/notifications", as: nil, headers: self.bearer(key.text))
                let (on, off) = schemes == .basic ? (basic, bearer) : (bearer, basic)
                #expect(on.status == 200)
                #expect(off.status == 401 && off.text.contains("off on this server"), "\(off.text)")
                #expect(off.headers["WWW-Authenticate"].map { $0.hasPrefix(offered) } == [true], "\(off.headers["WWW-Authenticate"])")
                let none = try await backend.call(.GET, "/api/notifications", as: nil)
                #expect(none.status == 401 && none.headers["WWW-Authenticate"].count == 1)
            }
        }
    }
}
