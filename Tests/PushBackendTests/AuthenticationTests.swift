import Foundation
import HTTPTypes
import PushBackend
import PushCore
import PushTestSupport
import Testing

@Suite("Reference backend: password hashes and Basic credentials")
struct AuthenticationTests {
    @Test("scrypt hashes: salted, checked, stored in PHC form, and stored forms that ask too much are refused")
    func passwordHash() throws {
        let first = PasswordHash(hashing: "correct horse", parameters: .cheapForTests)
        let second = PasswordHash(hashing: "correct horse", parameters: .cheapForTests)
        #expect(first.encoded != second.encoded)  // fresh salt each time
        #expect(first.encoded.hasPrefix("$scrypt$ln=4,r=8,p=1$"))
        let stored = try #require(PasswordHash(encoded: first.encoded))
        #expect(stored == first && stored.matches("correct horse"))
        #expect(!stored.matches("correct horse ") && !stored.matches("") && !stored.matches("Correct horse"))
        #expect(PasswordHash(hashing: "ünïcødé 🔑", parameters: .cheapForTests).matches("ünïcødé 🔑"))
        #expect(PasswordHash.Parameters.standard.logRounds == 15)

        let salt = first.encoded.split(separator: "$")[2]
        let hash = first.encoded.split(separator: "$")[3]
        for malformed in [
            "", "plain", "$scrypt$ln=4,r=8,p=1$\(salt)", "$bcrypt$ln=4,r=8,p=1$\(salt)$\(hash)", "$scrypt$ln=4,r=8$\(salt)$\(hash)",
            "$scrypt$ln=4,r=8,p=1,x=2$\(salt)$\(hash)", "$scrypt$ln=4,ln=4,p=1$\(salt)$\(hash)", "$scrypt$ln=30,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=20,r=32,p=1$\(salt)$\(hash)", "$scrypt$ln=4,r=8,p=9$\(salt)$\(hash)", "$scrypt$ln=4,r=8,p=1$!!$\(hash)",
            "$scrypt$ln=4,r=8,p=1$\(salt)$\(hash.dropLast(4))", "$scrypt$ln=-1,r=8,p=1$\(salt)$\(hash)",
        ] {
            #expect(PasswordHash(encoded: malformed) == nil, "\(malformed)")
        }
    }

    @Test("Basic credentials: scheme in any case, the name up to the first colon, UTF-8, canonical base64 only")
    func basicCredentials() {
        func header(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }
        #expect(Authenticator.basicCredentials(header("alice:pw")).map { [$0.name, $0.password] } == ["alice", "pw"])
        #expect(Authenticator.basicCredentials(header("alice:p:w:")).map { [$0.name, $0.password] } == ["alice", "p:w:"])
        #expect(Authenticator.basicCredentials("bAsIc " + Data("a:b".utf8).base64EncodedString())?.name == "a")
        #expect(Authenticator.basicCredentials(header("zoë:ünï"))?.password == "ünï")
        #expect(Authenticator.basicCredentials(header("alice:"))?.password == "")
        for bad in [
            "Basic", "Basic ", "Bearer " + Data("a:b".utf8).base64EncodedString(), header("no colon"), "Basic YWxpY2U6cHc", "Basic YW*pY2U6cHc=",
            "Basic " + Data([0x61, 0x3A, 0xFF]).base64EncodedString(), "Basic " + String(repeating: "A", count: 5000),
        ] {
            #expect(Authenticator.basicCredentials(bad) == nil, "\(bad.prefix(40))")
        }
    }

    @Test("A remembered login stops working the moment the password changes or the user goes")
    func cacheFollowsTheStore() async throws {
        let store = try await SQLiteBackendStore.open(dataDirectory: try temporaryDirectory())
        let authenticator = Authenticator(store: store)
        func login(_ password: String) async -> Bool {
            let header = "Basic " + Data("alice:\(password)".utf8).base64EncodedString()
            do throws(APIError) {
                return try await authenticator.authenticate(authorization: header, client: "127.0.0.1").name == "alice"
            } catch {
                #expect(error.status == 401 && error.headers.contains { $0.0 == "WWW-Authenticate" })
                return false
            }
        }
        try await store.addUser(
            UserRecord(name: "alice", passwordHash: PasswordHash(hashing: "old", parameters: .cheapForTests).encoded, role: .user))
        #expect(await login("old"))
        #expect(await login("old"))  // from the cache
        #expect(await !login("new"))
        #expect(try await store.removeUser(named: "alice"))
        #expect(await !login("old"))
        try await store.addUser(
            UserRecord(name: "alice", passwordHash: PasswordHash(hashing: "new", parameters: .cheapForTests).encoded, role: .sender))
        #expect(await !login("old"))
        #expect(await login("new"))
        // Many first logins at once with the same credentials (a client opening 50 connections)
        // share one full-strength check, spend one check of the budgets (10), and all succeed.
        try await store.addUser(UserRecord(name: "bob", passwordHash: PasswordHash(hashing: "bob-pw").encoded, role: .user))
        let header = "Basic " + Data("bob:bob-pw".utf8).base64EncodedString()
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask { (try? await authenticator.authenticate(authorization: header, client: "127.0.0.1"))?.name == "bob" }
            }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(results == 50)
        await authenticator.shutdown()
        await store.close()
    }
}
