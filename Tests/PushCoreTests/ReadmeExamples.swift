import PushCore
import PushTestSupport
import RichPushImages
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The API tour in README.md, verbatim, so that it keeps compiling and doing what it says.
@Suite("README examples")
struct ReadmeExamples {
    @Test("build, fit, encode")
    func build() throws {
        // Build a payload.
        var payload = APNsPayload(
            aps: APNsAPS(
                alert: .fields(APNsAlertFields(title: "Game Request", body: "Bob wants to play poker")),
                badge: 3, sound: .named("bingbong.aiff"), interruptionLevel: .timeSensitive))
        payload["gameID"] = "12345678"

        // Encode into a buffer you keep and reuse: no allocation per payload.
        var buffer: [UInt8] = []
        buffer.removeAll(keepingCapacity: true)
        try payload.encode(into: &buffer)  // throws payloadTooLarge over 4096 bytes

        // The exact size without encoding, and shortening to fit.
        let size = try payload.encodedSize()
        let report = try payload.fit(limit: APNsPushType.alert.payloadLimit, options: APNsFitOptions(cutAtWordBoundary: true))
        print(size, report.cuts)

        // The silent pushes of the rich-push and secure-push flows, and their headers.
        let rich = APNsPayload.silentRichPush(richId: "4f1c2a9e", richType: "img", richMessage: "New photo")
        let headers = APNsHeaders(for: rich, topic: "com.example.app")
        try headers.validate()
        print(headers.fields)  // apns-push-type: background, apns-priority: 5, apns-topic: …

        #expect(
            String(decoding: buffer, as: UTF8.self)
                == #"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker"},"badge":3,"sound":"bingbong.aiff","interruption-level":"time-sensitive"},"gameID":"12345678"}"#
        )
        #expect(size == buffer.count)
        #expect(headers.fields.map(\.value) == ["background", "5", "com.example.app"])
    }

    @Test("parse, read, decode, lint")
    func parse() throws {
        let bytes = Array(#"{"aps":{"alert":"Hi","badge":2},"richId":"4f1c"}"#.utf8)

        // One parser per task, reused: its tape is recycled once the last document is gone.
        var parser = JSONParser()
        let document = try parser.parse(bytes)

        // Zero-copy reads: strings and numbers stay byte ranges until asked for.
        let badge = document.root["aps"]?["badge"]?.int  // 2
        let richId = document.root["richId"]?.string  // "4f1c"

        // Members in document order; a key's bytes without making a String.
        let keyBytes = document.root.members.reduce(0) { $0 + ($1.key.withRawStringBytes { $0.count } ?? 0) }
        // Every key and value at any depth, in document order, straight off the tape (no recursion).
        let strings = document.root.descendants.filter { $0.kind == .string }.count  // 6

        // The typed model, APNs lint, and the canonical (minified, lossless) form.
        let model = try APNsPayload(decoding: document)
        let diagnostics = APNsLinter.lint(document, pushType: .alert)
        let canonical = document.canonicalBytes()

        // Straight from bytes to the model or the findings, reusing the parser.
        let count = document.root.count
        let decoded = try APNsPayload(decoding: bytes, parser: &parser)
        let findings = try APNsLinter.lint(bytes, pushType: .background, parser: &parser)

        // APNs fields typed, in place, no allocation: the view lives only inside the closure, and exists
        // only for a payload lint finds no error in (otherwise `read` throws that error).
        let (title, isShort) = try APNsPayloadView.read(bytes, parser: &parser) { payload in
            guard case .text(let alert) = payload.aps.alert else { return ("", false) }
            return (alert.string, alert == "Hi")  // compares the bytes in place; `.string` makes a String
        }
        #expect(title == "Hi" && isShort)

        #expect(count == 2 && decoded == model && findings.map(\.code) == [.pushTypeMismatch])
        #expect(badge == 2 && richId == "4f1c" && keyBytes == 9 && strings == 6)
        #expect(model.aps.alert == .text("Hi") && model["richId"] == "4f1c")
        #expect(diagnostics.isEmpty)
        #expect(canonical == bytes)
    }

    @Test("errors")
    func errors() {
        let bytes = Array("{\"aps\": {\"badge\": 01}}".utf8)
        var parser = JSONParser()
        do {
            _ = try parser.parse(bytes)
        } catch {
            // error.code == .invalidNumber, error.offset == 19
            print(error.rendered(in: bytes, fileName: "payload.json"))
            // payload.json: error: invalidNumber at byte 19 (line 1, column 20): leading zeros are not allowed
            #expect(error.code == .invalidNumber && error.offset == 19)
            #expect(
                error.rendered(in: bytes, fileName: "payload.json")
                    == "payload.json: error: invalidNumber at byte 19 (line 1, column 20): leading zeros are not allowed")
        }
    }
}

