import PushJSON

/// Reads a parsed payload into the model, recording every rule it breaks. Decoding and lint
/// share it, so they can never disagree about what a valid payload is.
struct APNsPayloadReader {
    var diagnostics: [APNsDiagnostic] = []
    var apsOffset = 0
    /// Where `aps.relevance-score` was read, for the range rule checked after every key is read.
    var relevanceScoreOffset = 0
    /// Decoding reports only errors, so it skips warnings and the building of their text, which
    /// doubled the time to decode a payload with an unknown key or the seed flow's `"sound": ""`.
    let keepsWarnings: Bool

    init(keepsWarnings: Bool) {
        self.keepsWarnings = keepsWarnings
    }

    mutating func error(_ code: APNsPayloadError.Code, at offset: Int, path: String, _ message: String) {
        diagnostics.append(APNsDiagnostic(.error, APNsPayloadError(code, path: path, offset: offset, message)))
    }

    mutating func warning(_ code: APNsPayloadError.Code, at offset: Int, path: @autoclosure () -> String, _ message: @autoclosure () -> String) {
        guard keepsWarnings else { return }
        diagnostics.append(APNsDiagnostic(.warning, APNsPayloadError(code, path: path(), offset: offset, message())))
    }

    /// Reads into `payload` in place (the model is large; returning it would copy it). Returns
    /// false when the root or `aps` is missing or not an object.
    mutating func read(_ root: UnsafeJSONValue, into payload: inout APNsPayload) -> Bool {
        guard root.kind == .object else {
            error(.typeMismatch, at: root.byteOffset, path: "", "the payload must be a JSON object")
            return false
        }
        checkUniqueKeys(root, path: "")
        // Every root key but `aps` is a custom key: one allocation instead of growing by doubling.
        payload.customKeys.reserveCapacity(max(root.count - 1, 0))
        var sawAPS = false
        for member in root.members {
            if member.key.stringEquals("aps") {
                guard !sawAPS else { continue }  // reported as a duplicate key
                sawAPS = true
                apsOffset = member.value.byteOffset
                guard member.value.kind == .object else {
                    error(.typeMismatch, at: member.value.byteOffset, path: "aps", "aps must be an object")
                    return false
                }
                payload.withUniqueAPS { aps in readAPS(member.value, into: &aps) }
            } else {
                let name = member.key.string!
                if let value = owned(member.value, path: name) { payload.customKeys.append(JSONMember(name, value)) }
            }
        }
        guard sawAPS else {
            error(.missingKey, at: root.byteOffset, path: "aps", "the payload has no aps dictionary")
            return false
        }
        return true
    }

    /// A repeated key is reported with the path of the dictionary that holds it.
    mutating func checkUniqueKeys(_ object: UnsafeJSONValue, path: @autoclosure () -> String) {
        do {
            try object.checkUniqueKeys()
        } catch {
            self.error(.duplicateKey, at: error.offset, path: path(), error.message)
        }
    }

    /// A key this model does not name: kept, in order, with a warning naming its path.
    mutating func passThrough<Key: PayloadKey>(_ member: UnsafeJSONValue.Member, in _: Key.Type, to others: inout [JSONMember]) {
        let name = member.key.string!
        let path = Key.parentPath + "." + name
        warning(.unknownKey, at: member.key.byteOffset, path: path, "\(path) is not a key APNs knows; it is passed through")
        if let owned = owned(member.value, path: path) { others.append(JSONMember(name, owned)) }
    }

    /// The value as an owned `JSON`; nil, with an error, for one nested deeper than JSON values may be.
    mutating func owned(_ value: UnsafeJSONValue, path: @autoclosure () -> String) -> JSON? {
        do {
            return try JSON(value)
        } catch {
            let converted = APNsPayloadError(error, path: path())
            self.error(converted.code, at: error.offset, path: converted.path, error.message)
            return nil
        }
    }

    // MARK: aps

