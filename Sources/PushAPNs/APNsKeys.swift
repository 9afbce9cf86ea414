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
