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
        #expect(PushMessage(json: alert) == .richAlert(id: Self.id, type: "img", alert: "Sunset at 8"))
        let secure = try APNsPayload.silentSecurePush(secureId: Self.id).encoded()
        #expect(PushMessage(json: secure) == .secure(id: Self.id))
        #expect(PushMessage(json: secure).id == Self.id)
        // An alert whose text sits in a dictionary, as another sender might write it.
        let fields = message(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"richId":"\#(Self.id)","richType":"img"}"#)
        #expect(fields == .richAlert(id: Self.id, type: "img", alert: "B"))
    }

    @Test("Anything else is other: ids not the backend's, missing or extra keys, mixed shapes, not JSON")
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
            #"{"aps":{"content-available":1},"richId":"\#(Self.id)","richType":"img","richMessage":"m","x":1}"#,
            #"{"aps":{"alert":"hi"}}"#,
            #"{"aps":{"content-available":1},"secureId":"\#(Self.id)","secureId":"\#(Self.id)"}"#,  // repeated key
            #"{"secureId":"\#(Self.id)"}"#,  // no aps
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
        #expect(PushMessage(userInfo: alert) == .richAlert(id: Self.id, type: "img", alert: "Hi"))
        let silent: [AnyHashable: Any] = ["aps": ["content-available": 1], "richId": Self.id, "richType": "img", "richMessage": "m"]
        #expect(PushMessage(userInfo: silent) == .richSilent(id: Self.id, type: "img", message: "m"))
        #expect(PushMessage(userInfo: ["aps": ["content-available": 1], "secureId": Date()]) == .other)
        #expect(PushMessage(userInfo: [1: "x"]) == .other)
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

    @Test("The generated client is from the contract as it stands (scripts/generate-client)")
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
                text.contains("// openapi.yaml SHA-256: \(digest)\n"), "\(file) is from another version of openapi.yaml: run scripts/generate-client")
        }
    }
}
