import Crypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where token expiries count from: Unix seconds. Inject a fixed clock in tests.
public struct SASClock: Sendable {
    public let now: @Sendable () -> Int64

    public init(_ now: @escaping @Sendable () -> Int64) { self.now = now }

    /// The system's wall clock. Expiries are whole seconds, so Linux's coarse clock (a few
    /// milliseconds of resolution, a fraction of the cost) is enough.
    public static let system = SASClock {
        var time = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_REALTIME_COARSE, &time)
        #else
        clock_gettime(CLOCK_REALTIME, &time)
        #endif
        return Int64(time.tv_sec)
    }

    /// Always `seconds`.
    public static func fixed(_ seconds: Int64) -> SASClock { SASClock { seconds } }
}

/// Mints `SharedAccessSignature` tokens for one key. The HMAC key schedule is computed once, when
/// the signer is made; each token copies the keyed state.
///
/// `SharedAccessSignature sr={sr}&sig={sig}&se={expiry}&skn={keyName}` where `sr` is the
/// percent-encoded lowercased resource URI and `sig` the percent-encoded base64 of
/// HMAC-SHA256(UTF-8 key, `sr` + "\n" + expiry).
public struct SASSigner: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let keyName: String
    let keyed: KeyedHMAC
    /// `&skn=` and the percent-encoded key name, appended to every token.
    let keyNameField: [UInt8]

    /// - Parameters:
    ///   - keyName: The shared access rule's name.
    ///   - key: The rule's key as given; its UTF-8 bytes are the HMAC key.
    public init(keyName: String, key: String) {
        self.keyName = keyName
        self.keyed = KeyedHMAC(key: key)
        var field = Array("&skn=".utf8)
        TokenEncoding.appendPercentEncoded(keyName.utf8, to: &field)
        self.keyNameField = field
    }

    public init(_ connectionString: ConnectionString) {
        self.init(keyName: connectionString.keyName, key: connectionString.key)
    }

    /// A token for `resource` that expires at `expiry` (Unix seconds).
    /// - Throws: `invalidExpiry` for a negative expiry.
    public func token(for resource: String, expiry: Int64) throws(SASError) -> String {
        guard expiry >= 0 else { throw SASError(.invalidExpiry, "expiry \(expiry) is before 1970") }
        if let token = resource.utf8.withContiguousStorageIfAvailable({ token(resourceUTF8: UnsafeRawBufferPointer($0), expiry: expiry) }) {
            return token
        }
        var resource = resource
        return resource.withUTF8 { token(resourceUTF8: UnsafeRawBufferPointer($0), expiry: expiry) }
    }

    /// Writes the whole token straight into the string's storage: one allocation.
    /// - Parameter isLowercased: The resource is already lowercased as Unicode text.
    func token(resourceUTF8: UnsafeRawBufferPointer, expiry: Int64, isLowercased: Bool = false) -> String {
        if !isLowercased && !isASCII(resourceUTF8) {
            // Unicode lowercasing can change lengths; do it first, as the Azure SDKs do. ASCII is
            // lowercased byte by byte below.
            var lowercased = String(decoding: resourceUTF8, as: UTF8.self).lowercased()
            return lowercased.withUTF8 { token(resourceUTF8: UnsafeRawBufferPointer($0), expiry: expiry, isLowercased: true) }
        }
        let prefix: StaticString = "SharedAccessSignature sr="
        // Every resource byte and base64 byte may take three; the expiry at most 19 digits.
        let capacity = prefix.utf8CodeUnitCount + resourceUTF8.count * 3 + "&sig=".utf8.count + 44 * 3 + "&se=".utf8.count + 19
            + keyNameField.count
        return String(unsafeUninitializedCapacity: capacity) { output in
            var writer = TokenWriter(output)
            writer.append(prefix)
            let resourceStart = writer.count
            for byte in resourceUTF8 {
                let lowered = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                // Letters first: most of a resource URI, and the longest check in `appendPercentEncoded`.
                if lowered &- UInt8(ascii: "a") < 26 {
                    writer.appendByte(lowered)
                } else {
                    writer.appendPercentEncoded(lowered)
                }
            }
            let resourceEnd = writer.count
            var expiryDigits: (UInt64, UInt64, UInt64) = (0, 0, 0)
            // Non-negative: checked by `token(for:expiry:)`.
            let expiryText = withUnsafeMutableBytes(of: &expiryDigits) { writeDecimalDigits(UInt64(expiry), endingAt: $0)..<$0.count }
            // The string to sign, `sr` + "\n" + expiry, is written after `sr` so that it is hashed
            // from one contiguous buffer without a copy, then overwritten by the rest of the token.
            writer.appendByte(UInt8(ascii: "\n"))
            withUnsafeBytes(of: expiryDigits) { writer.append(UnsafeRawBufferPointer(rebasing: $0[expiryText])) }
            let mac = keyed.authenticationCode(for: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(output)[resourceStart..<writer.count]))
            writer.count = resourceEnd
            writer.append("&sig=")
            mac.withUnsafeBytes { writer.appendPercentEncodedBase64($0) }
            writer.append("&se=")
            withUnsafeBytes(of: expiryDigits) { writer.append(UnsafeRawBufferPointer(rebasing: $0[expiryText])) }
            keyNameField.withUnsafeBytes { writer.append($0) }
            return writer.finish()
        }
    }

    /// A token for `resource` valid for `ttl` seconds from the clock's now.
    /// - Throws: `invalidExpiry` for a negative TTL or an expiry past `Int64.max`.
    public func token(for resource: String, ttl: Int64, clock: SASClock = .system) throws(SASError) -> String {
        try token(for: resource, expiry: Self.expiry(now: clock.now(), ttl: ttl))
    }

    static func expiry(now: Int64, ttl: Int64) throws(SASError) -> Int64 {
        guard ttl >= 0 else { throw SASError(.invalidExpiry, "TTL \(ttl) is negative") }
        let (expiry, overflow) = now.addingReportingOverflow(ttl)
        guard !overflow else { throw SASError(.invalidExpiry, "now + TTL overflows") }
        return expiry
    }

    public var description: String { "SASSigner(keyName: \(keyName), key: <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["keyName": keyName], displayStyle: .struct) }
}

