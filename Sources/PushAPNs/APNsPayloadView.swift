public import PushJSON

/// A valid payload read in place: every `aps` field as a typed value and every custom key as a
/// JSON view, straight from the parser's tape and the input bytes. Making one checks the payload
/// as lint does and finds each key once; reading a field is then a lookup, and nothing is
/// allocated until a string is asked for as a `String` (``JSONStringView/string``).
///
/// ```swift
/// var parser = JSONParser()
/// let badge = try APNsPayloadView.read(bytes, parser: &parser) { payload in payload.aps.badge }
/// ```
///
/// Non-escaping: the view, and every view reached from it, lives only inside the closure it is
/// handed to. ``APNsPayload/init(_:)`` makes an owned model from it.
public struct APNsPayloadView: ~Escapable {
    @usableFromInline let root: UnsafeJSONValue
    @usableFromInline let layout: APNsPayloadLayout

    @inlinable @_lifetime(immortal)
    init(root: UnsafeJSONValue, layout: APNsPayloadLayout) {
        self.root = root
        self.layout = layout
    }

    /// Parses `bytes` with a reused parser, checks them as a payload and calls `body` with the view.
    /// - Throws: `JSONError` when the bytes are not JSON; ``APNsPayloadError`` with the first
    ///   error ``APNsLinter`` would report (size limits aside: they depend on the push type);
    ///   or what `body` throws.
    @inlinable
    public static func read<Result>(
        _ bytes: [UInt8], parser: inout JSONParser, _ body: (borrowing APNsPayloadView) throws -> Result
    ) throws -> Result {
        let read: Swift.Result<Result, any Error> = try parser.parse(bytes) { root in
            Swift.Result { try withView(of: root, body) }
        }
        return try read.get()
    }

    /// Checks a parsed document as a payload and calls `body` with the view.
    /// - Throws: ``APNsPayloadError`` with the first error ``APNsLinter`` would report (size
    ///   limits aside), or what `body` throws.
    @inlinable
    public static func read<Result>(_ document: JSONDocument, _ body: (borrowing APNsPayloadView) throws -> Result) throws -> Result {
        let read: Swift.Result<Result, any Error> = document.withUnsafeRoot { root in Swift.Result { try withView(of: root, body) } }
        return try read.get()
    }

    @inlinable
    static func withView<Result>(of root: UnsafeJSONValue, _ body: (borrowing APNsPayloadView) throws -> Result) throws -> Result {
        try body(APNsPayloadView(root: root, layout: validatedLayout(of: root)))
    }

    /// The layout of a valid payload.
    /// - Throws: the first error lint would report.
    @usableFromInline
    static func validatedLayout(of root: UnsafeJSONValue) throws(APNsPayloadError) -> APNsPayloadLayout {
        var validator = APNsPayloadValidator(keepsWarnings: false)
        // validate(_:) returns false only together with an error diagnostic.
        _ = validator.validate(root)
        if let error = validator.diagnostics.first(where: { $0.severity == .error }) { throw error.error }
        return validator.layout
    }

    /// The `aps` dictionary.
    @inlinable
    public var aps: APNsAPSView {
        @_lifetime(copy self)
        get { _overrideLifetime(APNsAPSView(root.value(at: Int(layout.aps)), layout: layout), copying: self) }
    }

    /// Calls `body` with each root key other than `aps` and its value, in document order.
    @inlinable
    public func forEachCustomKey<Failure: Error>(
        _ body: (borrowing JSONStringView, borrowing JSONView) throws(Failure) -> Void
    ) throws(Failure) {
        for member in root.members where !member.key.stringEquals("aps") {
            try body(JSONStringView(unchecked: member.key), JSONView(unchecked: member.value))
        }
    }

    /// The value of the custom root key `key`, or `nil`.
    @inlinable
    public subscript(customKey key: StaticString) -> JSONView? {
        @_lifetime(copy self)
        get {
            guard !UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount).elementsEqual("aps".utf8),
                let value = root[key]
            else { return nil }
            return _overrideLifetime(JSONView(unchecked: value), copying: self)
        }
    }
}

/// The `aps` dictionary of an ``APNsPayloadView``: each field typed as in ``APNsAPS``, strings as
/// ``JSONStringView``s, `content-state` and `attributes` as ``JSONView``s.
public struct APNsAPSView: ~Escapable {
    @usableFromInline let object: UnsafeJSONValue
    @usableFromInline let layout: APNsPayloadLayout

    @inlinable @_lifetime(immortal)
    init(_ object: UnsafeJSONValue, layout: APNsPayloadLayout) {
        self.object = object
        self.layout = layout
    }

    @inlinable
    func value(_ key: APSKey) -> UnsafeJSONValue? { object.recorded(layout.apsKeys[key.rawValue]) }

    @inlinable @_lifetime(copy self)
    func string(_ key: APSKey) -> JSONStringView? {
        guard let value = value(key) else { return nil }
        return _overrideLifetime(JSONStringView(unchecked: value), copying: self)
    }