@Suite("README SAS example")
struct ReadmeSASExample {
    @Test("sign, cache, verify, inspect")
    func sas() throws {
        let connection = try ConnectionString(
            "Endpoint=sb://my-ns.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey=c2VjcmV0")
        let signer = SASSigner(connection)  // HMAC-SHA256 keyed once, here
        let token = try signer.token(for: "https://my-ns.servicebus.windows.net/my-hub", ttl: 1200)

        let cache = SASTokenCache(signer: signer)  // ttl 20 min, refreshMargin 2 min, clock injectable
        let authorization = try cache.token(for: "https://my-ns.servicebus.windows.net/my-hub")

        let verifier = SASVerifier(connection, clockSkew: 60)
        let info = try verifier.verify(authorization, uri: "https://my-ns.servicebus.windows.net/my-hub/messages/", now: SASClock.system.now())
        print(try SASVerifier.inspect(authorization))

        #expect(token.hasPrefix("SharedAccessSignature sr=https%3A%2F%2Fmy-ns.servicebus.windows.net%2Fmy-hub&sig="))
        #expect(info.keyName == "DefaultFullSharedAccessSignature")
    }
}

@Suite("README resources example")
struct ReadmeResourcesExample {
    @Test("chunks, file digests, response plan")
    func resources() async throws {
        var sent: [(offset: Int, count: Int)] = []
        func send(_ bytes: ArraySlice<UInt8>, offset: Int, digest: UInt64?) { sent.append((offset, bytes.count)) }

        let image = try RichPushImages.registry.resource(named: "sunset.png")
        #expect(image.contentType == .png)
        #expect(image.entityTag.headerValue == "\"\(XXH3.hash128(image.bytes).hexString)\"")

        for chunk in try image.chunks(size: 4096, digests: true) {
            send(chunk.bytes, offset: chunk.offset, digest: chunk.digest!)
        }
        #expect(sent.map(\.offset) == [0, 4096] && sent.map(\.count).reduce(0, +) == image.count)

        let path = "/tmp/pushcore-readme-\(UInt64.random(in: 0...UInt64.max)).heic"
        try writeFile(path, image.bytes)
        defer { unlink(path) }
        sent = []
        let file = try FileResource(path: path)
        for try await chunk in try file.chunks() { send(chunk.bytes, offset: chunk.offset, digest: nil) }
        let digests = try file.digests()
        #expect(sent.count == 1 && digests.hash128 == image.digest)

        let plan = ResourceResponse(
            length: image.count, entityTag: image.entityTag, contentType: image.contentType,
            range: "bytes=0-1023", ifNoneMatch: nil, ifRange: nil)
        #expect(plan.status == 206 && plan.bodyRange == 0..<1024)
        #expect(plan.headers.map(\.name) == ["ETag", "Accept-Ranges", "Content-Type", "Content-Length", "Content-Range"])
        #expect(plan.header("Content-Range") == "bytes 0-1023/\(image.count)" && image.count == 6486)
    }
}
