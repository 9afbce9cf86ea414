import PushInternals

/// An HTTP entity tag (RFC 9110 §8.8.3): an opaque string, strong or weak.
public struct EntityTag: Hashable, Sendable, CustomStringConvertible {
    /// The tag between the quotes.
    public let opaqueTag: String
    public let isWeak: Bool

    /// A strong tag from a resource's XXH3-128 digest: 32 lowercase hex digits.
    public init(strong digest: XXH128Digest) {
        opaqueTag = digest.hexString
        isWeak = false
    }

    /// A tag from its header form, `"…"` or `W/"…"`; nil when the text is not exactly one entity tag.
    public init?(_ headerValue: some StringProtocol) {
        let bytes = Array(headerValue.utf8)
        var position = 0
        guard let range = EntityTag.scan(bytes, at: &position), position == bytes.count else { return nil }
        opaqueTag = String(decoding: bytes[range.opaque], as: UTF8.self)
        isWeak = range.isWeak
    }

    /// The `ETag` header value: the tag in quotes, after `W/` when weak.
    public var headerValue: String { isWeak ? "W/\"\(opaqueTag)\"" : "\"\(opaqueTag)\"" }
    public var description: String { headerValue }

    /// Whether an `If-None-Match` header value matches this tag (RFC 9110 §13.1.2: `*`, or any
    /// listed tag equal under the weak comparison). A malformed list matches nothing.
    /// For GET and HEAD a match means `304 Not Modified`.
    public func matches(ifNoneMatch headerValue: some StringProtocol) -> Bool {
        let bytes = Array(headerValue.utf8)
        var position = 0
        skipOptionalWhitespace(bytes, &position)
        if position < bytes.count, bytes[position] == UInt8(ascii: "*") {
            position += 1
            skipOptionalWhitespace(bytes, &position)
            return position == bytes.count
        }
        var matched = false
        // A list: tags separated by commas with optional whitespace; empty elements are allowed.
        while position < bytes.count {
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                skipOptionalWhitespace(bytes, &position)
                continue
            }
            guard let range = EntityTag.scan(bytes, at: &position) else { return false }
            if bytes[range.opaque].elementsEqual(opaqueTag.utf8) { matched = true }
            skipOptionalWhitespace(bytes, &position)
            guard position == bytes.count || bytes[position] == UInt8(ascii: ",") else { return false }
        }
        return matched
    }

    /// Whether an `If-Range` header value lets a `Range` apply (RFC 9110 §13.1.5): it must be one
    /// entity tag equal to this one under the strong comparison. A date never matches, because
    /// these resources send no `Last-Modified`; a weak tag never matches.
    public func matches(ifRange headerValue: some StringProtocol) -> Bool {
        guard let other = EntityTag(headerValue.trimmingOptionalWhitespace()) else { return false }
        return !isWeak && !other.isWeak && other.opaqueTag == opaqueTag
    }

    /// Scans `W/"…"` or `"…"` at `position`; the opaque part is `%x21 / %x23-7E / obs-text`.
    private static func scan(_ bytes: [UInt8], at position: inout Int) -> (opaque: Range<Int>, isWeak: Bool)? {
        var index = position
        var weak = false
        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "W"), bytes[index + 1] == UInt8(ascii: "/") {
            weak = true
            index += 2
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            let byte = bytes[index]
            guard byte == 0x21 || (0x23...0x7E).contains(byte) || byte >= 0x80 else { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        position = index + 1
        return (start..<index, weak)
    }
}
