import Foundation
import PushFCM
import PushJSON
import Testing

@Suite("FCM v1 messages: lint")
struct FCMLintTests {
    /// The findings of `json` as `code@offset`, the offset given as the index of `marker`'s first
    /// occurrence when the test needs one.
    func findings(_ json: String) throws -> [String] {
        try FCMLinter.lint(Array(json.utf8)).map { "\($0.code)@\($0.offset)" }
    }

    func offset(of needle: String, in json: String) -> Int {
        json.utf8.count - json[json.range(of: needle)!.lowerBound...].utf8.count
    }

    @Test("A message as Microsoft's and Google's samples write it is clean, in either spelling of the keys")
    func cleanMessages() throws {
        let snake = #"""
            {"message":{"topic":"news","notification":{"title":"Breaking","body":"Read it"},"data":{"story":"42"},
             "android":{"collapse_key":"news","priority":"high","ttl":"86400s","notification":{"click_action":"OPEN","channel_id":"n",
             "body_loc_args":["a"],"notification_count":2,"sticky":true}},
             "apns":{"headers":{"apns-priority":"5"},"payload":{"aps":{"badge":1}}},
             "webpush":{"headers":{"TTL":"60"},"fcm_options":{"link":"https://example.com"}},"fcm_options":{"analytics_label":"a-b_c.d~e%f"}},
             "validate_only":false}
            """#
        #expect(try findings(snake) == [])
        let camel =
            #"{"message":{"token":"t","android":{"collapseKey":"k","restrictedPackageName":"p","directBootOk":true,"ttl":"1.5s"},"fcmOptions":{"analyticsLabel":"x"}}}"#
        #expect(try findings(camel) == [])
    }

    @Test("Data values that are not strings, and reserved keys, at their bytes; escaped keys are read as decoded")
    func dataMaps() throws {
        let json = #"{"message":{"data":{"count":3,"from":"x","g\u006fogle.sent":"y","gcm.n":"z","ok":"v"}}}"#
        #expect(
            try findings(json) == [
                "dataValueNotString@\(offset(of: "3,", in: json))", "reservedDataKey@\(offset(of: #""from""#, in: json))",
                "reservedDataKey@\(offset(of: #""g\u006f"#, in: json))", "reservedDataKey@\(offset(of: #""gcm.n""#, in: json))",
            ])
        let android = #"{"message":{"android":{"data":{"message_type":"x","a":"1","a":"2"}}}}"#
        #expect(
            try findings(android) == [
                "reservedDataKey@\(offset(of: #""message_type""#, in: android))", "duplicateKey@\(offset(of: #""a":"2""#, in: android))",
            ])
        // Headers hold strings, but their names are not data keys.
        let headers = #"{"message":{"apns":{"headers":{"from":"x","apns-priority":10}}}}"#
        #expect(try findings(headers) == ["typeMismatch@\(offset(of: "10}", in: headers))"])
    }

    @Test(
        "ttl and priority: a malformed or too long ttl, a priority FCM does not know",
        arguments: [
            #""ttl":"1h""#, #""ttl":"86400""#, #""ttl":"-5s""#, #""ttl":"1.s""#, #""ttl":"1.0000000001s""#, #""ttl":"2419201s""#, #""ttl":3600"#,
            #""priority":"urgent""#, #""priority":10"#,
        ])
    func androidRules(field: String) throws {
        let json = #"{"message":{"android":{"# + field + "}}}"
        let code = field.hasPrefix(#""ttl""#) ? "invalidTTL" : "invalidPriority"
        #expect(try findings(json) == ["\(code)@\(offset(of: ":", in: field) + 1 + offset(of: field, in: json))"])
    }

    @Test("Unknown keys, wrong types, more than one target, a missing message")
    func structure() throws {
        let unknown = #"{"message":{"notification":{"title":"t","sound":"x"},"priority":"high"}}"#
        #expect(
            try findings(unknown) == ["unknownKey@\(offset(of: #""sound""#, in: unknown))", "unknownKey@\(offset(of: #""priority""#, in: unknown))"])
        let types = #"{"message":{"notification":{"title":5},"android":[],"apns":{"payload":"x"}}}"#
        #expect(
            try findings(types) == [
                "typeMismatch@\(offset(of: "5}", in: types))", "typeMismatch@\(offset(of: "[]", in: types))",
                "typeMismatch@\(offset(of: #""x""#, in: types))",
            ])
        let targets = #"{"message":{"token":"a","topic":"b","condition":"c"}}"#
        #expect(try findings(targets) == ["multipleTargets@\(offset(of: #""topic""#, in: targets))"])
        #expect(try findings(#"{"notification":{}}"#) == ["unknownKey@1", "missingMessage@0"])
        #expect(try findings("[]") == ["missingMessage@0"])
        #expect(try findings(#"{"message":"hi"}"#) == ["typeMismatch@11"])
        let twice = #"{"message":{"android":{"ttl":"1s","ttl":"2s"}}}"#
        #expect(try findings(twice) == ["duplicateKey@\(offset(of: #""ttl":"2s""#, in: twice))"])
    }

    @Test("Values: color, link, analytics label")
    func values() throws {
        let json =
            #"{"message":{"android":{"notification":{"color":"red"}},"webpush":{"fcm_options":{"link":"http://x.example"}},"fcm_options":{"analytics_label":"no spaces"}}}"#
        #expect(
            try findings(json) == [
                "invalidValue@\(offset(of: #""red""#, in: json))", "invalidValue@\(offset(of: #""http:"#, in: json))",
                "invalidValue@\(offset(of: #""no spaces""#, in: json))",
            ])
    }

    @Test("Over 4096 bytes: payloadTooLarge at the first byte past the limit")
    func size() throws {
        let json = #"{"message":{"data":{"blob":""# + String(repeating: "a", count: 4100) + #""}}}"#
        let diagnostics = try FCMLinter.lint(Array(json.utf8))
        #expect(diagnostics.map(\.code) == [.payloadTooLarge] && diagnostics[0].offset == 4096 && diagnostics[0].error.size == json.utf8.count)
    }

    @Test("What the writer writes, lint passes; bytes that are not JSON are a JSONError")
    func writerAgrees() throws {
        var parser = JSONParser()
        let bytes = try FCMMessage(notification: FCMNotification(title: "a\u{0}b"), data: ["k": "\u{1F305}"]).encoded()
        #expect(try FCMLinter.lint(bytes, parser: &parser).isEmpty)
        #expect(throws: JSONError.self) { try FCMLinter.lint(Array(#"{"message":"#.utf8)) }
    }
}
