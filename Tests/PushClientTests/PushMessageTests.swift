import Crypto
import Foundation
import PushAPNs
import PushClient
import PushJSON
import Testing

@Suite("PushClient: the push as the app receives it")
struct PushMessageTests {
    static let id = "0123456789abcdef0123456789abcdef"

    func message(_ json: String) -> PushMessage { PushMessage(json: Array(json.utf8)) }

    @Test("The backend's three shapes, from the payloads the backend builds")
    func shapes() throws {
        let silent = try APNsPayload.silentRichPush(richId: Self.id, richType: "img", richMessage: "Sunset \"at\" 8 🌅").encoded()
        #expect(PushMessage(json: silent) == .richSilent(id: Self.id, type: "img", message: "Sunset \"at\" 8 🌅"))
        let alert = try APNsPayload.richAlert(richId: Self.id, richType: "img", message: "Sunset at 8").encoded()
        #expect(PushMessage(json: alert) == .richAlert(id: Self.id, type: "img", alert: PushAlert(body: PushAlertText(text: "Sunset at 8"))))
        let secure = try APNsPayload.silentSecurePush(secureId: Self.id).encoded()
        #expect(PushMessage(json: secure) == .secure(id: Self.id))
        #expect(PushMessage(json: secure).id == Self.id)
        // An alert whose text sits in a dictionary, as another sender might write it.
        let fields = message(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"richId":"\#(Self.id)","richType":"img"}"#)
        #expect(fields == .richAlert(id: Self.id, type: "img", alert: PushAlert(title: PushAlertText(text: "T"), body: PushAlertText(text: "B"))))
    }