/// True when no byte has its high bit set; eight bytes per step.
func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var index = 0
    var highBits: UInt64 = 0
    while index + 8 <= bytes.count {
        highBits |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
        index += 8
    }
    while index < bytes.count {
        highBits |= UInt64(bytes[index])
        index += 1
    }
    return highBits & 0x8080_8080_8080_8080 == 0
}

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

/// Appends to uninitialised string storage sized in advance.
struct TokenWriter {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
    }

    /// Unchecked in release builds: the capacity is the token's largest possible size (every
    /// byte of resource and signature percent-encoded, the longest expiry), and `finish()`
    /// checks it once.
    @inline(__always)
    mutating func appendByte(_ byte: UInt8) {
        assert(count < capacity, "token capacity computed too small")
        base[count] = byte
        count += 1
    }

    /// The number of bytes written, after checking they fit.
    func finish() -> Int {
        precondition(count <= capacity, "token capacity computed too small")
        return count
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        assert(count + bytes.count <= capacity, "token capacity computed too small")
        if let source = bytes.baseAddress { (base + count).initialize(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        count += bytes.count
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        for index in 0..<text.utf8CodeUnitCount { appendByte(text.utf8Start[index]) }
    }

    /// The base64 of `bytes` (RFC 4648, padded), percent-encoded as it is written: only `+`, `/`
    /// and `=` need it, so the 6-bit values are mapped straight to text instead of writing
    /// base64 and then classifying every character of it.
    mutating func appendPercentEncodedBase64(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            appendBase64Digit(value >> 18)
            appendBase64Digit(value >> 12)
            appendBase64Digit(value >> 6)
            appendBase64Digit(value)
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            let value = UInt32(bytes[index]) << 16 | (remaining == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            appendBase64Digit(value >> 18)
            appendBase64Digit(value >> 12)
            if remaining == 2 { appendBase64Digit(value >> 6) } else { append("%3D") }
            append("%3D")
        }
    }

    /// The digit for the low six bits of `value`; `+` and `/` percent-encoded.
    @inline(__always)
    mutating func appendBase64Digit(_ value: UInt32) {
        let sextet = Int(value & 63)
        if sextet < 62 {
            appendByte(TokenEncoding.base64Alphabet.utf8Start[sextet])
        } else {
            appendByte(UInt8(ascii: "%"))
            appendByte(UInt8(ascii: "2"))
            appendByte(sextet == 62 ? UInt8(ascii: "B") : UInt8(ascii: "F"))
        }
    }

    /// The byte itself when unreserved (RFC 3986), `%XX` with uppercase hex otherwise.
    @inline(__always)
    mutating func appendPercentEncoded(_ byte: UInt8) {
        if TokenEncoding.isUnreserved(byte) {
            appendByte(byte)
        } else {
            appendByte(UInt8(ascii: "%"))
            appendByte(TokenEncoding.upperHex.utf8Start[Int(byte >> 4)])
            appendByte(TokenEncoding.upperHex.utf8Start[Int(byte & 0xF)])
        }
    }
}
