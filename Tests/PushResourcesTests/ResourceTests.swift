import PushResources
import PushTestSupport
import RichPushImages
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func expectResourceError(
    _ code: ResourceError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        #expect((error as? ResourceError)?.code == code, "\(error)", sourceLocation: sourceLocation)
    }
}

@Suite("Embedded resources and chunks")
struct EmbeddedResourceTests {
    @Test("The embedded images are real PNGs, found by name, with content type and ETag")
    func embeddedImages() throws {
        let registry = RichPushImages.registry
        #expect(registry.names == ["pushcore-logo.png", "sunset.png"])
        for name in registry.names {
            let image = try registry.resource(named: name)
            #expect(image.contentType == .png)
            #expect(image.count > 100)
            // IHDR is the first chunk of every PNG, right after the signature.
            #expect(Array(image.bytes[12..<16]) == Array("IHDR".utf8))
            #expect(image.entityTag.headerValue == "\"\(XXH3.hash128(image.bytes).hexString)\"")
            #expect(image.entityTag == image.entityTag)
        }
    }

    @Test(
        "Names cannot escape the registry",
        arguments: [
            "", ".", "..", "../sunset.png", "/etc/passwd", "images/sunset.png", "sunset.png\u{0}", "..\\sunset.png",
            ".hidden", "sun set.png", "sunset.png/", "%2e%2e", String(repeating: "a", count: 256), "ｓunset.png",
        ])
    func traversalRefused(name: String) {
        expectResourceError(.invalidName) { _ = try RichPushImages.registry.resource(named: name) }
    }

    @Test("Unknown names are notFound; lookups are case-sensitive")
    func unknownName() {
        #expect(throws: ResourceError(.notFound, resource: "Sunset.png", "no resource has this name")) {
            try RichPushImages.registry.resource(named: "Sunset.png")
        }
    }

    @Test("A name registered twice is refused")
    func duplicateName() throws {
        var registry = ResourceRegistry()
        try registry.register("a.bin", bytes: [1])
        expectResourceError(.duplicateName) { try registry.register("a.bin", bytes: [2]) }
    }

    @Test("Every byte exactly once, in order, at every interesting size", arguments: [0, 1, 4095, 4096, 4097, 3 << 20 | 5])
    func chunkBoundaries(count: Int) throws {
        var registry = ResourceRegistry()
        let bytes = patternBytes(count)
        let resource = try registry.register("pattern.bin", bytes: bytes)
        // Sizes around the 4096-byte chunk the counts straddle, the default, and 1 byte (not for MiBs).
        for size in [1, 4095, 4096, 4097, ResourceLimits.defaultChunkSize] where size > 1 || count < 1 << 16 {
            var joined: [UInt8] = []
            joined.reserveCapacity(count)
            var expectedOffset = 0
            let chunks = try resource.chunks(size: size)
            for chunk in chunks {
                #expect(chunk.offset == expectedOffset)
                #expect(chunk.bytes.count == min(size, count - expectedOffset))
                #expect(chunk.digest == nil)
                joined += chunk.bytes
                expectedOffset += chunk.bytes.count
            }
            #expect(joined == bytes, "size \(size)")
            #expect(Array(chunks).count == (count + size - 1) / size)
        }
    }

    @Test("Chunks are views of the resource's storage, not copies")
    func chunksAreViews() throws {
        var registry = ResourceRegistry()
        let resource = try registry.register("view.bin", bytes: patternBytes(10_000))
        let base = resource.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        for chunk in try resource.chunks(size: 3000) {
            let address = chunk.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
            #expect(address == base + UInt(chunk.offset))
        }
    }

    @Test("Per-chunk digests match each slice; streamed in order they give the whole digest")
    func chunkDigests() throws {
        var registry = ResourceRegistry()
        let bytes = patternBytes(200_003)
        let resource = try registry.register("digests.bin", bytes: bytes)
        for size in [1, 1000, 65_536, 200_003, 300_000] {
            var hasher = XXH3Hasher128()
            var covered = 0
            for chunk in try resource.chunks(size: size, digests: true) {
                #expect(chunk.digest == XXH3.hash64(bytes[chunk.offset..<chunk.offset + chunk.bytes.count]))
                #expect(chunk.offset == covered)
                covered += chunk.bytes.count
                hasher.update(chunk.bytes)
            }
            #expect(covered == bytes.count)
            #expect(hasher.digest() == resource.digest)
        }
    }

    @Test("Chunks of a byte range, also through for await")
    func rangedAsyncChunks() async throws {
        var registry = ResourceRegistry()
        let bytes = patternBytes(10_000)
        let resource = try registry.register("range.bin", bytes: bytes)
        var joined: [UInt8] = []
        for await chunk in try resource.chunks(in: 1234..<8766, size: 1000) { joined += chunk.bytes }
        #expect(joined == Array(bytes[1234..<8766]))
        #expect(throws: ResourceError.self) { try resource.chunks(in: 0..<10_001) }
        #expect(throws: ResourceError.self) { try resource.chunks(size: 0) }
        #expect(throws: ResourceError.self) { try resource.chunks(size: ResourceLimits.maximumChunkSize + 1) }
    }
}

