/// The client a trusted proxy says it forwarded for, read from `X-Forwarded-For` and RFC 7239's
/// `Forwarded`, in the forms proxies write: `203.0.113.9`, `203.0.113.9:5555` and
/// `[2001:db8::66]:443` (Azure Application Gateway adds the port by default), a bare IPv6 address,
/// and `for=` with or without quotes.
///
/// Each proxy appends the address it saw, so the rightmost entry that is not itself a trusted
/// proxy is the client; entries left of it are the client's own words and are never read. A
/// client may send either header itself, so when both are present they must name the same
/// client: a proxy that writes one of them appends the truth there, and a client that forges the
/// other cannot choose its own budget. What cannot be read gets a budget of its own, shared by
/// every such request, and never the proxy's, which serves every client.
package enum ForwardedFor {
    /// The budget of requests whose forwarded client is not an address (`unknown`, an obfuscated
    /// name, garbage) or whose two headers disagree.
    package static let unreadable = "forwarded:unreadable"

    /// The client the headers name, past the trusted proxies; nil when neither header names one.
    package static func client(forwardedFor: [String], forwarded: [String], trustedProxies: Set<String>) -> String? {
        let fromForwardedFor = rightmostUntrusted(forwardedFor.flatMap { $0.split(separator: ",") }.map(address), trustedProxies)
        let fromForwarded = rightmostUntrusted(forwarded.flatMap(forParameters).map(address), trustedProxies)
        switch (fromForwardedFor, fromForwarded) {
        case (nil, nil): return nil
        case (let one?, nil), (nil, let one?): return one ?? unreadable
        case (let first?, let second?): return first != nil && first == second ? first : unreadable
        }
    }

    /// nil when every entry is a trusted proxy (or there is none); `.some(nil)` when the entry that
    /// names the client is not an address.
    private static func rightmostUntrusted(_ hops: [String?], _ trustedProxies: Set<String>) -> String?? {
        for hop in hops.reversed() {
            guard let hop else { return .some(nil) }
            if !trustedProxies.contains(hop) { return .some(hop) }
        }
        return nil
    }

    /// The address of one entry, without its port or brackets; nil when it is not an address.
    package static func address(_ entry: some StringProtocol) -> String? {
        var text = Substring(entry.filter { $0 != " " && $0 != "\t" })
        if text.first == "[" {
            // `[v6]` or `[v6]:port`.
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && isPort(rest.dropFirst())) else { return nil }
            text = text[text.index(after: text.startIndex)..<close]
            return text.contains(":") && NetworkAddress.isIPAddress(String(text)) ? String(text) : nil
        }
        if text.count(where: { $0 == ":" }) == 1, let colon = text.firstIndex(of: ":") {
            // `v4:port`.
            guard isPort(text[text.index(after: colon)...]) else { return nil }
            text = text[..<colon]
            return text.contains(".") && NetworkAddress.isIPAddress(String(text)) ? String(text) : nil
        }
        return NetworkAddress.isIPAddress(String(text)) ? String(text) : nil
    }

    private static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 5 && text.allSatisfy { $0.isASCII && $0.isNumber } && Int(text)! <= 65535
    }

    /// The `for=` value of each element of a `Forwarded` field, in order (RFC 7239 section 4):
    /// elements are separated by commas, pairs by semicolons, and a value may be a quoted string.
    /// An element without `for=` names no hop and is skipped.
    static func forParameters(_ field: String) -> [String] {
        var values: [String] = []
        var pair = ""
        var forValue: String?
        var inQuotes = false
        var escaped = false
        func endPair() {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingSpaces.lowercased() == "for" {
                var value = parts[1].trimmingSpaces
                if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
                forValue = String(value.filter { $0 != "\\" })
            }
            pair = ""
        }
        for character in field {
            if escaped {
                pair.append(character)
                escaped = false
                continue
            }
            switch character {
            case "\\" where inQuotes:
                pair.append(character)
                escaped = true
            case "\"":
                inQuotes.toggle()
                pair.append(character)
            case ";" where !inQuotes:
                endPair()
            case "," where !inQuotes:
                endPair()
                if let value = forValue { values.append(value) }
                forValue = nil
            default:
                pair.append(character)
            }
        }
        endPair()
        if let value = forValue { values.append(value) }
        return values
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
