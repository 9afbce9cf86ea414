import PushAPNs
import PushJSON
import PushTestSupport
import Testing

@Suite("Payload view")
struct PayloadViewTests {
    /// The model rebuilt through the view's public fields alone.
    static func model(_ view: borrowing APNsPayloadView) throws -> APNsPayload {
        let aps = view.aps
        var model = APNsAPS(
            badge: aps.badge, threadID: aps.threadID?.string, category: aps.category?.string, contentAvailable: aps.contentAvailable,
            mutableContent: aps.mutableContent, targetContentID: aps.targetContentID?.string, interruptionLevel: aps.interruptionLevel,
            relevanceScore: aps.relevanceScore, filterCriteria: aps.filterCriteria?.string, staleDate: aps.staleDate, timestamp: aps.timestamp,
            event: aps.event, dismissalDate: aps.dismissalDate, contentState: try aps.contentState?.owned(),
            attributesType: aps.attributesType?.string, attributes: try aps.attributes?.owned(), inputPushToken: aps.inputPushToken,
            inputPushChannel: aps.inputPushChannel?.string, contentChanged: aps.contentChanged, urlArgs: aps.urlArgs?.strings)
        switch aps.alert {
        case .text(let text): model.alert = .text(text.string)
        case .fields(let fields):
            var others: [JSONMember] = []
            try fields.forEachOtherKey { key, value in others.append(JSONMember(key.string, try value.owned())) }
            model.alert = .fields(
                APNsAlertFields(
                    title: text(fields.title), subtitle: fields.subtitle?.string, body: text(fields.body), launchImage: fields.launchImage?.string,
                    titleLocKey: fields.titleLocKey?.string, titleLocArgs: fields.titleLocArgs?.strings,
                    subtitleLocKey: fields.subtitleLocKey?.string, subtitleLocArgs: fields.subtitleLocArgs?.strings,
                    locKey: fields.locKey?.string, locArgs: fields.locArgs?.strings, sound: fields.sound?.string,
                    action: fields.action?.string, otherKeys: others))
        case nil: break
        }
        switch aps.sound {
        case .named(let name): model.sound = .named(name.string)
        case .critical(let sound):
            model.sound = .critical(APNsCriticalSound(critical: sound.isCritical, name: sound.name.string, volume: sound.volume))
        case nil: break
        }
        try aps.forEachOtherKey { key, value in model.otherKeys.append(JSONMember(key.string, try value.owned())) }
        var payload = APNsPayload(aps: model)
        try view.forEachCustomKey { key, value in payload.customKeys.append(JSONMember(key.string, try value.owned())) }
        return payload
    }

    static func text(_ text: APNsAlertTextView?) -> APNsAlertText? {
        switch text {
        case .text(let string): .text(string.string)
        case .localized(let key, let arguments): .localized(key: key.string, arguments: arguments?.strings ?? [])
        case nil: nil
        }
    }

    static let payloads = (Corpus.valid + Corpus.invalid + Corpus.richPayloads + Corpus.internationalPayloads).map(\.bytes)

    @Test("every field read through the view is the decoded model's, on every corpus payload")
    func fieldsMatchTheModel() throws {
        var parser = JSONParser()
        var compared = 0
        for bytes in Self.payloads {
            guard let decoded = try? APNsPayload(decoding: bytes, parser: &parser) else { continue }
            let throughView = try APNsPayloadView.read(bytes, parser: &parser) { try Self.model($0) }
            let copied = try APNsPayloadView.read(bytes, parser: &parser) { APNsPayload($0) }
            #expect(throughView == decoded, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(copied == decoded)
            compared += 1
        }
        #expect(compared > 400)
    }

