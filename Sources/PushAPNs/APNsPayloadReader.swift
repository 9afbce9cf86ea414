import PushJSON

/// Reads a parsed payload into the model, recording every rule it breaks. Decoding and lint
/// share it, so they can never disagree about what a valid payload is.
struct APNsPayloadReader {
    var diagnostics: [APNsDiagnostic] = []
    var apsOffset = 0
    /// Decoding reports only errors, so it skips warnings and the building of their text, which
    /// doubled the time to decode a payload with an unknown key or the seed flow's `"sound": ""`.
    let keepsWarnings: Bool

    init(keepsWarnings: Bool) {
        self.keepsWarnings = keepsWarnings
    }

    mutating func error(_ code: JSONError.Code, at offset: Int, _ message: String) {
        diagnostics.append(APNsDiagnostic(.error, code, at: offset, message))
    }

    mutating func warning(_ code: JSONError.Code, at offset: Int, _ message: @autoclosure () -> String) {
        guard keepsWarnings else { return }
        diagnostics.append(APNsDiagnostic(.warning, code, at: offset, message()))
    }

    /// Reads into `payload` in place (the model is large; returning it would copy it). Returns
    /// false when the root or `aps` is missing or not an object.
    mutating func read(_ root: UnsafeJSONValue, into payload: inout APNsPayload) -> Bool {
        guard root.kind == .object else {
            error(.typeMismatch, at: root.byteOffset, "the payload must be a JSON object")
            return false
        }
        checkUniqueKeys(root)
        // Every root key but `aps` is a custom key: one allocation instead of growing by doubling.
        payload.customKeys.reserveCapacity(max(root.count - 1, 0))
        var sawAPS = false
        for member in root.members {
            if member.key.stringEquals("aps") {
                guard !sawAPS else { continue }  // reported as a duplicate key
                sawAPS = true
                apsOffset = member.value.byteOffset
                guard member.value.kind == .object else {
                    error(.typeMismatch, at: member.value.byteOffset, "aps must be an object")
                    return false
                }
                payload.withUniqueAPS { aps in readAPS(member.value, into: &aps) }
            } else if let value = owned(member.value) {
                payload.customKeys.append(JSONMember(member.key.string!, value))
            }
        }
        guard sawAPS else {
            error(.missingKey, at: root.byteOffset, "the payload has no aps dictionary")
            return false
        }
        return true
    }

    mutating func checkUniqueKeys(_ object: UnsafeJSONValue) {
        do {
            try object.checkUniqueKeys()
        } catch {
            self.error(error.code, at: error.offset, error.message)
        }
    }

    /// A key this model does not name: kept, in order, with a warning naming its path.
    mutating func passThrough(_ member: UnsafeJSONValue.Member, in path: StaticString, to others: inout [JSONMember]) {
        let name = member.key.string!
        warning(.unknownKey, at: member.key.byteOffset, "\(path).\(name) is not a key APNs knows; it is passed through")
        if let owned = owned(member.value) { others.append(JSONMember(name, owned)) }
    }

    mutating func owned(_ value: UnsafeJSONValue) -> JSON? {
        do {
            return try JSON(value)
        } catch {
            self.error(error.code, at: error.offset, error.message)
            return nil
        }
    }

    // MARK: aps

