import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import PushBackend
import PushClient
import PushCore
import PushTestSupport
import RichPushImages
import Synchronization
import Testing

/// Images users upload (`POST /api/images`) for their rich notifications: stored in chunks as the
/// body arrives, served as the embedded images are, cached, swept, and counted against quotas.
@Suite("push-backend image uploads")
struct ImageUploadTests {
    static let png = try! RichPushImages.registry.resource(named: "sunset.png").bytes
    /// Enough of each format for its signature, and then some.
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<3000).map { UInt8($0 % 251) }
    static let gif: [UInt8] = Array("GIF89a".utf8) + (0..<700_000).map { UInt8($0 % 241) }

    func upload(_ bytes: [UInt8], as contentType: String, by user: String = "alice", to backend: some BackendEndpoint) async throws -> Reply {
        var request = HTTPClientRequest(url: "/api/images")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(user):\(password(user))".utf8).base64EncodedString())
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .bytes(ByteBuffer(bytes: bytes))
        return try await backend.execute(request)
    }

    func storedImages(in directory: String) async throws -> [ImageRecord] {
        let store = try await SQLiteBackendStore.open(dataDirectory: directory)
        var images: [ImageRecord] = []
        for user in ["alice", "bob", "news"] { images += try await store.images(owner: user) }
        await store.close()
        return images
    }

    @Test("An upload of each type answers its id, size, ETag and digest; a rich notification names it and is served with ranges")
    func uploadsEachType() async throws {
        let directory = try temporaryDirectory()
        try await withBackend(dataDirectory: directory) { backend in
            for (bytes, type) in [(Self.png, "image/png"), (Self.jpeg, "image/jpeg"), (Self.gif, "image/gif; charset=binary")] {
                let reply = try await upload(bytes, as: type, to: backend)
                #expect(reply.status == 201, "\(type): \(reply.text)")
                let root = try reply.json().root
                let id = try #require(root["id"]?.string)
                let digest = "sha-256=:\(Data(SHA256.hash(data: bytes)).base64EncodedString()):"
                #expect(root["size"]?.int == bytes.count && root["digest"]?.string == digest && reply.header("Repr-Digest") == digest)
                #expect(reply.header("ETag") == root["etag"]?.string && reply.header("Location") == "/api/images/\(id)")
                #expect(root["contentType"]?.string == String(type.prefix { $0 != ";" }))

                let sent = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "mine", "resource": "\#(id.uppercased())"}"#)
                let image = try await backend.call(.GET, "/api/notifications/\(sent)", as: "alice")
                #expect(image.status == 200 && image.body == bytes && image.header("Repr-Digest") == digest)
                #expect(image.header("Content-Type") == String(type.prefix { $0 != ";" }) && image.header("ETag") == reply.header("ETag"))
                let range = try await backend.call(.GET, "/api/notifications/\(sent)", as: "alice", headers: [("Range", "bytes=2-9")])
                #expect(range.status == 206 && range.body == Array(bytes[2...9]))
                let again = try await backend.call(
                    .GET, "/api/notifications/\(sent)", as: "alice", headers: [("If-None-Match", reply.header("ETag")!)])
                #expect(again.status == 304)
            }
            let listed = try await backend.call(.GET, "/api/images", as: "alice")
            let images = try #require(try listed.json().root["images"])
            #expect(listed.status == 200 && images.count == 3, "\(listed.text)")
            #expect(try await backend.call(.GET, "/api/images", as: "bob").text == #"{"images":[]}"#)

            // Another user cannot name it, nor delete it; its owner deletes it, and what named it is gone.
            let id = try #require(images[0]?["id"]?.string)
            let theirs = try await backend.call(
                .POST, "/api/notifications", as: "bob", json: #"{"kind": "rich", "message": "x", "resource": "\#(id)"}"#)
            #expect(theirs.status == 422 && theirs.errorCode == "unknownResource")
            #expect(try await backend.call(.DELETE, "/api/images/\(id)", as: "bob").status == 404)
            let sent = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "x", "resource": "\#(id)"}"#)
            #expect(try await backend.call(.DELETE, "/api/images/\(id)", as: "alice").status == 204)
            let gone = try await backend.call(.GET, "/api/notifications/\(sent)", as: "alice")
            #expect(gone.status == 410 && gone.errorCode == "resourceGone")
            #expect(try await storedImages(in: directory).count == 2)
        }
    }

    @Test("A type the bytes are not, a type not taken, an empty body, an oversize one: refused, nothing kept")
    func refusals() async throws {
        let directory = try temporaryDirectory()
        try await withBackend(dataDirectory: directory, configure: { $0.images.maximumBytes = 4000 }) { backend in
            let mismatch = try await upload(Self.jpeg, as: "image/png", to: backend)
            #expect(mismatch.status == 422 && mismatch.errorCode == "invalidImage", "\(mismatch.text)")
            let text = try await upload(Array("GIF89a, or so it says".utf8), as: "text/plain", to: backend)
            #expect(text.status == 415 && text.errorCode == "unsupportedMediaType")
            let webp = try await upload(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8), as: "image/webp", to: backend)
            #expect(webp.status == 415)
            let empty = try await upload([], as: "image/gif", to: backend)
            #expect(empty.status == 422 && empty.errorCode == "invalidImage")
            let short = try await upload(Array(Self.png.prefix(5)), as: "image/png", to: backend)
            #expect(short.status == 422)
            // Refused by its length, before anything is read or stored.
            let oversize = try await upload(Self.gif, as: "image/gif", to: backend)
            #expect(oversize.status == 413 && oversize.errorCode == "bodyTooLarge", "\(oversize.text)")
            #expect(try await storedImages(in: directory).isEmpty)
        }
    }

    @Test("Without a length, an upload is cut off at the limit; a truncated one leaves nothing")
    func streamedRefusals() async throws {
        let directory = try temporaryDirectory()
        try await withBackend(dataDirectory: directory, overSockets: true, configure: { $0.images.maximumBytes = 600_000 }) { backend in
            let authorization = "Basic " + Data("alice:\(password("alice"))".utf8).base64EncodedString()
            // Chunked, past the limit: 413 once the limit is passed.
            let chunked = try RawConnection(port: backend.port)
            try chunked.send(
                "POST /api/images HTTP/1.1\r\nHost: x\r\nAuthorization: \(authorization)\r\nContent-Type: image/gif\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            )
            let part = String(repeating: "a", count: 100_000)
            try chunked.send("6\r\nGIF89a\r\n")
            var answer = ""
            for _ in 0..<8 {
                try? chunked.send(String(100_000, radix: 16) + "\r\n" + part + "\r\n")
            }
            try? chunked.send("0\r\n\r\n")
            answer = String(decoding: chunked.readUntilClosed(timeout: .seconds(60)).bytes, as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(200))")
            chunked.close()
            #expect(try await storedImages(in: directory).isEmpty)

            // Half of what the length promised, then the connection closes.
            let truncated = try RawConnection(port: backend.port)
            try truncated.send(
                "POST /api/images HTTP/1.1\r\nHost: x\r\nAuthorization: \(authorization)\r\nContent-Type: image/gif\r\nContent-Length: 500000\r\n\r\nGIF89a"
                    + String(repeating: "b", count: 300_000))
            // Under way: its row is there, and its first chunk.
            var left: [ImageRecord] = []
            for _ in 0..<200 where left.isEmpty {
                left = try await storedImages(in: directory)
                try await Task.sleep(for: .milliseconds(25))
            }
            #expect(left.count == 1 && left.allSatisfy { !$0.complete }, "\(left)")
            truncated.close()
            for _ in 0..<200 where !left.isEmpty {
                try await Task.sleep(for: .milliseconds(25))
                left = try await storedImages(in: directory)
            }
            #expect(left.isEmpty, "\(left)")
            // The server is fine: the next upload works.
            #expect(try await upload(Self.jpeg, as: "image/jpeg", to: backend).status == 201)

            // A client that asks to be told to go on (curl does, for a body over 1 MiB) is told at once.
            let asking = try RawConnection(port: backend.port)
            try asking.send(
                "POST /api/images HTTP/1.1\r\nHost: x\r\nAuthorization: \(authorization)\r\nContent-Type: image/jpeg\r\nContent-Length: \(Self.jpeg.count)\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
            )
            var told = ""
            for _ in 0..<50 where !told.contains("\r\n\r\n") {
                told += String(decoding: asking.readUntilClosed(timeout: .milliseconds(200)).bytes, as: UTF8.self)
            }
            #expect(told == "HTTP/1.1 100 Continue\r\n\r\n", "\(told.debugDescription)")
            try asking.send(bytes: Self.jpeg)
            let final = String(decoding: asking.readUntilClosed(timeout: .seconds(30)).bytes, as: UTF8.self)
            #expect(final.hasPrefix("HTTP/1.1 201"), "\(final.prefix(100))")
        }
    }

    @Test("Quotas: images and bytes per user")
    func quotas() async throws {
        try await withBackend(configure: { $0.images = ImageLimits(maximumImagesPerUser: 2, maximumBytesPerUser: 10_000) }) { backend in
            #expect(try await upload(Self.jpeg, as: "image/jpeg", to: backend).status == 201)
            #expect(try await upload(Self.jpeg, as: "image/jpeg", to: backend).status == 201)
            let third = try await upload(Self.jpeg, as: "image/jpeg", to: backend)
            #expect(third.status == 409 && third.errorCode == "tooManyImages")
            let bob = try await upload(Array(Self.gif.prefix(9000)), as: "image/gif", by: "bob", to: backend)
            #expect(bob.status == 201)
            let over = try await upload(Array(Self.gif.prefix(2000)), as: "image/gif", by: "bob", to: backend)
            #expect(over.status == 409 && over.errorCode == "tooManyImages", "\(over.text)")
        }
    }

    @Test("A rich notification with an uploaded image, downloaded by PushClient with its digest checked")
    func throughPushClient() async throws {
        try await withBackend(overSockets: true) { backend in
            let uploaded = try await upload(Self.gif, as: "image/gif", to: backend)
            let id = try #require(try uploaded.json().root["id"]?.string)
            let sent = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "gif", "resource": "\#(id)"}"#)
            let file = try AppSideTests.destination()
            let image = try await AppSideTests.client(backend.base).downloadImage(
                id: sent, to: file, maximumBytes: 1 << 20, within: AppSideTests.patience)
            #expect(image.contentType == "image/gif" && image.byteCount == Self.gif.count)
            #expect(try Data(contentsOf: file) == Data(Self.gif))
        }
    }

    @Test("Served from memory once read: a hot image is read from the store once; the sweep removes what nothing names")
    func cacheAndSweep() async throws {
        let directory = try temporaryDirectory()
        try await withBackend(dataDirectory: directory) { backend in
            let uploaded = try await upload(Self.jpeg, as: "image/jpeg", to: backend)
            let id = try #require(try uploaded.json().root["id"]?.string)
            let sent = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "x", "resource": "\#(id)"}"#)
            #expect(try await backend.call(.GET, "/api/notifications/\(sent)", as: "alice").body == Self.jpeg)
            // Gone from the store behind the server's back: still served, from memory.
            let store = try await SQLiteBackendStore.open(dataDirectory: directory)
            #expect(try await store.deleteImage(id: id, owner: nil))
            #expect(try await backend.call(.GET, "/api/notifications/\(sent)", as: "alice").body == Self.jpeg)

            // The sweep: an image named by a notification stays; one nothing names goes after its grace.
            try await store.addImage(ImageRecord(id: String(repeating: "a", count: 32), owner: "alice", contentType: "image/png", createdAt: 0))
            try await store.addImage(ImageRecord(id: String(repeating: "b", count: 32), owner: "alice", contentType: "image/png", createdAt: 0))
            try await store.completeImage(id: String(repeating: "b", count: 32), size: 1, entityTag: "\"x\"", digest: "d")
            try await store.addImage(ImageRecord(id: String(repeating: "c", count: 32), owner: "alice", contentType: "image/png", createdAt: 0))
            try await store.completeImage(id: String(repeating: "c", count: 32), size: 1, entityTag: "\"x\"", digest: "d")
            _ = try await backend.notify(as: "alice", #"{"kind": "rich", "message": "x", "resource": "\#(String(repeating: "c", count: 32))"}"#)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(try await store.deleteUnusedImages(unreferencedBefore: now, incompleteBefore: now, limit: 10) == 2)
            #expect(try await store.images(owner: "alice").map(\.id) == [String(repeating: "c", count: 32)])
            await store.close()
        }
        // Many phones at once: one store read.
        let cache = UploadedImageCache(capacity: 1 << 20)
        final class Loads: Sendable { let count = Atomic<Int>(0) }
        let loads = Loads()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let image = try await cache.image(id: "hot") { () async throws(StoreError) in
                        loads.count.add(1, ordering: .relaxed)
                        try? await Task.sleep(for: .milliseconds(50))
                        return ImageUploadTests.served(Self.jpeg)
                    }
                    #expect(image?.bytes.readableBytes == Self.jpeg.count)
                }
            }
            try await group.waitForAll()
        }
        #expect(loads.count.load(ordering: .relaxed) == 1)
    }

    static func served(_ bytes: [UInt8]) -> BackendAPI.ServedImage {
        BackendAPI.ServedImage(
            bytes: ByteBuffer(bytes: bytes), entityTag: EntityTag(strong: XXH3.hash128(bytes)), contentType: .jpeg, digest: "sha-256=:x:")
    }

    @Test("Two instances on PostgreSQL serve the same upload")
    func twoInstancesOnPostgres() async throws {
        let url = try await TestPostgres.makeDatabase()
        let store = try await PostgresBackendStore.open(url: url, connectTimeout: .seconds(60))
        for name in ["alice", "news"] {
            try await store.addUser(
                UserRecord(
                    name: name, passwordHash: PasswordHash(hashing: password(name), parameters: .cheapForTests).encoded,
                    role: name == "news" ? .sender : .user))
        }
        await store.close()
        try await withBackend(configure: { $0.databaseURL = url }) { first in
            try await withBackend(configure: { $0.databaseURL = url }) { second in
                let uploaded = try await upload(Self.gif, as: "image/gif", by: "news", to: first)
                #expect(uploaded.status == 201, "\(uploaded.text)")
                let id = try #require(try uploaded.json().root["id"]?.string)
                let sent = try await second.notify(as: "news", #"{"kind": "rich", "message": "x", "resource": "\#(id)", "to": "alice"}"#)
                for backend in [first, second] {
                    let image = try await backend.call(.GET, "/api/notifications/\(sent)", as: "alice")
                    #expect(image.status == 200 && image.body == Self.gif && image.header("ETag") == uploaded.header("ETag"))
                }
                #expect(try await second.call(.GET, "/api/images", as: "news").text.contains(id))
            }
        }
    }
}
