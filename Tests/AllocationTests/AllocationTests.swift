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

@Suite("Allocations: lint and payload views")
struct PayloadViewAllocationTests {
    /// Every corpus payload lint has nothing to say about.
    static let cleanPayloads: [[UInt8]] = (Corpus.valid + Corpus.richPayloads + Corpus.internationalPayloads).map(\.bytes).filter {
        (try? APNsLinter.lint($0))?.isEmpty == true
    }

    @Test("linting a payload without findings allocates nothing (optimised builds)", .enabled(if: isOptimizedBuild && !runningUnderSanitizer))
    func lintDoesNotAllocate() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        #expect(Self.cleanPayloads.count > 400)
        var parser = JSONParser()
        for payload in Self.cleanPayloads { _ = try APNsLinter.lint(payload, parser: &parser) }
        for payload in Self.cleanPayloads {
            let before = pushcore_thread_allocation_count()
            let diagnostics = try APNsLinter.lint(payload, parser: &parser)
            #expect(pushcore_thread_allocation_count() - before == 0 && diagnostics.isEmpty, "\(String(decoding: payload, as: UTF8.self))")
        }
    }

    @Test("reading every field through a payload view allocates nothing (optimised builds)", .enabled(if: isOptimizedBuild && !runningUnderSanitizer))
    func viewDoesNotAllocate() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        var parser = JSONParser()
        func read(_ payload: [UInt8]) throws -> Int {
            try APNsPayloadView.read(payload, parser: &parser) { view in
                let aps = view.aps
                var checksum = (aps.badge ?? 0) &+ (aps.timestamp ?? 0) &+ (aps.contentAvailable ? 1 : 0)
                checksum &+= aps.interruptionLevel == .critical ? 1 : 0
                checksum &+= aps.event == .start ? 1 : 0
                switch aps.alert {
                case .text(let text): checksum &+= text.withRawBytes { $0.count }
                case .fields(let fields):
                    if case .text(let title) = fields.title { checksum &+= title == "Hi" ? 1 : 2 }
                    checksum &+= fields.locArgs?.count ?? 0
                case nil: break
                }
                if case .named(let sound) = aps.sound { checksum &+= sound == "default" ? 1 : 0 }
                if let state = aps.contentState { state.forEachDescendant { checksum &+= $0.count } }
                view.forEachCustomKey { key, value in
                    var hasher = Hasher()
                    key.hash(into: &hasher)
                    checksum &+= hasher.finalize() &+ value.count
                    value.forEachDescendant { checksum &+= $0.int ?? 0 }
                }
                return checksum
            }
        }
        for payload in Self.cleanPayloads { _ = try read(payload) }
        for payload in Self.cleanPayloads {
            let before = pushcore_thread_allocation_count()
            _ = try read(payload)
            #expect(pushcore_thread_allocation_count() - before == 0, "\(String(decoding: payload, as: UTF8.self))")
        }
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
