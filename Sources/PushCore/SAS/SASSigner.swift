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
        if !isLowercased && resourceUTF8.contains(where: { $0 >= 0x80 }) {
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
                writer.appendPercentEncoded(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            }
            let resourceEnd = writer.count
            var expiryDigits: (UInt64, UInt64, UInt64) = (0, 0, 0)
            // Non-negative: checked by `token(for:expiry:)`.
            let expiryText = withUnsafeMutableBytes(of: &expiryDigits) { writeDecimalDigits(UInt64(expiry), endingAt: $0)..<$0.count }
            // The string to sign, `sr` + "\n" + expiry, is written after `sr` so that it is signed
            // in one call (swift-crypto's generic update costs metadata lookups per call), then
            // overwritten by the rest of the token.
            writer.appendByte(ASCII.newline)
            withUnsafeBytes(of: expiryDigits) { digits in
                for byte in digits[expiryText] { writer.appendByte(byte) }
            }
            let mac = keyed.authenticationCode(for: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(output)[resourceStart..<writer.count]))
            writer.count = resourceEnd
            writer.append("&sig=")
            var base64: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &base64) { base64Bytes in
                let count = mac.withUnsafeBytes { TokenEncoding.writeBase64($0, to: base64Bytes) }
                for byte in base64Bytes[..<count] { writer.appendPercentEncoded(byte) }
            }
            writer.append("&se=")
            withUnsafeBytes(of: expiryDigits) { digits in
                for byte in digits[expiryText] { writer.appendByte(byte) }
            }
            keyNameField.withUnsafeBytes { field in
                for byte in field { writer.appendByte(byte) }
            }
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

    /// HMAC-SHA256 of `message` with this signer's key.
    func signature(of message: UnsafeRawBufferPointer) -> HashedAuthenticationCode<SHA256> {
        keyed.authenticationCode(for: message)
    }

    public var description: String { "SASSigner(keyName: \(keyName), key: <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["keyName": keyName], displayStyle: .struct) }
}

/// HMAC-SHA256 keyed once. The state is never mutated in place: each code starts from a copy,
/// and swift-crypto's digests copy their context on the first update of a shared copy and
/// finalize from a copy, so sharing one between threads is safe although `HMAC` is not
/// marked `Sendable`.
package struct KeyedHMAC: @unchecked Sendable {
    private let state: HMAC<SHA256>

    init(key: String) {
        self.init(keyBytes: Array(key.utf8))
    }

    package init(keyBytes: [UInt8]) {
        state = HMAC<SHA256>(key: SymmetricKey(data: keyBytes))
    }

    package func authenticationCode(for message: UnsafeRawBufferPointer) -> HashedAuthenticationCode<SHA256> {
        var hmac = state
        hmac.update(data: message)
        return hmac.finalize()
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

    mutating func append(_ text: StaticString) {
        for index in 0..<text.utf8CodeUnitCount { appendByte(text.utf8Start[index]) }
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
