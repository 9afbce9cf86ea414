import CAllocationCounter
import PushCore
import PushTestSupport
import Testing

@Suite("Allocations")
struct AllocationTests {
    @Test("the counter sees real allocations (skipped under sanitizers, which replace malloc)", .disabled(if: runningUnderSanitizer))
    func counterWorks() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        let before = pushcore_thread_allocation_count()
        let array = [Int](repeating: 7, count: Int.random(in: 100...200))
        #expect(pushcore_thread_allocation_count() - before >= 1)
        #expect(array.count >= 100)
    }

    /// Unoptimised builds box values passed to unspecialised generic code (about one allocation
    /// per JSON value written), so the zero-allocation property is checked in optimised builds;
    /// `make test` runs the suite with `-c release` as well.
    @Test("encoding into a reused buffer allocates nothing (optimised builds)", .enabled(if: isOptimizedBuild && !runningUnderSanitizer))
    func encodingDoesNotAllocate() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        var payload = APNsPayload(
            aps: APNsAPS(
                alert: .fields(APNsAlertFields(title: "Game Request", subtitle: "Five Card Draw", body: "Bob wants to play \"poker\" tonight")),
                badge: 9, sound: .critical(APNsCriticalSound(name: "alarm.caf", volume: 0.5)), threadID: "poker",
                interruptionLevel: .timeSensitive, relevanceScore: 0.75))
        payload["gameID"] = "12345678"
        payload["players"] = ["alice", "bob", 3, 4.5, nil, true]
        var buffer: [UInt8] = []
        for _ in 0..<3 {
            buffer.removeAll(keepingCapacity: true)
            try payload.encode(into: &buffer)
        }
        let before = pushcore_thread_allocation_count()
        for _ in 0..<100 {
            buffer.removeAll(keepingCapacity: true)
            try payload.encode(into: &buffer)
        }
        #expect(pushcore_thread_allocation_count() - before == 0)
        #expect(buffer.count == (try payload.encodedSize()))
    }

    /// Decoding throws on errors and drops warnings, so it must not build them: the seed flow's
    /// `"sound": ""` in a background push (a warning) adds nothing to decode but an empty string.
    @Test("decoding does not build the warnings it drops (optimised builds)", .enabled(if: isOptimizedBuild && !runningUnderSanitizer))
    func decodingBuildsNoWarnings() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        let warned = Array(#"{"aps":{"content-available":1,"sound":""},"richId":"12345"}"#.utf8)
        let plain = Array(#"{"aps":{"content-available":1},"richId":"12345"}"#.utf8)
        #expect(try APNsLinter.lint(warned).map(\.code) == [.backgroundPushWithAlert])
        var parser = JSONParser()
        func allocations(_ bytes: [UInt8]) throws -> UInt64 {
            _ = try APNsPayload(decoding: bytes, parser: &parser)
            let before = pushcore_thread_allocation_count()
            _ = try APNsPayload(decoding: bytes, parser: &parser)
            return pushcore_thread_allocation_count() - before
        }
        #expect(try allocations(warned) == allocations(plain))
    }
}

@Suite("Allocations: JSON parser")
struct ParserAllocationTests {
    @Test("steady-state parsing allocates nothing", .disabled(if: runningUnderSanitizer))
    func parsingDoesNotAllocate() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        let bytes = Array(#"{"aps":{"alert":{"title":"Hi","body":"A longer body text with \"escapes\""},"badge":3},"id":"4f1c2a9e8d0b4c7e"}"#.utf8)
        var parser = JSONParser()
        var checksum = 0
        func parseAndRead() throws {
            let document = try parser.parse(bytes)
            checksum &+= document.root["aps"]?["badge"]?.int ?? 0
            checksum &+= document.root["aps"]?["alert"]?["body"]?.withRawStringBytes { $0.count } ?? 0
            checksum &+= document.withUnsafeRoot { $0["aps"]?["alert"]?["title"]?.rawStringBytes?.count ?? 0 }
        }
        // Warm up with exactly what is measured: first uses may initialise globals and metadata.
        for _ in 0..<3 { try parseAndRead() }
        let before = pushcore_thread_allocation_count()
        for _ in 0..<100 { try parseAndRead() }
        #expect(pushcore_thread_allocation_count() - before == 0)
        #expect(checksum > 0)
    }

    @Test("validation allocates nothing up to validationStackDepth", .disabled(if: runningUnderSanitizer))
    func validationDoesNotAllocate() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        let deepest = Array(
            (String(repeating: "[", count: JSONParser.validationStackDepth) + String(repeating: "]", count: JSONParser.validationStackDepth)).utf8)
        let payload = Array(#"{"aps":{"alert":"Hi","badge":3},"id":"4f1c"}"#.utf8)
        let parser = JSONParser()
        for _ in 0..<3 { try parser.validate(deepest) }
        let before = pushcore_thread_allocation_count()
        for _ in 0..<100 {
            try parser.validate(deepest)
            try parser.validate(payload)
        }
        #expect(pushcore_thread_allocation_count() - before == 0)
    }
}

@Suite("Allocations: SAS token cache")
struct SASTokenCacheAllocationTests {
    @Test("a hit allocates nothing (optimised builds)", .enabled(if: isOptimizedBuild && !runningUnderSanitizer))
    func hitDoesNotAllocate() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        let cache = SASTokenCache(signer: SASSigner(keyName: "k", key: "v"), clock: .fixed(5000))
        let resource = "https://ns.servicebus.windows.net/hub/messages/"
        var length = 0
        for _ in 0..<3 { length &+= try cache.token(for: resource).utf8.count }
        let before = pushcore_thread_allocation_count()
        for _ in 0..<100 { length &+= try cache.token(for: resource).utf8.count }
        #expect(pushcore_thread_allocation_count() - before == 0)
        #expect(length > 0)
    }
}