@Suite("File-backed resources")
struct FileResourceTests {
    @Test("A file streams in chunks equal to its bytes, with the same digests as in memory")
    func fileChunks() throws {
        let bytes = patternBytes(300_001)
        try withTemporaryFile(bytes) { _, path in
            let file = try FileResource(path: path)
            #expect(file.count == bytes.count)
            for size in [1 << 12, 65_536, 1 << 20] {
                var reader = try file.chunks(size: size, digests: true).makeReader()
                var joined: [UInt8] = []
                while let chunk = try reader.next() {
                    #expect(chunk.offset == joined.count)
                    #expect(chunk.digest == XXH3.hash64(chunk.bytes))
                    joined += chunk.bytes
                }
                #expect(joined == bytes)
            }
            let digests = try file.digests()
            #expect(digests.hash64 == XXH3.hash64(bytes))
            #expect(digests.hash128 == XXH3.hash128(bytes))
            let tag = try file.entityTag()
            #expect(tag == EntityTag(strong: XXH3.hash128(bytes)))
        }
    }

    @Test("for try await reads a range of the file")
    func asyncRange() async throws {
        let bytes = patternBytes(100_000)
        let path = try temporaryFile(bytes)
        defer { unlink(path) }
        let file = try FileResource(path: path)
        var joined: [UInt8] = []
        for try await chunk in try file.chunks(in: 10..<99_990, size: 7_000) { joined += chunk.bytes }
        #expect(joined == Array(bytes[10..<99_990]))
    }

    @Test("Many tasks stream one file and one embedded resource at once, sharing their cached digests")
    func concurrentStreams() async throws {
        let bytes = patternBytes(300_000)
        var registry = ResourceRegistry()
        let embedded = try registry.register("shared.bin", bytes: bytes)
        let path = try temporaryFile(bytes)
        defer { unlink(path) }
        let file = try FileResource(path: path)
        let expected = XXH3.hash128(bytes)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var hasher = XXH3Hasher128()
                    if task % 2 == 0 {
                        for try await chunk in try file.chunks(size: 10_000 + task) { hasher.update(chunk.bytes) }
                        return try file.digests().hash128 == expected && hasher.digest() == expected
                    }
                    for await chunk in try embedded.chunks(size: 10_000 + task, digests: true) { hasher.update(chunk.bytes) }
                    return embedded.digest == expected && hasher.digest() == expected
                }
            }
            for try await matched in group { #expect(matched) }
        }
    }

    /// Streams the first chunk of a 200,000-byte file, applies `change` to it, and expects the
    /// rest of the stream to fail with `code` and then to stay ended.
    private func expectStreamEnds(with code: ResourceError.Code, after change: (String) throws -> Void) throws {
        try withTemporaryFile(patternBytes(200_000)) { _, path in
            let file = try FileResource(path: path)
            var reader = try file.chunks(size: 65_536).makeReader()
            _ = try reader.next()
            try change(path)
            expectResourceError(code) { while try reader.next() != nil {} }
            let afterError = try reader.next()
            #expect(afterError == nil, "the stream has ended")
        }
    }

    @Test("A file that grows mid-stream ends the stream with changedDuringRead")
    func grows() throws {
        try expectStreamEnds(with: .changedDuringRead) { path in try writeFile(path, [1, 2, 3], append: true) }
    }

    @Test("A file truncated mid-stream ends the stream with changedDuringRead, never short bytes")
    func shrinks() throws {
        try expectStreamEnds(with: .changedDuringRead) { path in truncate(path, 70_000) }
    }

    @Test("A file rewritten in place with the same size is detected by its modification time")
    func rewritten() throws {
        try expectStreamEnds(with: .changedDuringRead) { path in
            // Make the change visible whatever the file system's timestamp granularity.
            var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
            try writeFile(path, patternBytes(200_000, seed: 99))
            utimensat(AT_FDCWD, path, &times, 0)
        }
    }

    @Test("A file deleted mid-stream ends the stream with vanished")
    func vanishes() throws {
        try expectStreamEnds(with: .vanished) { path in unlink(path) }
    }

    @Test("Missing files, directories and FIFOs are typed errors, not hangs")
    func notRegular() throws {
        try withTemporaryFile([1, 2, 3]) { folder, _ in
            expectResourceError(.notFound) { _ = try FileResource(path: folder + "/missing") }
            expectResourceError(.notRegularFile) { _ = try FileResource(path: folder) }
            let fifo = folder + "/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            expectResourceError(.notRegularFile) { _ = try FileResource(path: fifo) }
        }
    }

    @Test("A resource directory opens flat names only and never follows a symbolic link")
    func directory() throws {
        try withTemporaryFile(Array("inside".utf8), name: "inside.txt") { folder, _ in
            let directory = ResourceDirectory(root: folder)
            let inside = try directory.resource(named: "inside.txt")
            #expect(inside.count == 6)
            symlink("/etc/hostname", folder + "/link.txt")
            expectResourceError(.notRegularFile) { _ = try directory.resource(named: "link.txt") }
            for name in ["../inside.txt", "/etc/passwd", "..", "sub/inside.txt"] {
                expectResourceError(.invalidName) { _ = try directory.resource(named: name) }
            }
        }
    }

    @Test("Content type comes from the file's first bytes")
    func fileContentType() throws {
        let png = RichPushImages.registry.names.first.flatMap { try? RichPushImages.registry.resource(named: $0) }
        try withTemporaryFile(png?.bytes ?? [], name: "image.data") { _, path in
            let file = try FileResource(path: path)
            #expect(file.contentType == .png)
        }
        try withTemporaryFile([], name: "empty") { _, path in
            let file = try FileResource(path: path)
            #expect(file.contentType == .octetStream)
            let digests = try file.digests()
            #expect(digests.hash128.hexString == "99aa06d3014798d86001c324468d497f")
            var reader = try file.chunks().makeReader()
            let first = try reader.next()
            #expect(first == nil)
        }
    }
}