    mutating func readAPS(_ object: UnsafeJSONValue, into aps: inout APNsAPS) {
        checkUniqueKeys(object, path: "aps")
        for member in object.members {
            let value = member.value
            guard let key = APSKey.table.match(member.key) else {
                passThrough(member, in: APSKey.self, to: &aps.otherKeys)
                continue
            }
            switch key {
            case .alert:
                switch value.kind {
                case .string: aps.alert = .text(value.string!)
                case .object: aps.alert = .fields(readAlert(value))
                default: error(.typeMismatch, at: value.byteOffset, path: key.path, "\(key.path) must be a string or an object")
                }
            case .badge:
                if let badge = integer(value, key.path) {
                    if badge < 0 {
                        error(.invalidValue, at: value.byteOffset, path: key.path, "\(key.path) must not be negative")
                    } else {
                        aps.badge = badge
                    }
                }
            case .sound:
                switch value.kind {
                case .string: aps.sound = .named(value.string!)
                case .object: aps.sound = readCriticalSound(value).map(APNsSound.critical)
                default: error(.typeMismatch, at: value.byteOffset, path: key.path, "\(key.path) must be a string or an object")
                }
            case .threadID: aps.threadID = string(value, key.path)
            case .category: aps.category = string(value, key.path)
            case .contentAvailable: aps.contentAvailable = one(value, key.path)
            case .mutableContent: aps.mutableContent = one(value, key.path)
            case .targetContentID: aps.targetContentID = string(value, key.path)
            case .interruptionLevel:
                if let level = string(value, key.path) {
                    aps.interruptionLevel = APNsInterruptionLevel(rawValue: level)
                    if aps.interruptionLevel == nil {
                        error(
                            .invalidValue, at: value.byteOffset, path: key.path,
                            "\(key.path) must be passive, active, time-sensitive or critical")
                    }
                }
            case .relevanceScore:
                aps.relevanceScore = number(value, key.path)
                relevanceScoreOffset = value.byteOffset
            case .filterCriteria: aps.filterCriteria = string(value, key.path)
            case .staleDate: aps.staleDate = integer(value, key.path)
            case .timestamp: aps.timestamp = integer(value, key.path)
            case .event:
                if let event = string(value, key.path) {
                    aps.event = APNsLiveActivityEvent(rawValue: event)
                    if aps.event == nil {
                        error(.invalidValue, at: value.byteOffset, path: key.path, "\(key.path) must be start, update or end")
                    }
                }
            case .dismissalDate: aps.dismissalDate = integer(value, key.path)
            case .contentState: aps.contentState = ownedObject(value, key.path)
            case .attributesType: aps.attributesType = string(value, key.path)
            case .attributes: aps.attributes = ownedObject(value, key.path)
            case .inputPushToken: aps.inputPushToken = one(value, key.path)
            case .inputPushChannel: aps.inputPushChannel = string(value, key.path)
            case .contentChanged:
                if value.bool == true {
                    aps.contentChanged = true
                } else {
                    error(.invalidValue, at: value.byteOffset, path: key.path, "\(key.path) must be true")
                }
            case .urlArgs: aps.urlArgs = strings(value, key.path)
            }
        }
        checkRules(aps, object)
    }

    /// Rules between keys, reported at the aps object. `aps` is borrowed: a copy of the 500-byte
    /// value retains every field in it.
    mutating func checkRules(_ aps: borrowing APNsAPS, _ object: UnsafeJSONValue) {
        let offset = object.byteOffset
        if let score = aps.relevanceScore, aps.event == nil, !(0...1).contains(score) {
            error(.invalidValue, at: relevanceScoreOffset, path: APSKey.relevanceScore.path, "\(APSKey.relevanceScore.path) must be within 0...1")
        }
        let hasAlert = aps.hasAlert, hasBadge = aps.badge != nil, hasSound = aps.hasSound
        if aps.contentAvailable, hasAlert || hasBadge || hasSound {
            warning(
                .backgroundPushWithAlert, at: offset, path: "aps",
                {
                    let shown = [hasAlert ? "alert" : nil, hasBadge ? "badge" : nil, hasSound ? "sound" : nil].compactMap { $0 }
                    return "content-available push also carries \(shown.joined(separator: ", ")): it is delivered as an alert push, not a silent one"
                }())
        }
        if let event = aps.event {
            if aps.timestamp == nil { missing(.timestamp, at: offset, in: "a Live Activity push") }
            switch event {
            case .start:
                if aps.attributesType == nil { missing(.attributesType, at: offset, in: "a Live Activity start") }
                if aps.attributes == nil { missing(.attributes, at: offset, in: "a Live Activity start") }
                if aps.contentState == nil { missing(.contentState, at: offset, in: "a Live Activity start") }
            case .update:
                if aps.contentState == nil { missing(.contentState, at: offset, in: "a Live Activity update") }
            case .end:
                break
            }
        }
    }

    mutating func missing(_ key: APSKey, at offset: Int, in kind: String) {
        error(.missingKey, at: offset, path: key.path, "\(kind) needs \(key.path)")
    }

    // MARK: alert and sound

    mutating func readAlert(_ object: UnsafeJSONValue) -> APNsAlertFields {
        checkUniqueKeys(object, path: AlertKey.parentPath)
        // Fields gathered in locals and the value built once at the end: starting from
        // `APNsAlertFields()` and assigning into it built, copied and destroyed an empty value first.
        var title: APNsAlertText?, body: APNsAlertText?
        var subtitle: String?, launchImage: String?, titleLocKey: String?, subtitleLocKey: String?
        var locKey: String?, sound: String?
        var titleLocArgs: [String]?, subtitleLocArgs: [String]?, locArgs: [String]?
        var otherKeys: [JSONMember] = []
        for member in object.members {
            let value = member.value
            guard let key = AlertKey.table.match(member.key) else {
                passThrough(member, in: AlertKey.self, to: &otherKeys)
                continue
            }
            switch key {
            case .title: title = alertText(value, key.path)
            case .subtitle: subtitle = string(value, key.path)
            case .body: body = alertText(value, key.path)
            case .launchImage: launchImage = string(value, key.path)
            case .titleLocKey: titleLocKey = string(value, key.path)
            case .titleLocArgs: titleLocArgs = strings(value, key.path)
            case .subtitleLocKey: subtitleLocKey = string(value, key.path)
            case .subtitleLocArgs: subtitleLocArgs = strings(value, key.path)
            case .locKey: locKey = string(value, key.path)
            case .locArgs: locArgs = strings(value, key.path)
            case .sound: sound = string(value, key.path)
            }
        }
        return APNsAlertFields(
            title: title, subtitle: subtitle, body: body, launchImage: launchImage, titleLocKey: titleLocKey,
            titleLocArgs: titleLocArgs, subtitleLocKey: subtitleLocKey, subtitleLocArgs: subtitleLocArgs, locKey: locKey,
            locArgs: locArgs, sound: sound, otherKeys: otherKeys)
    }

