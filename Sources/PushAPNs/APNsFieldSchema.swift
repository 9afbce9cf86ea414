public import PushInternals
public import PushJSON

/// The fields of a Live Activity's `ContentState` (or of its attributes) as the app declares
/// them: names and JSON types. ActivityKit decodes `content-state` into that type and drops the
/// push, telling no one, when it cannot; checking against the declaration says so before sending.
///
/// Written in code, or read from a JSON object mapping each field to `string`, `number`,
/// `integer`, `bool`, `array` or `object`, with `?` for an optional field:
/// `{"score":"integer","team":"string","note":"string?"}`.
public struct APNsFieldSchema: Sendable, Hashable {
    public enum FieldType: String, Sendable, Hashable, CaseIterable {
        case string, number, integer, bool, array, object
    }

    public struct Field: Sendable, Hashable {
        public var name: String
        public var type: FieldType
        /// May be missing or `null` (a Swift optional).
        public var isOptional: Bool

        public init(_ name: String, _ type: FieldType, optional: Bool = false) {
            self.name = name
            self.type = type
            isOptional = optional
        }
    }

    /// A schema file or text that is not a declaration.
    public struct ParseError: CodedError {
        @nonexhaustive
        public enum Code: String, ErrorCode {
            /// The text is not JSON, or not a JSON object.
            case notAnObject
            /// A field is declared twice.
            case duplicateField
            /// A field's type is not one of the types a schema knows.
            case invalidType
        }

        public let code: Code
        /// Byte offset in the declaration of what is wrong.
        public let offset: Int
        public let message: String

        public var description: String { "at byte \(offset): \(message)" }
    }

    public let fields: [Field]

    /// - Precondition: no name appears twice.
    public init(_ fields: [Field]) {
        precondition(Set(fields.map(\.name)).count == fields.count, "a field is declared twice")
        self.fields = fields
    }

    /// Reads a declaration from its JSON form.
    public init(json bytes: [UInt8]) throws(ParseError) {
        var parser = JSONParser()
        let document: JSONDocument
        do throws(JSONError) {
            document = try parser.parse(bytes)
        } catch {
            throw ParseError(code: .notAnObject, offset: error.offset, message: "not JSON: \(error.message)")
        }
        let root = document.root
        guard root.kind == .object else {
            throw ParseError(code: .notAnObject, offset: root.byteOffset, message: "a schema is an object mapping each field to its type")
        }
        var fields: [Field] = []
        var names: Set<String> = []
        for member in root.members {
            let name = member.key.string ?? ""
            guard names.insert(name).inserted else {
                throw ParseError(code: .duplicateField, offset: member.key.byteOffset, message: "field \(name.debugDescription) is declared twice")
            }
            guard var spelling = member.value.string else {
                throw ParseError(code: .invalidType, offset: member.value.byteOffset, message: "the type of \(name.debugDescription) is not a string")
            }
            let isOptional = spelling.hasSuffix("?")
            if isOptional { spelling.removeLast() }
            guard let type = FieldType(rawValue: spelling) else {
                let names = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
                throw ParseError(
                    code: .invalidType, offset: member.value.byteOffset,
                    message: "the type of \(name.debugDescription) is one of \(names), with ? when optional")
            }
            fields.append(Field(name, type, optional: isOptional))
        }
        self.fields = fields
    }

    public init(json text: String) throws(ParseError) {
        try self.init(json: Array(text.utf8))
    }

