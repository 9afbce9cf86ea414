import PushAPNs
import PushJSON
import Testing

@Suite("Live Activities: start, update and end helpers, and declared content-state types")
struct LiveActivityTests {
    static let scoreState = try! APNsFieldSchema(json: #"{"score":"integer","team":"string","note":"string?"}"#)
    static let schema = APNsLiveActivitySchema(
        contentState: scoreState, attributes: APNsFieldSchema([.init("matchID", .string), .init("kickoff", .number)]))

    func text(_ payload: APNsPayload) throws -> String {
        String(decoding: try payload.encoded(), as: UTF8.self)
    }

    func findings(_ text: String, schema: APNsLiveActivitySchema = Self.schema) throws -> [APNsDiagnostic] {
        try APNsLinter.lint(Array(text.utf8), liveActivity: schema)
    }

    @Test("the helpers write each event's keys, lint clean, and the headers add the liveactivity suffix once")
    func helpers() throws {
        let state: JSON = ["score": 1, "team": "Reds"]
        let start = APNsPayload.liveActivityStart(
            attributesType: "MatchAttributes", attributes: ["matchID": "m1", "kickoff": 1_800_000_000], contentState: state,
            timestamp: 1_800_000_001, alert: .fields(APNsAlertFields(title: "Kick-off", body: "Reds v Blues")), inputPushChannel: "Y2hhbm5lbA==")
        #expect(
            try text(start)
                == #"{"aps":{"alert":{"title":"Kick-off","body":"Reds v Blues"},"timestamp":1800000001,"event":"start","content-state":{"score":1,"team":"Reds"},"attributes-type":"MatchAttributes","attributes":{"matchID":"m1","kickoff":1800000000},"input-push-channel":"Y2hhbm5lbA=="}}"#
        )
        let update = APNsPayload.liveActivityUpdate(contentState: ["score": 2, "team": "Reds"], timestamp: 1_800_000_100, staleDate: 1_800_000_900)
        #expect(
            try text(update)
                == #"{"aps":{"stale-date":1800000900,"timestamp":1800000100,"event":"update","content-state":{"score":2,"team":"Reds"}}}"#)
        let end = APNsPayload.liveActivityEnd(contentState: ["score": 3, "team": "Reds"], timestamp: 1_800_000_200, dismissalDate: 1_800_000_300)
        #expect(
            try text(end)
                == #"{"aps":{"timestamp":1800000200,"event":"end","dismissal-date":1800000300,"content-state":{"score":3,"team":"Reds"}}}"#)
        for payload in [start, update, end] {
            #expect(try findings(try text(payload)).isEmpty)
            #expect(Self.schema.errors(in: payload).isEmpty)
            let headers = APNsHeaders(for: payload, topic: "com.example.app")
            #expect(headers.pushType == .liveactivity && headers.priority == 10)
            #expect(headers.topic == "com.example.app.push-type.liveactivity")
            #expect(APNsHeaders(for: payload, topic: "com.example.app.push-type.liveactivity").topic == "com.example.app.push-type.liveactivity")
        }
        #expect(APNsHeaders(for: .silentSecurePush(secureId: "1"), topic: "com.example.app").topic == "com.example.app")
        #expect(APNsHeaders.topic("com.example.app", for: .voip) == "com.example.app.voip")
    }