    public var alert: APNsAlertView? {
        @_lifetime(copy self)
        get {
            guard let value = value(.alert) else { return nil }
            let alert: APNsAlertView =
                value.kind == .string
                ? .text(JSONStringView(unchecked: value))
                : .fields(APNsAlertFieldsView(value, keys: layout.alertKeys, hasOtherKeys: layout.alertHasOtherKeys))
            return _overrideLifetime(alert, copying: self)
        }
    }

    /// `0` clears the badge.
    @inlinable public var badge: Int? { value(.badge)?.int }

    public var sound: APNsSoundView? {
        @_lifetime(copy self)
        get {
            guard let value = value(.sound) else { return nil }
            let sound: APNsSoundView =
                value.kind == .string ? .named(JSONStringView(unchecked: value)) : .critical(APNsCriticalSoundView(value))
            return _overrideLifetime(sound, copying: self)
        }
    }

    @inlinable public var threadID: JSONStringView? { @_lifetime(copy self) get { string(.threadID) } }
    @inlinable public var category: JSONStringView? { @_lifetime(copy self) get { string(.category) } }
    @inlinable public var contentAvailable: Bool { value(.contentAvailable) != nil }
    @inlinable public var mutableContent: Bool { value(.mutableContent) != nil }
    @inlinable public var targetContentID: JSONStringView? { @_lifetime(copy self) get { string(.targetContentID) } }
    public var interruptionLevel: APNsInterruptionLevel? { value(.interruptionLevel).flatMap(APNsInterruptionLevel.init(spelledBy:)) }
    /// 0...1 for notifications; any finite value orders Live Activities.
    @inlinable public var relevanceScore: Double? { value(.relevanceScore)?.double }
    @inlinable public var filterCriteria: JSONStringView? { @_lifetime(copy self) get { string(.filterCriteria) } }
    /// Live Activity fields; dates are Unix seconds.
    @inlinable public var staleDate: Int? { value(.staleDate)?.int }
    @inlinable public var timestamp: Int? { value(.timestamp)?.int }
    public var event: APNsLiveActivityEvent? { value(.event).flatMap(APNsLiveActivityEvent.init(spelledBy:)) }
    @inlinable public var dismissalDate: Int? { value(.dismissalDate)?.int }

    /// An object; the Live Activity's `ContentState`.
    @inlinable
    public var contentState: JSONView? {
        @_lifetime(copy self)
        get {
            guard let value = value(.contentState) else { return nil }
            return _overrideLifetime(JSONView(unchecked: value), copying: self)
        }
    }

    @inlinable public var attributesType: JSONStringView? { @_lifetime(copy self) get { string(.attributesType) } }

    /// An object; the Live Activity's attributes, for `start`.
    @inlinable
    public var attributes: JSONView? {
        @_lifetime(copy self)
        get {
            guard let value = value(.attributes) else { return nil }
            return _overrideLifetime(JSONView(unchecked: value), copying: self)
        }
    }

    @inlinable public var inputPushToken: Bool { value(.inputPushToken) != nil }
    @inlinable public var inputPushChannel: JSONStringView? { @_lifetime(copy self) get { string(.inputPushChannel) } }
    /// Widget reload pushes.
    @inlinable public var contentChanged: Bool { value(.contentChanged) != nil }

    /// Safari web push.
    @inlinable
    public var urlArgs: APNsStringsView? {
        @_lifetime(copy self)
        get {
            guard let value = value(.urlArgs) else { return nil }
            return _overrideLifetime(APNsStringsView(value), copying: self)
        }
    }

    /// Calls `body` with each `aps` key this model does not name and its value, in document order.
    public func forEachOtherKey<Failure: Error>(_ body: (borrowing JSONStringView, borrowing JSONView) throws(Failure) -> Void) throws(Failure) {
        guard layout.apsHasOtherKeys else { return }
        for member in object.members where APSKey.table.match(member.key) == nil {
            try body(JSONStringView(unchecked: member.key), JSONView(unchecked: member.value))
        }
    }
}

/// `aps.alert`: a plain string, or a dictionary.
public enum APNsAlertView: ~Escapable {
    case text(JSONStringView)
    case fields(APNsAlertFieldsView)
}

/// The `aps.alert` dictionary, typed as in ``APNsAlertFields``.
public struct APNsAlertFieldsView: ~Escapable {
    @usableFromInline let object: UnsafeJSONValue
    @usableFromInline let keys: SIMD16<UInt32>
    @usableFromInline let hasOtherKeys: Bool

    @inlinable @_lifetime(immortal)
    init(_ object: UnsafeJSONValue, keys: SIMD16<UInt32>, hasOtherKeys: Bool) {
        self.object = object
        self.keys = keys
        self.hasOtherKeys = hasOtherKeys
    }

