public import PushJSON

/// A valid payload read in place: every `aps` field as a typed value and every custom key as a
/// JSON view, straight from the parser's tape and the input bytes. Making one checks the payload
/// as lint does and finds each key once; reading a field is then a lookup, and nothing is
/// allocated until a string is asked for as a `String` (`JSONStringView.string`).
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
    /// The validator's own layout, on the stack of the call that hands out the view: a layout is
    /// some 200 bytes, and a copy of it into every view made from this one cost more than all
    /// the reads of a small payload.
    @usableFromInline let layout: UnsafePointer<APNsPayloadLayout>

    @inlinable @_lifetime(immortal)
    init(root: UnsafeJSONValue, layout: UnsafePointer<APNsPayloadLayout>) {
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
        var result: Result?
        try withValidLayout(of: root) { layout in result = try body(APNsPayloadView(root: root, layout: layout)) }
        return result!
    }

    /// Checks `root` as a payload and calls `body` with the validator's layout, in place.
    /// - Throws: the first error lint would report, or what `body` throws.
    @usableFromInline
    static func withValidLayout(of root: UnsafeJSONValue, _ body: (UnsafePointer<APNsPayloadLayout>) throws -> Void) throws {
        var validator = APNsPayloadValidator(keepsWarnings: false)
        try validator.validateOrThrow(root)
        try withUnsafePointer(to: &validator.layout, body)
    }

    /// The `aps` dictionary.
    @inlinable
    public var aps: APNsAPSView {
        @_lifetime(copy self)
        get { _overrideLifetime(APNsAPSView(root.value(at: Int(layout.pointee.aps)), layout: layout), copying: self) }
    }

    /// Calls `body` with each root key other than `aps` and its value, in document order.
    @inlinable
    public func forEachCustomKey<Failure: Error>(
        _ body: (borrowing JSONStringView, borrowing JSONView) throws(Failure) -> Void
    ) throws(Failure) {
        // A valid payload has one `aps`, the member whose value the layout recorded.
        let aps = Int(layout.pointee.aps)
        for member in root.members where member.value.index != aps {
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
/// `JSONStringView`s, `content-state` and `attributes` as `JSONView`s.
public struct APNsAPSView: ~Escapable {
    @usableFromInline let object: UnsafeJSONValue
    @usableFromInline let layout: UnsafePointer<APNsPayloadLayout>

    @inlinable @_lifetime(immortal)
    init(_ object: UnsafeJSONValue, layout: UnsafePointer<APNsPayloadLayout>) {
        self.object = object
        self.layout = layout
    }

    @inlinable
    func value(_ key: APSKey) -> UnsafeJSONValue? { object.recorded(layout.pointee.apsKeys[key.rawValue]) }

    @inlinable @_lifetime(copy self)
    func string(_ key: APSKey) -> JSONStringView? {
        guard let value = value(key) else { return nil }
        return _overrideLifetime(JSONStringView(unchecked: value), copying: self)
    }

    @_lifetime(copy self)
    func alertView(_ key: APSKey) -> APNsAlertView? {
        guard let value = value(key) else { return nil }
        let alert: APNsAlertView =
            value.kind == .string
            ? .text(JSONStringView(unchecked: value))
            : .fields(APNsAlertFieldsView(value, layout: layout))
        return _overrideLifetime(alert, copying: self)
    }

    @_lifetime(copy self)
    func soundView(_ key: APSKey) -> APNsSoundView? {
        guard let value = value(key) else { return nil }
        let sound: APNsSoundView = value.kind == .string ? .named(JSONStringView(unchecked: value)) : .critical(APNsCriticalSoundView(value))
        return _overrideLifetime(sound, copying: self)
    }

    @inlinable @_lifetime(copy self)
    func strings(_ key: APSKey) -> APNsStringsView? {
        guard let value = value(key) else { return nil }
        return _overrideLifetime(APNsStringsView(value), copying: self)
    }

    @inlinable @_lifetime(copy self)
    func json(_ key: APSKey) -> JSONView? {
        guard let value = value(key) else { return nil }
        return _overrideLifetime(JSONView(unchecked: value), copying: self)
    }

    public func forEachOtherKey<Failure: Error>(_ body: (borrowing JSONStringView, borrowing JSONView) throws(Failure) -> Void) throws(Failure) {
        guard layout.pointee.apsHasOtherKeys else { return }
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
    @usableFromInline let layout: UnsafePointer<APNsPayloadLayout>

    @inlinable @_lifetime(immortal)
    init(_ object: UnsafeJSONValue, layout: UnsafePointer<APNsPayloadLayout>) {
        self.object = object
        self.layout = layout
    }

    @inlinable
    func value(_ key: AlertKey) -> UnsafeJSONValue? { object.recorded(layout.pointee.alertKeys[key.rawValue]) }

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

    public func forEachOtherKey<Failure: Error>(_ body: (borrowing JSONStringView, borrowing JSONView) throws(Failure) -> Void) throws(Failure) {
        guard layout.pointee.alertHasOtherKeys else { return }
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
