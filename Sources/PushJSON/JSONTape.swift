/// What a tape entry describes.
@usableFromInline
enum JSONKind: UInt8, Sendable {
    case object = 1
    case array
    case string
    case number
    case `true`
    case `false`
    case null
    case objectEnd
    case arrayEnd
}

/// One token of a parsed document: 16 bytes, no pointers, so the tape is a flat array that is
/// reused between documents.
@usableFromInline
struct TapeEntry {
    /// Scalars: offset of the first byte (strings: the first byte after the opening quote).
    /// Containers: offset of the bracket.
    @usableFromInline var offset: UInt32
    /// Strings: content length in bytes, quotes excluded. Numbers: length of the spelling.
    /// Containers: number of elements (members for objects).
    @usableFromInline var length: UInt32
    /// Container starts: the index of the entry after the matching end, so a subtree is skipped
    /// in one step. Container ends: the index of the start.
    @usableFromInline var link: UInt32
    @usableFromInline var kind: JSONKind
    @usableFromInline var flags: UInt8

    @inlinable static var stringHasEscapes: UInt8 { 1 << 0 }
    @inlinable static var isKey: UInt8 { 1 << 1 }
    @inlinable static var numberHasFraction: UInt8 { 1 << 2 }
    @inlinable static var numberHasExponent: UInt8 { 1 << 3 }
    /// A string with a byte above 0x7F (in the input: an escape may still decode to one).
    @inlinable static var stringHasNonASCII: UInt8 { 1 << 4 }

    @inlinable
    init(kind: JSONKind, offset: Int, length: Int, flags: UInt8) {
        self.offset = UInt32(truncatingIfNeeded: offset)
        self.length = UInt32(truncatingIfNeeded: length)
        self.link = 0
        self.kind = kind
        self.flags = flags
    }
}

/// The input bytes and the tape of one document.
///
/// A parser reuses its storage for the next document when nothing else refers to it; a
/// document that is still alive keeps its storage and the parser starts a fresh one. Shared
/// storage is never mutated, which is what makes documents safe to send between tasks.
@usableFromInline
final class JSONTapeStorage: @unchecked Sendable {
    // Mutated only by the parser while it holds the sole reference, so the runtime's dynamic
    // exclusivity checks (a measurable cost on every value read) cannot find anything.
    @exclusivity(unchecked) @usableFromInline var input: [UInt8] = []
    @exclusivity(unchecked) @usableFromInline var entries: UnsafeMutablePointer<TapeEntry>
    @exclusivity(unchecked) @usableFromInline var count: Int = 0
    @exclusivity(unchecked) @usableFromInline var capacity: Int

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 16)
        self.entries = .allocate(capacity: self.capacity)
    }

    deinit {
        entries.deallocate()
    }

    /// Room for at least `minimum` entries, keeping the first `count`.
    @usableFromInline
    @inline(never)
    func grow(keeping count: Int, minimum: Int) {
        var newCapacity = capacity
        while newCapacity < minimum { newCapacity *= 2 }
        let newEntries = UnsafeMutablePointer<TapeEntry>.allocate(capacity: newCapacity)
        newEntries.moveInitialize(from: entries, count: count)
        entries.deallocate()
        entries = newEntries
        capacity = newCapacity
    }
}
