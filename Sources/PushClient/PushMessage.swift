import PushAPNs
import PushJSON

/// A push as the app receives it, from the backend's flows.
///
/// Strict: a push that is not exactly one of the backend's shapes, or whose id is not the
/// backend's format (32 lowercase hex digits), is ``other``, so that nothing an app does with a
/// message ever sends a request with an id the backend could not have made.
public enum PushMessage: Sendable, Hashable {
    /// The tutorial's silent push (`content-available: 1`): fetch the item, then show `message`.
    case richSilent(id: String, type: String, message: String)
    /// An alert with `mutable-content: 1`: iOS shows `alert` once the app's notification service
    /// extension has fetched the item and attached it (or its time ran out).
    case richAlert(id: String, type: String, alert: String)
    /// A secure push: only the id travels; fetch the text from the backend.
    case secure(id: String)
    /// Anything else: another sender's push, or a malformed one.
    case other

    /// The message in a push's JSON bytes, as APNs delivers them.
    public init(json bytes: [UInt8]) {
        var parser = JSONParser()
        guard let payload = try? APNsPayload(decoding: bytes, parser: &parser) else {
            self = .other
            return
        }
        self.init(payload)
    }

    /// The message in a notification's `userInfo`, as `UNNotificationContent` and
    /// `application(_:didReceiveRemoteNotification:)` hand it over: strings, numbers, booleans,
    /// arrays and dictionaries with string keys.
    public init(userInfo: [AnyHashable: Any]) {
        guard let object = JSON(plist: userInfo), let bytes = try? object.encoded() else {
            self = .other
            return
        }
        self.init(json: bytes)
    }

    init(_ payload: APNsPayload) {
        func custom(_ key: String) -> JSON? { payload.customKeys.first { $0.key == key }?.value }
        func string(_ key: String) -> String? { if case .string(let text)? = custom(key) { text } else { nil } }
        let keys = Set(payload.customKeys.map(\.key))
        let aps = payload.aps
        if keys == ["secureId"], let id = string("secureId"), Self.isBackendID(id), aps.contentAvailable, aps.alert == nil {
            self = .secure(id: id)
            return
        }
        guard let id = string("richId"), Self.isBackendID(id), let type = string("richType"), !type.isEmpty else {
            self = .other
            return
        }
        if keys == ["richId", "richType", "richMessage"], let message = string("richMessage"), aps.contentAvailable, aps.alert == nil {
            self = .richSilent(id: id, type: type, message: message)
        } else if keys == ["richId", "richType"], aps.mutableContent, let alert = aps.alert.flatMap(Self.shownText) {
            self = .richAlert(id: id, type: type, alert: alert)
        } else {
            self = .other
        }
    }

    /// The id of the item to fetch, for the kinds that have one.
    public var id: String? {
        switch self {
        case .richSilent(let id, _, _), .richAlert(let id, _, _), .secure(let id): id
        case .other: nil
        }
    }

    /// The backend's ids: 128 random bits in lowercase hex.
    public static func isBackendID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The text an alert shows: its body (or the alert itself when it is a string).
    private static func shownText(_ alert: APNsAlert) -> String? {
        switch alert {
        case .text(let text): text
        case .fields(let fields): if case .text(let body)? = fields.body { body } else { nil }
        }
    }
}

extension JSON {
    /// A property-list value as JSON: `nil` for anything JSON has no form for (dates, data,
    /// non-string keys, non-finite numbers).
    init?(plist value: Any) {
        switch value {
        case let text as String: self = .string(text)
        // Bool before numbers: on Apple platforms a Bool is also an NSNumber.
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

    func encoded() throws -> [UInt8] {
        var bytes: [UInt8] = []
        try write(into: &bytes)
        return bytes
    }
}