    @Test("Alerts are kept whole: localized lines, title and subtitle, category, thread, sound and badge")
    func wholeAlerts() {
        let localized = message(
            #"{"aps":{"alert":{"title":"New photo","title-loc-key":"PHOTO_TITLE","subtitle-loc-key":"FROM","subtitle-loc-args":["Ann"],"#
                + #""loc-key":"PHOTO_BODY","loc-args":["Ann","8"]},"mutable-content":1,"category":"PHOTO","thread-id":"ann","#
                + #""sound":"chime.caf","badge":3},"richId":"\#(Self.id)","richType":"img"}"#)
        let expected = PushAlert(
            title: PushAlertText(text: "New photo", localizationKey: "PHOTO_TITLE"),
            subtitle: PushAlertText(localizationKey: "FROM", localizationArguments: ["Ann"]),
            body: PushAlertText(localizationKey: "PHOTO_BODY", localizationArguments: ["Ann", "8"]), category: "PHOTO", threadID: "ann",
            sound: "chime.caf", badge: 3)
        #expect(localized == .richAlert(id: Self.id, type: "img", alert: expected))
        let critical = message(
            #"{"aps":{"alert":{"title":"T"},"mutable-content":1,"sound":{"critical":1,"name":"siren.caf","volume":1}},"#
                + #""richId":"\#(Self.id)","richType":"img"}"#)
        #expect(critical == .richAlert(id: Self.id, type: "img", alert: PushAlert(title: PushAlertText(text: "T"), sound: "siren.caf")))
    }

    @Test("A secure alert: the id with a placeholder the extension replaces")
    func secureAlert() {
        let placeholder = message(
            #"{"aps":{"alert":{"loc-key":"SECURE_PLACEHOLDER","body":"You have a new message"},"mutable-content":1},"#
                + #""secureId":"\#(Self.id)"}"#)
        let expected = PushAlert(body: PushAlertText(text: "You have a new message", localizationKey: "SECURE_PLACEHOLDER"))
        #expect(placeholder == .secureAlert(id: Self.id, placeholder: expected))
        #expect(placeholder.id == Self.id)
    }

    @Test("Forward compatible: keys a later backend adds are ignored; a repeated key counts once, its last value")
    func forwardCompatible() {
        let cases: [(String, PushMessage)] = [
            (
                #"{"aps":{"content-available":1},"richId":"\#(Self.id)","richType":"img","richMessage":"m","x":1}"#,
                PushMessage.richSilent(id: Self.id, type: "img", message: "m")
            ),
            (
                #"{"aps":{"content-available":1,"new-aps-key":true},"secureId":"\#(Self.id)","v":2,"extra":{"a":[1]}}"#,
                PushMessage.secure(id: Self.id)
            ),
            (#"{"aps":{"content-available":1},"secureId":"\#(Self.id)","secureId":"\#(Self.id)"}"#, PushMessage.secure(id: Self.id)),
            (#"{"aps":{"content-available":1},"secureId":"not-an-id","secureId":"\#(Self.id)"}"#, PushMessage.secure(id: Self.id)),
            (#"{"aps":{"content-available":1},"secureId":"\#(Self.id)","secureId":"not-an-id"}"#, PushMessage.other),
        ]
        for (json, expected) in cases { #expect(message(json) == expected, "\(json)") }
    }

    @Test("Anything else is other: ids not the backend's, missing keys, mixed shapes, not JSON")
    func others() {
        let cases = [
            #"{"aps":{"content-available":1},"secureId":"\#(Self.id.uppercased())"}"#,  // uppercase
            #"{"aps":{"content-available":1},"secureId":"1"}"#,  // the tutorial's integer ids
            #"{"aps":{"content-available":1},"secureId":1}"#,
            #"{"aps":{"content-available":1},"secureId":"../\#(Self.id.dropFirst(3))"}"#,
            #"{"aps":{"content-available":1},"secureId":"\#(Self.id)","richId":"\#(Self.id)"}"#,
            #"{"aps":{"alert":"hi"},"secureId":"\#(Self.id)"}"#,  // a secure id beside shown text
            #"{"aps":{"content-available":1},"richId":"\#(Self.id)","richType":"img"}"#,  // no message
            #"{"aps":{"alert":"hi"},"richId":"\#(Self.id)","richType":"img"}"#,  // no mutable-content
            #"{"aps":{"alert":"hi","mutable-content":1},"richId":"\#(Self.id)","richType":""}"#,
            #"{"aps":{"alert":"hi"}}"#,
            #"{"secureId":"\#(Self.id)"}"#,  // no aps
            #"{"aps":{"alert":"hi","mutable-content":1},"secureId":"\#(Self.id)","richId":"\#(Self.id)","richType":"img"}"#,
            #"{"aps":{"alert":{},"mutable-content":1},"secureId":"\#(Self.id)"}"#,  // nothing to show
            #"[{"aps":{"content-available":1},"secureId":"\#(Self.id)"}]"#,
            "not json",
            "",
        ]
        for json in cases { #expect(message(json) == .other, "\(json)") }
    }

    @Test("From userInfo, as the system hands it over")
    func userInfo() {
        let secure: [AnyHashable: Any] = ["aps": ["content-available": 1], "secureId": Self.id]
        #expect(PushMessage(userInfo: secure) == .secure(id: Self.id))
        let alert: [AnyHashable: Any] = ["aps": ["alert": ["body": "Hi"], "mutable-content": 1], "richId": Self.id, "richType": "img"]
        #expect(PushMessage(userInfo: alert) == .richAlert(id: Self.id, type: "img", alert: PushAlert(body: PushAlertText(text: "Hi"))))
        let silent: [AnyHashable: Any] = ["aps": ["content-available": 1], "richId": Self.id, "richType": "img", "richMessage": "m"]
        #expect(PushMessage(userInfo: silent) == .richSilent(id: Self.id, type: "img", message: "m"))
        #expect(PushMessage(userInfo: ["aps": ["content-available": 1], "secureId": Date()]) == .other)
        #expect(PushMessage(userInfo: [1: "x"]) == .other)
    }

    /// Every payload of this test file and of `Corpus/`, from its bytes and from the `userInfo`
    /// the system builds of them with `JSONSerialization`.
    @Test("Both entry points agree on every input")
    func entryPointsAgree() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var inputs: [[UInt8]] = []
        for folder in ["Corpus/valid", "Corpus/invalid"] {
            let directory = root.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".json") {
                inputs.append(Array(try Data(contentsOf: directory.appendingPathComponent(name))))
            }
        }
        let id = Self.id
        for json in [
            #"{"aps":{"content-available":true},"secureId":"\#(id)"}"#, #"{"aps":{"content-available":1.0},"secureId":"\#(id)"}"#,
            #"{"aps":{"content-available":0},"secureId":"\#(id)"}"#, #"{"aps":{"mutable-content":true,"alert":"a"},"secureId":"\#(id)"}"#,
            #"{"aps":{"alert":"a","mutable-content":1,"badge":1.5},"secureId":"\#(id)"}"#,
            #"{"aps":{"alert":"a","mutable-content":1,"badge":18446744073709551615},"secureId":"\#(id)"}"#,
            #"{"aps":{"alert":"a","mutable-content":1,"badge":-0},"secureId":"\#(id)"}"#,
            #"{"aps":{"alert":"a","mutable-content":1,"badge":1e2},"secureId":"\#(id)"}"#,
            #"{"aps":{"content-available":1},"secureId":"\#(id)","secureId":"\#(id.uppercased())"}"#,
            #"{"aps":{"content-available":1},"aps":{"alert":"x","mutable-content":1},"secureId":"\#(id)"}"#,
            #"{"aps":{"content-available":1},"richId":"\#(id)","richType":"img","richMessage":null}"#,
            #"{"aps":{"content-available":1},"richId":"\#(id)","richType":"img","richMessage":"m","secureId":null}"#,
        ] {
            inputs.append(Array(json.utf8))
        }
        var compared = 0
        for bytes in inputs {
            guard let userInfo = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [AnyHashable: Any] else { continue }
            #expect(PushMessage(json: bytes) == PushMessage(userInfo: userInfo), "\(String(decoding: bytes, as: UTF8.self))")
            compared += 1
        }
        #expect(compared > 100)
    }
}

@Suite("PushClient: headers and secrets")
struct PushClientPartsTests {
    @Test("Repr-Digest: the SHA-256 member of the dictionary, parameters ignored; malformed ones refused")
    func reprDigest() {
        let digest = Array(SHA256.hash(data: Array("image".utf8)))
        let encoded = Data(digest).base64EncodedString()
        #expect(ReprDigest.sha256(in: "sha-256=:\(encoded):") == digest)
        #expect(ReprDigest.sha256(in: "sha-512=:AAAA:, sha-256=:\(encoded):;note=1") == digest)
        #expect(ReprDigest.sha256(in: "sha-512=:\(encoded):") == nil)
        #expect(ReprDigest.sha256(in: "sha-256=:AAAA:") == nil)  // not 32 bytes
        #expect(ReprDigest.sha256(in: "sha-256=\(encoded)") == nil)
        #expect(ReprDigest.sha256(in: "") == nil)
    }

    @Test("Content-Range of a 206")
    func contentRange() {
        #expect(ContentRange("bytes 10-19/100") == ContentRange("bytes 10-19/100") && ContentRange("bytes 10-19/100")?.first == 10)
        #expect(ContentRange("bytes 10-19/100")?.length == 100)
        for bad in ["bytes */100", "bytes 20-10/100", "bytes 0-100/100", "items 0-1/2", "bytes 0-1", "bytes -1-2/3"] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
    }

    @Test("Credentials never show their password")
    func credentials() {
        let credentials = PushCredentials(user: "alice", password: "hunter2-secret")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [credentials.description, credentials.debugDescription, "\(credentials)", String(reflecting: credentials), dumped] {
            #expect(!text.contains("hunter2") && text.contains("alice"), "\(text)")
        }
    }

    @Test("The generated client is from the contract as it stands (scripts/generate-openapi)")
    func generatedClientIsCurrent() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let contract = try Data(contentsOf: root.appendingPathComponent("Sources/PushBackend/openapi.yaml"))
        let digest = SHA256.hash(data: contract).map { String(format: "%02x", $0) }.joined()
        let generated = root.appendingPathComponent("Sources/PushClient/Generated")
        let files = try FileManager.default.contentsOfDirectory(atPath: generated.path).filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOf: generated.appendingPathComponent(file), encoding: .utf8)
            #expect(
                text.contains("// openapi.yaml SHA-256: \(digest)\n"), "\(file) is from another version of openapi.yaml: run scripts/generate-openapi"
            )
        }
    }
}
