import PushAPNs
import PushJSON
import PushTestSupport
import Testing

@Suite("Lint")
struct LintTests {
    func lint(_ text: String, pushType: APNsPushType? = nil) -> [APNsDiagnostic] {
        do {
            return try APNsLinter.lint(Array(text.utf8), pushType: pushType)
        } catch {
            Issue.record("not JSON: \(error)")
            return []
        }
    }

    @Test("the seed flow's empty sound in a background push is a warning, not an error")
    func seedFlow() {
        let diagnostics = lint(#"{"aps":{"content-available":1,"sound":""},"richId":"1","richMessage":"m","richType":"img"}"#)
        #expect(diagnostics == [APNsDiagnostic(.warning, APNsPayloadError(.backgroundPushWithAlert, path: "aps", offset: 7, ""))])
        #expect(diagnostics.allSatisfy { $0.severity == .warning })
        #expect(diagnostics.first?.offset == 7)
    }

    @Test("a content-available push names what it also shows; a silent one gets no finding")
    func backgroundPushThatShows() throws {
        let all = lint(#"{"aps":{"content-available":1,"alert":{"title":"t"},"badge":1,"sound":{"critical":1,"name":"a"}}}"#)
        #expect(all.map(\.code) == [.backgroundPushWithAlert])
        #expect(all.first?.message.contains("also carries alert, badge, sound:") == true)
        let badge = lint(#"{"aps":{"content-available":1,"badge":0}}"#)
        #expect(badge.first?.message.contains("also carries badge:") == true)
        #expect(lint(#"{"aps":{"content-available":1},"richId":"1"}"#).isEmpty)

        var parser = JSONParser()
        let silent = try APNsPayload(decoding: Array(#"{"aps":{"content-available":1}}"#.utf8), parser: &parser)
        let shown = try APNsPayload(decoding: Array(#"{"aps":{"content-available":1,"alert":{"body":"b"}}}"#.utf8), parser: &parser)
        #expect(silent.aps.isBackgroundOnly && !shown.aps.isBackgroundOnly)
        #expect(APNsHeaders.inferredPushType(for: silent) == .background && APNsHeaders.inferredPushType(for: shown) == .alert)
    }

    @Test("a repeated key in aps or the alert is reported first, however spelled, with or without unknown keys beside it")
    func repeatedKnownKeys() throws {
        // Known keys are told apart by their match, escaped spellings too: the repeat is the
        // first finding, ahead of the errors of the values before and after it.
        let escaped = lint(#"{"aps":{"badge":-1,"sound":5,"b\u0061dge":2}}"#)
        #expect(escaped.map(\.code) == [.duplicateKey, .invalidValue, .typeMismatch])
        #expect(escaped.first?.error.path == "aps" && escaped.first?.offset == 29)
        #expect(escaped.first?.message == #"duplicate key "badge""#)
        // Beside an unknown key, the keys are compared: the first repeat is an unknown one here.
        let unknown = lint(#"{"aps":{"x":1,"badge":"1","x":2,"badge":3}}"#)
        #expect(unknown.filter { $0.severity == .error }.map(\.code) == [.duplicateKey, .typeMismatch])
        #expect(unknown.first?.message == #"duplicate key "x""# && unknown.first?.offset == 26)
        let alert = lint(#"{"aps":{"alert":{"title":1,"body":"b","title":"t"}}}"#)
        #expect(alert.map(\.code) == [.duplicateKey, .typeMismatch])
        #expect(alert.first?.error.path == "aps.alert" && alert.first?.offset == 38)

        var parser = JSONParser()
        for text in [#"{"aps":{"badge":1,"badge":1}}"#, #"{"aps":{"alert":{"body":"b","body":"b"}}}"#] {
            let error = #expect(throws: APNsPayloadError.self) { try APNsPayloadView.read(Array(text.utf8), parser: &parser) { $0.aps.badge } }
            #expect(error?.code == .duplicateKey)
        }
    }

    @Test("unknown aps keys are warnings")
    func unknownKey() {
        let diagnostics = lint(#"{"aps":{"alert":"x","colour":"red"}}"#)
        #expect(diagnostics.map(\.code) == [.unknownKey])
        #expect(diagnostics.first?.offset == 20)
    }

    @Test("a Safari push's alert action is a key APNs knows: written, read, typed and checked")
    func safariAction() throws {
        let text =
            #"{"aps":{"alert":{"title":"Flight A998 now boarding","body":"Boarding has begun.","action":"View"},"url-args":["boarding","A998"]}}"#
        #expect(lint(text).isEmpty)
        var parser = JSONParser()
        let decoded = try APNsPayload(decoding: Array(text.utf8), parser: &parser)
        guard case .fields(let fields) = decoded.aps.alert else {
            Issue.record("the alert is not a dictionary")
            return
        }
        #expect(fields.action == "View" && fields.otherKeys.isEmpty)
        #expect(try decoded.encoded() == Array(text.utf8))
        let action = try APNsPayloadView.read(Array(text.utf8), parser: &parser) { view -> String? in
            guard case .fields(let fields) = view.aps.alert else { return nil }
            return fields.action?.string
        }
        #expect(action == "View")
        let wrong = lint(#"{"aps":{"alert":{"body":"b","action":1}}}"#)
        #expect(wrong.map(\.code) == [.typeMismatch] && wrong.first?.error.path == "aps.alert.action" && wrong.first?.offset == 37)
        var model = APNsPayload(aps: APNsAPS(alert: .fields(APNsAlertFields(body: "b", otherKeys: [JSONMember("action", "View")]))))
        #expect(throws: APNsPayloadError.self) { try model.encoded() }  // a named field, set among the other keys
        model.aps.alert = .fields(APNsAlertFields(body: "b", action: "View"))
        #expect(String(decoding: try model.encoded(), as: UTF8.self) == #"{"aps":{"alert":{"body":"b","action":"View"}}}"#)
    }

    @Test("push type rules")
    func pushTypes() {
        #expect(lint(#"{"aps":{"alert":"x"}}"#, pushType: .background).map(\.code) == [.pushTypeMismatch])
        #expect(lint(#"{"aps":{"content-available":1}}"#, pushType: .alert).map(\.severity) == [.warning])
        #expect(lint(#"{"aps":{"alert":"x"}}"#, pushType: .liveactivity).map(\.code) == [.missingKey])
        let voip = #"{"aps":{},"d":""# + String(repeating: "v", count: 4500) + #""}"#
        #expect(lint(voip).map(\.code) == [.payloadTooLarge])
        #expect(lint(voip, pushType: .voip).isEmpty)
    }

    @Test("every finding is reported, not only the first")
    func allFindings() {
        let codes = lint(#"{"aps":{"badge":"1","sound":7,"content-available":2}}"#).map(\.code)
        #expect(codes == [.typeMismatch, .typeMismatch, .invalidValue])
    }
}

@Suite("Headers")
struct HeaderTests {
    @Test("derived push type and priority")
    func derived() {
        #expect(APNsHeaders(for: APNsPayload(aps: APNsAPS(alert: .text("x")))).fields.map(\.value) == ["alert", "10"])
        #expect(APNsHeaders(for: .silentSecurePush(secureId: "1")).fields.map(\.value) == ["background", "5"])
        #expect(APNsHeaders(for: APNsPayload(aps: APNsAPS(timestamp: 1, event: .end))).pushType == .liveactivity)
        #expect(APNsHeaders(for: APNsPayload(aps: APNsAPS(contentChanged: true))).pushType == .widgets)
    }

    @Test("validation")
    func validation() throws {
        try APNsHeaders(
            pushType: .alert, collapseID: String(repeating: "c", count: 64), id: "123E4567-e89b-12d3-a456-4266554400a0", topic: "com.example.app"
        ).validate()
        try APNsHeaders(pushType: .liveactivity, topic: "com.example.app.push-type.liveactivity").validate()
        func code(_ headers: APNsHeaders) -> String? {
            do {
                try headers.validate()
                return nil
            } catch {
                return error.code.rawValue
            }
        }
        #expect(code(APNsHeaders(pushType: .alert, collapseID: String(repeating: "c", count: 65))) == "invalidCollapseID")
        #expect(code(APNsHeaders(pushType: .alert, collapseID: "news\r\napns-priority: 10")) == "invalidCollapseID")
        #expect(code(APNsHeaders(pushType: .alert, collapseID: "tab\tbed")) == "invalidCollapseID")
        #expect(code(APNsHeaders(pushType: .alert, collapseID: "score-update é")) == nil)
        #expect(code(APNsHeaders(pushType: .alert, id: "not-a-uuid")) == "invalidID")
        #expect(code(APNsHeaders(pushType: .alert, expiration: -1)) == "invalidExpiration")
        #expect(code(APNsHeaders(pushType: .background, priority: 10)) == "invalidPriority")
        #expect(code(APNsHeaders(pushType: .voip, topic: "com.example.app")) == "invalidTopic")
        #expect(code(APNsHeaders(pushType: .alert, topic: "com.example.app.voip")) == "invalidTopic")
        #expect(code(APNsHeaders(pushType: .voip, topic: ".voip")) == "invalidTopic")
    }
}
