/// The host and port of an `https://host[:port]` endpoint (443 when none), a bracketed IPv6
/// address unbracketed; nil for anything else (a path, a query, credentials, another scheme).
package struct HTTPSOrigin: Hashable, Sendable {
    package let host: String
    package let port: Int

    package init?(_ endpoint: String) {
        guard endpoint.hasPrefix("https://") else { return nil }
        let authority = endpoint.dropFirst("https://".count)
        guard !authority.isEmpty, !authority.contains(where: { "/?#@ ".contains($0) }) else { return nil }
        var host = Substring(authority)
        var port = 443
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = authority.lastIndex(of: ":") {
            guard let number = Int(authority[authority.index(after: colon)...]) else { return nil }
            host = authority[..<colon]
            port = number
        }
        guard !host.isEmpty, (1...65_535).contains(port) else { return nil }
        self.host = String(host)
        self.port = port
    }
}
