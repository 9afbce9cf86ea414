public import PushJSON

/// A key of one of the payload's dictionaries, spelled once: as the encoder writes it, quoted and
/// followed by a colon. The reader matches input keys against the name inside the quotes, lint
/// calls any other key unknown, and messages name the key by its path.
@usableFromInline
protocol PayloadKey: CaseIterable, Sendable {
    /// `"name":`, written as it is by the encoder.
    var member: StaticString { get }
    /// The dictionary's own path: `aps` or `aps.alert`.
    static var parentPath: String { get }
    /// Matches input keys against the names of every case.
    static var table: KeyTable<Self> { get }
}

extension PayloadKey {
    /// The name's bytes: ``member`` without its quotes and colon.
    @inlinable
    var name: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: member.utf8Start + 1, count: member.utf8CodeUnitCount - 3) }

    /// `aps.thread-id`, for messages and errors.
    @usableFromInline
    var path: String { Self.parentPath + "." + String(decoding: name, as: UTF8.self) }
}

/// The keys of `aps`, in the order the encoder writes them.
@usableFromInline
enum APSKey: Int, PayloadKey {
    case alert, badge, sound, threadID, category, contentAvailable, mutableContent, targetContentID
    case interruptionLevel, relevanceScore, filterCriteria, staleDate, timestamp, event, dismissalDate
    case contentState, attributesType, attributes, inputPushToken, inputPushChannel, contentChanged, urlArgs

    @inlinable @inline(__always)
    var member: StaticString {
        switch self {
        case .alert: "\"alert\":"
        case .badge: "\"badge\":"
        case .sound: "\"sound\":"
        case .threadID: "\"thread-id\":"
        case .category: "\"category\":"
        case .contentAvailable: "\"content-available\":"
        case .mutableContent: "\"mutable-content\":"
        case .targetContentID: "\"target-content-id\":"
        case .interruptionLevel: "\"interruption-level\":"
        case .relevanceScore: "\"relevance-score\":"
        case .filterCriteria: "\"filter-criteria\":"
        case .staleDate: "\"stale-date\":"
        case .timestamp: "\"timestamp\":"
        case .event: "\"event\":"
        case .dismissalDate: "\"dismissal-date\":"
        case .contentState: "\"content-state\":"
        case .attributesType: "\"attributes-type\":"
        case .attributes: "\"attributes\":"
        case .inputPushToken: "\"input-push-token\":"
        case .inputPushChannel: "\"input-push-channel\":"
        case .contentChanged: "\"content-changed\":"
        case .urlArgs: "\"url-args\":"
        }
    }

    @usableFromInline static var parentPath: String { "aps" }
    @usableFromInline static let table = KeyTable<APSKey>()
}

/// The keys of the `aps.alert` dictionary, in the order the encoder writes them.
@usableFromInline
enum AlertKey: Int, PayloadKey {
    case title, subtitle, body, launchImage, titleLocKey, titleLocArgs, subtitleLocKey, subtitleLocArgs
    case locKey, locArgs, sound

    @inlinable @inline(__always)
    var member: StaticString {
        switch self {
        case .title: "\"title\":"
        case .subtitle: "\"subtitle\":"
        case .body: "\"body\":"
        case .launchImage: "\"launch-image\":"
        case .titleLocKey: "\"title-loc-key\":"
        case .titleLocArgs: "\"title-loc-args\":"
        case .subtitleLocKey: "\"subtitle-loc-key\":"
        case .subtitleLocArgs: "\"subtitle-loc-args\":"
        case .locKey: "\"loc-key\":"
        case .locArgs: "\"loc-args\":"
        case .sound: "\"sound\":"
        }
    }

    @usableFromInline static var parentPath: String { "aps.alert" }
    @usableFromInline static let table = KeyTable<AlertKey>()
}

/// Matches object keys by their bytes without making a `String`: buckets by length, then
/// compares bytes. Keys spelled with escapes are decoded first (rare).
@usableFromInline
// Unchecked: the name pointers are to static strings, which never change or go away.
struct KeyTable<Key: PayloadKey>: @unchecked Sendable {
    /// By name length: each key with its name's bytes (static strings, so the pointers stay valid).
    @usableFromInline let buckets: [[(key: Key, name: UnsafeRawBufferPointer)]]

    init() {
        let longest = Key.allCases.map(\.name.count).max() ?? 0
        var buckets = [[(key: Key, name: UnsafeRawBufferPointer)]](repeating: [], count: longest + 1)
        for key in Key.allCases { buckets[key.name.count].append((key, key.name)) }
        self.buckets = buckets
    }

    @usableFromInline
    func match(_ raw: UnsafeRawBufferPointer) -> Key? {
        guard raw.count < buckets.count else { return nil }
        for candidate in buckets[raw.count] where bytesEqual(raw, candidate.name) {
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
