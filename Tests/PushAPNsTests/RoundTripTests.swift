import PushAPNs
import PushJSON
import PushTestSupport
import Testing

/// Random models that are valid payloads, from a seeded generator.
struct ModelGenerator {
    var random: SeededGenerator

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func string() -> String {
        let pieces = ["a", "Hello", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "é", "你好", "😀", "👨‍👩‍👧‍👦", "🇫🇷", "e\u{301}", "<&>", "\u{7F}", "𝄞"]
        var text = ""
        for _ in 0..<Int.random(in: 0..<8, using: &random) { text += pieces.randomElement(using: &random)! }
        return text
    }

    mutating func optionalString(_ percent: Int = 30) -> String? { chance(percent) ? string() : nil }

    mutating func strings() -> [String] { (0..<Int.random(in: 0..<4, using: &random)).map { _ in string() } }

    mutating func double(in range: ClosedRange<Double>) -> Double {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return range.lowerBound
        case 1: return range.upperBound
        case 2: return (Double.random(in: range, using: &random) * 100).rounded() / 100
        default: return Double.random(in: range, using: &random)
        }
    }

    mutating func json(depth: Int = 0) -> JSON {
        switch Int.random(in: 0..<(depth >= 3 ? 5 : 8), using: &random) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2: return .number(JSONNumber(Int.random(in: Int.min...Int.max, using: &random)))
        case 3: return .number(try! JSONNumber(double(in: -1e6...1e6)))
        case 4: return .string(string())
        case 5: return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in json(depth: depth + 1) })
        case 6: return object(depth: depth + 1)
        default:
            var bytes: [UInt8] = []
            try! object(depth: depth + 1).write(into: &bytes)
            return .raw(try! RawJSON(bytes: bytes))
        }
    }

    mutating func object(depth: Int) -> JSON {
        .object((0..<Int.random(in: 0..<4, using: &random)).map { JSONMember("k\($0)\(string())", json(depth: depth)) })
    }

    mutating func alertText() -> APNsAlertText {
        chance(80) ? .text(string()) : .localized(key: string(), arguments: strings())
    }

    mutating func payload() -> APNsPayload {
        var aps = APNsAPS()
        if chance(60) {
            if chance(30) {
                aps.alert = .text(string())
            } else {
                aps.alert = .fields(
                    APNsAlertFields(
                        title: chance(70) ? alertText() : nil, subtitle: optionalString(40), body: chance(80) ? alertText() : nil,
                        launchImage: optionalString(10), titleLocKey: optionalString(10), titleLocArgs: chance(10) ? strings() : nil,
                        subtitleLocKey: optionalString(10), subtitleLocArgs: chance(10) ? strings() : nil,
                        locKey: optionalString(10), locArgs: chance(10) ? strings() : nil, sound: optionalString(10), action: optionalString(10),
                        otherKeys: chance(10) ? [JSONMember("summary-arg", .string(string()))] : []))
            }
        }
        if chance(40) { aps.badge = chance(20) ? 0 : Int.random(in: 0...Int.max, using: &random) }
        if chance(40) {
            aps.sound =
                chance(70)
                ? .named(string())
                : .critical(APNsCriticalSound(critical: chance(80), name: string(), volume: chance(70) ? double(in: 0...1) : nil))
        }
        aps.threadID = optionalString()
        aps.category = optionalString()
        aps.contentAvailable = chance(40)
        aps.mutableContent = chance(30)
        aps.targetContentID = optionalString(20)
        if chance(30) { aps.interruptionLevel = APNsInterruptionLevel.allCases.randomElement(using: &random) }
        aps.filterCriteria = optionalString(10)
        if chance(20) {
            let event = APNsLiveActivityEvent.allCases.randomElement(using: &random)!
            aps.event = event
            aps.timestamp = Int.random(in: 0...2_000_000_000, using: &random)
            if event != .end || chance(50) { aps.contentState = object(depth: 1) }
            if event == .start {
                aps.attributesType = string()
                aps.attributes = object(depth: 1)
                aps.inputPushToken = chance(50)
                aps.inputPushChannel = optionalString(30)
            }
            if chance(30) { aps.staleDate = Int.random(in: 0...2_000_000_000, using: &random) }
            if chance(30) { aps.dismissalDate = Int.random(in: 0...2_000_000_000, using: &random) }
            if chance(30) { aps.relevanceScore = double(in: -100...100) }
        } else if chance(30) {
            aps.relevanceScore = double(in: 0...1)
        }
        aps.contentChanged = chance(5)
        if chance(10) { aps.urlArgs = strings() }
        if chance(10) { aps.otherKeys = [JSONMember("x-extra", json())] }
        var payload = APNsPayload(aps: aps)
        for index in 0..<Int.random(in: 0..<5, using: &random) {
            payload.customKeys.append(JSONMember("custom\(index)\(string())", json()))
        }
        return payload
    }
}

