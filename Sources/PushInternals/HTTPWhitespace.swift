// HTTP's optional whitespace (RFC 9110 §5.6.3): spaces and tabs only. Shared by the header
// parsers of the resources (Range, If-None-Match), the Notification Hubs client and Retry-After.

/// Advances `position` past spaces and tabs in `bytes`.
package func skipOptionalWhitespace(_ bytes: [UInt8], _ position: inout Int) {
    while position < bytes.count, bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "\t") {
        position += 1
    }
}

extension StringProtocol {
    /// Without the spaces and tabs HTTP allows around field values.
    package func trimmingOptionalWhitespace() -> Substring {
        let text = Substring(self)
        let isWhitespace = { (character: Character) in character == " " || character == "\t" }
        guard let first = text.firstIndex(where: { !isWhitespace($0) }),
            let last = text.lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        return text[first...last]
    }
}
