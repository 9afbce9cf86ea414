import AsyncHTTPClient
import Crypto
import Foundation
import HubEmulator
import NIOHTTP1
import NotificationHubs
import PushBackend
import PushCore
import PushTestSupport
import RichPushImages
import SQLiteNIO
import Synchronization
import Testing

@Suite("Reference backend: the flows end to end (in process through the router, real SQLite, the hub emulator)")
struct BackendFlowTests {
    @Test("Rich push: silent push built by the codec, image fetched by id with its content type and ETag, then read")
    func richPush() async throws {
        try await withBackend { backend in
            let phone = DeviceSimulator(user: "alice", backend: backend)
            try await phone.register()
            let message = "Say \"cheese\" \\ 😀👨‍👩‍👧 🇫🇷\nsecond line\ttab"
            let id = try await backend.notify(
                as: "bob", #"{"kind": "rich", "richType": "img", "message": \#(jsonString(message)), "resource": "sunset.png", "to": "alice"}"#)

            let push = try phone.lastPush()
            #expect(push.root["richId"]?.string == id && push.root["richType"]?.string == "img")
            #expect(push.root["richMessage"]?.string == message)
            #expect(push.root.count == 4)  // aps, richId, richType, richMessage: nothing else travels

            let image = try RichPushImages.registry.resource(named: "sunset.png")
            let reply = try await phone.fetch(id)
            #expect(reply.status == 200 && reply.body == image.bytes)
            #expect(reply.header("Content-Type") == "image/png" && reply.header("Content-Length") == String(image.count))
            #expect(reply.header("ETag") == image.entityTag.headerValue)

            // Fetched is not seen: read once the app says so, and only by the recipient.
            var list = try await backend.call(.GET, "/api/notifications", as: "alice").json()
            #expect(list.root["notifications"]?[0]?["read"]?.bool == false)
            #expect(try await backend.call(.PUT, "/api/notifications/\(id)/read", as: "bob").status == 404)
            #expect(try await backend.call(.PUT, "/api/notifications/\(id)/read", as: "alice").status == 204)
            #expect(try await backend.call(.PUT, "/api/notifications/\(id.uppercased())/read", as: "alice").status == 204)
            #expect(try await backend.call(.PUT, "/api/notifications/nothing/read", as: "alice").status == 404)
            list = try await backend.call(.GET, "/api/notifications", as: "alice").json()
            let item = try #require(list.root["notifications"]?[0])
            #expect(item["id"]?.string == id && item["kind"]?.string == "rich" && item["read"]?.bool == true)
            #expect(item["message"]?.string == message && item["from"]?.string == "bob" && item["resource"]?.string == "sunset.png")
        }
    }

    @Test("Rich alert: an alert with mutable-content, the message shown and shortened to fit, the item stored whole")
    func richAlert() async throws {
        try await withBackend { backend in
            let phone = DeviceSimulator(user: "alice", backend: backend)
            try await phone.register()
            let id = try await backend.notify(as: "alice", #"{"kind": "richAlert", "message": "Sunset at 8", "resource": "sunset.png"}"#)
            let delivery = try #require(backend.emulator.deliveries.last { $0.deviceHandle == phone.token })
            #expect(delivery.apnsHeaders["apns-push-type"] == "alert" && delivery.apnsHeaders["apns-priority"] == "10")
            var parser = JSONParser()
            let push = try parser.parse(delivery.payload)
            #expect(push.root["aps"]?["alert"]?.string == "Sunset at 8" && push.root["aps"]?["mutable-content"]?.int == 1)
            #expect(push.root["aps"]?["content-available"] == nil)
            #expect(push.root["richId"]?.string == id && push.root["richType"]?.string == "img" && push.root.count == 3)
            let image = try RichPushImages.registry.resource(named: "sunset.png")
            #expect(try await phone.fetch(id).body == image.bytes)

            // Too long for a silent push, but an alert's text is shortened; the list has it whole.
            let long = String(repeating: "é", count: 2100)
            let shortened = try await backend.notify(as: "alice", #"{"kind": "richAlert", "message": "\#(long)"}"#)
            let last = try #require(backend.emulator.deliveries.last)
            let text = try #require(try parser.parse(last.payload).root["aps"]?["alert"]?.string)
            #expect(text.hasSuffix("…") && long.hasPrefix(text.dropLast()) && text.utf8.count < 4096)
            let list = try await backend.call(.GET, "/api/notifications", as: "alice").json()
            #expect(list.root["notifications"]?[0]?["id"]?.string == shortened && list.root["notifications"]?[0]?["message"]?.string == long)
            #expect(list.root["notifications"]?[0]?["kind"]?.string == "rich")
        }
    }

    @Test("Secure push: the push carries only secureId; the text comes back as {\"Payload\": …}")
    func securePush() async throws {
        try await withBackend { backend in
            let phone = DeviceSimulator(user: "alice", backend: backend)
            try await phone.register()
            let secret = "Your code is 4242 — \"keep\" it \\ safe 🔐\n"
            let id = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": \#(jsonString(secret))}"#)

            let push = try phone.lastPush()
            #expect(push.root.count == 2 && push.root["secureId"]?.string == id)
            // The phrase, not "4242" alone, which a random hex id holds about once in 200 runs.
            #expect(!String(decoding: push.bytes, as: UTF8.self).contains("code is 4242"))

            let reply = try await phone.fetch(id)
            #expect(reply.status == 200 && reply.header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(reply.header("Cache-Control") == "no-store")
            let body = try reply.json()
            #expect(body.root.count == 1 && body.root["Payload"]?.string == secret)
            let list = try await backend.call(.GET, "/api/notifications", as: "alice").json()
            #expect(list.root["notifications"]?[0]?["read"]?.bool == false && list.root["notifications"]?[0]?["message"] == nil)
        }
    }

    @Test("Secure alert: an alert with mutable-content, secureId and a placeholder to localize; the payload stays home")
    func secureAlert() async throws {
        try await withBackend { backend in
            let phone = DeviceSimulator(user: "alice", backend: backend)
            try await phone.register()
            let id = try await backend.notify(as: "alice", #"{"kind": "secureAlert", "payload": "Door code 9090"}"#)
            func lastAlert() throws -> JSONDocument {
                let delivery = try #require(backend.emulator.deliveries.last { $0.deviceHandle == phone.token })
                #expect(delivery.apnsHeaders["apns-push-type"] == "alert" && delivery.apnsHeaders["apns-priority"] == "10")
                var parser = JSONParser()
                return try parser.parse(delivery.payload)
            }
            let push = try lastAlert()
            #expect(push.root.count == 2 && push.root["secureId"]?.string == id)
            #expect(push.root["aps"]?["mutable-content"]?.int == 1 && push.root["aps"]?["content-available"] == nil)
            #expect(push.root["aps"]?["alert"]?["loc-key"]?.string == "PUSH_SECURE_ALERT")
            #expect(push.root["aps"]?["alert"]?["body"]?.string == "You have a new message")
            #expect(!String(decoding: push.bytes, as: UTF8.self).contains("9090"))
            #expect(try await phone.fetch(id).json().root["Payload"]?.string == "Door code 9090")
            let list = try await backend.call(.GET, "/api/notifications", as: "alice").json()
            #expect(list.root["notifications"]?[0]?["kind"]?.string == "secure")

            let refusals = [
                #"{"kind": "secureAlert", "payload": "p", "placeholder": ""}"#,
                #"{"kind": "secureAlert", "payload": "p", "placeholder": "\#(String(repeating: "é", count: 257))"}"#,
                #"{"kind": "secureAlert", "payload": "p", "placeholder": 1}"#,
                #"{"kind": "secure", "payload": "p", "placeholder": "New"}"#,
                #"{"kind": "secureAlert", "message": "p"}"#,
            ]
            for json in refusals {
                let reply = try await backend.call(.POST, "/api/notifications", as: "alice", json: json)
                #expect(reply.status == 400, "\(json): \(reply.status) \(reply.text)")
            }
            let longest = String(repeating: "é", count: 256)
            _ = try await backend.notify(as: "alice", #"{"kind": "secureAlert", "payload": "p", "placeholder": "\#(longest)"}"#)
            #expect(try lastAlert().root["aps"]?["alert"]?["body"]?.string == longest)
        }
    }

    @Test("The default image, and ranges, If-None-Match and If-Range on the image")
    func conditionalAndRanges() async throws {
        try await withBackend { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "hi"}"#)
            let image = try RichPushImages.registry.resource(named: "pushcore-logo.png")
            let phone = DeviceSimulator(user: "alice", backend: backend)
            let etag = image.entityTag.headerValue

            // The digest of the whole image, on the whole image and on each part of it.
            let digest = "sha-256=:\(Data(SHA256.hash(data: image.bytes)).base64EncodedString()):"
            #expect(try await phone.fetch(id).header("Repr-Digest") == digest)
            let head = try await phone.fetch(id, headers: [("Range", "bytes=0-15")])
            #expect(head.status == 206 && head.body == Array(image.bytes[0..<16]))
            #expect(head.header("Repr-Digest") == digest)
            #expect(head.header("Content-Range") == "bytes 0-15/\(image.count)")
            let tail = try await phone.fetch(id, headers: [("Range", "bytes=-10")])
            #expect(tail.status == 206 && tail.body == Array(image.bytes.suffix(10)))
            let unsatisfiable = try await phone.fetch(id, headers: [("Range", "bytes=\(image.count)-")])
            #expect(unsatisfiable.status == 416 && unsatisfiable.header("Content-Range") == "bytes */\(image.count)")
            let notModified = try await phone.fetch(id, headers: [("If-None-Match", #""other", \#(etag)"#)])
            #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.header("ETag") == etag)
            let stale = try await phone.fetch(id, headers: [("Range", "bytes=0-15"), ("If-Range", #""stale""#)])
            #expect(stale.status == 200 && stale.body == image.bytes)
            let fresh = try await phone.fetch(id, headers: [("Range", "bytes=0-15"), ("If-Range", etag)])
            #expect(fresh.status == 206 && fresh.body.count == 16)
            let headOnly = try await backend.call(.HEAD, "/api/notifications/\(id)", as: "alice")
            #expect(headOnly.status == 200 && headOnly.body.isEmpty && headOnly.header("Content-Length") == String(image.count))

            // No fetch marks it read, whole, partial, refused or HEAD.
            let unread = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "later"}"#)
            #expect(try await phone.fetch(unread, headers: [("Range", "bytes=\(image.count)-")]).status == 416)
            #expect(try await backend.call(.HEAD, "/api/notifications/\(unread)", as: "alice").status == 200)
            let list = try await backend.call(.GET, "/api/notifications", as: "alice").json()
            #expect(list.root["notifications"]?[0]?["id"]?.string == unread && list.root["notifications"]?[0]?["read"]?.bool == false)
            #expect(list.root["notifications"]?[1]?["read"]?.bool == false)
        }
    }

    @Test("A message with quotes, backslashes, emoji and newlines arrives intact; one too long for 4096 bytes is refused, nothing stored or sent")
    func messageLimits() async throws {
        try await withBackend { backend in
            let phone = DeviceSimulator(user: "alice", backend: backend)
            try await phone.register()
            // Each "\u{1}" is written as a six-byte escape: the limit counts encoded bytes.
            let tricky = String(repeating: "\"\\\u{1}😀\n", count: 200)
            let id = try await backend.notify(as: "alice", #"{"kind": "rich", "message": \#(jsonString(tricky))}"#)
            #expect(try phone.lastPush().root["richMessage"]?.string == tricky && phone.lastPush().root["richId"]?.string == id)

            let long = String(repeating: "é", count: 2100)  // 4200 bytes
            let refused = try await backend.call(.POST, "/api/notifications", as: "alice", json: #"{"kind": "rich", "message": "\#(long)"}"#)
            #expect(refused.status == 413 && refused.errorCode == "payloadTooLarge")
            #expect(refused.text.contains("4096"))
            #expect(try phone.pushes().count == 1)
            let list = try await backend.call(.GET, "/api/notifications", as: "alice").json()
            #expect(list.root["notifications"]?.count == 1)
        }
    }
}

@Suite("Reference backend: authentication and authorisation")
struct BackendAccessTests {
    @Test("Wrong password, unknown user, no or malformed credentials: 401 with WWW-Authenticate")
    func unauthorized() async throws {
        try await withBackend { backend in
            let attempts: [(user: String?, password: String?, raw: String?)] = [
                ("alice", "wrong", nil), ("nobody", "x", nil), (nil, nil, nil), (nil, nil, "Basic !!!"), (nil, nil, "Bearer abc"),
                (nil, nil, "Basic " + Data("no-colon".utf8).base64EncodedString()), ("alice", "", nil), ("ALICE", "alice-pw", nil),
            ]
            let id = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": "kept"}"#)
            // The list behind the middleware; a notification, its headers and a malformed id
            // authenticated by the route itself: the credentials are refused before anything is looked up.
            let routes: [(HTTPMethod, String)] = [
                (.GET, "/api/notifications"), (.GET, "/api/notifications/\(id)"), (.HEAD, "/api/notifications/\(id)"),
                (.GET, "/api/notifications/bad"),
            ]
            for (method, path) in routes {
                // Past the list, the attempts that spend no login budget (which the list's have used
                // up for this address), and one wrong password on a notification.
                let spending: [(user: String?, password: String?, raw: String?)] = path == routes[1].1 ? [("alice", "wrong", nil)] : []
                for attempt in path == routes[0].1 ? attempts : attempts.filter({ $0.user == nil }) + spending {
                    let reply = try await backend.call(
                        method, path, as: attempt.user, password: attempt.password, headers: attempt.raw.map { [("Authorization", $0)] } ?? [])
                    #expect(reply.status == 401 && (method == .HEAD || reply.errorCode == "unauthorized"), "\(path) \(attempt)")
                    #expect(reply.header("WWW-Authenticate")?.hasPrefix("Basic realm=") == true)
                    #expect(!reply.text.contains("kept"))
                }
            }
            // The right password after a wrong one (nothing cached from the failure).
            #expect(try await backend.call(.GET, "/api/notifications", as: "alice").status == 200)
        }
    }

    @Test("Only the recipient reads a notification: others, unknown and malformed ids all get the same 404")
    func othersGet404() async throws {
        try await withBackend { backend in
            let id = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": "mine"}"#)
            #expect(id.utf8.count == 32 && id.utf8.allSatisfy { hexDigitValue($0) <= 15 })
            let other = try await backend.call(.GET, "/api/notifications/\(id)", as: "carol")
            let unknown = try await backend.call(.GET, "/api/notifications/\(String(repeating: "0", count: 32))", as: "carol")
            let malformed = try await backend.call(.GET, "/api/notifications/1", as: "carol")
            #expect(other.status == 404 && unknown.status == 404 && malformed.status == 404)
            #expect(other.body == unknown.body && unknown.body == malformed.body)
            // Even the sender role does not read other people's notifications.
            #expect(try await backend.call(.GET, "/api/notifications/\(id)", as: "bob").status == 404)
            let list = try await backend.call(.GET, "/api/notifications", as: "carol").json()
            #expect(list.root["notifications"]?.count == 0)
            // Ids are random: two in a row share no counter.
            let next = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": "again"}"#)
            #expect(next != id)
        }
    }

    @Test("Notifying others needs the sender role; an unknown recipient is refused")
    func senderRole() async throws {
        try await withBackend { backend in
            let forbidden = try await backend.call(
                .POST, "/api/notifications", as: "alice", json: #"{"kind": "secure", "payload": "x", "to": "carol"}"#)
            #expect(forbidden.status == 403 && forbidden.errorCode == "forbidden")
            #expect(try await backend.call(.GET, "/api/notifications", as: "carol").json().root["notifications"]?.count == 0)
            _ = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": "x", "to": "alice"}"#)
            let toCarol = try await backend.notify(as: "bob", #"{"kind": "secure", "payload": "x", "to": "carol"}"#)
            let unknown = try await backend.call(.POST, "/api/notifications", as: "bob", json: #"{"kind": "secure", "payload": "x", "to": "zed"}"#)
            #expect(unknown.status == 422 && unknown.errorCode == "unknownRecipient")

            // The sender lists what they sent, to whom; the payload stays the recipient's to fetch.
            let sent = try await backend.call(.GET, "/api/sent-notifications", as: "bob")
            #expect(sent.status == 200 && !sent.text.contains("payload"), "\(sent.text)")
            let items = try #require(try sent.json().root["notifications"])
            #expect(items.count == 1 && items[0]?["id"]?.string == toCarol && items[0]?["to"]?.string == "carol")
            #expect(items[0]?["kind"]?.string == "secure")
            #expect(try await backend.call(.GET, "/api/sent-notifications", as: "carol").json().root["notifications"]?.count == 0)
            let strict = try await backend.call(.GET, "/api/sent-notifications?limit=5&offset=1", as: "bob")
            #expect(strict.status == 400 && strict.errorCode == "invalidQuery")
        }
    }

    @Test("Registration creates or moves the device's installation, tagged username:{name}; only the owner deletes it")
    func registration() async throws {
        try await withBackend { backend in
            let phone = DeviceSimulator(user: "alice", backend: backend)
            let first = try await phone.register()
            var installations = backend.emulator.installations(in: "hub")
            #expect(installations.count == 1 && installations[0].installationID == RegistrationRecord.installationID(deviceToken: phone.token))
            #expect(installations[0].tags == ["username:alice"] && installations[0].pushChannel == phone.token)
            #expect(try await phone.register() != first)  // again: a fresh id for the same installation, not a second one
            #expect(backend.emulator.installations(in: "hub").count == 1)

            // The same phone, now signed in as carol: the installation moves to her.
            let moved = DeviceSimulator(user: "carol", backend: backend, token: phone.token)
            let id = try await moved.register()
            installations = backend.emulator.installations(in: "hub")
            #expect(installations.count == 1 && installations[0].tags == ["username:carol"])

            #expect(try await backend.call(.DELETE, "/api/register/\(id)", as: "alice").status == 404)
            #expect(try await backend.call(.DELETE, "/api/register/\(id)", as: "carol").status == 204)
            #expect(backend.emulator.installations(in: "hub").isEmpty)
            #expect(try await backend.call(.DELETE, "/api/register/\(id)", as: "carol").status == 404)

            let bad = try await backend.call(.POST, "/api/register", as: "alice", json: #"{"deviceToken": "not hex"}"#)
            #expect(bad.status == 400 && bad.errorCode == "invalidDeviceToken")
        }
    }
}

@Suite("Reference backend: bad requests get typed errors")
struct BackendRequestTests {
    @Test("Bodies, fields, methods, media types and paths")
    func badRequests() async throws {
        try await withBackend { backend in
            let cases: [(json: String, status: Int, code: String)] = [
                (#"{"kind": "rich", "message": "x",}"#, 400, "invalidJSON"),
                (#"[1]"#, 400, "invalidJSON"),
                (#"{"message": "x"}"#, 400, "missingField"),
                (#"{"kind": "loud"}"#, 400, "invalidField"),
                (#"{"kind": "rich"}"#, 400, "missingField"),
                (#"{"kind": "rich", "message": 5}"#, 400, "invalidField"),
                (#"{"kind": "rich", "message": "x", "mesage": "typo"}"#, 400, "unknownField"),
                // Both wrong: the generated decoding finds the missing key first.
                (#"{"kind": "rich", "mesage": "typo"}"#, 400, "missingField"),
                (#"{"kind": null, "message": "x"}"#, 400, "invalidField"),
                (#"{"kind": "rich", "message": "x", "to": null, "sendAt": null}"#, 201, ""),
                (#"{"kind": "rich", "message": "x", "message": "y"}"#, 400, "duplicateField"),
                (#"{"kind": "rich", "richType": "coupon", "message": "x"}"#, 422, "unsupportedRichType"),
                (#"{"kind": "rich", "message": "x", "resource": "../etc/passwd"}"#, 422, "unknownResource"),
                (#"{"kind": "secure", "payload": "\#(String(repeating: "s", count: 40_000))"}"#, 413, "payloadTooLarge"),
                (#"{"kind": "secure", "payload": "x", "to": "no:colons"}"#, 422, "unknownRecipient"),
            ]
            for (json, status, code) in cases {
                let reply = try await backend.call(.POST, "/api/notifications", as: "bob", json: json)
                #expect(reply.status == status && (reply.errorCode ?? "") == code, "\(json.prefix(60)) → \(reply.status) \(reply.text.prefix(200))")
            }
            let form = try await backend.call(
                .POST, "/api/notifications", as: "alice", json: "kind=rich", contentType: "application/x-www-form-urlencoded")
            #expect(form.status == 415 && form.errorCode == "unsupportedMediaType")
            let huge = try await backend.call(.POST, "/api/notifications", as: "alice", json: String(repeating: " ", count: 100_000))
            #expect(huge.status == 413 && huge.errorCode == "bodyTooLarge")
            let method = try await backend.call(.PUT, "/api/notifications", as: "alice")
            #expect(method.status == 405 && method.header("Allow") == "GET, POST")
            // Any method, usual or not, and before credentials are looked at.
            let query = try await backend.call(.RAW(value: "QUERY"), "/api/notifications/\(String(repeating: "a", count: 32))", as: nil)
            #expect(query.status == 405 && query.header("Allow") == "GET, HEAD" && query.errorCode == "methodNotAllowed")
            #expect(try await backend.call(.POST, "/openapi.yaml", as: nil).status == 405)
            for query in ["limit=5&sort=new", "limit=1&limit=2", "limit=", "&"] {
                let reply = try await backend.call(.GET, "/api/notifications?\(query)", as: "alice")
                #expect(reply.status == 400 && reply.errorCode == "invalidQuery", "\(query) → \(reply.status) \(reply.text)")
            }
            #expect(try await backend.call(.GET, "/api/notifications?limit=3", as: "alice").status == 200)
            #expect(try await backend.call(.GET, "/api/notifications?", as: "alice").status == 200)
            for path in ["/", "/api", "/api/other", "/api/notifications/a/b", "/api//notifications"] {
                #expect(try await backend.call(.GET, path, as: "alice").status == 404, "\(path)")
            }
            let limit = try await backend.call(.GET, "/api/notifications?limit=0", as: "alice")
            #expect(limit.status == 400 && limit.errorCode == "invalidQuery")
            #expect(backend.emulator.deliveries.isEmpty)
        }
    }

    @Test("A hub that refuses the push: 502 and the notification is withdrawn")
    func hubFailure() async throws {
        try await withBackend { backend in
            backend.emulator.inject([.status(403, retryAfter: nil)])
            let reply = try await backend.call(.POST, "/api/notifications", as: "alice", json: #"{"kind": "secure", "payload": "x"}"#)
            #expect(reply.status == 502 && reply.errorCode == "hubError")
            #expect(try await backend.call(.GET, "/api/notifications", as: "alice").json().root["notifications"]?.count == 0)
        }
    }
}

@Suite("Reference backend: storage")
struct BackendStorageTests {
    @Test("Restart keeps users, notifications and their read state")
    func restart() async throws {
        let directory = try temporaryDirectory()
        let created = Mutex<[String]>([])
        try await withBackend(dataDirectory: directory) { backend in
            let rich = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "before restart"}"#)
            let secure = try await backend.notify(as: "alice", #"{"kind": "secure", "payload": "kept"}"#)
            #expect(try await backend.call(.PUT, "/api/notifications/\(rich)/read", as: "alice").status == 204)
            created.withLock { $0 = [rich, secure] }
        }
        let ids = created.withLock { $0 }
        try #require(ids.count == 2)
        try await withBackend(dataDirectory: directory) { backend in
            let list = try await backend.call(.GET, "/api/notifications", as: "alice").json()
            #expect(list.root["notifications"]?.count == 2)
            #expect(list.root["notifications"]?[0]?["id"]?.string == ids[1] && list.root["notifications"]?[0]?["read"]?.bool == false)
            #expect(list.root["notifications"]?[1]?["id"]?.string == ids[0] && list.root["notifications"]?[1]?["read"]?.bool == true)
            let secure = try await backend.call(.GET, "/api/notifications/\(ids[1])", as: "alice").json()
            #expect(secure.root["Payload"]?.string == "kept")
        }
        let store = try await SQLiteBackendStore.open(dataDirectory: directory)
        #expect(try await store.schemaVersion() == SQLiteBackendStore.migrations.count)
        await store.close()
    }

    @Test("A database from a newer version is refused, not downgraded; a file where the directory should be is refused")
    func refusals() async throws {
        let directory = try temporaryDirectory()
        let store = try await SQLiteBackendStore.open(dataDirectory: directory)
        await store.close()
        let raw = try await SQLiteConnection.open(storage: .file(path: directory + "/" + SQLiteBackendStore.fileName))
        _ = try await raw.query("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)")
        try await raw.close()
        do throws(StoreError) {
            _ = try await SQLiteBackendStore.open(dataDirectory: directory)
            Issue.record("a newer schema was opened")
        } catch {
            #expect(error.code == .schemaTooNew)
        }
        do throws(StoreError) {
            _ = try await SQLiteBackendStore.open(dataDirectory: directory + "/" + SQLiteBackendStore.fileName)
            Issue.record("a file was used as the data directory")
        } catch {
            #expect(error.code == .unavailable)
        }
    }
}

/// `text` as a JSON string literal, written by PushCore.
func jsonString(_ text: String) -> String {
    var bytes: [UInt8] = []
    try? JSON.string(text).write(into: &bytes)
    return String(decoding: bytes, as: UTF8.self)
}
