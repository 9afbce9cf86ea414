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
        if validator.diagnostics.contains(where: { $0.severity == .error }) { _ = try APNsPayloadView.validatedLayout(of: root) }
        do throws(JSONError) {
            try self.init(root: root, layout: validator.layout) { (value) throws(JSONError) in try JSON(encoding: value) }
        } catch {
            _ = try APNsPayloadView.validatedLayout(of: root)
            // Unreachable: full validation reports every repeated key a copy can find.
            throw APNsPayloadError(error, path: "")
        }
    }

    /// An owned copy of what a payload view reads.
    public init(_ view: borrowing APNsPayloadView) {
        // A view exists only for a payload validated in full: no copy can find a repeated key.
        self.init(root: view.root, layout: view.layout) { value in JSON(encodingUniqueKeys: value) }
    }

    /// `copy` makes the owned `JSON` of a value: checking for repeated keys or not.
    init<Failure: Error>(root: UnsafeJSONValue, layout: APNsPayloadLayout, copy: (UnsafeJSONValue) throws(Failure) -> JSON) throws(Failure) {
        self.init()
        // Every root key but `aps` is a custom key: one allocation instead of growing by doubling.
        customKeys.reserveCapacity(max(root.count - 1, 0))
        for member in root.members where !member.key.stringEquals("aps") {
            customKeys.append(JSONMember(member.key.string!, try copy(member.value)))
        }
        // Filled in place (the model is large; building it and then storing it would copy it).
        try withUniqueAPS { (aps) throws(Failure) in try aps.fill(from: root.value(at: Int(layout.aps)), layout: layout, copy: copy) }
    }
}

extension APNsAPS {
    /// Copies the fields of a valid `aps` object, found at the indices of `layout`.
    mutating func fill<Failure: Error>(
        from object: UnsafeJSONValue, layout: APNsPayloadLayout, copy: (UnsafeJSONValue) throws(Failure) -> JSON
    ) throws(Failure) {
        func value(_ key: APSKey) -> UnsafeJSONValue? { object.recorded(layout.apsKeys[key.rawValue]) }
        if let alert = value(.alert) {
            self.alert = alert.kind == .string ? .text(alert.string!) : .fields(try APNsAlertFields(alert, layout: layout, copy: copy))
        }
        badge = value(.badge)?.int
        if let sound = value(.sound) {
            self.sound = sound.kind == .string ? .named(sound.string!) : .critical(APNsCriticalSound(sound))
        }
        threadID = value(.threadID)?.string
        category = value(.category)?.string
        contentAvailable = value(.contentAvailable) != nil
        mutableContent = value(.mutableContent) != nil
        targetContentID = value(.targetContentID)?.string
        interruptionLevel = value(.interruptionLevel).flatMap(APNsInterruptionLevel.init(spelledBy:))
        relevanceScore = value(.relevanceScore)?.double
        filterCriteria = value(.filterCriteria)?.string
        staleDate = value(.staleDate)?.int
        timestamp = value(.timestamp)?.int
        event = value(.event).flatMap(APNsLiveActivityEvent.init(spelledBy:))
        dismissalDate = value(.dismissalDate)?.int
        contentState = try value(.contentState).map(copy)
        attributesType = value(.attributesType)?.string
        attributes = try value(.attributes).map(copy)
        inputPushToken = value(.inputPushToken) != nil
        inputPushChannel = value(.inputPushChannel)?.string
        contentChanged = value(.contentChanged) != nil
        urlArgs = value(.urlArgs).map(\.strings)
        if layout.apsHasOtherKeys { otherKeys = try object.otherMembers(APSKey.self, copy: copy) }
    }
}

extension APNsAlertFields {
    /// Copies the fields of a valid alert object, found at the indices of `keys`.
    init<Failure: Error>(_ object: UnsafeJSONValue, layout: APNsPayloadLayout, copy: (UnsafeJSONValue) throws(Failure) -> JSON) throws(Failure) {
        func value(_ key: AlertKey) -> UnsafeJSONValue? { object.recorded(layout.alertKeys[key.rawValue]) }
        self.init(
            title: value(.title).map(APNsAlertText.init), subtitle: value(.subtitle)?.string, body: value(.body).map(APNsAlertText.init),
            launchImage: value(.launchImage)?.string, titleLocKey: value(.titleLocKey)?.string,
            titleLocArgs: value(.titleLocArgs).map(\.strings), subtitleLocKey: value(.subtitleLocKey)?.string,
            subtitleLocArgs: value(.subtitleLocArgs).map(\.strings), locKey: value(.locKey)?.string, locArgs: value(.locArgs).map(\.strings),
            sound: value(.sound)?.string, otherKeys: layout.alertHasOtherKeys ? try object.otherMembers(AlertKey.self, copy: copy) : [])
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