    /// A title or body: a string, or the Live Activity form `{"loc-key": …, "loc-args": […]}`.
    mutating func alertText(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> APNsAlertText? {
        if value.kind == .string { return .text(value.string!) }
        let path = path()
        guard value.kind == .object else {
            error(.typeMismatch, at: value.byteOffset, path: path, "\(path) must be a string or a {loc-key, loc-args} object")
            return nil
        }
        checkUniqueKeys(value, path: path)
        var key: String?
        var arguments: [String] = []
        for member in value.members {
            if member.key.stringEquals("loc-key") {
                key = string(member.value, "\(path).loc-key")
            } else if member.key.stringEquals("loc-args") {
                arguments = strings(member.value, "\(path).loc-args") ?? []
            } else {
                error(.invalidValue, at: member.key.byteOffset, path: path, "\(path) may only hold loc-key and loc-args")
            }
        }
        guard let key else {
            error(.missingKey, at: value.byteOffset, path: path + ".loc-key", "\(path) needs a loc-key")
            return nil
        }
        return .localized(key: key, arguments: arguments)
    }

    mutating func readCriticalSound(_ object: UnsafeJSONValue) -> APNsCriticalSound? {
        checkUniqueKeys(object, path: "aps.sound")
        var sound = APNsCriticalSound()
        var sawName = false
        for member in object.members {
            let value = member.value
            if member.key.stringEquals("critical") {
                guard let flag = integer(value, "aps.sound.critical") else { continue }
                guard flag == 0 || flag == 1 else {
                    error(.invalidValue, at: value.byteOffset, path: "aps.sound.critical", "aps.sound.critical must be 0 or 1")
                    continue
                }
                sound.critical = flag == 1
            } else if member.key.stringEquals("name") {
                if let name = string(value, "aps.sound.name") {
                    sound.name = name
                    sawName = true
                }
            } else if member.key.stringEquals("volume") {
                guard let volume = number(value, "aps.sound.volume") else { continue }
                guard (0...1).contains(volume) else {
                    error(.invalidValue, at: value.byteOffset, path: "aps.sound.volume", "aps.sound.volume must be within 0...1")
                    continue
                }
                sound.volume = volume
            } else {
                error(.invalidValue, at: member.key.byteOffset, path: "aps.sound", "aps.sound may only hold critical, name and volume")
            }
        }
        guard sawName else {
            error(.missingKey, at: object.byteOffset, path: "aps.sound.name", "aps.sound needs a name")
            return nil
        }
        return sound
    }

    // MARK: typed values

    mutating func string(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> String? {
        guard let string = value.string else {
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be a string")
            return nil
        }
        return string
    }

    mutating func strings(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> [String]? {
        guard value.kind == .array else {
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be an array of strings")
            return nil
        }
        var strings: [String] = []
        strings.reserveCapacity(value.count)
        for element in value.elements {
            guard let string = element.string else {
                error(.typeMismatch, at: element.byteOffset, path: path(), "\(path()) must hold only strings")
                return nil
            }
            strings.append(string)
        }
        return strings
    }

    mutating func integer(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Int? {
        guard value.isIntegerSpelling else {
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be an integer")
            return nil
        }
        guard let integer = value.int else {
            error(.invalidValue, at: value.byteOffset, path: path(), "\(path()) is out of range")
            return nil
        }
        return integer
    }

    mutating func number(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Double? {
        guard let number = value.double else {
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be a number")
            return nil
        }
        guard number.isFinite else {
            error(.invalidValue, at: value.byteOffset, path: path(), "\(path()) is out of range")
            return nil
        }
        return number
    }

    /// Flags APNs wants as the number 1.
    mutating func one(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        guard value.isIntegerSpelling, value.int == 1 else {
            error(.invalidValue, at: value.byteOffset, path: path(), "\(path()) must be 1 (leave the key out otherwise)")
            return false
        }
        return true
    }

    mutating func ownedObject(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> JSON? {
        guard value.kind == .object else {
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be an object")
            return nil
        }
        return owned(value, path: path())
    }
}
