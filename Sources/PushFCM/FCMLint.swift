public import PushJSON

/// One finding of ``FCMLinter``: an error or a warning, with its ``FCMMessageError``.
public typealias FCMDiagnostic = PayloadDiagnostic<FCMMessageError>

/// FCM's HTTP v1 rules on top of JSON, reported with byte offsets: a body
/// `{"message": {…}[, "validate_only": …]}` as FCM or Notification Hubs (`fcmv1`) takes it. Keys
/// are accepted in both spellings FCM reads (`collapse_key` and `collapseKey`).
public enum FCMLinter {
    /// Lints a parsed message (its size is the size of its bytes as given).
    public static func lint(_ document: JSONDocument) -> [FCMDiagnostic] {
        document.withUnsafeRoot { lint($0, size: document.bytes.count) }
    }

    /// Parses and lints bytes with a reused parser.
    /// - Throws: `JSONError` when the bytes are not JSON; there is nothing to lint then.
    public static func lint(_ bytes: [UInt8], parser: inout JSONParser) throws(JSONError) -> [FCMDiagnostic] {
        try parser.parse(bytes) { lint($0, size: bytes.count) }
    }

    /// Parses and lints bytes.
    /// - Throws: `JSONError` when the bytes are not JSON.
    public static func lint(_ bytes: [UInt8]) throws(JSONError) -> [FCMDiagnostic] {
        var parser = JSONParser()
        return try lint(bytes, parser: &parser)
    }

    /// Lints a parsed message of `size` bytes. Nothing is allocated for a message without findings.
    package static func lint(_ root: UnsafeJSONValue, size: Int) -> [FCMDiagnostic] {
        var linter = Linter()
        linter.lintBody(root)
        if size > FCMLimits.messageSize {
            linter.diagnostics.append(FCMDiagnostic(.error, FCMMessage.tooLarge(size: size, limit: FCMLimits.messageSize)))
        }
        return linter.diagnostics
    }
}

/// What a key holds, and the rule its value follows.
enum FCMFieldKind {
    case string, bool, integer, object, stringArray
    /// A map of strings; a `data` map also refuses FCM's reserved keys.
    case headers, data
    case priority, duration, color, analyticsLabel, httpsLink
    /// One of the objects below, checked key by key.
    case notification, android, androidNotification, androidOptions, apns, apnsOptions, webpush, webpushOptions, messageOptions
}

/// One key of an FCM object: its protobuf name, its JSON name (the same for one word), and kind.
struct FCMField {
    let name: StaticString
    let jsonName: StaticString
    let kind: FCMFieldKind

    init(_ name: StaticString, _ kind: FCMFieldKind) {
        self.init(name, name, kind)
    }

    init(_ name: StaticString, _ jsonName: StaticString, _ kind: FCMFieldKind) {
        self.name = name
        self.jsonName = jsonName
        self.kind = kind
    }
}

/// The objects of FCM's v1 `Message`, as its reference lists them.
enum FCMSchema {
    static let message = [
        // `fid`: a Firebase installation ID, the target FCM now offers beside the registration token.
        FCMField("token", .string), FCMField("fid", .string), FCMField("topic", .string), FCMField("condition", .string),
        FCMField("name", .string),
        FCMField("data", .data), FCMField("notification", .notification), FCMField("android", .android), FCMField("apns", .apns),
        FCMField("webpush", .webpush), FCMField("fcm_options", "fcmOptions", .messageOptions),
    ]
    static let notification = [FCMField("title", .string), FCMField("body", .string), FCMField("image", .string)]
    static let android = [
        FCMField("collapse_key", "collapseKey", .string), FCMField("priority", .priority), FCMField("ttl", .duration),
        FCMField("restricted_package_name", "restrictedPackageName", .string), FCMField("data", .data),
        FCMField("notification", .androidNotification), FCMField("fcm_options", "fcmOptions", .androidOptions),
        FCMField("direct_boot_ok", "directBootOk", .bool), FCMField("bandwidth_constrained_ok", "bandwidthConstrainedOk", .bool),
        FCMField("restricted_satellite_ok", "restrictedSatelliteOk", .bool),
    ]
    static let androidNotification = [
        FCMField("title", .string), FCMField("body", .string), FCMField("icon", .string), FCMField("color", .color),
        FCMField("sound", .string), FCMField("tag", .string), FCMField("click_action", "clickAction", .string),
        FCMField("body_loc_key", "bodyLocKey", .string), FCMField("body_loc_args", "bodyLocArgs", .stringArray),
        FCMField("title_loc_key", "titleLocKey", .string), FCMField("title_loc_args", "titleLocArgs", .stringArray),
        FCMField("channel_id", "channelId", .string), FCMField("ticker", .string), FCMField("sticky", .bool),
        FCMField("event_time", "eventTime", .string), FCMField("local_only", "localOnly", .bool),
        FCMField("notification_priority", "notificationPriority", .string), FCMField("default_sound", "defaultSound", .bool),
        FCMField("default_vibrate_timings", "defaultVibrateTimings", .bool),
        FCMField("default_light_settings", "defaultLightSettings", .bool), FCMField("vibrate_timings", "vibrateTimings", .stringArray),
        FCMField("visibility", .string), FCMField("notification_count", "notificationCount", .integer),
        FCMField("light_settings", "lightSettings", .object), FCMField("image", .string),
        FCMField("bypass_proxy_notification", "bypassProxyNotification", .bool), FCMField("proxy", .string),
    ]
    static let androidOptions = [FCMField("analytics_label", "analyticsLabel", .analyticsLabel)]
    static let apns = [
        FCMField("headers", .headers), FCMField("payload", .object), FCMField("fcm_options", "fcmOptions", .apnsOptions),
        FCMField("live_activity_token", "liveActivityToken", .string),
    ]
    static let apnsOptions = [FCMField("analytics_label", "analyticsLabel", .analyticsLabel), FCMField("image", .string)]
    static let webpush = [
        FCMField("headers", .headers), FCMField("data", .data), FCMField("notification", .object),
        FCMField("fcm_options", "fcmOptions", .webpushOptions),
    ]
    static let webpushOptions = [FCMField("link", .httpsLink), FCMField("analytics_label", "analyticsLabel", .analyticsLabel)]
    static let messageOptions = [FCMField("analytics_label", "analyticsLabel", .analyticsLabel)]

