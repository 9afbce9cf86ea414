import APNs
import NotificationHubs
import PushAPNsTokens
import PushBackend
import PushCore
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
