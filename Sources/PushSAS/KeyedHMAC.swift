package import Crypto

/// HMAC-SHA256 (RFC 2104) keyed once: the SHA-256 states after the key's inner and outer pad
/// blocks are computed here, and each code continues copies of them (two compressions for a
/// message under 56 bytes, one more per further 64).
///
/// The hash is swift-crypto's; the few lines of HMAC around it are ours, because its generic
/// `HMAC<SHA256>` cannot be specialised from here (docs/performance.md). The tests check this
/// against `HMAC<SHA256>` over random keys and messages, and against RFC 4231.
///
/// The states are never mutated in place: swift-crypto's digests copy their context on the
/// first update of a shared copy and finalize from a copy, so sharing them between threads
/// is safe although `SHA256` is not marked `Sendable`.
package struct KeyedHMAC: @unchecked Sendable {
    private let innerState: SHA256
    private let outerState: SHA256

    init(key: String) {
        self.init(keyBytes: Array(key.utf8))
    }

    package init(keyBytes: [UInt8]) {
        let blockSize = SHA256.blockByteCount
        var block = [UInt8](repeating: 0, count: blockSize)
        if keyBytes.count > blockSize {
            // Keys longer than a block are hashed first.
            for (index, byte) in SHA256.hash(data: keyBytes).enumerated() { block[index] = byte }
        } else {
            block.replaceSubrange(0..<keyBytes.count, with: keyBytes)
        }
        var inner = SHA256()
        for index in block.indices { block[index] ^= 0x36 }
        block.withUnsafeBytes { inner.update(bufferPointer: $0) }
        var outer = SHA256()
        for index in block.indices { block[index] ^= 0x36 ^ 0x5C }
        block.withUnsafeBytes { outer.update(bufferPointer: $0) }
        // The padded key is as good as the key: cleared before the array is freed.
        for index in block.indices { block[index] = 0 }
        innerState = inner
        outerState = outer
    }

    package func authenticationCode(for message: UnsafeRawBufferPointer) -> SHA256Digest {
        var inner = innerState
        inner.update(bufferPointer: message)
        let innerDigest = inner.finalize()
        var outer = outerState
        innerDigest.withUnsafeBytes { outer.update(bufferPointer: $0) }
        return outer.finalize()
    }
}
