public import PushJSON

/// Where a valid payload's keys lie on the tape: what ``APNsPayloadView`` reads from. An index of
/// 0 means absent (entry 0 is the root, never a member's value).
@usableFromInline
struct APNsPayloadLayout: Sendable {
    @usableFromInline var aps: UInt32 = 0
    /// By `APSKey.rawValue`.
    @usableFromInline var apsKeys = APSKeySlots()
    /// By `AlertKey.rawValue`, for the alert dictionary.
    @usableFromInline var alertKeys = AlertKeySlots()
    /// Whether `aps` and the alert dictionary hold keys the model does not name: when they do
    /// not, nothing needs to look for them again.
    @usableFromInline var apsHasOtherKeys = false
    @usableFromInline var alertHasOtherKeys = false

    init() {}
}

/// Checks a parsed payload against APNs' rules in one pass over the tape, recording every rule it
/// breaks and where each key lies. Lint reports what it finds; a payload view is made only when
/// it finds no error, so the view and lint can never disagree about what a valid payload is.
/// Nothing is allocated unless there is something to report.
struct APNsPayloadValidator {
    var diagnostics: [APNsDiagnostic] = []
    var layout = APNsPayloadLayout()
    var apsOffset = 0
    /// The `aps` object, once read: the rules between keys read its recorded values.
    var aps: UnsafeJSONValue?
    /// `aps.relevance-score` as read, with where: parsing a number is the dearest read, so the
    /// range rule, checked once the whole dictionary is read, does not parse it again.
    var relevanceScore: (value: Double, offset: Int)?
    /// `aps.event`, once the rules have read it.
    var event: APNsLiveActivityEvent?
    /// Lint only: reading a view skips warnings and the building of their text.
    let keepsWarnings: Bool
    /// Off for decoding, whose owned copies check the same thing as they are made (see
    /// `APNsPayload.init(decoding:)`): a second walk over every custom value, saved.
    let checksOwnedValues: Bool

    init(keepsWarnings: Bool, checksOwnedValues: Bool = true) {
        self.keepsWarnings = keepsWarnings
        self.checksOwnedValues = checksOwnedValues
    }

    var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    /// The value of `key` a model decoded from the payload would hold: the layout records each
    /// key's valid occurrence (a repeated key is itself an error).
    func recorded(_ key: APSKey) -> UnsafeJSONValue? {
        aps?.recorded(layout.apsKeys[key.rawValue])
    }

    /// Which `aps` keys the layout records, a bit per `APSKey.rawValue`: the rules ask of several
    /// keys, and a lane of the slot vector costs a copy of the vector to read.
    var validAPSKeys: UInt64 = 0

    /// Whether the layout records a valid `key`, without reading its value.
    @inline(__always)
    func has(_ key: APSKey) -> Bool { validAPSKeys & (1 << UInt64(key.rawValue)) != 0 }

    /// What the rules between keys look at, as ``APNsAPS/facts`` says it of a model; read from
    /// the layout once `aps` is, by ``checkRules(at:)``.
    var facts = APSFacts(hasAlert: false, hasBadge: false, hasSound: false, contentAvailable: false, contentChanged: false, isLiveActivity: false)

    @inline(__always)
    func readFacts() -> APSFacts {
        APSFacts(
            hasAlert: has(.alert), hasBadge: has(.badge), hasSound: has(.sound), contentAvailable: has(.contentAvailable),
            contentChanged: has(.contentChanged), isLiveActivity: has(.event))
    }

    var isBackgroundOnly: Bool { APNsRules.isBackgroundOnly(facts) }
    var inferredPushType: APNsPushType { APNsRules.inferredPushType(facts) }

    mutating func error(_ code: APNsPayloadError.Code, at offset: Int, path: String, _ message: String) {
        diagnostics.append(APNsDiagnostic(.error, APNsPayloadError(code, path: path, offset: offset, message)))
    }

    mutating func warning(_ code: APNsPayloadError.Code, at offset: Int, path: @autoclosure () -> String, _ message: @autoclosure () -> String) {
        guard keepsWarnings else { return }
        diagnostics.append(APNsDiagnostic(.warning, APNsPayloadError(code, path: path(), offset: offset, message())))
    }

