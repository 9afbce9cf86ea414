import PushAPNs
import PushInternals
public import PushJSON
import PushSAS

/// A device registered with the hub (`/installations/{id}`), as a backend keeps it: an APNs device
/// token or an FCM registration token, tags such as `username:alice`, and optional templates.
public struct Installation: Sendable, Hashable {
    /// The push service the device is reached through; its notifications are sent in the
    /// matching format (`apple`, `fcmv1`).
    @nonexhaustive
    public enum Platform: String, Sendable, Hashable, CustomStringConvertible {
        /// Apple devices: `pushChannel` is the APNs device token in hex.
        case apns
        /// Android (and other FCM) devices: `pushChannel` is the FCM registration token.
        case fcmv1

        public var description: String { rawValue }

        /// The `ServiceBusNotification-Format` of this platform's native sends (also the name the
        /// hub gives the platform in its answers).
        package var format: String {
            switch self {
            case .apns: "apple"
            case .fcmv1: "fcmv1"
            }
        }

        package init?(format: String) {
            switch format {
            case "apple": self = .apns
            case "fcmv1": self = .fcmv1
            default: return nil
            }
        }

        /// Checks a device handle's form before anything is sent.
        package func validateDeviceHandle(_ handle: String) throws(NotificationHubError) {
            switch self {
            case .apns:
                // Hexadecimal, 16 to 200 digits (today's tokens have 64).
                guard (16...200).contains(handle.utf8.count), handle.utf8.allSatisfy({ hexDigitValue($0) <= 15 }) else {
                    throw NotificationHubError(.badRequest, "device handle \(handle.prefix(20).debugDescription)… is not an APNs device token in hex")
                }
            case .fcmv1:
                // FCM's tokens are URL-safe text (letters, digits, `-`, `_`, `:`), about 160 characters today.
                let isTokenByte = { (byte: UInt8) in
                    hexDigitValue(byte) <= 15 || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || byte == UInt8(ascii: "-")
                        || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
                }
                guard (16...4096).contains(handle.utf8.count), handle.utf8.allSatisfy(isTokenByte) else {
                    throw NotificationHubError(.badRequest, "device handle \(handle.prefix(20).debugDescription)… is not an FCM registration token")
                }
            }
        }
    }

    /// What a template send becomes on this device: the body (and headers) with the send's
    /// properties put in by the hub's expression language (`$(prop)`, `#(prop)`, `.(prop, n)`,
    /// `{a + ' ' + b}`).
    public struct Template: Sendable, Hashable {
        /// The template's body, a JSON text with `$(property)` placeholders.
        public var body: String
        /// Headers of the platform's request (`apns-priority`, …), expressions allowed.
        public var headers: [String: String]
        public var tags: [String]
        /// When the hub stops using the template, as the service writes it (ISO 8601); nil for never.
        public var expiry: String?

        public init(body: String, headers: [String: String] = [:], tags: [String] = [], expiry: String? = nil) {
            self.body = body
            self.headers = headers
            self.tags = tags
            self.expiry = expiry
        }
    }

    public var installationID: String
    public var platform: Platform
    /// The APNs device token in hex, or the FCM registration token.
    public var pushChannel: String
    public var tags: [String]
    public var userID: String?
    public var templates: [String: Template]
    /// Name-value pairs the hub keeps with the installation (`pushVariables`); kept here so that an
    /// installation read and written back loses none that another SDK set.
    public var pushVariables: [String: String]

    public init(
        installationID: String, platform: Platform = .apns, pushChannel: String, tags: [String] = [], userID: String? = nil,
        templates: [String: Template] = [:], pushVariables: [String: String] = [:]
    ) {
        self.installationID = installationID
        self.platform = platform
        self.pushChannel = pushChannel
        self.tags = tags
        self.userID = userID
        self.templates = templates
        self.pushVariables = pushVariables
    }

    /// Checks the id, the device token and every tag before anything is sent.
    public func validate() throws(NotificationHubError) {
        try Self.validateID(installationID)
        try platform.validateDeviceHandle(pushChannel)
        for tag in tags { try TagExpression.validateTag(tag) }
        for template in templates.values { for tag in template.tags { try TagExpression.validateTag(tag) } }
    }