    static func fields(of kind: FCMFieldKind) -> [FCMField] {
        switch kind {
        case .notification: notification
        case .android: android
        case .androidNotification: androidNotification
        case .androidOptions: androidOptions
        case .apns: apns
        case .apnsOptions: apnsOptions
        case .webpush: webpush
        case .webpushOptions: webpushOptions
        case .messageOptions: messageOptions
        default: []
        }
    }
}

/// A key's dotted path, made into a `String` only for a finding: a clean message allocates nothing.
struct LintPath: CustomStringConvertible {
    private var parts: (StaticString, StaticString, StaticString, StaticString) = ("", "", "", "")
    private var count = 0

    init() {}

    init(_ name: StaticString) { self = LintPath().appending(name) }

    /// The path one key deeper (FCM's objects nest four deep at most).
    func appending(_ name: StaticString) -> LintPath {
        var path = self
        switch count {
        case 0: path.parts.0 = name
        case 1: path.parts.1 = name
        case 2: path.parts.2 = name
        default: path.parts.3 = name
        }
        path.count = min(count + 1, 4)
        return path
    }

    var description: String {
        [parts.0, parts.1, parts.2, parts.3].prefix(count).map { "\($0)" }.joined(separator: ".")
    }
}

struct Linter {
    var diagnostics: [FCMDiagnostic] = []

    mutating func error(_ code: FCMMessageError.Code, _ path: LintPath, at offset: Int, _ message: @autoclosure () -> String) {
        diagnostics.append(FCMDiagnostic(.error, FCMMessageError(code, path: path.description, offset: offset, message())))
    }

    mutating func lintBody(_ root: UnsafeJSONValue) {
        guard root.kind == .object else {
            return error(.missingMessage, LintPath(), at: root.byteOffset, "the body must be an object {\"message\": {…}}")
        }
        var message: UnsafeJSONValue?
        for member in root.members {
            if member.key.stringEquals("message") {
                guard message == nil else {
                    return error(.duplicateKey, LintPath("message"), at: member.key.byteOffset, "message appears twice")
                }
                message = member.value
            } else if member.key.stringEquals("validate_only") || member.key.stringEquals("validateOnly") {
                if member.value.kind != .bool {
                    error(.typeMismatch, LintPath("validate_only"), at: member.value.byteOffset, "must be true or false")
                }
            } else {
                error(.unknownKey, LintPath(), at: member.key.byteOffset, "FCM knows no such key beside message")
            }
        }
        guard let message else { return error(.missingMessage, LintPath(), at: root.byteOffset, "there is no message") }
        guard message.kind == .object else { return error(.typeMismatch, LintPath("message"), at: message.byteOffset, "must be an object") }
        lintObject(message, FCMSchema.message, path: LintPath("message"))
        var targets = 0
        for member in message.members
        where member.key.stringEquals("token") || member.key.stringEquals("fid") || member.key.stringEquals("topic")
            || member.key.stringEquals("condition")
        {
            targets += 1
            if targets == 2 {
                error(.multipleTargets, LintPath("message"), at: member.key.byteOffset, "give one of token, fid, topic and condition")
            }
        }
    }