    /// What would stop a decoder of these fields from reading `value`, found at `path`: errors for
    /// a missing field, a wrong type or `null` in a required field; warnings for a field the app
    /// does not declare, which Swift's synthesized `Decodable` skips (so it is sent for nothing).
    package func diagnostics(for value: UnsafeJSONValue, path: String) -> [APNsDiagnostic] {
        guard value.kind == .object else {
            return [APNsDiagnostic(.error, APNsPayloadError(.schemaMismatch, path: path, offset: value.byteOffset, "\(path) is not an object"))]
        }
        var diagnostics: [APNsDiagnostic] = []
        var seen = [Bool](repeating: false, count: fields.count)
        for member in value.members {
            let name = member.key.string ?? ""
            let fieldPath = path + "." + name
            guard let index = fields.firstIndex(where: { $0.name == name }) else {
                diagnostics.append(
                    APNsDiagnostic(
                        .warning,
                        APNsPayloadError(
                            .schemaMismatch, path: fieldPath, offset: member.key.byteOffset,
                            "\(fieldPath) is not a field of the app's type: the device ignores it")))
                continue
            }
            seen[index] = true
            let field = fields[index]
            if member.value.isNull && field.isOptional { continue }
            if !Self.matches(member.value, field.type) {
                let found = member.value.isNull ? "null" : Self.typeName(of: member.value)
                diagnostics.append(
                    APNsDiagnostic(
                        .error,
                        APNsPayloadError(
                            .schemaMismatch, path: fieldPath, offset: member.value.byteOffset,
                            "\(fieldPath) is declared \(field.type.rawValue)\(field.isOptional ? "?" : "") but holds \(found): the device cannot decode it"
                        )
                    ))
            }
        }
        for (index, field) in fields.enumerated() where !seen[index] && !field.isOptional {
            diagnostics.append(
                APNsDiagnostic(
                    .error,
                    APNsPayloadError(
                        .schemaMismatch, path: path + "." + field.name, offset: value.byteOffset,
                        "\(path) lacks \(field.name), a required \(field.type.rawValue): the device cannot decode it")))
        }
        return diagnostics
    }

    static func matches(_ value: UnsafeJSONValue, _ type: FieldType) -> Bool {
        switch type {
        case .string: value.kind == .string
        case .bool: value.kind == .bool
        case .array: value.kind == .array
        case .object: value.kind == .object
        case .number: value.kind == .number && value.double?.isFinite == true
        // Decoders read `3.0` and `1e2` as integers too; not `2.5`, nor what overflows 64 bits.
        case .integer:
            value.kind == .number
                && (value.int != nil
                    || value.double.map { $0.rounded() == $0 && abs($0) < 9.223_372_036_854_775e18 } == true)
        }
    }

    static func typeName(of value: UnsafeJSONValue) -> String {
        switch value.kind {
        case .number: value.isIntegerSpelling ? "an integer" : "a number with a fraction"
        case .string: "a string"
        case .bool: "a bool"
        case .array: "an array"
        case .object: "an object"
        case .null: "null"
        }
    }
}

/// The declared types a Live Activity's pushes must decode into: its `ContentState`, and, for
/// push-to-start, its attributes.
public struct APNsLiveActivitySchema: Sendable, Hashable {
    public var contentState: APNsFieldSchema
    /// The `ActivityAttributes` fields a `start` event's `attributes` must carry; not checked when nil.
    public var attributes: APNsFieldSchema?

    public init(contentState: APNsFieldSchema, attributes: APNsFieldSchema? = nil) {
        self.contentState = contentState
        self.attributes = attributes
    }

    /// The payload's `aps.content-state` and `aps.attributes` against the declarations.
    package func diagnostics(for root: UnsafeJSONValue) -> [APNsDiagnostic] {
        guard root.kind == .object, let aps = root["aps"], aps.kind == .object else { return [] }
        var diagnostics: [APNsDiagnostic] = []
        if let contentState = aps["content-state"] {
            diagnostics += self.contentState.diagnostics(for: contentState, path: "aps.content-state")
        }
        if let attributesSchema = attributes, let attributes = aps["attributes"] {
            diagnostics += attributesSchema.diagnostics(for: attributes, path: "aps.attributes")
        }
        return diagnostics
    }

    /// The findings for an encoded payload; empty when it decodes on the device.
    public func diagnostics(for document: JSONDocument) -> [APNsDiagnostic] {
        document.withUnsafeRoot { diagnostics(for: $0) }
    }

    /// The errors for a payload about to be sent (warnings left out), with byte offsets into its
    /// encoding. A payload that cannot be encoded has nothing to check here: encoding reports it.
    public func errors(in payload: APNsPayload) -> [APNsPayloadError] {
        guard payload.aps.contentState != nil || payload.aps.attributes != nil, let bytes = try? payload.encoded() else { return [] }
        var parser = JSONParser()
        guard let document = try? parser.parse(bytes) else { return [] }
        return diagnostics(for: document).filter { $0.severity == .error }.map(\.error)
    }
}