    @Test("a declaration is read from its JSON form; every malformed one is refused at its byte")
    func parsing() throws {
        #expect(
            Self.scoreState.fields == [.init("score", .integer), .init("team", .string), .init("note", .string, optional: true)])
        let all = try APNsFieldSchema(json: #"{"a":"string","b":"number?","c":"integer","d":"bool","e":"array?","f":"object"}"#)
        #expect(all.fields.map(\.type) == [.string, .number, .integer, .bool, .array, .object])
        #expect(all.fields.map(\.isOptional) == [false, true, false, false, true, false])
        #expect(try APNsFieldSchema(json: "{}").fields.isEmpty)

        let refusals: [(String, Int, String)] = [
            (#"["score"]"#, 0, "a schema is an object"),
            (#"{"score":1}"#, 9, "is not a string"),
            (#"{"score":"int"}"#, 9, "is one of string, number"),
            (#"{"score":"integer??"}"#, 9, "is one of"),
            (#"{"score":"integer","score":"string"}"#, 19, "declared twice"),
            (#"{"score":"#, 9, "not JSON"),
        ]
        for (text, offset, message) in refusals {
            #expect {
                try APNsFieldSchema(json: text)
            } throws: { error in
                guard let error = error as? APNsFieldSchema.ParseError else { return false }
                return error.offset == offset && error.message.contains(message)
            }
        }
    }

    @Test("missing fields, wrong types and null in a required field are errors at the value; undeclared fields are warnings")
    func mismatches() throws {
        let payload = #"{"aps":{"event":"update","timestamp":1,"content-state":{"score":"2","note":null,"extra":true}}}"#
        let found = try findings(payload)
        #expect(found.map(\.severity) == [.error, .warning, .error])
        #expect(found.map(\.code) == [.schemaMismatch, .schemaMismatch, .schemaMismatch])
        #expect(found.map(\.error.path) == ["aps.content-state.score", "aps.content-state.extra", "aps.content-state.team"])
        let bytes = Array(payload.utf8)
        #expect(bytes[found[0].offset] == UInt8(ascii: "\""))  // the value "2"
        #expect(found[0].offset == payload.utf8.count - #""2","note":null,"extra":true}}}"#.utf8.count)
        #expect(found[0].message.contains("declared integer but holds a string"))
        #expect(found[2].message.contains("lacks team"))
        // The offset of a missing field is its object's.
        #expect(bytes[found[2].offset] == UInt8(ascii: "{"))

        let nullRequired = try findings(#"{"aps":{"event":"update","timestamp":1,"content-state":{"score":null,"team":"x"}}}"#)
        #expect(nullRequired.map(\.severity) == [.error] && nullRequired.first?.message.contains("holds null") == true)
        let notObject = try findings(#"{"aps":{"event":"update","timestamp":1,"content-state":[1]}}"#)
        #expect(notObject.contains { $0.code == .schemaMismatch && $0.error.path == "aps.content-state" && $0.severity == .error })
    }

    @Test("integers: 3, 3.0, 1e2 and -0 decode; 2.5, 1e300 and 2^63 do not")
    func integers() throws {
        for spelling in ["3", "3.0", "1e2", "-0", "9223372036854775807", "-9223372036854775808"] {
            #expect(
                try findings(#"{"aps":{"event":"update","timestamp":1,"content-state":{"score":\#(spelling),"team":"x"}}}"#).isEmpty, "\(spelling)")
        }
        for spelling in ["2.5", "1e300", "9223372036854775808", "true", "\"3\""] {
            #expect(
                try findings(#"{"aps":{"event":"update","timestamp":1,"content-state":{"score":\#(spelling),"team":"x"}}}"#).map(\.severity)
                    == [.error], "\(spelling)")
        }
    }

    @Test("attributes are checked against their declaration, and only when one is given")
    func attributes() throws {
        let start =
            #"{"aps":{"event":"start","timestamp":1,"attributes-type":"MatchAttributes","attributes":{"matchID":7},"content-state":{"score":0,"team":"x"}}}"#
        #expect(try findings(start).map(\.error.path) == ["aps.attributes.matchID", "aps.attributes.kickoff"])
        #expect(try findings(start, schema: APNsLiveActivitySchema(contentState: Self.scoreState)).isEmpty)
        // Without a schema, lint says nothing about the fields.
        #expect(try APNsLinter.lint(Array(start.utf8)).isEmpty)
    }

    @Test("a model about to be sent: errors only, with offsets into its encoding")
    func model() throws {
        let broken = APNsPayload.liveActivityUpdate(contentState: ["score": 1.5, "team": "Reds", "mood": "good"], timestamp: 2)
        let errors = Self.schema.errors(in: broken)
        #expect(errors.map(\.path) == ["aps.content-state.score"])
        let encoded = try broken.encoded()
        #expect(encoded[errors[0].offset!] == UInt8(ascii: "1"))
        #expect(Self.schema.errors(in: .silentSecurePush(secureId: "1")).isEmpty)
    }
}
