import Foundation
public import PushInternals

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
import Foundation
#endif

/// An HTTP proxy that the HTTP/2 connections tunnel through (`CONNECT host:port`), with optional Basic
/// credentials. TLS runs end to end inside the tunnel: the proxy sees only the host and port.
public struct HTTPProxy: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?

    public init(host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// `http://[user:password@]host[:port]` (the port defaults to 80), as `HTTPS_PROXY` holds it;
    /// the credentials percent-decoded.
    public init(url: String) throws(HTTPProxyError) {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "http",
            let host = components.host, !host.isEmpty, components.path.isEmpty || components.path == "/", components.query == nil
        else { throw HTTPProxyError(code: .invalidURL, message: "a proxy is http://[user:password@]host[:port]") }
        guard (1...65_535).contains(components.port ?? 80) else {
            throw HTTPProxyError(code: .invalidPort, message: "the proxy's port is 1 to 65535")
        }
        self.init(host: host, port: components.port ?? 80, username: components.user, password: components.password)
    }

    /// The proxy `HTTPS_PROXY` (or `https_proxy`) names for `endpoint` (`https://host[:port]`),
    /// unless `NO_PROXY` (or `no_proxy`) exempts it, as curl reads it: `*`, or a comma-separated
    /// list of hosts and domain suffixes (`apple.com`, `.push.apple.com`), each with an optional
    /// `:port` that must then match too, and IP addresses or CIDR ranges (`127.0.0.0/8`,
    /// `[::1]`, `fd00::/8`) that match an endpoint given by its address. An empty variable counts
    /// as unset, so it does not hide the other spelling.
    /// - Returns: nil when no proxy applies.
    /// - Throws: ``HTTPProxyError`` when the variable is set but is not a proxy address.
    public static func fromEnvironment(
        for endpoint: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(HTTPProxyError) -> HTTPProxy? {
        func variable(_ names: String...) -> String? { names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty } }
        guard let url = variable("HTTPS_PROXY", "https_proxy") else { return nil }
        let origin = HTTPSOrigin(endpoint).map { (host: $0.host, port: $0.port) } ?? (host: endpoint, port: 443)
        let exempt = (variable("NO_PROXY", "no_proxy") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        for entry in exempt where !entry.isEmpty {
            if NoProxyEntry(entry).exempts(host: origin.host.lowercased(), port: origin.port) { return nil }
        }
        do {
            return try HTTPProxy(url: url)
        } catch {
            throw HTTPProxyError(code: error.code, message: "HTTPS_PROXY: \(error.message)")
        }
    }

    /// `host:port`, and whether credentials are set; never the password.
    public var description: String {
        "\(host):\(port)\(username == nil ? "" : " (with credentials)")"
    }

    /// A connection's failure that names this proxy and what it did, never its credentials.
    package func failure(_ problem: String) -> TransportFailure {
        .proxy("proxy \(host):\(port) \(problem)")
    }

    var basicCredentials: String? {
        guard let username else { return nil }
        return Base64.encodedString("\(username):\(password ?? "")".utf8)
    }
}

/// A proxy setting that cannot be used.
public struct HTTPProxyError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        /// Not `http://[user:password@]host[:port]`.
        case invalidURL
        /// A port outside 1 to 65535.
        case invalidPort
    }

    public let code: Code
    public let message: String

    public var description: String { message }
}

/// One entry of `NO_PROXY`.
package struct NoProxyEntry {
    let entry: String

    package init(_ entry: String) { self.entry = entry }

    package func exempts(host: String, port: Int) -> Bool {
        if entry == "*" { return true }
        // An address range: matches an endpoint given by its address.
        if let slash = entry.firstIndex(of: "/") {
            guard let prefix = Int(entry[entry.index(after: slash)...]), let network = ipAddressBytes(String(entry[..<slash])),
                let address = ipAddressBytes(host), network.count == address.count, (0...network.count * 8).contains(prefix)
            else { return false }
            return Self.samePrefix(network, address, bits: prefix)
        }
        // A host or address, with an optional port: `example.com:443`, `[::1]:8443`, `::1`.
        var name = Substring(entry)
        var entryPort: Int?
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            let rest = name[name.index(after: close)...]
            if rest.hasPrefix(":") { entryPort = Int(rest.dropFirst()) }
            name = name[name.index(after: name.startIndex)..<close]
        } else if name.count(where: { $0 == ":" }) == 1, let colon = name.firstIndex(of: ":") {
            entryPort = Int(name[name.index(after: colon)...])
            name = name[..<colon]
        }
        if let entryPort, entryPort != port { return false }
        if let address = ipAddressBytes(String(name)) { return ipAddressBytes(host) == address }
        let domain = name.hasPrefix(".") ? name.dropFirst() : name
        return !domain.isEmpty && (host == domain || host.hasSuffix("." + domain))
    }

    static func samePrefix(_ first: [UInt8], _ second: [UInt8], bits: Int) -> Bool {
        for index in 0..<first.count {
            let covered = min(max(bits - index * 8, 0), 8)
            guard covered > 0 else { return true }
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - covered))
            if first[index] & mask != second[index] & mask { return false }
        }
        return true
    }
}