    mutating func readAPS(_ object: UnsafeJSONValue, into aps: inout APNsAPS) {
        checkUniqueKeys(object)
        for member in object.members {
            let value = member.value
            guard let key = APSKey.table.match(member.key) else {
                passThrough(member, in: "aps", to: &aps.otherKeys)
                continue
            }
            switch key {
            case .alert:
                switch value.kind {
                case .string: aps.alert = .text(value.string!)
                case .object: aps.alert = .fields(readAlert(value))
                default: error(.typeMismatch, at: value.byteOffset, "aps.alert must be a string or an object")
                }
            case .badge:
                if let badge = integer(value, "aps.badge") {
                    if badge < 0 {
                        error(.invalidValue, at: value.byteOffset, "aps.badge must not be negative")
                    } else {
                        aps.badge = badge
                    }
                }
            case .sound:
                switch value.kind {
                case .string: aps.sound = .named(value.string!)
                case .object: aps.sound = readCriticalSound(value).map(APNsSound.critical)
                default: error(.typeMismatch, at: value.byteOffset, "aps.sound must be a string or an object")
                }
            case .threadID: aps.threadID = string(value, "aps.thread-id")
            case .category: aps.category = string(value, "aps.category")
            case .contentAvailable: aps.contentAvailable = one(value, "aps.content-available")
            case .mutableContent: aps.mutableContent = one(value, "aps.mutable-content")
            case .targetContentID: aps.targetContentID = string(value, "aps.target-content-id")
            case .interruptionLevel:
                if let level = string(value, "aps.interruption-level") {
                    aps.interruptionLevel = APNsInterruptionLevel(rawValue: level)
                    if aps.interruptionLevel == nil {
                        error(
                            .invalidValue, at: value.byteOffset,
                            "aps.interruption-level must be passive, active, time-sensitive or critical")
                    }
                }
            case .relevanceScore:
                aps.relevanceScore = number(value, "aps.relevance-score")
            case .filterCriteria: aps.filterCriteria = string(value, "aps.filter-criteria")
            case .staleDate: aps.staleDate = integer(value, "aps.stale-date")
            case .timestamp: aps.timestamp = integer(value, "aps.timestamp")
            case .event:
                if let event = string(value, "aps.event") {
                    aps.event = APNsLiveActivityEvent(rawValue: event)
                    if aps.event == nil {
                        error(.invalidValue, at: value.byteOffset, "aps.event must be start, update or end")
                    }
                }
            case .dismissalDate: aps.dismissalDate = integer(value, "aps.dismissal-date")
            case .contentState: aps.contentState = ownedObject(value, "aps.content-state")
            case .attributesType: aps.attributesType = string(value, "aps.attributes-type")
            case .attributes: aps.attributes = ownedObject(value, "aps.attributes")
            case .inputPushToken: aps.inputPushToken = one(value, "aps.input-push-token")
            case .inputPushChannel: aps.inputPushChannel = string(value, "aps.input-push-channel")
            case .contentChanged:
                if value.bool == true {
                    aps.contentChanged = true
                } else {
                    error(.invalidValue, at: value.byteOffset, "aps.content-changed must be true")
                }
            case .urlArgs: aps.urlArgs = strings(value, "aps.url-args")
            }
        }
        checkRules(aps, object)
    }

    /// Rules between keys, reported at the aps object. `aps` is borrowed: a copy of the 500-byte
    /// value retains every field in it.
    mutating func checkRules(_ aps: borrowing APNsAPS, _ object: UnsafeJSONValue) {
        let offset = object.byteOffset
        if let score = aps.relevanceScore, aps.event == nil, !(0...1).contains(score) {
            error(.invalidValue, at: object["relevance-score"]!.byteOffset, "aps.relevance-score must be within 0...1")
        }
        let hasAlert = aps.hasAlert, hasBadge = aps.badge != nil, hasSound = aps.hasSound
        if aps.contentAvailable, hasAlert || hasBadge || hasSound {
            warning(.backgroundPushWithAlert, at: offset, {
                let shown = [hasAlert ? "alert" : nil, hasBadge ? "badge" : nil, hasSound ? "sound" : nil].compactMap { $0 }
                return "content-available push also carries \(shown.joined(separator: ", ")): it is delivered as an alert push, not a silent one"
            }())
        }
        if let event = aps.event {
            if aps.timestamp == nil { error(.missingKey, at: offset, "a Live Activity push needs aps.timestamp") }
            switch event {
            case .start:
                if aps.attributesType == nil { error(.missingKey, at: offset, "a Live Activity start needs aps.attributes-type") }
                if aps.attributes == nil { error(.missingKey, at: offset, "a Live Activity start needs aps.attributes") }
                if aps.contentState == nil { error(.missingKey, at: offset, "a Live Activity start needs aps.content-state") }
            case .update:
                if aps.contentState == nil { error(.missingKey, at: offset, "a Live Activity update needs aps.content-state") }
            case .end:
                break
            }
        }
    }

    // MARK: alert and sound