    /// The view and the decoder read numbers and enum cases through the same layout, so the test
    /// before cannot tell a wrong one: compared here with the owned copy of the text, whose numbers
    /// the standard library parses from their spelling.
    @Test("numbers and enum cases read through the view and decoded are the ones the text spells")
    func recordedValuesMatchTheText() throws {
        let spelled = Array(
            #"{"aps":{"badge":0,"relevance-score":-0.0,"stale-date":-17,"timestamp":9007199254740993,"event":"end","dismissal-date":1,"interruption-level":"passive"}}"#
                .utf8)
        var parser = JSONParser()
        #expect(try APNsPayload(decoding: spelled, parser: &parser).aps.timestamp == 9_007_199_254_740_993)
        var compared = 0
        for bytes in Self.payloads + [spelled] {
            guard let decoded = try? APNsPayload(decoding: bytes, parser: &parser) else { continue }
            var textParser = JSONParser()
            guard case .object(let root) = try JSON(try textParser.parse(bytes).root),
                case .object(let aps)? = root.first(where: { $0.key == "aps" })?.value
            else {
                Issue.record("a decoded payload without an aps object")
                continue
            }
            func number(_ key: String) -> JSONNumber? {
                if case .number(let number)? = aps.first(where: { $0.key == key })?.value { number } else { nil }
            }
            func spelling(_ key: String) -> String? {
                if case .string(let text)? = aps.first(where: { $0.key == key })?.value { text } else { nil }
            }
            // Integers, the score's bits (so that -0.0 is told from 0.0), and the two enum cases.
            let expected = (
                [number("badge")?.int, number("stale-date")?.int, number("timestamp")?.int, number("dismissal-date")?.int],
                number("relevance-score")?.double?.bitPattern, spelling("interruption-level").flatMap(APNsInterruptionLevel.init(rawValue:)),
                spelling("event").flatMap(APNsLiveActivityEvent.init(rawValue:))
            )
            let text = String(decoding: bytes, as: UTF8.self)
            try APNsPayloadView.read(bytes, parser: &parser) { view in
                let read = view.aps
                let found = (
                    [read.badge, read.staleDate, read.timestamp, read.dismissalDate], read.relevanceScore?.bitPattern, read.interruptionLevel,
                    read.event
                )
                #expect(found == expected, "\(text)")
            }
            let model = decoded.aps
            let copied = (
                [model.badge, model.staleDate, model.timestamp, model.dismissalDate], model.relevanceScore?.bitPattern, model.interruptionLevel,
                model.event
            )
            #expect(copied == expected, "\(text)")
            compared += 1
        }
        #expect(compared > 400)
    }

    @Test("a payload lint finds an error in has no view: reading throws that error, as decoding does")
    func invalidPayloadsThrowLintsFirstError() throws {
        var parser = JSONParser()
        var refused = 0
        for bytes in Self.payloads {
            guard let diagnostics = try? APNsLinter.lint(bytes, parser: &parser) else {
                #expect(throws: JSONError.self) { try APNsPayloadView.read(bytes, parser: &parser) { _ in 0 } }
                continue
            }
            // Size limits depend on the push type; the view, like decoding, leaves them out.
            guard let error = diagnostics.first(where: { $0.severity == .error && $0.code != .payloadTooLarge }) else { continue }
            refused += 1
            #expect(throws: error.error) { try APNsPayloadView.read(bytes, parser: &parser) { _ in 0 } }
        }
        #expect(refused > 10)
    }

    @Test("strings compare and hash by their decoded text, however they are escaped")
    func stringViews() throws {
        let bytes = Array(#"{"aps":{"thread-id":"caf\u00e9 \ud83d\ude00 a\/b","category":"café 😀 a/b"},"k\u0065y":"v"}"#.utf8)
        var parser = JSONParser()
        try APNsPayloadView.read(bytes, parser: &parser) { payload in
            let escaped = payload.aps.threadID!, plain = payload.aps.category!
            #expect(escaped.hasEscapes && !plain.hasEscapes)
            #expect(escaped == "café 😀 a/b" && escaped == ("café 😀 a/b" as StaticString))
            #expect(escaped == plain && !(escaped == "café 😀 a/c") && !(escaped == "café 😀 a/"))
            #expect(escaped.string == "café 😀 a/b")
            var first = Hasher(), second = Hasher()
            escaped.hash(into: &first)
            plain.hash(into: &second)
            #expect(first.finalize() == second.finalize())
            #expect(payload[customKey: "key"]?.string?.string == "v")
            let apsIsCustom = payload[customKey: "aps"] != nil
            #expect(!apsIsCustom)
        }
    }

    @Test("custom keys come in document order; aps keys the model does not name are kept")
    func customAndOtherKeys() throws {
        let bytes = Array(#"{"b":1,"aps":{"x-extra":[1],"badge":2,"alert":{"title":"t","x-note":"n"}},"a":{"n":null}}"#.utf8)
        var parser = JSONParser()
        let keys = try APNsPayloadView.read(bytes, parser: &parser) { payload in
            var keys: [String] = []
            payload.forEachCustomKey { key, _ in keys.append(key.string) }
            payload.aps.forEachOtherKey { key, _ in keys.append(key.string) }
            if case .fields(let fields) = payload.aps.alert { fields.forEachOtherKey { key, _ in keys.append(key.string) } }
            return keys
        }
        #expect(keys == ["b", "a", "x-extra", "x-note"])
    }
}
