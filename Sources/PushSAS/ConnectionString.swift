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

    /// - Throws: ``SASError`` naming the part that is missing, empty, repeated or malformed, and
    ///   where it starts (a byte offset); never any of the text, which could hold the key.
    public init(_ text: String) throws(SASError) {
        var endpoint: (value: String, offset: Int)?
        var keyName: (value: String, offset: Int)?
        var key: (value: String, offset: Int)?
        var entityPath: (value: String, offset: Int)?
        for (index, rawPart) in text.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
            let part = rawPart.trimmingWhitespace
            if part.isEmpty { continue }
            let offset = text.utf8.distance(from: text.startIndex, to: part.startIndex)
            guard let equals = part.firstIndex(of: "=") else {
                let known = Self.partNames[part.lowercased()]
                throw SASError(.malformedPart, "\(known ?? "part \(index + 1)") at byte \(offset) has no '='")
            }
            let name = part[..<equals].trimmingWhitespace
            let value = part[part.index(after: equals)...].trimmingWhitespace
            let valueOffset = text.utf8.distance(from: text.startIndex, to: value.startIndex)
            func assign(_ slot: inout (value: String, offset: Int)?, _ partName: String) throws(SASError) {
                guard slot == nil else { throw SASError(.duplicatePart, "\(partName) appears more than once (again at byte \(offset))") }
                guard !value.isEmpty else { throw SASError(.emptyPart, "\(partName) is empty (at byte \(offset))") }
                slot = (String(value), valueOffset)
            }
            switch Self.partNames[name.lowercased()] {
            case "Endpoint": try assign(&endpoint, "Endpoint")
            case "SharedAccessKeyName": try assign(&keyName, "SharedAccessKeyName")
            case "SharedAccessKey": try assign(&key, "SharedAccessKey")
            case "EntityPath": try assign(&entityPath, "EntityPath")
            default: continue
            }
        }
        // In the order that names the cause: a part that swallowed the next one (a ';' missing) is
        // reported as itself, not as the part it swallowed. Names are shown in descriptions and
        // tokens, so one holding '=' or a space is refused: what follows it may be the key.
        guard let endpoint else { throw SASError(.missingPart, "Endpoint is missing") }
        (self.endpoint, self.host) = try Self.normalise(endpoint.value, at: endpoint.offset)
        guard let keyName else { throw SASError(.missingPart, "SharedAccessKeyName is missing") }
        try Self.requireName(keyName, "SharedAccessKeyName")
        if let entityPath { try Self.requireName(entityPath, "EntityPath") }
        guard let key else { throw SASError(.missingPart, "SharedAccessKey is missing") }
        self.keyName = keyName.value
        self.key = key.value
        self.entityPath = entityPath?.value
    }

    private static func requireName(_ part: (value: String, offset: Int), _ partName: String) throws(SASError) {
        guard let bad = part.value.utf8.firstIndex(where: { $0 == UInt8(ascii: "=") || $0 <= UInt8(ascii: " ") }) else { return }
        let offset = part.offset + part.value.utf8.distance(from: part.value.utf8.startIndex, to: bad)
        throw SASError(.malformedPart, "\(partName) holds '=' or a space at byte \(offset); is a ';' missing before it?")
    }

    /// The parts read, by their lowercased names; others are ignored.
    private static let partNames = [
        "endpoint": "Endpoint", "sharedaccesskeyname": "SharedAccessKeyName", "sharedaccesskey": "SharedAccessKey", "entitypath": "EntityPath",
    ]

    /// `sb://host/` or `https://host[/]` → (`https://host/`, `host`); `offset` is where the value
    /// starts in the connection string, for the error.
    static func normalise(_ endpoint: String, at offset: Int = 0) throws(SASError) -> (String, String) {
        let lowercased = endpoint.lowercased()
        let scheme = lowercased.hasPrefix("sb://") ? "sb://" : lowercased.hasPrefix("https://") ? "https://" : nil
        guard let scheme else {
            throw SASError(.invalidEndpoint, "Endpoint at byte \(offset) must start with sb:// or https://")
        }
        var host = endpoint.dropFirst(scheme.count)
        while host.hasSuffix("/") { host = host.dropLast() }
        guard !host.isEmpty, !host.contains("/"), !host.contains(where: { $0.isWhitespace || $0 == "=" }) else {
            throw SASError(.invalidEndpoint, "Endpoint at byte \(offset) must be a namespace host alone, such as sb://my-ns.servicebus.windows.net/")
        }
        return ("https://\(host)/", String(host))
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