    /// ``validate(_:)`` for a reader, which needs no more than the first error.
    mutating func validateOrThrow(_ root: UnsafeJSONValue) throws(APNsPayloadError) {
        // validate(_:) returns false only together with an error diagnostic.
        _ = validate(root)
        if let error = diagnostics.first(where: { $0.severity == .error }) { throw error.error }
    }

    /// Throws the first error lint would report for `root`.
    static func validate(_ root: UnsafeJSONValue) throws(APNsPayloadError) {
        var validator = APNsPayloadValidator(keepsWarnings: false)
        try validator.validateOrThrow(root)
    }

    /// Returns false when the root or `aps` is missing or not an object.
    mutating func validate(_ root: UnsafeJSONValue) -> Bool {
        guard root.kind == .object else {
            error(.typeMismatch, at: root.byteOffset, path: "", "the payload must be a JSON object")
            return false
        }
        checkUniqueKeys(root, path: "")
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
                layout.aps = UInt32(member.value.index)
                validateAPS(member.value)
            } else {
                checkOwnable(member.value, path: member.key.string!)
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
    mutating func passThrough<Key: PayloadKey>(_ member: UnsafeJSONValue.Member, in _: Key.Type) {
        let path = { Key.parentPath + "." + member.key.string! }
        warning(.unknownKey, at: member.key.byteOffset, path: path(), "\(path()) is not a key APNs knows; it is passed through")
        checkOwnable(member.value, path: path())
    }

    /// A value the model keeps as `JSON` must be one an owned `JSON` can hold: no object inside
    /// it repeats a key. The first repeat is reported, as the owned copy would throw it.
    mutating func checkOwnable(_ value: UnsafeJSONValue, path: @autoclosure () -> String) {
        guard checksOwnedValues, value.kind == .object || value.kind == .array else { return }
        do {
            try value.checkUniqueKeysThroughout()
        } catch {
            let converted = APNsPayloadError(error, path: path())
            self.error(converted.code, at: error.offset, path: converted.path, error.message)
        }
    }

    // MARK: aps

    mutating func validateAPS(_ object: UnsafeJSONValue) {
        let firstDiagnostic = diagnostics.count
        aps = object
        let table = APSKey.table
        var seen = KnownKeysSeen()
        for member in object.members {
            guard let key = table.match(member.key) else {
                passThrough(member, in: APSKey.self)
                layout.apsHasOtherKeys = true
                continue
            }
            let bit = seen.insert(key.rawValue)
            if isValid(member.value, for: key) {
                layout.apsKeys.setLane(key.rawValue, to: UInt32(member.value.index))
                validAPSKeys |= bit
            } else {
                layout.apsKeys.setLane(key.rawValue, to: 0)
                validAPSKeys &= ~bit
            }
        }
        if seen.sawRepeat || layout.apsHasOtherKeys { reportRepeatedKey(in: object, path: "aps", before: firstDiagnostic) }
        checkRules(at: object.byteOffset)
    }

    /// Reports a dictionary's first repeated key where ``checkUniqueKeys(_:path:)`` would have
    /// before its members were checked: ahead of what they reported from `start` on. Called only
    /// when the match bits saw a known key twice, or the dictionary holds keys the model does not
    /// name (which only a comparison can tell apart), so a dictionary without either is never
    /// compared key by key.
    mutating func reportRepeatedKey(in object: UnsafeJSONValue, path: String, before start: Int) {
        let count = diagnostics.count
        checkUniqueKeys(object, path: path)
        if diagnostics.count > count, start < count { diagnostics.insert(diagnostics.removeLast(), at: start) }
    }

    /// Rules between keys, reported at the aps object.
    @inline(__always)
    mutating func checkRules(at offset: Int) {
        let facts = readFacts()
        self.facts = facts
        if has(.event) { event = recorded(.event).flatMap(APNsLiveActivityEvent.init(spelledBy:)) }
        if has(.relevanceScore), let score = relevanceScore, !APNsRules.allowsRelevanceScore(score.value, isLiveActivity: facts.isLiveActivity) {
            error(.invalidValue, at: score.offset, path: APSKey.relevanceScore.path, "\(APSKey.relevanceScore.path) must be within 0...1")
        }
        if facts.contentAvailable, facts.hasAlert || facts.hasBadge || facts.hasSound {
            warning(
                .backgroundPushWithAlert, at: offset, path: "aps",
                {
                    let shown = [facts.hasAlert ? "alert" : nil, facts.hasBadge ? "badge" : nil, facts.hasSound ? "sound" : nil].compactMap { $0 }
                    return "content-available push also carries \(shown.joined(separator: ", ")): it is delivered as an alert push, not a silent one"
                }())
        }
        if let event {
            if !has(.timestamp) { missing(.timestamp, at: offset, in: "a Live Activity push") }
            switch event {
            case .start:
                if !has(.attributesType) { missing(.attributesType, at: offset, in: "a Live Activity start") }
                if !has(.attributes) { missing(.attributes, at: offset, in: "a Live Activity start") }
                if !has(.contentState) { missing(.contentState, at: offset, in: "a Live Activity start") }
            case .update:
                if !has(.contentState) { missing(.contentState, at: offset, in: "a Live Activity update") }
            case .end:
                break
            }
        }
    }

    mutating func missing(_ key: APSKey, at offset: Int, in kind: String) {
        error(.missingKey, at: offset, path: key.path, "\(kind) needs \(key.path)")
    }

    // MARK: alert and sound

    mutating func validateAlert(_ object: UnsafeJSONValue) {
        let firstDiagnostic = diagnostics.count
        let table = AlertKey.table
        // A second alert (itself an error) starts from none.
        layout.alertKeys = AlertKeySlots()
        var hasOtherKeys = false
        var seen = KnownKeysSeen()
        for member in object.members {
            guard let key = table.match(member.key) else {
                passThrough(member, in: AlertKey.self)
                hasOtherKeys = true
                continue
            }
            seen.insert(key.rawValue)
            layout.alertKeys.setLane(key.rawValue, to: isValid(member.value, for: key) ? UInt32(member.value.index) : 0)
        }
        if seen.sawRepeat || hasOtherKeys { reportRepeatedKey(in: object, path: AlertKey.parentPath, before: firstDiagnostic) }
        layout.alertHasOtherKeys = hasOtherKeys
    }

    /// A title or body: a string, or the Live Activity form `{"loc-key": …, "loc-args": […]}`.
    mutating func alertText(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        if value.kind == .string { return true }
        // The path is spelled only for a report: built up front, it was nearly half the cost of
        // checking a valid Live Activity title or body.
        guard value.kind == .object else {
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be a string or a {loc-key, loc-args} object")
            return false
        }
        checkUniqueKeys(value, path: path())
        var hasKey = false
        for member in value.members {
            if member.key.stringEquals("loc-key") {
                hasKey = string(member.value, "\(path()).loc-key")
            } else if member.key.stringEquals("loc-args") {
                _ = strings(member.value, "\(path()).loc-args")
            } else {
                error(.invalidValue, at: member.key.byteOffset, path: path(), "\(path()) may only hold loc-key and loc-args")
            }
        }
        guard hasKey else {
            error(.missingKey, at: value.byteOffset, path: path() + ".loc-key", "\(path()) needs a loc-key")
            return false
        }
        return true
    }

    /// True when the model would hold the sound: it has a valid name.
    mutating func validateCriticalSound(_ object: UnsafeJSONValue) -> Bool {
        checkUniqueKeys(object, path: "aps.sound")
        var sawName = false
        for member in object.members {
            let value = member.value
            if member.key.stringEquals("critical") {
                guard let flag = integer(value, "aps.sound.critical") else { continue }
                if flag != 0 && flag != 1 {
                    error(.invalidValue, at: value.byteOffset, path: "aps.sound.critical", "aps.sound.critical must be 0 or 1")
                }
            } else if member.key.stringEquals("name") {
                if string(value, "aps.sound.name") { sawName = true }
            } else if member.key.stringEquals("volume") {
                guard let volume = number(value, "aps.sound.volume") else { continue }
                if !(0...1).contains(volume) {
                    error(.invalidValue, at: value.byteOffset, path: "aps.sound.volume", "aps.sound.volume must be within 0...1")
                }
            } else {
                error(.invalidValue, at: member.key.byteOffset, path: "aps.sound", "aps.sound may only hold critical, name and volume")
            }
        }
        if !sawName { error(.missingKey, at: object.byteOffset, path: "aps.sound.name", "aps.sound needs a name") }
        return sawName
    }

    /// `aps.alert`: a string, or the alert dictionary.
    mutating func alert(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        switch value.kind {
        case .string: return true
        case .object:
            validateAlert(value)
            return true
        default:
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be a string or an object")
            return false
        }
    }

    /// `aps.sound`: a name, or the critical-alert dictionary with a valid name.
    mutating func sound(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        switch value.kind {
        case .string: return true
        case .object: return validateCriticalSound(value)
        default:
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be a string or an object")
            return false
        }
    }

    // MARK: typed values

    /// A finite number, kept for the range rule (see ``relevanceScore``).
    mutating func score(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        guard let score = number(value, path()) else { return false }
        relevanceScore = (score, value.byteOffset)
        return true
    }

    /// An integer from 0 up.
    mutating func count(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        guard let count = integer(value, path()) else { return false }
        guard count >= 0 else {
            error(.invalidValue, at: value.byteOffset, path: path(), "\(path()) must not be negative")
            return false
        }
        return true
    }

    /// A string spelling one of `Spelled`'s cases.
    mutating func spelling<Spelled: RawRepresentable<String> & CaseIterable>(
        _ value: UnsafeJSONValue, _ path: @autoclosure () -> String, of _: Spelled.Type
    ) -> Bool {
        guard string(value, path()) else { return false }
        guard Spelled(spelledBy: value) == nil else { return true }
        let names = Spelled.allCases.map(\.rawValue)
        error(
            .invalidValue, at: value.byteOffset, path: path(),
            "\(path()) must be \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "")")
        return false
    }

    /// A flag written as `true`.
    mutating func isTrue(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        guard value.bool == true else {
            error(.invalidValue, at: value.byteOffset, path: path(), "\(path()) must be true")
            return false
        }
        return true
    }

    mutating func string(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        guard value.kind == .string else {
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be a string")
            return false
        }
        return true
    }

    mutating func strings(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        guard value.kind == .array else {
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be an array of strings")
            return false
        }
        for element in value.elements where element.kind != .string {
            error(.typeMismatch, at: element.byteOffset, path: path(), "\(path()) must hold only strings")
            return false
        }
        return true
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

    mutating func ownableObject(_ value: UnsafeJSONValue, _ path: @autoclosure () -> String) -> Bool {
        guard value.kind == .object else {
            error(.typeMismatch, at: value.byteOffset, path: path(), "\(path()) must be an object")
            return false
        }
        let errors = diagnostics.count
        checkOwnable(value, path: path())
        return diagnostics.count == errors
    }
}

/// The keys the model names met in one dictionary, a bit per key: meeting one whose bit is set
/// is a repeat, found without comparing keys.
struct KnownKeysSeen {
    private var bits: UInt64 = 0
    private(set) var sawRepeat = false

    /// Notes the key with `rawValue`; returns its bit.
    @inline(__always) @discardableResult
    mutating func insert(_ rawValue: Int) -> UInt64 {
        let bit: UInt64 = 1 << UInt64(rawValue)
        if bits & bit != 0 { sawRepeat = true }
        bits |= bit
        return bit
    }
}

extension SIMD where Scalar == UInt32 {
    /// Writes the lane `lane` in place: the key slots' one way of writing a lane. The subscript's
    /// setter, given a lane known only at run time, copied the alert's whole vector (sixteen lanes)
    /// out to the stack and back for every write.
    @inline(__always)
    mutating func setLane(_ lane: Int, to value: UInt32) {
        precondition(lane >= 0 && lane < scalarCount)
        withUnsafeMutableBytes(of: &self) { $0.storeBytes(of: value, toByteOffset: lane &* 4, as: UInt32.self) }
    }
}

extension RawRepresentable where Self: CaseIterable, RawValue == String {
    /// The case a string value spells, compared in place: the synthesized `allCases` is a
    /// constant array and the raw values are literals, so nothing is allocated or copied.
    init?(spelledBy value: UnsafeJSONValue) {
        let spelled = Self.allCases.first { candidate in
            var spelling = candidate.rawValue
            return spelling.withUTF8 { value.stringEquals(UnsafeRawBufferPointer($0)) }
        }
        guard let spelled else { return nil }
        self = spelled
    }
}

extension UnsafeJSONValue {
    /// The value a payload layout recorded at tape index `index`; 0 records an absent key.
    @inlinable
    func recorded(_ index: UInt32) -> UnsafeJSONValue? {
        index == 0 ? nil : value(at: Int(index))
    }
}
