import Crypto
import PushInternals

/// Where token expiries count from: Unix seconds. Inject a fixed clock in tests.
public struct SASClock: Sendable {
    public let now: @Sendable () -> Int64

    public init(_ now: @escaping @Sendable () -> Int64) { self.now = now }

    /// The system's wall clock, in whole seconds.
    public static let system = SASClock { unixSeconds() }

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
        PercentEncoding.append(keyName.utf8, to: &field)
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
        let capacity =
            prefix.utf8CodeUnitCount + resourceUTF8.count * 3 + "&sig=".utf8.count + 44 * 3 + "&se=".utf8.count + 19
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
