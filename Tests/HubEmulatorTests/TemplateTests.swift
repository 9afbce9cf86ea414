import HubEmulator
import HubTestSupport
import NotificationHubs
import PushCore
import PushFCM
import Testing

@Suite("Templates: the hub's expression language, and one send to every platform")
struct TemplateTests {
    func expand(_ template: String, _ properties: [String: String]) throws -> String {
        String(decoding: try TemplateExpansion.expand(template, properties: .init(properties)), as: UTF8.self)
    }

    @Test("$(), clipped $( , n), .( , n) with dots, %(), #() as a number, literals and {a + b}, names in any case")
    func expressions() throws {
        let properties = ["Message": "Sunset at \"the pier\"", "count": "3", "code": "007", "user": "Bob", "path": "a b/c"]
        #expect(try expand(#"{"alert":"$(message)"}"#, properties) == #"{"alert":"Sunset at \"the pier\""}"#)
        #expect(try expand(#"{"alert":"$(missing)"}"#, properties) == #"{"alert":""}"#)
        #expect(
            try expand(#"{"a":"$(message, 6)","b":".(message, 10)","c":".(user, 10)"}"#, properties) == #"{"a":"Sunset","b":"Sunset ...","c":"Bob"}"#)
        #expect(try expand(#"{"u":"https://x.example/%(path)"}"#, properties) == #"{"u":"https://x.example/a%20b%2Fc"}"#)
        #expect(try expand(##"{"badge":"#(count)","code":"#(code)","text":"$(count)"}"##, properties) == #"{"badge":3,"code":"007","text":"3"}"#)
        #expect(try expand(#"{"alert":"{$(user) + ' sent ' + \"a photo\"}"}"#, properties) == #"{"alert":"Bob sent a photo"}"#)
        #expect(try expand(#"{"alert":"Hello $(user)!","n":[1,"$(count)"]}"#, properties) == #"{"alert":"Hello Bob!","n":[1,"3"]}"#)
        #expect(try TemplateExpansion.expandText("$(count)0", properties: .init(properties)) == "30")
        for broken in [#"{"alert":"$(user"}"#, #"{"alert":"{$(user) $(count)}"}"#, #"{"alert":"{'open}"}"#, "not json", #"{"a":"$(user, x)"}"#] {
            #expect(throws: TemplateExpansion.Failure.self, "\(broken)") { try expand(broken, properties) }
        }
    }

    @Test("A template send's request: the template format, the properties as one JSON object of strings, the tags")
    func request() throws {
        let endpoint = try HubEndpoint(connection: ConnectionString(fullAccess), hubName: "hub")
        let request = try endpoint.templateSendRequest(
            properties: ["title": "Hi \"you\"", "count": "2"], to: .tag("username:alice"), authorization: "SharedAccessSignature x")
        #expect(request.method == "POST" && request.url.hasSuffix("/hub/messages?api-version=2020-06"))
        #expect(request.header("ServiceBusNotification-Format") == "template" && request.header("ServiceBusNotification-Tags") == "username:alice")
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"count":"2","title":"Hi \"you\""}"#)
    }

