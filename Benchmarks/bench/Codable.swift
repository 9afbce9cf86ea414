import Foundation

/// A Codable model of the same keys as PushCore's, for the JSONEncoder/JSONDecoder baselines.
struct CodablePayload: Codable {
    var aps: CodableAPS
    var custom: [String: AnyJSON]

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        aps = try container.decode(CodableAPS.self, forKey: Key(stringValue: "aps"))
        custom = [:]
        for key in container.allKeys where key.stringValue != "aps" {
            custom[key.stringValue] = try container.decode(AnyJSON.self, forKey: key)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(aps, forKey: Key(stringValue: "aps"))
        for (key, value) in custom { try container.encode(value, forKey: Key(stringValue: key)) }
    }
}

struct CodableAPS: Codable {
    var alert: CodableAlert?
    var badge: Int?
    var sound: CodableSound?
    var threadID: String?
    var category: String?
    var contentAvailable: Int?
    var mutableContent: Int?
    var targetContentID: String?
    var interruptionLevel: String?
    var relevanceScore: Double?
    var filterCriteria: String?
    var staleDate: Int?
    var timestamp: Int?
    var event: String?
    var dismissalDate: Int?
    var contentState: AnyJSON?
    var attributesType: String?
    var attributes: AnyJSON?
    var inputPushToken: Int?
    var inputPushChannel: String?
    var contentChanged: Bool?
    var urlArgs: [String]?

    enum CodingKeys: String, CodingKey {
        case alert, badge, sound, category, timestamp, event, attributes
        case threadID = "thread-id"
        case contentAvailable = "content-available"
        case mutableContent = "mutable-content"
        case targetContentID = "target-content-id"
        case interruptionLevel = "interruption-level"
        case relevanceScore = "relevance-score"
        case filterCriteria = "filter-criteria"
        case staleDate = "stale-date"
        case dismissalDate = "dismissal-date"
        case contentState = "content-state"
        case attributesType = "attributes-type"
        case inputPushToken = "input-push-token"
        case inputPushChannel = "input-push-channel"
        case contentChanged = "content-changed"
        case urlArgs = "url-args"
    }
}

enum CodableAlert: Codable {
    case text(String)
    case fields(CodableAlertFields)

    init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self = .text(text)
        } else {
            self = .fields(try CodableAlertFields(from: decoder))
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .text(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .fields(let fields): try fields.encode(to: encoder)
        }
    }
}

struct CodableAlertFields: Codable {
    var title: CodableAlertText?
    var subtitle: String?
    var body: CodableAlertText?
    var launchImage: String?
    var titleLocKey: String?
    var titleLocArgs: [String]?
    var subtitleLocKey: String?
    var subtitleLocArgs: [String]?
    var locKey: String?
    var locArgs: [String]?
    var sound: String?

    enum CodingKeys: String, CodingKey {
        case title, subtitle, body, sound
        case launchImage = "launch-image"
        case titleLocKey = "title-loc-key"
        case titleLocArgs = "title-loc-args"
        case subtitleLocKey = "subtitle-loc-key"
        case subtitleLocArgs = "subtitle-loc-args"
        case locKey = "loc-key"
        case locArgs = "loc-args"
    }
}

enum CodableAlertText: Codable {
    case text(String)
    case localized(CodableLocalized)

    init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self = .text(text)
        } else {
            self = .localized(try CodableLocalized(from: decoder))
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .text(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .localized(let localized): try localized.encode(to: encoder)
        }
    }
}

struct CodableLocalized: Codable {
    var locKey: String
    var locArgs: [String]?

    enum CodingKeys: String, CodingKey {
        case locKey = "loc-key"
        case locArgs = "loc-args"
    }
}

enum CodableSound: Codable {
    case named(String)
    case critical(CodableCriticalSound)

    init(from decoder: any Decoder) throws {
        if let name = try? decoder.singleValueContainer().decode(String.self) {
            self = .named(name)
        } else {
            self = .critical(try CodableCriticalSound(from: decoder))
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .named(let name):
            var container = encoder.singleValueContainer()
            try container.encode(name)
        case .critical(let critical): try critical.encode(to: encoder)
        }
    }
}

struct CodableCriticalSound: Codable {
    var critical: Int
    var name: String
    var volume: Double?
}

/// Any JSON value, for custom keys, content-state and attributes.
enum AnyJSON: Codable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([AnyJSON])
    case object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([AnyJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: AnyJSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
