public import PushJSON

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

    /// Decodes a parsed payload into the model: its view, copied. The copies of custom values,
    /// `content-state`, `attributes` and unknown keys check for repeated keys as they are made,
    /// so validation skips that walk; when a copy finds one, validating again in full names
    /// the error lint reports first.
    package init(decoding root: UnsafeJSONValue) throws(APNsPayloadError) {
        var validator = APNsPayloadValidator(keepsWarnings: false, checksOwnedValues: false)
        _ = validator.validate(root)
        if validator.diagnostics.contains(where: { $0.severity == .error }) { try APNsPayloadValidator.validate(root) }
        do throws(JSONError) {
            try self.init(root: root, layout: validator.layout) { (value) throws(JSONError) in try JSON(encoding: value) }
        } catch {
            try APNsPayloadValidator.validate(root)
            // Unreachable: full validation reports every repeated key a copy can find.
            throw APNsPayloadError(error, path: "")
        }
    }

    /// An owned copy of what a payload view reads.
    public init(_ view: borrowing APNsPayloadView) {
        // A view exists only for a payload validated in full: no copy can find a repeated key.
        self.init(root: view.root, layout: view.layout.pointee) { value in JSON(encodingUniqueKeys: value) }
    }

    /// `copy` makes the owned `JSON` of a value: checking for repeated keys or not.
    init<Failure: Error>(root: UnsafeJSONValue, layout: APNsPayloadLayout, copy: (UnsafeJSONValue) throws(Failure) -> JSON) throws(Failure) {
        self.init()
        // Every root key but `aps` is a custom key: one allocation instead of growing by doubling.
        customKeys.reserveCapacity(max(root.count - 1, 0))
        // A valid payload has one `aps`, the member whose value the layout recorded.
        for member in root.members where member.value.index != Int(layout.aps) {
            customKeys.append(JSONMember(member.key.string!, try copy(member.value)))
        }
        // Filled in place (the model is large; building it and then storing it would copy it).
        try withUniqueAPS { (aps) throws(Failure) in try aps.fill(from: root.value(at: Int(layout.aps)), layout: layout, copy: copy) }
    }
}

extension APNsAlert {
    /// A valid alert: a string, or the alert dictionary.
    init<Failure: Error>(_ value: UnsafeJSONValue, layout: APNsPayloadLayout, copy: (UnsafeJSONValue) throws(Failure) -> JSON) throws(Failure) {
        self = value.kind == .string ? .text(value.string!) : .fields(try APNsAlertFields(value, layout: layout, copy: copy))
    }
}

extension APNsSound {
    /// A valid sound: a name, or the critical-alert dictionary.
    init(_ value: UnsafeJSONValue) {
        self = value.kind == .string ? .named(value.string!) : .critical(APNsCriticalSound(value))
    }
}

extension APNsAlertText {
    /// A valid title or body: a string, or a loc-key with at most one loc-args array.
    init(_ value: UnsafeJSONValue) {
        if value.kind == .string {
            self = .text(value.string!)
        } else {
            self = .localized(key: value["loc-key"]!.string!, arguments: value["loc-args"].map(\.strings) ?? [])
        }
    }
}

extension APNsCriticalSound {
    /// A valid critical sound dictionary; `critical` is true unless it says 0.
    init(_ object: UnsafeJSONValue) {
        self.init(critical: object["critical"]?.int != 0, name: object["name"]!.string!, volume: object["volume"]?.double)
    }
}

extension UnsafeJSONValue {
    /// The decoded strings of an array a valid payload holds only strings in.
    var strings: [String] {
        var strings: [String] = []
        strings.reserveCapacity(count)
        for element in elements { strings.append(element.string!) }
        return strings
    }

    /// The members of this object whose keys `Key` does not name, copied in order.
    func otherMembers<Key: PayloadKey, Failure: Error>(
        _: Key.Type, copy: (UnsafeJSONValue) throws(Failure) -> JSON
    ) throws(Failure) -> [JSONMember] {
        var others: [JSONMember] = []
        for member in members where Key.table.match(member.key) == nil {
            others.append(JSONMember(member.key.string!, try copy(member.value)))
        }
        return others
    }
}