    /// 1 to 256 characters, none of them a control character.
    static func validateID(_ id: String) throws(NotificationHubError) {
        guard (1...256).contains(id.utf8.count), !id.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw NotificationHubError(.badRequest, "an installation id is 1 to 256 characters without control characters")
        }
    }

    /// The JSON the hub takes and returns.
    public var json: JSON {
        var members = [
            JSONMember("installationId", .string(installationID)), JSONMember("platform", .string(platform.rawValue)),
            JSONMember("pushChannel", .string(pushChannel)),
        ]
        // Left out when empty, as the hub writes it.
        if !tags.isEmpty { members.append(JSONMember("tags", .array(tags.map { .string($0) }))) }
        if let userID { members.append(JSONMember("userId", .string(userID))) }
        if !pushVariables.isEmpty {
            members.append(JSONMember("pushVariables", .object(pushVariables.keys.sorted().map { JSONMember($0, .string(pushVariables[$0]!)) })))
        }
        if !templates.isEmpty {
            members.append(
                JSONMember(
                    "templates",
                    .object(
                        templates.keys.sorted().map { name in
                            JSONMember(name, templates[name]!.json)
                        })))
        }
        return .object(members)
    }

    func jsonBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        try? json.write(into: &bytes)  // strings only: cannot fail
        return bytes
    }

    /// Reads the hub's JSON (keys it adds, such as `expirationTime` and `pushChannelExpired`, are ignored).
    /// - Throws: ``NotificationHubError`` `badRequest` when it is not an installation.
    public init(json bytes: [UInt8]) throws(NotificationHubError) {
        var parser = JSONParser()
        let document: JSONDocument
        do throws(JSONError) { document = try parser.parse(bytes) } catch {
            throw NotificationHubError(.badRequest, "installation JSON: \(error)")
        }
        let root = document.root
        guard let id = root["installationId"]?.string, let channel = root["pushChannel"]?.string else {
            throw NotificationHubError(.badRequest, "installation JSON needs installationId and pushChannel")
        }
        let platformName = root["platform"]?.string ?? "apns"
        guard let platform = Platform(rawValue: platformName.lowercased()) else {
            throw NotificationHubError(
                .badRequest, "installation JSON: PushCore handles the apns and fcmv1 platforms, not \(platformName.debugDescription)")
        }
        var installation = Installation(installationID: id, platform: platform, pushChannel: channel)
        installation.userID = root["userId"]?.string
        if let tags = root["tags"] {
            installation.tags = tags.elements.compactMap { $0.string }
        }
        if let variables = root["pushVariables"] {
            for member in variables.members {
                if let name = member.key.string, let value = member.value.string { installation.pushVariables[name] = value }
            }
        }
        if let templates = root["templates"] {
            for member in templates.members {
                guard let name = member.key.string, let template = Template(json: member.value) else { continue }
                installation.templates[name] = template
            }
        }
        self = installation
    }
}

extension Installation.Template {
    /// Reads the hub's JSON of one template; nil without a string `body`.
    package init?(json value: JSONValue) {
        guard let body = value["body"]?.string else { return nil }
        var headers: [String: String] = [:]
        if let fields = value["headers"] {
            for header in fields.members {
                if let name = header.key.string, let text = header.value.string { headers[name] = text }
            }
        }
        self.init(
            body: body, headers: headers, tags: value["tags"]?.elements.compactMap { $0.string } ?? [], expiry: value["expiry"]?.string)
    }

    var json: JSON {
        var members = [JSONMember("body", .string(body))]
        if !headers.isEmpty { members.append(JSONMember("headers", .object(headers.keys.sorted().map { JSONMember($0, .string(headers[$0]!)) }))) }
        if let expiry { members.append(JSONMember("expiry", .string(expiry))) }
        if !tags.isEmpty { members.append(JSONMember("tags", .array(tags.map { .string($0) }))) }
        return .object(members)
    }
}

/// One JSON Patch (RFC 6902) operation on an installation, in the forms the hub accepts.
public enum InstallationPatch: Sendable, Hashable {
    case addTag(String)
    case removeTag(String)
    case replaceTags([String])
    case replacePushChannel(String)
    case replaceUserID(String)
    case addTemplate(name: String, Installation.Template)
    case removeTemplate(name: String)

    func validate() throws(NotificationHubError) {
        switch self {
        case .addTag(let tag), .removeTag(let tag): try TagExpression.validateTag(tag)
        case .replaceTags(let tags): for tag in tags { try TagExpression.validateTag(tag) }
        case .replacePushChannel(let channel):
            // The operation does not say the platform: a handle of either form is taken.
            do throws(NotificationHubError) {
                try Installation.Platform.apns.validateDeviceHandle(channel)
            } catch {
                try Installation.Platform.fcmv1.validateDeviceHandle(channel)
            }
        case .replaceUserID: break
        case .addTemplate(let name, let template):
            try Installation.validateID(name)
            for tag in template.tags { try TagExpression.validateTag(tag) }
        case .removeTemplate(let name): try Installation.validateID(name)
        }
    }

    var json: JSON {
        func operation(_ op: String, _ path: String, _ value: JSON? = nil) -> JSON {
            var members = [JSONMember("op", .string(op)), JSONMember("path", .string(path))]
            if let value { members.append(JSONMember("value", value)) }
            return .object(members)
        }
        switch self {
        case .addTag(let tag): return operation("add", "/tags", .string(tag))
        case .removeTag(let tag): return operation("remove", "/tags/" + tag)
        case .replaceTags(let tags): return operation("replace", "/tags", .array(tags.map { .string($0) }))
        case .replacePushChannel(let channel): return operation("replace", "/pushChannel", .string(channel))
        case .replaceUserID(let user): return operation("replace", "/userId", .string(user))
        case .addTemplate(let name, let template):
            // The hub takes the template as a JSON text inside the string value.
            var text: [UInt8] = []
            try? template.json.write(into: &text)
            return operation("add", "/templates/" + jsonPointerEscaped(name), .string(String(decoding: text, as: UTF8.self)))
        case .removeTemplate(let name): return operation("remove", "/templates/" + jsonPointerEscaped(name))
        }
    }
}

/// A JSON Pointer (RFC 6901) token for `text`: `~` → `~0`, `/` → `~1`.
package func jsonPointerEscaped(_ text: String) -> String {
    text.replacing("~", with: "~0").replacing("/", with: "~1")
}

/// The text a JSON Pointer token stands for: `~1` → `/`, then `~0` → `~`.
package func jsonPointerUnescaped(_ token: some StringProtocol) -> String {
    String(token).replacing("~1", with: "/").replacing("~0", with: "~")
}
