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

/// Matches object keys by their bytes without making a `String`: one probe, mostly, of an
/// open-addressed table hashed on a key's length, first and last byte, then its bytes compared.
/// Keys spelled with escapes are decoded first (rare). Every dictionary key of every payload goes
/// through here, which is why it is not a dictionary of strings or a list per length.
@usableFromInline
// Unchecked: the name pointers are to static strings, and the slots, made once per key type and
// never freed or written again, are read only.
struct KeyTable<Key: PayloadKey>: @unchecked Sendable {
    @usableFromInline
    struct Slot {
        /// The name's first byte; `nil` for an empty slot.
        @usableFromInline var name: UnsafePointer<UInt8>?
        @usableFromInline var length = 0
        @usableFromInline var key: Key?
    }

    /// A power of two at least four times the number of keys, so that most probes end at once.
    @usableFromInline let slots: UnsafeBufferPointer<Slot>

    init() {
        var capacity = 16
        while capacity < Key.allCases.count * 4 { capacity *= 2 }
        let slots = UnsafeMutableBufferPointer<Slot>.allocate(capacity: capacity)
        slots.initialize(repeating: Slot())
        for key in Key.allCases {
            let name = key.name
            var slot = Self.hash(name) & (capacity - 1)
            while slots[slot].name != nil { slot = (slot + 1) & (capacity - 1) }
            slots[slot] = Slot(name: name.baseAddress!.assumingMemoryBound(to: UInt8.self), length: name.count, key: key)
        }
        self.slots = UnsafeBufferPointer(slots)
    }

    @inlinable @inline(__always)
    static func hash(_ raw: UnsafeRawBufferPointer) -> Int {
        let count = raw.count
        guard count > 0 else { return 0 }
        let bits = UInt32(truncatingIfNeeded: count) << 16 | UInt32(raw[0]) << 8 | UInt32(raw[count &- 1])
        return Int((bits &* 0x9E37_79B1) >> 24)
    }

    @usableFromInline
    func match(_ raw: UnsafeRawBufferPointer) -> Key? {
        let mask = slots.count &- 1
        var index = Self.hash(raw) & mask
        while true {
            let slot = slots[index]
            guard let name = slot.name else { return nil }
            if bytesEqual(raw, UnsafeRawBufferPointer(start: name, count: slot.length)) { return slot.key }
            index = (index &+ 1) & mask
        }
    }

    @inlinable @inline(__always)
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