@Suite("Round trip")
struct RoundTripTests {
    @Test("parse(encode(m)) == m for 10,000 random models; the size oracle is exact")
    func randomModels() throws {
        var generator = ModelGenerator(random: SeededGenerator(seed: 0x5EED_2026))
        var parser = JSONParser()
        var buffer: [UInt8] = []
        for iteration in 0..<10_000 {
            let payload = generator.payload()
            buffer.removeAll(keepingCapacity: true)
            try payload.encode(into: &buffer, limit: .max)
            #expect(try payload.encodedSize() == buffer.count, "model \(iteration)")
            let document = try parser.parse(buffer)
            let decoded = try APNsPayload(decoding: document)
            #expect(decoded == payload, "model \(iteration): \(String(decoding: buffer, as: UTF8.self))")
            // Re-encoding a parsed document is lossless and already canonical.
            #expect(document.canonicalBytes() == buffer, "model \(iteration)")
            if decoded != payload { break }
        }
    }

    @Test("decoding keeps custom arrays and objects as their canonical bytes; scalars stay typed")
    func decodedCustomDataIsEncoded() throws {
        let text = #"{"aps":{"content-state":{ "score" : [1, 2] }},"id":"a\/b","n":1.50,"items":[ {"sku":"S\u00e9", "qty":2} ],"m":{}}"#
        var parser = JSONParser()
        let payload = try APNsPayload(decoding: Array(text.utf8), parser: &parser)
        #expect(payload.customKeys.map(\.key) == ["id", "n", "items", "m"])
        #expect(payload.customKeys[0].value == .string("a/b"))
        guard case .number(let number) = payload.customKeys[1].value else { Issue.record("n: not a number"); return }
        #expect(number.spelling == "1.50")
        guard case .raw(let items) = payload.customKeys[2].value, case .raw(let state)? = payload.aps.contentState else {
            Issue.record("containers not kept encoded")
            return
        }
        #expect(items.description == #"[{"sku":"Sé","qty":2}]"#)
        #expect(state.description == #"{"score":[1,2]}"#)
        #expect(payload.customKeys[2].value == [["sku": "Sé", "qty": 2]])
        #expect(payload.customKeys[3].value == .object([]))
        // Written back as the canonical form of the input.
        let encoded = String(decoding: try payload.encoded(), as: UTF8.self)
        #expect(encoded == #"{"aps":{"content-state":{"score":[1,2]}},"id":"a/b","n":1.50,"items":[{"sku":"Sé","qty":2}],"m":{}}"#)
        // A repeated key deep inside custom data is still the error lint reports.
        let repeated = Array(#"{"aps":{},"items":[{"a":1,"a":2}]}"#.utf8)
        let lintError = try #require(try APNsLinter.lint(repeated, parser: &parser).first?.error)
        #expect(lintError.code == .duplicateKey)
        #expect(throws: lintError) { try APNsPayload(decoding: repeated, parser: &parser) }
    }

    @Test("payloads are values: changing a copy leaves the original alone")
    func valueSemantics() throws {
        var original = APNsPayload(aps: APNsAPS(alert: .text("hello"), badge: 1))
        var copy = original
        copy.aps.alert = .text("changed")
        copy.aps.badge = 2
        #expect(original.aps.alert == .text("hello") && original.aps.badge == 1)
        #expect(copy.aps.alert == .text("changed") && copy.aps.badge == 2)
        original.aps.sound = .named("a")
        #expect(copy.aps.sound == nil)
        #expect(String(decoding: try original.encoded(), as: UTF8.self) == #"{"aps":{"alert":"hello","badge":1,"sound":"a"}}"#)
        #expect(String(decoding: try copy.encoded(), as: UTF8.self) == #"{"aps":{"alert":"changed","badge":2}}"#)
    }

    @Test("the flows' constructors")
    func flows() throws {
        let rich = APNsPayload.silentRichPush(richId: "4f1c", richType: "img", richMessage: #"Say "cheese""#)
        #expect(
            String(decoding: try rich.encoded(), as: UTF8.self)
                == #"{"aps":{"content-available":1},"richId":"4f1c","richType":"img","richMessage":"Say \"cheese\""}"#)
        let secure = APNsPayload.silentSecurePush(secureId: "9b2e")
        #expect(String(decoding: try secure.encoded(), as: UTF8.self) == #"{"aps":{"content-available":1},"secureId":"9b2e"}"#)
        #expect(APNsHeaders(for: rich).pushType == .background)
        #expect(APNsHeaders(for: rich).priority == 5)
    }

    @Test("models no payload can express are refused with typed errors")
    func invalidModels() {
        /// The refusal's code and the path it names.
        func refusal(_ payload: APNsPayload) -> String? {
            do throws(APNsPayloadError) {
                _ = try payload.encoded()
                return nil
            } catch {
                return "\(error.code) \(error.path)"
            }
        }
        #expect(refusal(APNsPayload(aps: APNsAPS(badge: -1))) == "invalidValue aps.badge")
        #expect(refusal(APNsPayload(aps: APNsAPS(relevanceScore: 2))) == "invalidValue aps.relevance-score")
        #expect(refusal(APNsPayload(aps: APNsAPS(relevanceScore: .nan))) == "invalidValue aps.relevance-score")
        #expect(refusal(APNsPayload(aps: APNsAPS(sound: .critical(APNsCriticalSound(name: "a", volume: 1.01))))) == "invalidValue aps.sound.volume")
        #expect(refusal(APNsPayload(aps: APNsAPS(contentState: [1]))) == "typeMismatch aps.content-state")
        #expect(
            refusal(APNsPayload(aps: APNsAPS(contentState: .object([JSONMember("x", 1), JSONMember("x", 2)])))) == "duplicateKey aps.content-state")
        #expect(refusal(APNsPayload(customKeys: [JSONMember("aps", 1)])) == "duplicateKey aps")
        #expect(refusal(APNsPayload(customKeys: [JSONMember("a", 1), JSONMember("a", 2)])) == "duplicateKey ")
        #expect(refusal(APNsPayload(aps: APNsAPS(otherKeys: [JSONMember("badge", 1)]))) == "duplicateKey aps.badge")
    }

    @Test("encoding over the limit names the size and the limit, and leaves the buffer alone")
    func limit() throws {
        let payload = APNsPayload(aps: APNsAPS(alert: .text(String(repeating: "x", count: 5000))))
        var buffer: [UInt8] = [1, 2, 3]
        let expected = APNsPayloadError(.payloadTooLarge, path: "", size: 5000 + #"{"aps":{"alert":""}}"#.utf8.count, limit: 4096, "")
        #expect(throws: expected) { try payload.encode(into: &buffer) }
        #expect(buffer == [1, 2, 3])
        let size = try payload.encodedSize()
        #expect(size == 5000 + #"{"aps":{"alert":""}}"#.utf8.count)
        try payload.encode(into: &buffer, limit: APNsPushType.voip.payloadLimit)
        #expect(buffer.count == 3 + size)
    }

    @Test("limits that fit nothing are errors, not traps", arguments: [0, -1, Int.min, 9])
    func degenerateLimits(_ limit: Int) throws {
        var buffer: [UInt8] = [7]
        let payload = APNsPayload.silentSecurePush(secureId: "1")
        let size = try payload.encodedSize()
        #expect(throws: APNsPayloadError(.payloadTooLarge, path: "", size: size, limit: limit, "")) {
            try payload.encode(into: &buffer, limit: limit)
        }
        #expect(buffer == [7])
        var fitted = payload
        #expect(throws: APNsPayloadError.self) { try fitted.fit(limit: limit) }
    }
}