    static let pixel = "dGVzdC1waXhlbA:APA91bH" + String(repeating: "Pq-_3", count: 28)
    static let iphoneTemplate = Installation.Template(
        body: ##"{"aps":{"alert":{"title":"$(title)","body":"$(message)"},"badge":"#(count)"},"richId":"$(richId)","extra":"$(blob)"}"##,
        headers: ["apns-push-type": "alert", "apns-priority": "10"], expiry: "2030-01-01T00:00:00Z")
    static let androidTemplate = Installation.Template(
        body: #"{"message":{"notification":{"title":"$(title)","body":"$(message)"},"data":{"richId":"$(richId)","count":"$(count)"}}}"#)

    /// Alice's iPhone and Pixel under `username:alice`, each with its `alert` template.
    static func registerAlicesPhones(_ hub: NotificationHubClient) async throws {
        try await hub.createOrUpdate(
            Installation(installationID: "iphone", pushChannel: alice, tags: ["username:alice"], templates: ["alert": iphoneTemplate]))
        try await hub.createOrUpdate(
            Installation(
                installationID: "pixel", platform: .fcmv1, pushChannel: pixel, tags: ["username:alice"], templates: ["alert": androidTemplate]))
    }

    @Test(
        "One template send reaches an iPhone and an Android phone, each with its own payload; an expansion over APNs' limit fails that device alone")
    func crossPlatform() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            try await Self.registerAlicesPhones(hub)
            // The hub tags each template with its own name too.
            var stored = Self.iphoneTemplate
            stored.tags.append("alert")
            #expect(try await hub.installation(id: "iphone").templates["alert"] == stored)

            let properties = ["title": "Sunset", "message": "at \"the pier\"", "count": "2", "richId": "4f1c", "blob": ""]
            let sent = try await hub.send(templateProperties: properties, to: .tag("username:alice"))
            let byPlatform = Dictionary(uniqueKeysWithValues: emulator.deliveries.map { ($0.platform, $0) })
            #expect(byPlatform.count == 2)
            #expect(
                byPlatform[.apns].map { String(decoding: $0.payload, as: UTF8.self) }
                    == #"{"aps":{"alert":{"title":"Sunset","body":"at \"the pier\""},"badge":2},"richId":"4f1c","extra":""}"#)
            #expect(byPlatform[.apns]?.apnsHeaders == ["apns-push-type": "alert", "apns-priority": "10"] && byPlatform[.apns]?.deviceHandle == alice)
            #expect(
                byPlatform[.fcmv1].map { String(decoding: $0.payload, as: UTF8.self) }
                    == #"{"message":{"notification":{"title":"Sunset","body":"at \"the pier\""},"data":{"richId":"4f1c","count":"2"}}}"#)
            let sentID = try #require(sent.notificationID)
            let outcome = try #require(emulator.outcome(of: sentID, in: "hub"))
            #expect(outcome.delivered == [.apns: 1, .fcmv1: 1] && outcome.failures.isEmpty)

            emulator.reset()
            var large = properties
            large["blob"] = String(repeating: "b", count: 4200)  // only the iPhone's template uses it
            let partly = try await hub.send(templateProperties: large, to: .tag("username:alice"))
            #expect(emulator.deliveries.map(\.deviceHandle) == [Self.pixel])
            let partlyID = try #require(partly.notificationID)
            let counted = try #require(emulator.outcome(of: partlyID, in: "hub"))
            #expect(counted.delivered == [.fcmv1: 1] && counted.failures.map(\.installationID) == ["iphone"])
            #expect(counted.failures.first?.reason.contains("too large") == true, "\(counted.failures)")
        }
    }

    @Test("A template's own tags count; template sends go to tags, not devices; properties are strings")
    func targeting() async throws {
        try await withEmulator { emulator, base in
            let hub = try client(base)
            var template = Self.androidTemplate
            template.tags = ["lang:fr"]
            try await hub.createOrUpdate(
                Installation(installationID: "pixel", platform: .fcmv1, pushChannel: Self.pixel, templates: ["fr": template]))
            _ = try await hub.send(templateProperties: ["title": "Bonjour"], to: .tag("lang:fr"))
            #expect(emulator.deliveries.count == 1)
            _ = try await hub.send(templateProperties: ["title": "Hello"], to: .tag("lang:en"))
            #expect(emulator.deliveries.count == 1)
            // None at all is a send the service takes (the .NET SDK's recordings have one); a nameless one is not.
            _ = try await hub.send(templateProperties: [:], to: .tag("lang:fr"))
            #expect(emulator.deliveries.count == 2)
            do throws(NotificationHubError) {
                _ = try await hub.send(templateProperties: ["": "x"], to: .broadcast)
                Issue.record("a template send with a nameless property was sent")
            } catch {
                #expect(error.code == .badRequest && error.status == nil)
            }
        }
    }
}
