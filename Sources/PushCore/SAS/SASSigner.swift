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

    /// The system's wall clock.
    public static let system = SASClock {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
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
        var token: [UInt8] = []
        token.reserveCapacity(96 + resource.utf8.count * 3 + keyNameField.count)
        token.append(contentsOf: "SharedAccessSignature sr=".utf8)
        let resourceStart = token.count
        Self.appendResource(resource, to: &token)
        let resourceEnd = token.count
        // The string to sign is `sr` + "\n" + expiry: write it in place, sign, then overwrite.
        token.append(ASCII.newline)
        appendDecimal(expiry, to: &token)
        let mac = token.withUnsafeBytes { signature(of: UnsafeRawBufferPointer(rebasing: $0[resourceStart...])) }
        token.removeSubrange(resourceEnd...)
        token.append(contentsOf: "&sig=".utf8)
        var base64: [UInt8] = []
        base64.reserveCapacity(44)
        mac.withUnsafeBytes { TokenEncoding.appendBase64($0, to: &base64) }
        TokenEncoding.appendPercentEncoded(base64, to: &token)
        token.append(contentsOf: "&se=".utf8)
        appendDecimal(expiry, to: &token)
        token.append(contentsOf: keyNameField)
        return String(decoding: token, as: UTF8.self)
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

    /// The lowercased URI, percent-encoded. ASCII is lowercased byte by byte; other text goes
    /// through Unicode lowercasing first, as the Azure SDKs do.
    static func appendResource(_ resource: String, to output: inout [UInt8]) {
        if resource.utf8.allSatisfy({ $0 < 0x80 }) {
            TokenEncoding.appendPercentEncoded(resource.utf8, lowercasingASCII: true, to: &output)
        } else {
            TokenEncoding.appendPercentEncoded(resource.lowercased().utf8, to: &output)
        }
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

func appendDecimal(_ value: Int64, to output: inout [UInt8]) {
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &digits) { buffer in
        var magnitude = value.magnitude
        var start = buffer.count
        repeat {
            start -= 1
            buffer[start] = ASCII.zero &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude != 0
        if value < 0 {
            start -= 1
            buffer[start] = ASCII.minus
        }
        output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
    }
}