    @inlinable
    func value(_ key: AlertKey) -> UnsafeJSONValue? { object.recorded(keys[key.rawValue]) }

    @inlinable @_lifetime(copy self)
    func string(_ key: AlertKey) -> JSONStringView? {
        guard let value = value(key) else { return nil }
        return _overrideLifetime(JSONStringView(unchecked: value), copying: self)
    }

    @inlinable @_lifetime(copy self)
    func strings(_ key: AlertKey) -> APNsStringsView? {
        guard let value = value(key) else { return nil }
        return _overrideLifetime(APNsStringsView(value), copying: self)
    }

    @_lifetime(copy self)
    func text(_ key: AlertKey) -> APNsAlertTextView? {
        guard let value = value(key) else { return nil }
        if value.kind == .string { return _overrideLifetime(APNsAlertTextView.text(JSONStringView(unchecked: value)), copying: self) }
        // A valid localized form has a string loc-key and at most one loc-args array of strings.
        let key = JSONStringView(unchecked: value["loc-key"]!)
        let text: APNsAlertTextView =
            if let arguments = value["loc-args"] {
                .localized(key: key, arguments: APNsStringsView(arguments))
            } else {
                .localized(key: key, arguments: nil)
            }
        return _overrideLifetime(text, copying: self)
    }

    public var title: APNsAlertTextView? { @_lifetime(copy self) get { text(.title) } }
    @inlinable public var subtitle: JSONStringView? { @_lifetime(copy self) get { string(.subtitle) } }
    public var body: APNsAlertTextView? { @_lifetime(copy self) get { text(.body) } }
    @inlinable public var launchImage: JSONStringView? { @_lifetime(copy self) get { string(.launchImage) } }
    @inlinable public var titleLocKey: JSONStringView? { @_lifetime(copy self) get { string(.titleLocKey) } }
    @inlinable public var titleLocArgs: APNsStringsView? { @_lifetime(copy self) get { strings(.titleLocArgs) } }
    @inlinable public var subtitleLocKey: JSONStringView? { @_lifetime(copy self) get { string(.subtitleLocKey) } }
    @inlinable public var subtitleLocArgs: APNsStringsView? { @_lifetime(copy self) get { strings(.subtitleLocArgs) } }
    @inlinable public var locKey: JSONStringView? { @_lifetime(copy self) get { string(.locKey) } }
    @inlinable public var locArgs: APNsStringsView? { @_lifetime(copy self) get { strings(.locArgs) } }
    @inlinable public var sound: JSONStringView? { @_lifetime(copy self) get { string(.sound) } }

    /// Calls `body` with each key of the alert this model does not name and its value, in document order.
    public func forEachOtherKey<Failure: Error>(_ body: (borrowing JSONStringView, borrowing JSONView) throws(Failure) -> Void) throws(Failure) {
        guard hasOtherKeys else { return }
        for member in object.members where AlertKey.table.match(member.key) == nil {
            try body(JSONStringView(unchecked: member.key), JSONView(unchecked: member.value))
        }
    }
}

/// A title or body: a string, or the Live Activity form `{"loc-key": …, "loc-args": […]}`.
public enum APNsAlertTextView: ~Escapable {
    case text(JSONStringView)
    case localized(key: JSONStringView, arguments: APNsStringsView?)
}

/// `aps.sound`: a sound's name, or the critical-alert dictionary.
public enum APNsSoundView: ~Escapable {
    case named(JSONStringView)
    case critical(APNsCriticalSoundView)
}

/// `{"critical": 1, "name": …, "volume": …}`, typed as in ``APNsCriticalSound``.
public struct APNsCriticalSoundView: ~Escapable {
    @usableFromInline let object: UnsafeJSONValue

    @inlinable @_lifetime(immortal)
    init(_ object: UnsafeJSONValue) {
        self.object = object
    }

    /// `critical` is 1, or left out (a critical sound dictionary is critical unless it says 0).
    @inlinable public var isCritical: Bool { object["critical"]?.int != 0 }

    @inlinable
    public var name: JSONStringView {
        @_lifetime(copy self)
        get { _overrideLifetime(JSONStringView(unchecked: object["name"]!), copying: self) }
    }

    /// 0...1; `0` is silent.
    @inlinable public var volume: Double? { object["volume"]?.double }
}

/// An array a valid payload holds only strings in (`loc-args`, `url-args`).
public struct APNsStringsView: ~Escapable {
    @usableFromInline let array: UnsafeJSONValue

    @inlinable @_lifetime(immortal)
    init(_ array: UnsafeJSONValue) {
        self.array = array
    }

    @inlinable public var count: Int { array.count }

    /// Calls `body` with each string in order.
    @inlinable
    public func forEach<Failure: Error>(_ body: (borrowing JSONStringView) throws(Failure) -> Void) throws(Failure) {
        for element in array.elements { try body(JSONStringView(unchecked: element)) }
    }

    /// The strings, decoded.
    public var strings: [String] { array.strings }
}
