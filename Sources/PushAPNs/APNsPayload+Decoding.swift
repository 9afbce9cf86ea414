import PushJSON

extension APNsPayload {
    /// Parses and decodes a payload into the model with a reused parser.
    /// - Throws: `JSONError` when the bytes are not JSON; ``APNsPayloadError`` with the first
    ///   error ``APNsLinter`` would report (size limits aside: they depend on the push type).
    public init(decoding bytes: [UInt8], parser: inout JSONParser) throws {
        let decoded: Result<APNsPayload, APNsPayloadError> = try parser.parse(bytes) { root in
            Result { () throws(APNsPayloadError) in try APNsPayload(decoding: root) }
        }
        self = try decoded.get()
    }

    /// Decodes a parsed payload into the model.
    /// - Throws: the first error ``APNsLinter`` would report (size limits aside).
    public init(decoding document: JSONDocument) throws(APNsPayloadError) {
        self = try document.withUnsafeRoot { (root) throws(APNsPayloadError) in try APNsPayload(decoding: root) }
    }

    /// Decodes a parsed payload into the model.
    package init(decoding root: UnsafeJSONValue) throws(APNsPayloadError) {
        var reader = APNsPayloadReader(keepsWarnings: false)
        var payload = APNsPayload()
        // read(_:into:) returns false only together with an error diagnostic.
        _ = reader.read(root, into: &payload)
        if let error = reader.diagnostics.first(where: { $0.severity == .error }) { throw error.error }
        self = consume payload
    }
}
