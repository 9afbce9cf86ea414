import PushJSON

/// The `apns-push-type` header's values, with their payload limits and topic suffixes.
public enum APNsPushType: String, Sendable, Hashable, CaseIterable {
    case alert, background, voip, complication, fileprovider, mdm, location, liveactivity, pushtotalk, widgets

    /// Bytes APNs accepts in a payload of this type: 5120 for VoIP, 4096 otherwise.
    public var payloadLimit: Int {
        self == .voip ? APNsLimits.voipPayloadSize : APNsLimits.payloadSize
    }

    /// What `apns-topic` must end with for this push type (after the bundle ID), if anything.
    public var topicSuffix: String? {
        switch self {
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .location: return ".location-query"
        case .liveactivity: return ".push-type.liveactivity"
        case .pushtotalk: return ".voip-ptt"
        case .widgets: return ".push-type.widgets"
        case .alert, .background, .mdm: return nil
        }
    }
}

public enum APNsLimits {
    /// Payload limit for every push type but VoIP.
    public static let payloadSize = 4096
    /// Payload limit for VoIP pushes.
    public static let voipPayloadSize = 5120
    /// Longest `apns-collapse-id`, in bytes.
    public static let collapseIDSize = 64
}

/// Matches object keys by their bytes without making a `String`: buckets by length, then
/// compares bytes. Keys spelled with escapes are decoded first (rare).
@usableFromInline
struct KeyTable<Key: Sendable>: Sendable {
    @usableFromInline let buckets: [[(name: StaticString, key: Key)]]

    init(_ entries: [(StaticString, Key)]) {
        let longest = entries.map { $0.0.utf8CodeUnitCount }.max() ?? 0
        var buckets = [[(name: StaticString, key: Key)]](repeating: [], count: longest + 1)
        for (name, key) in entries { buckets[name.utf8CodeUnitCount].append((name, key)) }
        self.buckets = buckets
    }

    @usableFromInline
    func match(_ raw: UnsafeRawBufferPointer) -> Key? {
        guard raw.count < buckets.count else { return nil }
        for candidate in buckets[raw.count]
        where bytesEqual(raw, UnsafeRawBufferPointer(start: candidate.name.utf8Start, count: raw.count)) {
            return candidate.key
        }
        return nil
    }

    @usableFromInline
    func match(_ key: UnsafeJSONValue) -> Key? {
        if key.stringHasEscapes {
            var decoded = key.string ?? ""
            return decoded.withUTF8 { match(UnsafeRawBufferPointer($0)) }
        }
        return key.rawStringBytes.flatMap(match)
    }

    @usableFromInline
    func contains(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { match(UnsafeRawBufferPointer($0)) } != nil
    }
}

@usableFromInline
enum APSKey: Sendable {
    case alert, badge, sound, threadID, category, contentAvailable, mutableContent, targetContentID
    case interruptionLevel, relevanceScore, filterCriteria, staleDate, timestamp, event, dismissalDate
    case contentState, attributesType, attributes, inputPushToken, inputPushChannel, contentChanged, urlArgs

    @usableFromInline
    static let table = KeyTable<APSKey>([
        ("alert", .alert), ("badge", .badge), ("sound", .sound), ("thread-id", .threadID),
        ("category", .category), ("content-available", .contentAvailable),
        ("mutable-content", .mutableContent), ("target-content-id", .targetContentID),
        ("interruption-level", .interruptionLevel), ("relevance-score", .relevanceScore),
        ("filter-criteria", .filterCriteria), ("stale-date", .staleDate), ("timestamp", .timestamp),
        ("event", .event), ("dismissal-date", .dismissalDate), ("content-state", .contentState),
        ("attributes-type", .attributesType), ("attributes", .attributes),
        ("input-push-token", .inputPushToken), ("input-push-channel", .inputPushChannel),
        ("content-changed", .contentChanged), ("url-args", .urlArgs),
    ])
}

@usableFromInline
enum AlertKey: Sendable {
    case title, subtitle, body, launchImage, titleLocKey, titleLocArgs, subtitleLocKey, subtitleLocArgs
    case locKey, locArgs, sound

    @usableFromInline
    static let table = KeyTable<AlertKey>([
        ("title", .title), ("subtitle", .subtitle), ("body", .body), ("launch-image", .launchImage),
        ("title-loc-key", .titleLocKey), ("title-loc-args", .titleLocArgs),
        ("subtitle-loc-key", .subtitleLocKey), ("subtitle-loc-args", .subtitleLocArgs),
        ("loc-key", .locKey), ("loc-args", .locArgs), ("sound", .sound),
    ])
}