    mutating func readAlert(_ object: UnsafeJSONValue) -> APNsAlertFields {
        checkUniqueKeys(object)
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
                passThrough(member, in: "aps.alert", to: &otherKeys)
                continue
            }
            switch key {
            case .title: title = alertText(value, "aps.alert.title")
            case .subtitle: subtitle = string(value, "aps.alert.subtitle")
            case .body: body = alertText(value, "aps.alert.body")
            case .launchImage: launchImage = string(value, "aps.alert.launch-image")
            case .titleLocKey: titleLocKey = string(value, "aps.alert.title-loc-key")
            case .titleLocArgs: titleLocArgs = strings(value, "aps.alert.title-loc-args")
            case .subtitleLocKey: subtitleLocKey = string(value, "aps.alert.subtitle-loc-key")
            case .subtitleLocArgs: subtitleLocArgs = strings(value, "aps.alert.subtitle-loc-args")
            case .locKey: locKey = string(value, "aps.alert.loc-key")
            case .locArgs: locArgs = strings(value, "aps.alert.loc-args")
            case .sound: sound = string(value, "aps.alert.sound")
            }
        }
        return APNsAlertFields(
            title: title, subtitle: subtitle, body: body, launchImage: launchImage, titleLocKey: titleLocKey,
            titleLocArgs: titleLocArgs, subtitleLocKey: subtitleLocKey, subtitleLocArgs: subtitleLocArgs, locKey: locKey,
            locArgs: locArgs, sound: sound, otherKeys: otherKeys)
    }

    /// A title or body: a string, or the Live Activity form `{"loc-key": …, "loc-args": […]}`.
    mutating func alertText(_ value: UnsafeJSONValue, _ path: String) -> APNsAlertText? {
        if value.kind == .string { return .text(value.string!) }
        guard value.kind == .object else {
            error(.typeMismatch, at: value.byteOffset, "\(path) must be a string or a {loc-key, loc-args} object")
            return nil
        }
        checkUniqueKeys(value)
        var key: String?
        var arguments: [String] = []
        for member in value.members {
            if member.key.stringEquals("loc-key") {
                key = string(member.value, "\(path).loc-key")
            } else if member.key.stringEquals("loc-args") {
                arguments = strings(member.value, "\(path).loc-args") ?? []
            } else {
                error(.invalidValue, at: member.key.byteOffset, "\(path) may only hold loc-key and loc-args")
            }
        }
        guard let key else {
            error(.missingKey, at: value.byteOffset, "\(path) needs a loc-key")
            return nil
        }
        return .localized(key: key, arguments: arguments)
    }

    mutating func readCriticalSound(_ object: UnsafeJSONValue) -> APNsCriticalSound? {
        checkUniqueKeys(object)
        var sound = APNsCriticalSound()
        var sawName = false
        for member in object.members {
            let value = member.value
            if member.key.stringEquals("critical") {
                guard let flag = integer(value, "aps.sound.critical") else { continue }
                guard flag == 0 || flag == 1 else {
                    error(.invalidValue, at: value.byteOffset, "aps.sound.critical must be 0 or 1")
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
                    error(.invalidValue, at: value.byteOffset, "aps.sound.volume must be within 0...1")
                    continue
                }
                sound.volume = volume
            } else {
                error(.invalidValue, at: member.key.byteOffset, "aps.sound may only hold critical, name and volume")
            }
        }
        guard sawName else {
            error(.missingKey, at: object.byteOffset, "aps.sound needs a name")
            return nil
        }
        return sound
    }

    // MARK: typed values

    mutating func string(_ value: UnsafeJSONValue, _ path: String) -> String? {
        guard let string = value.string else {
            error(.typeMismatch, at: value.byteOffset, "\(path) must be a string")
            return nil
        }
        return string
    }

    mutating func strings(_ value: UnsafeJSONValue, _ path: String) -> [String]? {
        guard value.kind == .array else {
            error(.typeMismatch, at: value.byteOffset, "\(path) must be an array of strings")
            return nil
        }
        var strings: [String] = []
        strings.reserveCapacity(value.count)
        for element in value.elements {
            guard let string = element.string else {
                error(.typeMismatch, at: element.byteOffset, "\(path) must hold only strings")
                return nil
            }
            strings.append(string)
        }
        return strings
    }

    mutating func integer(_ value: UnsafeJSONValue, _ path: String) -> Int? {
        guard value.isIntegerSpelling else {
            error(.typeMismatch, at: value.byteOffset, "\(path) must be an integer")
            return nil
        }
        guard let integer = value.int else {
            error(.invalidValue, at: value.byteOffset, "\(path) is out of range")
            return nil
        }
        return integer
    }

    mutating func number(_ value: UnsafeJSONValue, _ path: String) -> Double? {
        guard let number = value.double else {
            error(.typeMismatch, at: value.byteOffset, "\(path) must be a number")
            return nil
        }
        guard number.isFinite else {
            error(.invalidValue, at: value.byteOffset, "\(path) is out of range")
            return nil
        }
        return number
    }

    /// Flags APNs wants as the number 1.
    mutating func one(_ value: UnsafeJSONValue, _ path: String) -> Bool {
        guard value.isIntegerSpelling, value.int == 1 else {
            error(.invalidValue, at: value.byteOffset, "\(path) must be 1 (leave the key out otherwise)")
            return false
        }
        return true
    }

    mutating func ownedObject(_ value: UnsafeJSONValue, _ path: String) -> JSON? {
        guard value.kind == .object else {
            error(.typeMismatch, at: value.byteOffset, "\(path) must be an object")
            return nil
        }
        return owned(value)
    }
}