    /// Checks each member against `fields`: known, once, of its kind.
    mutating func lintObject(_ object: UnsafeJSONValue, _ fields: [FCMField], path: LintPath) {
        var seen: UInt64 = 0
        for member in object.members {
            guard let index = fields.firstIndex(where: { member.key.stringEquals($0.name) || member.key.stringEquals($0.jsonName) }) else {
                error(.unknownKey, path, at: member.key.byteOffset, "FCM knows no such key in \(path)")
                continue
            }
            let field = fields[index]
            let fieldPath = path.appending(field.name)
            guard seen & (1 << index) == 0 else {
                error(.duplicateKey, fieldPath, at: member.key.byteOffset, "\(fieldPath) appears twice")
                continue
            }
            seen |= 1 << index
            lintValue(member.value, field.kind, path: fieldPath)
        }
    }

    mutating func lintValue(_ value: UnsafeJSONValue, _ kind: FCMFieldKind, path: LintPath) {
        let offset = value.byteOffset
        switch kind {
        case .string:
            if value.kind != .string { error(.typeMismatch, path, at: offset, "must be a string") }
        case .bool:
            if value.kind != .bool { error(.typeMismatch, path, at: offset, "must be true or false") }
        case .integer:
            if value.kind != .number || !value.isIntegerSpelling { error(.typeMismatch, path, at: offset, "must be an integer") }
        case .object:
            if value.kind != .object { error(.typeMismatch, path, at: offset, "must be an object") }
        case .stringArray:
            guard value.kind == .array else { return error(.typeMismatch, path, at: offset, "must be an array of strings") }
            for element in value.elements where element.kind != .string {
                error(.typeMismatch, path, at: element.byteOffset, "must hold strings only")
            }
        case .headers, .data:
            lintMap(value, isData: kind == .data, path: path)
        case .priority:
            if !(value.stringEquals("normal") || value.stringEquals("high") || value.stringEquals("NORMAL") || value.stringEquals("HIGH")) {
                error(.invalidPriority, path, at: offset, "must be normal or high")
            }
        case .duration:
            lintDuration(value, path: path)
        case .color:
            if !(value.rawStringBytes.map(FCMRules.isColor) ?? false) { error(.invalidValue, path, at: offset, "must be #rrggbb") }
        case .analyticsLabel:
            if !(value.rawStringBytes.map(FCMRules.isAnalyticsLabel) ?? false) {
                error(.invalidValue, path, at: offset, "must be 1 to 50 characters from A-Z a-z 0-9 - _ . ~ %")
            }
        case .httpsLink:
            let isLink = value.rawStringBytes.map { $0.count > 8 && $0.starts(with: "https://".utf8) } ?? false
            if !isLink { error(.invalidValue, path, at: offset, "must be an https:// URL") }
        case .notification, .android, .androidNotification, .androidOptions, .apns, .apnsOptions, .webpush, .webpushOptions,
            .messageOptions:
            guard value.kind == .object else { return error(.typeMismatch, path, at: offset, "must be an object") }
            lintObject(value, FCMSchema.fields(of: kind), path: path)
        }
    }

    /// A map of strings; in a `data` map, FCM's reserved keys are refused too.
    mutating func lintMap(_ map: UnsafeJSONValue, isData: Bool, path: LintPath) {
        guard map.kind == .object else { return error(.typeMismatch, path, at: map.byteOffset, "must be an object of strings") }
        var index = 0
        for member in map.members {
            if member.value.kind != .string {
                error(isData ? .dataValueNotString : .typeMismatch, path, at: member.value.byteOffset, "\(path) holds strings only")
            }
            if isData, isReserved(member.key) {
                error(
                    .reservedDataKey, path, at: member.key.byteOffset,
                    "a key FCM keeps for itself (from, notification, message_type, google.*, gcm.*)")
            }
            var earlier = 0
            for other in map.members {
                guard earlier < index else { break }
                if other.key.sameString(as: member.key) {
                    error(.duplicateKey, path, at: member.key.byteOffset, "a key appears twice in \(path)")
                    break
                }
                earlier += 1
            }
            index += 1
        }
    }

    func isReserved(_ key: UnsafeJSONValue) -> Bool {
        guard key.stringHasEscapes else { return key.rawStringBytes.map(FCMLimits.isReservedDataKey) ?? false }
        return key.string.map(FCMLimits.isReservedDataKey) ?? false
    }

    mutating func lintDuration(_ value: UnsafeJSONValue, path: LintPath) {
        guard value.kind == .string, let bytes = value.rawStringBytes, let nanoseconds = FCMRules.durationNanoseconds(bytes) else {
            return error(.invalidTTL, path, at: value.byteOffset, "must be a duration in seconds, such as \"3600s\" or \"1.5s\"")
        }
        let maximum = FCMLimits.maximumTTL.components.seconds * 1_000_000_000
        if nanoseconds > maximum { error(.invalidTTL, path, at: value.byteOffset, "must be at most four weeks (2419200s)") }
    }
}
