import PushJSON

/// One finding of ``APNsLinter``: an error (APNs would refuse the payload, or the app could not
/// read it) or a warning (it is accepted, but probably not what was meant).
public struct APNsDiagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error, warning
    }

    public let severity: Severity
    public let code: JSONError.Code
    /// Byte offset of the value or key concerned.
    public let offset: Int
    public let message: String

    public init(_ severity: Severity, _ code: JSONError.Code, at offset: Int, _ message: String) {
        self.severity = severity
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(severity): \(code) at byte \(offset): \(message)" }

    public var error: JSONError { JSONError(code, at: offset, message) }
}

extension JSONError.Code {
    /// Lint warnings.
    public static let unknownKey = JSONError.Code("unknownKey")
    public static let backgroundPushWithAlert = JSONError.Code("backgroundPushWithAlert")
    /// The payload does not match the push type it is sent as.
    public static let pushTypeMismatch = JSONError.Code("pushTypeMismatch")
}

/// APNs rules on top of JSON, reported with byte offsets.
public enum APNsLinter {
    /// Lints a parsed payload.
    /// - Parameters:
    ///   - document: The payload as parsed (its size is the size of its bytes as given).
    ///   - pushType: The push type it will be sent as; inferred from the payload when `nil`.
    /// - Returns: Every error and warning, in document order, then the size and push-type checks.
    public static func lint(_ document: JSONDocument, pushType: APNsPushType? = nil) -> [APNsDiagnostic] {
        document.withUnsafeRoot { lint($0, size: document.bytes.count, pushType: pushType) }
    }

    /// Parses and lints bytes with a reused parser; a JSON syntax error is returned as the only
    /// diagnostic.
    public static func lint(_ bytes: [UInt8], pushType: APNsPushType? = nil, parser: inout JSONParser) -> [APNsDiagnostic] {
        do {
            return try parser.parse(bytes) { lint($0, size: bytes.count, pushType: pushType) }
        } catch {
            return [APNsDiagnostic(.error, error.code, at: error.offset, error.message)]
        }
    }

    /// Parses and lints bytes; a JSON syntax error is returned as the only diagnostic.
    public static func lint(_ bytes: [UInt8], pushType: APNsPushType? = nil) -> [APNsDiagnostic] {
        var parser = JSONParser()
        return lint(bytes, pushType: pushType, parser: &parser)
    }

    /// Lints a parsed payload of `size` bytes.
    package static func lint(_ root: UnsafeJSONValue, size: Int, pushType: APNsPushType? = nil) -> [APNsDiagnostic] {
        var reader = APNsPayloadReader(keepsWarnings: true)
        var payload = APNsPayload()
        let isPayload = reader.read(root, into: &payload)
        var diagnostics = reader.diagnostics
        let effectiveType = pushType ?? (isPayload ? APNsHeaders.inferredPushType(for: payload) : .alert)
        if size > effectiveType.payloadLimit {
            diagnostics.append(
                APNsDiagnostic(
                    .error, .payloadTooLarge, at: effectiveType.payloadLimit,
                    "payload is \(size) bytes, over the \(effectiveType.rawValue) limit of \(effectiveType.payloadLimit) bytes"))
        }
        if isPayload, let pushType {
            diagnostics += pushTypeFindings(payload.aps, pushType: pushType, apsOffset: reader.apsOffset)
        }
        return diagnostics
    }

    static func pushTypeFindings(_ aps: APNsAPS, pushType: APNsPushType, apsOffset: Int) -> [APNsDiagnostic] {
        switch pushType {
        case .background where !aps.contentAvailable:
            return [APNsDiagnostic(.error, .pushTypeMismatch, at: apsOffset, "a background push needs aps.content-available: 1")]
        case .liveactivity where aps.event == nil:
            return [APNsDiagnostic(.error, .missingKey, at: apsOffset, "a liveactivity push needs aps.event")]
        case .alert where aps.isBackgroundOnly:
            return [
                APNsDiagnostic(
                    .warning, .pushTypeMismatch, at: apsOffset,
                    "nothing to show in an alert push: send it as background with priority 5")
            ]
        default:
            return []
        }
    }
}

extension APNsPayload {
    /// Parses and decodes a payload into the model with a reused parser.
    /// - Throws: ``JSONError`` for a syntax error, or the first error ``APNsLinter`` would report
    ///   (size limits aside: they depend on the push type).
    public init(decoding bytes: [UInt8], parser: inout JSONParser) throws(JSONError) {
        self = try parser.parse(bytes) { (root) throws(JSONError) in try APNsPayload(decoding: root) }
    }

    /// Decodes a parsed payload into the model.
    public init(decoding document: JSONDocument) throws(JSONError) {
        self = try document.withUnsafeRoot { (root) throws(JSONError) in try APNsPayload(decoding: root) }
    }

    /// Decodes a parsed payload into the model.
    package init(decoding root: UnsafeJSONValue) throws(JSONError) {
        var reader = APNsPayloadReader(keepsWarnings: false)
        var payload = APNsPayload()
        // read(_:into:) returns false only together with an error diagnostic.
        _ = reader.read(root, into: &payload)
        if let error = reader.diagnostics.first(where: { $0.severity == .error }) { throw error.error }
        self = consume payload
    }
}
