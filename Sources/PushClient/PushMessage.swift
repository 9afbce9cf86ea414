import Foundation
import PushAPNs
import PushJSON

/// A push as the app receives it, from the backend's flows.
///
/// Strict where it matters: a push whose id is not the backend's format (32 lowercase hex digits),
/// or that carries both a rich and a secure id, is ``other``, so that nothing an app does with a
/// message ever sends a request with an id the backend could not have made. Forward compatible
/// elsewhere: custom keys a later backend adds are ignored, and an alert is kept whole. Later
/// versions may add kinds: a `switch` in an app needs a `default` case.
///
/// ``init(json:)`` and ``init(userInfo:)`` agree on every push: a key the JSON repeats counts
/// once, with its last value, as Foundation's `JSONSerialization` reads it when the system builds
/// `userInfo`.
@nonexhaustive
public enum PushMessage: Sendable, Hashable {
    /// The tutorial's silent push (`content-available: 1`): fetch the item, then show `message`.
    /// iOS hands it to the app (never to a notification service extension), throttles it, and
    /// drops it once the user has force-quit the app.
    case richSilent(id: String, type: String, message: String)
    /// An alert with `mutable-content: 1`: iOS shows `alert` once the app's notification service
    /// extension has fetched the item and attached it (or its time ran out).
    case richAlert(id: String, type: String, alert: PushAlert)
    /// A secure silent push: only the id travels; fetch the text from the backend.
    case secure(id: String)
    /// A secure alert (`mutable-content: 1`): the extension replaces `placeholder` with the text
    /// it fetches; should it fail, iOS shows the placeholder, which holds nothing secret.
    case secureAlert(id: String, placeholder: PushAlert)
    /// Anything else: another sender's push, or a malformed one.
    case other

    /// The message in a push's JSON bytes, as APNs delivers them.
    public init(json bytes: [UInt8]) {
        var parser = JSONParser()
        guard let document = try? parser.parse(bytes) else {
            self = .other
            return
        }
        self.init(object: JSON(keepingRepeatedKeys: document.root).lastMemberWins)
    }

    /// The message in a notification's `userInfo`, as `UNNotificationContent` and
    /// `application(_:didReceiveRemoteNotification:)` hand it over: strings, numbers, booleans,
    /// arrays and dictionaries with string keys.
    public init(userInfo: [AnyHashable: Any]) {
        guard let object = JSON(plist: userInfo) else {
            self = .other
            return
        }
        self.init(object: object)
    }

    private init(object: JSON) {
        var parser = JSONParser()
        guard let bytes = try? object.encoded(), let payload = try? APNsPayload(decoding: bytes, parser: &parser) else {
            self = .other
            return
        }
        self.init(payload)
    }

    init(_ payload: APNsPayload) {
        func string(_ key: String) -> String? {
            if case .string(let text)? = payload.customKeys.first(where: { $0.key == key })?.value { text } else { nil }
        }
        let aps = payload.aps
        let alert = aps.alert.flatMap { PushAlert($0, aps: aps) }
        let richID = string("richId")
        if let id = string("secureId") {
            guard Self.isBackendID(id), richID == nil else {
                self = .other
                return
            }
            if aps.contentAvailable && aps.alert == nil {
                self = .secure(id: id)
            } else if aps.mutableContent, let alert {
                self = .secureAlert(id: id, placeholder: alert)
            } else {
                self = .other
            }
            return
        }
        guard let id = richID, Self.isBackendID(id), let type = string("richType"), !type.isEmpty else {
            self = .other
            return
        }
        if aps.contentAvailable && aps.alert == nil, let message = string("richMessage") {
            self = .richSilent(id: id, type: type, message: message)
        } else if aps.mutableContent, let alert {
            self = .richAlert(id: id, type: type, alert: alert)
        } else {
            self = .other
        }
    }

    /// The id of the item to fetch, for the kinds that have one.
    public var id: String? {
        switch self {
        case .richSilent(let id, _, _), .richAlert(let id, _, _), .secure(let id), .secureAlert(let id, _): id
        case .other: nil
        }
    }

    /// The backend's ids: 128 random bits in lowercase hex.
    public static func isBackendID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

/// An alert as the push carries it, whole: its lines, each with the localized text the app shows
/// instead when it has the key, and how the system presents it.
public struct PushAlert: Sendable, Hashable {
    public var title: PushAlertText?
    public var subtitle: PushAlertText?
    public var body: PushAlertText?
    /// `aps.category`: the notification's actions, as the app registered them.
    public var category: String?
    /// `aps.thread-id`: the group it is shown in.
    public var threadID: String?
    /// `aps.sound`: a sound file's name, `default`, or a critical alert's sound name.
    public var sound: String?
    /// `aps.badge`: the app icon's number; `0` clears it.
    public var badge: Int?

