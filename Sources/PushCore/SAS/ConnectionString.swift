/// A Notification Hubs (Service Bus) connection string:
/// `Endpoint=sb://{namespace}.servicebus.windows.net/;SharedAccessKeyName={rule};SharedAccessKey={key}`.
///
/// Keys are matched case-insensitively and in any order; whitespace around parts and a trailing
/// `;` are tolerated; values may contain `=`. `EntityPath` is accepted; other parts are ignored.
/// The key never appears in `description`, `debugDescription`, `Mirror` output or errors.
public struct ConnectionString: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The endpoint with `sb://` mapped to `https://`, ending in `/`.
    public let endpoint: String
    /// The namespace's host, such as `my-ns.servicebus.windows.net`.
    public let host: String
    public let keyName: String
    public let entityPath: String?
    /// Kept as given: its UTF-8 bytes are the HMAC key (it is not base64-decoded).
    package let key: String

    /// - Throws: ``SASError`` naming the part that is missing, empty, repeated or malformed.
    public init(_ text: String) throws(SASError) {
        var endpoint: String?
        var keyName: String?
        var key: String?
        var entityPath: String?
        for rawPart in text.split(separator: ";", omittingEmptySubsequences: false) {
            let part = rawPart.trimmingWhitespace
            if part.isEmpty { continue }
            guard let equals = part.firstIndex(of: "=") else {
                throw SASError(.malformedPart, "connection string part \"\(Self.redactedName(part))\" has no '='")
            }
            let name = part[..<equals].trimmingWhitespace
            let value = String(part[part.index(after: equals)...].trimmingWhitespace)
            func assign(_ slot: inout String?, _ partName: String) throws(SASError) {
                guard slot == nil else { throw SASError(.duplicatePart, "\(partName) appears more than once") }
                guard !value.isEmpty else { throw SASError(.emptyPart, "\(partName) is empty") }
                slot = value
            }
            switch name.lowercased() {
            case "endpoint": try assign(&endpoint, "Endpoint")
            case "sharedaccesskeyname": try assign(&keyName, "SharedAccessKeyName")
            case "sharedaccesskey": try assign(&key, "SharedAccessKey")
            case "entitypath": try assign(&entityPath, "EntityPath")
            default: continue
            }
        }
        guard let endpoint else { throw SASError(.missingPart, "Endpoint is missing") }
        guard let keyName else { throw SASError(.missingPart, "SharedAccessKeyName is missing") }
        guard let key else { throw SASError(.missingPart, "SharedAccessKey is missing") }
        (self.endpoint, self.host) = try Self.normalise(endpoint)
        self.keyName = keyName
        self.key = key
        self.entityPath = entityPath
    }

    /// `sb://host/` or `https://host[/]` → (`https://host/`, `host`).
    static func normalise(_ endpoint: String) throws(SASError) -> (String, String) {
        let lowercased = endpoint.lowercased()
        let scheme = lowercased.hasPrefix("sb://") ? "sb://" : lowercased.hasPrefix("https://") ? "https://" : nil
        guard let scheme else {
            throw SASError(.invalidEndpoint, "Endpoint must start with sb:// or https:// (got \"\(endpoint)\")")
        }
        var host = endpoint.dropFirst(scheme.count)
        while host.hasSuffix("/") { host = host.dropLast() }
        guard !host.isEmpty, !host.contains("/"), !host.contains(where: { $0.isWhitespace }) else {
            throw SASError(.invalidEndpoint, "Endpoint must be a namespace host such as sb://my-ns.servicebus.windows.net/ (got \"\(endpoint)\")")
        }
        return ("https://\(host)/", String(host))
    }

    /// A part's name for an error message: never its value, which could be the key.
    static func redactedName(_ part: Substring) -> String {
        String(part.prefix(24)) + (part.count > 24 ? "…" : "")
    }

    public var description: String {
        "Endpoint=sb://\(host)/;SharedAccessKeyName=\(keyName);SharedAccessKey=<redacted>"
            + (entityPath.map { ";EntityPath=\($0)" } ?? "")
    }

    public var debugDescription: String { "ConnectionString(\(description))" }

    public var customMirror: Mirror {
        Mirror(self, children: ["endpoint": endpoint, "keyName": keyName, "entityPath": entityPath as Any], displayStyle: .struct)
    }
}

extension Substring {
    var trimmingWhitespace: Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result.removeFirst() }
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}
