public import PushJSON

/// One finding of ``APNsLinter``: an error or a warning, with its ``APNsPayloadError``.
public typealias APNsDiagnostic = PayloadDiagnostic<APNsPayloadError>

/// APNs rules on top of JSON, reported with byte offsets.
public enum APNsLinter {
    /// Lints a parsed payload.
    /// - Parameters:
    ///   - document: The payload as parsed (its size is the size of its bytes as given).
    ///   - pushType: The push type it will be sent as; inferred from the payload when `nil`.
    ///   - liveActivity: The app's declared Live Activity types, which `content-state` and
    ///     `attributes` must decode into; not checked when `nil`.
    /// - Returns: Every error and warning, in document order, then the Live Activity schema's
    ///   findings, then the size and push-type checks.
    public static func lint(_ document: JSONDocument, pushType: APNsPushType? = nil, liveActivity: APNsLiveActivitySchema? = nil) -> [APNsDiagnostic]
    {
        document.withUnsafeRoot { lint($0, size: document.bytes.count, pushType: pushType, liveActivity: liveActivity) }
    }

    /// Parses and lints bytes with a reused parser.
    /// - Throws: `JSONError` when the bytes are not JSON; there is nothing to lint then.
    public static func lint(
        _ bytes: [UInt8], pushType: APNsPushType? = nil, liveActivity: APNsLiveActivitySchema? = nil, parser: inout JSONParser
    ) throws(JSONError) -> [APNsDiagnostic] {
        try parser.parse(bytes) { lint($0, size: bytes.count, pushType: pushType, liveActivity: liveActivity) }
    }

    /// Parses and lints bytes.
    /// - Throws: `JSONError` when the bytes are not JSON.
    public static func lint(
        _ bytes: [UInt8], pushType: APNsPushType? = nil, liveActivity: APNsLiveActivitySchema? = nil
    ) throws(JSONError)
        -> [APNsDiagnostic]
    {
        var parser = JSONParser()
        return try lint(bytes, pushType: pushType, liveActivity: liveActivity, parser: &parser)
    }

    /// Lints a parsed payload of `size` bytes. Nothing is allocated for a payload without findings.
    package static func lint(
        _ root: UnsafeJSONValue, size: Int, pushType: APNsPushType? = nil, liveActivity: APNsLiveActivitySchema? = nil
    ) -> [APNsDiagnostic] {
        var validator = APNsPayloadValidator(keepsWarnings: true)
        let isPayload = validator.validate(root)
        var diagnostics = validator.diagnostics
        if let liveActivity { diagnostics += liveActivity.diagnostics(for: root) }
        let effectiveType = pushType ?? (isPayload ? validator.inferredPushType : .alert)
        if size > effectiveType.payloadLimit {
            let limit = effectiveType.payloadLimit
            diagnostics.append(APNsDiagnostic(.error, .tooLarge(size: size, limit: limit, offset: limit, pushType: effectiveType)))
        }
        if isPayload, let pushType, let finding = pushTypeFinding(validator, pushType: pushType) {
            diagnostics.append(finding)
        }
        return diagnostics
    }

    static func pushTypeFinding(_ payload: APNsPayloadValidator, pushType: APNsPushType) -> APNsDiagnostic? {
        let apsOffset = payload.apsOffset
        switch pushType {
        case .background where !payload.facts.contentAvailable:
            return APNsDiagnostic(
                .error, APNsPayloadError(.pushTypeMismatch, path: "aps", offset: apsOffset, "a background push needs aps.content-available: 1"))
        case .liveactivity where payload.event == nil:
            return APNsDiagnostic(.error, APNsPayloadError(.missingKey, path: "aps.event", offset: apsOffset, "a liveactivity push needs aps.event"))
        case .alert where payload.isBackgroundOnly:
            return APNsDiagnostic(
                .warning,
                APNsPayloadError(
                    .pushTypeMismatch, path: "aps", offset: apsOffset, "nothing to show in an alert push: send it as background with priority 5"))
        default:
            return nil
        }
    }
}
