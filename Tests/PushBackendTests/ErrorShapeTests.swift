import APNs
import NotificationHubs
import PushAPNsTokens
import PushBackend
import PushCore
import PushFCM
import Testing

/// Every public error has one shape, and the modules export it: this file imports the products a
/// user would, not the module the shape is declared in.
@Suite("Errors: one shape, their descriptions as they were")
struct ErrorShapeTests {
    /// What every error offers through the shape: the code's name as its raw value and its description.
    func codeName(_ error: some CodedError) -> String {
        #expect(error.code.description == error.code.rawValue)
        return error.code.rawValue
    }

    @Test("Codes read by name; `code: message` unless the error has more to say first")
    func descriptions() throws {
        let sas = SASError(.expired, "the token expired at 1000")
        #expect(codeName(sas) == "expired" && sas.description == "expired: the token expired at 1000")
        let store = StoreError(.conflict, "alice is taken")
        #expect(codeName(store) == "conflict" && "\(store)" == "conflict: alice is taken")
        let token = APNsTokenError(.invalidKey, "not a P-256 key")
        #expect(codeName(token) == "invalidKey" && token.description == "invalidKey: not a P-256 key")

        // The ones that say more keep their own descriptions and equality.
        let json = JSONError(.invalidNumber, at: 19, "leading zeros are not allowed")
        #expect(codeName(json) == "invalidNumber" && json.description == "invalidNumber at byte 19: leading zeros are not allowed")
        #expect(json == JSONError(.invalidNumber, at: 19, "worded otherwise"))
        let payload = APNsPayloadError(.invalidValue, path: "aps.badge", offset: 17, "aps.badge is 0 or more (got -1)")
        #expect(codeName(payload) == "invalidValue" && payload.description == "invalidValue at byte 17: aps.badge is 0 or more (got -1)")
        #expect(payload == APNsPayloadError(.invalidValue, path: "aps.badge", offset: 17, "worded otherwise"))
        #expect(payload != APNsPayloadError(.invalidValue, path: "aps.sound", offset: 17, "aps.badge is 0 or more (got -1)"))
        let message = FCMMessageError(.payloadTooLarge, path: "", size: 5000, limit: 4096, "message is 5000 bytes")
        #expect(codeName(message) == "payloadTooLarge" && message.description == "payloadTooLarge: message is 5000 bytes")
        #expect(message == FCMMessageError(.payloadTooLarge, path: "", size: 5000, limit: 4096, "worded otherwise"))
        #expect(message != FCMMessageError(.payloadTooLarge, path: "", size: 5001, limit: 4096, "message is 5000 bytes"))
        let finding = APNsDiagnostic(.warning, APNsPayloadError(.unknownKey, path: "aps.sond", offset: 9, "aps.sond is not a key APNs knows"))
        #expect(finding.description == "warning: unknownKey at byte 9: aps.sond is not a key APNs knows")
        #expect(finding.location(in: Array(#"{"aps":{"sond":"a"}}"#.utf8)) == (1, 10))
        let range = ByteRangeError(.malformed, at: 6)
        #expect(codeName(range) == "malformed" && range.description == "malformed at byte 6 of the Range header")
        let resource = ResourceError(.notFound, resource: "sunset.png", "no such resource")
        #expect(codeName(resource) == "notFound" && resource.description == "sunset.png: notFound: no such resource")

        // Errors that had only a message now have a code, and describe themselves as before.
        let proxy = try #require(throws: APNsProxyError.self) { try APNsProxy(url: "http://proxy.internal:0") }
        #expect(codeName(proxy) == "invalidPort" && proxy.description == "the proxy's port is 1 to 65535")
        let schema = try #require(throws: APNsFieldSchema.ParseError.self) { try APNsFieldSchema(json: #"{"a":"float"}"#) }
        #expect(codeName(schema) == "invalidType" && schema.description.hasPrefix("at byte 5: the type of \"a\" is one of "))
    }
}