    public init(
        title: PushAlertText? = nil, subtitle: PushAlertText? = nil, body: PushAlertText? = nil, category: String? = nil,
        threadID: String? = nil, sound: String? = nil, badge: Int? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.category = category
        self.threadID = threadID
        self.sound = sound
        self.badge = badge
    }

    /// `nil` for an alert with nothing to show.
    init?(_ alert: APNsAlert, aps: APNsAPS) {
        switch alert {
        case .text(let text):
            body = PushAlertText(text: text)
        case .fields(let fields):
            title = PushAlertText(fields.title, key: fields.titleLocKey, arguments: fields.titleLocArgs)
            subtitle = PushAlertText(fields.subtitle.map { .text($0) }, key: fields.subtitleLocKey, arguments: fields.subtitleLocArgs)
            body = PushAlertText(fields.body, key: fields.locKey, arguments: fields.locArgs)
        }
        guard title != nil || subtitle != nil || body != nil else { return nil }
        category = aps.category
        threadID = aps.threadID
        switch aps.sound {
        case .named(let name)?: sound = name
        case .critical(let critical)?: sound = critical.name
        case nil: sound = nil
        }
        badge = aps.badge
    }
}

/// One line of an alert: its text, and the key of a localized format the app shows instead when
/// its strings have it (`%@` placeholders filled with `localizationArguments`).
public struct PushAlertText: Sendable, Hashable {
    public var text: String?
    public var localizationKey: String?
    public var localizationArguments: [String]

    public init(text: String? = nil, localizationKey: String? = nil, localizationArguments: [String] = []) {
        self.text = text
        self.localizationKey = localizationKey
        self.localizationArguments = localizationArguments
    }

    /// `nil` when the push has neither text nor key for the line.
    init?(_ text: APNsAlertText?, key: String?, arguments: [String]?) {
        switch text {
        case .text(let plain)?:
            self.init(text: plain, localizationKey: key, localizationArguments: arguments ?? [])
        case .localized(let nestedKey, let nestedArguments)?:
            self.init(localizationKey: key ?? nestedKey, localizationArguments: arguments ?? nestedArguments)
        case nil:
            guard let key else { return nil }
            self.init(localizationKey: key, localizationArguments: arguments ?? [])
        }
    }
}

extension JSON {
    /// A property-list value as JSON: `nil` for anything JSON has no form for (dates, data,
    /// non-string keys, non-finite numbers).
    init?(plist value: Any) {
        switch value {
        case let text as String: self = .string(text)
        case is NSNull: self = .null
        case let number as NSNumber where type(of: value) is NSNumber.Type:
            // What JSONSerialization makes of a push's JSON: `true` and `false` are the
            // `__NSCFBoolean` singletons, a number with a fraction or exponent a double.
            guard let converted = JSON(number: number) else { return nil }
            self = converted
        case let flag as Bool where type(of: value) == Bool.self: self = .bool(flag)
        case let number as Int: self = .number(JSONNumber(number))
        case let number as Double:
            guard let number = try? JSONNumber(number) else { return nil }
            self = .number(number)
        case let array as [Any]:
            var elements: [JSON] = []
            for element in array {
                guard let converted = JSON(plist: element) else { return nil }
                elements.append(converted)
            }
            self = .array(elements)
        case let dictionary as [AnyHashable: Any]:
            var members: [JSONMember] = []
            for (key, element) in dictionary {
                guard let key = key.base as? String, let converted = JSON(plist: element) else { return nil }
                members.append(JSONMember(key, converted))
            }
            self = .object(members)
        default: return nil
        }
    }

    init?(number: NSNumber) {
        if String(describing: type(of: number)) == "__NSCFBoolean" {
            self = .bool(number.boolValue)
            return
        }
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "d"), UInt8(ascii: "f"):
            guard let converted = try? JSONNumber(number.doubleValue) else { return nil }
            self = .number(converted)
        case UInt8(ascii: "Q"):
            guard let converted = JSONNumber(spelling: String(number.uint64Value)) else { return nil }
            self = .number(converted)
        default:
            guard let converted = JSONNumber(spelling: String(number.int64Value)) else { return nil }
            self = .number(converted)
        }
    }

    /// The value with each object's repeated keys counted once, with the last value, in the
    /// place of the first: what reading it into a dictionary keeps.
    var lastMemberWins: JSON {
        switch self {
        case .object(let members):
            var positions: [String: Int] = [:]
            var kept: [JSONMember] = []
            for member in members {
                let value = member.value.lastMemberWins
                if let position = positions[member.key] {
                    kept[position] = JSONMember(member.key, value)
                } else {
                    positions[member.key] = kept.count
                    kept.append(JSONMember(member.key, value))
                }
            }
            return .object(kept)
        case .array(let elements): return .array(elements.map(\.lastMemberWins))
        default: return self
        }
    }

    func encoded() throws -> [UInt8] {
        var bytes: [UInt8] = []
        try write(into: &bytes)
        return bytes
    }
}
