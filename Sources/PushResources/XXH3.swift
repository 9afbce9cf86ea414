internal import CXXHash
import PushInternals

// The one Swift file that touches xxHash's C API.

/// A 128-bit XXH3 digest.
///
/// `description` and ``hexString`` give the canonical form that `xxh128sum` prints: the high
/// half then the low half, big-endian, as 32 lowercase hex digits.
public struct XXH128Digest: Hashable, Sendable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public var hexString: String { XXH3.canonicalHex(high) + XXH3.canonicalHex(low) }
    public var description: String { hexString }
}

/// XXH3 one-shot digests over borrowed bytes.
public enum XXH3 {
    /// XXH3-64 of `bytes`.
    /// - Parameters:
    ///   - bytes: the input; not copied.
    ///   - seed: 0 gives the unseeded XXH3 (what `xxhsum -H3` prints).
    /// - Returns: the digest; its canonical text form is ``canonicalHex(_:)``.
    @inlinable
    public static func hash64(_ bytes: some Collection<UInt8>, seed: UInt64 = 0) -> UInt64 {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash64(UnsafeRawBufferPointer($0), seed: seed) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { hash64($0, seed: seed) }
    }

    /// XXH3-64 of raw bytes.
    public static func hash64(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        pushcore_xxh3_64(bytes.baseAddress, bytes.count, seed)
    }

    /// XXH3-128 of `bytes`.
    /// - Parameters:
    ///   - bytes: the input; not copied.
    ///   - seed: 0 gives the unseeded XXH3-128 (what `xxh128sum` prints).
    @inlinable
    public static func hash128(_ bytes: some Collection<UInt8>, seed: UInt64 = 0) -> XXH128Digest {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash128(UnsafeRawBufferPointer($0), seed: seed) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { hash128($0, seed: seed) }
    }

    /// XXH3-128 of raw bytes.
    public static func hash128(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> XXH128Digest {
        let digest = pushcore_xxh3_128(bytes.baseAddress, bytes.count, seed)
        return XXH128Digest(high: digest.high64, low: digest.low64)
    }

    /// Whether the x86-64 runtime-dispatched entry points (best of SSE2/AVX2/AVX-512) are in use.
    package static var usesRuntimeDispatch: Bool { pushcore_xxh_uses_dispatch() != 0 }

    /// The canonical text of a 64-bit digest: 16 lowercase hex digits, most significant first (what
    /// `xxhsum -H3` prints).
    public static func canonicalHex(_ value: UInt64) -> String { Hex.lowercase(value) }
}

/// The xxHash library's streaming state, owned by exactly one hasher: created with it, freed when
/// it ends, never copied (so it can be neither freed twice nor used after free).
struct XXH3State: ~Copyable {
    let pointer: OpaquePointer

    init() {
        guard let pointer = XXH3_createState() else {
            // Only a failed 576-byte aligned malloc gets here; Swift treats that as fatal too.
            fatalError("XXH3_createState: out of memory")
        }
        self.pointer = pointer
    }

    deinit { XXH3_freeState(pointer) }
}

/// A streaming XXH3 hasher (``XXH3Hasher64``, ``XXH3Hasher128``): bytes go in as they arrive.
public protocol XXH3StreamingHasher: ~Copyable {
    mutating func update(_ bytes: UnsafeRawBufferPointer)
}

extension XXH3StreamingHasher where Self: ~Copyable {
    @inlinable
    public mutating func update(_ bytes: some Collection<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }
}

/// XXH3-64 over bytes that arrive in pieces; equals ``XXH3/hash64(_:seed:)-(UnsafeRawBufferPointer,_)``
/// over their concatenation.
public struct XXH3Hasher64: XXH3StreamingHasher, ~Copyable {
    private let state = XXH3State()
    private let seed: UInt64

    public init(seed: UInt64 = 0) {
        self.seed = seed
        XXH3_64bits_reset_withSeed(state.pointer, seed)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        // Only a null state or a null pointer with a non-zero length fail, and neither can occur here.
        _ = pushcore_xxh3_64_update(state.pointer, bytes.baseAddress, bytes.count)
    }

    /// The digest of everything so far; more input may follow.
    public func digest() -> UInt64 { XXH3_64bits_digest(state.pointer) }

    /// Starts over with the same seed.
    public mutating func reset() { XXH3_64bits_reset_withSeed(state.pointer, seed) }
}

/// XXH3-128 over bytes that arrive in pieces; equals ``XXH3/hash128(_:seed:)-(UnsafeRawBufferPointer,_)``
/// over their concatenation.
public struct XXH3Hasher128: XXH3StreamingHasher, ~Copyable {
    private let state = XXH3State()
    private let seed: UInt64

    public init(seed: UInt64 = 0) {
        self.seed = seed
        XXH3_128bits_reset_withSeed(state.pointer, seed)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        _ = pushcore_xxh3_128_update(state.pointer, bytes.baseAddress, bytes.count)
    }

    /// The digest of everything so far; more input may follow.
    public func digest() -> XXH128Digest {
        let digest = XXH3_128bits_digest(state.pointer)
        return XXH128Digest(high: digest.high64, low: digest.low64)
    }

    /// Starts over with the same seed.
    public mutating func reset() { XXH3_128bits_reset_withSeed(state.pointer, seed) }
}
