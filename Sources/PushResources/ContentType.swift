/// A media type recognised from a resource's first bytes (its "magic"), never from its name.
public struct ContentType: Hashable, Sendable, CustomStringConvertible {
    /// The `Content-Type` header value, e.g. `image/png`.
    public let mediaType: String

    public init(_ mediaType: String) { self.mediaType = mediaType }
    public var description: String { mediaType }

    public static let png = ContentType("image/png")
    public static let jpeg = ContentType("image/jpeg")
    public static let gif = ContentType("image/gif")
    public static let webp = ContentType("image/webp")
    public static let heic = ContentType("image/heic")
    public static let heif = ContentType("image/heif")
    public static let avif = ContentType("image/avif")
    /// What to send for bytes that match no known signature.
    public static let octetStream = ContentType("application/octet-stream")

    /// How many leading bytes ``sniff(_:)`` looks at.
    public static let sniffLength = 16

    /// Recognises PNG, JPEG, GIF, WebP and the ISO-BMFF image formats (HEIC, HEIF, AVIF) from
    /// their signatures.
    /// - Parameter prefix: the resource's first bytes (at least ``sniffLength`` when it has that many).
    /// - Returns: the type, or nil when no signature matches.
    public static func sniff(_ prefix: some Collection<UInt8>) -> ContentType? {
        var header = [UInt8](repeating: 0, count: sniffLength)
        var count = 0
        for byte in prefix.prefix(sniffLength) {
            header[count] = byte
            count += 1
        }
        func starts(with signature: [UInt8], at offset: Int = 0) -> Bool {
            count >= offset + signature.count && header[offset..<offset + signature.count].elementsEqual(signature)
        }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8)) { return .gif }
        if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) { return .webp }
        // ISO base media file: a box size, then `ftyp`, then the major brand.
        if starts(with: Array("ftyp".utf8), at: 4), count >= 12 {
            switch String(decoding: header[8..<12], as: UTF8.self) {
            case "heic", "heix", "heim", "heis", "hevc", "hevx": return .heic
            case "mif1", "msf1": return .heif
            case "avif", "avis": return .avif
            default: return nil
            }
        }
        return nil
    }
}
