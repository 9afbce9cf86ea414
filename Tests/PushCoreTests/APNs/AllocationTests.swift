import CAllocationCounter
import PushCore
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
            aps: APS(
                alert: .fields(AlertFields(title: "Game Request", subtitle: "Five Card Draw", body: "Bob wants to play \"poker\" tonight")),
                badge: 9, sound: .critical(CriticalSound(name: "alarm.caf", volume: 0.5)), threadID: "poker",
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
        #expect(APNsLinter.lint(warned).map(\.code) == [.backgroundPushWithAlert])
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

#if DEBUG
let isOptimizedBuild = false
#else
let isOptimizedBuild = true
#endif
