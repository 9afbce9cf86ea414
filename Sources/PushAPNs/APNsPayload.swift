public import PushJSON

/// A whole APNs payload: the `aps` dictionary and the app's own root keys, in order.
///
/// ```swift
/// var payload = APNsPayload(aps: APNsAPS(alert: .fields(APNsAlertFields(title: "Hello", body: "World")), badge: 3))
/// payload["orderId"] = "A-1042"
/// var buffer: [UInt8] = []
/// try payload.encode(into: &buffer)
/// ```
public struct APNsPayload: Sendable, Hashable {
    /// `aps` is large (about 500 bytes of optionals); it lives in a copy-on-write box so that
    /// copying a payload, or capturing one in a closure, does not copy it field by field. The
    /// box is only mutated after a uniqueness check, so sharing it between tasks is safe.
    @usableFromInline nonisolated(unsafe) var apsBox: APSBox

    public var aps: APNsAPS {
        // A `get`, not `_read`: yielding the box's value corrupted memory in unoptimised builds
        // (docs/performance.md). The encoder reads the value in place through the box's pointer.
        @inlinable get { apsBox.header }
        @inlinable _modify {
            makeAPSUnique()
            yield &apsBox.header
        }
    }

    /// Copy on write: a box shared with another payload is copied before `aps` changes.
    @inlinable
    mutating func makeAPSUnique() {
        if !isKnownUniquelyReferenced(&apsBox) { apsBox = APSBox.make(apsBox.header) }
    }

    /// `aps` in place, through the box's pointer: `_modify` on the box's `header` property pays
    /// for a dynamic exclusivity check on every access, which the decoder does not need.
    @usableFromInline
    mutating func withUniqueAPS<Value, Failure: Error>(_ body: (inout APNsAPS) throws(Failure) -> Value) throws(Failure) -> Value {
        makeAPSUnique()
        // The buffer's method rethrows untyped errors; a Result keeps the type.
        let result: Result<Value, Failure> = apsBox.withUnsafeMutablePointerToHeader { header in
            Result { () throws(Failure) in try body(&header.pointee) }
        }
        return try result.get()
    }

    /// Root keys other than `aps`, written after it in this order. A decoded payload keeps each
    /// array or object here (and in `content-state`, `attributes` and unknown keys) as `.raw`,
    /// its canonical bytes, which compares equal to the tree it spells; `RawJSON.value` is the
    /// tree.
    public var customKeys: [JSONMember]

    public init(aps: APNsAPS = APNsAPS(), customKeys: [JSONMember] = []) {
        self.apsBox = APSBox.make(aps)
        self.customKeys = customKeys
    }

    /// An empty payload. Its box is filled from one shared empty `APNsAPS`: building the 500-byte
    /// value afresh cost four stack copies before it reached the box, and the decoder starts every
    /// payload from here.
    public init() {
        self.apsBox = APSBox.makeEmpty()
        self.customKeys = []
    }

    public static func == (lhs: APNsPayload, rhs: APNsPayload) -> Bool {
        (lhs.apsBox === rhs.apsBox || lhs.apsBox.header == rhs.apsBox.header) && lhs.customKeys == rhs.customKeys
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(apsBox.header)
        hasher.combine(customKeys)
    }

    /// The first custom root key named `key`. Setting replaces it in place, or appends it;
    /// setting `nil` removes it.
    public subscript(key: String) -> JSON? {
        get { customKeys.first { $0.key == key }?.value }
        set {
            if let index = customKeys.firstIndex(where: { $0.key == key }) {
                if let newValue { customKeys[index].value = newValue } else { customKeys.remove(at: index) }
            } else if let newValue {
                customKeys.append(JSONMember(key, newValue))
            }
        }
    }
}

extension APNsAPS {
    // `alert != nil` copied the whole optional (about 200 bytes, retaining each string) to
    // compare it; a pattern match reads only its tag.
    var hasAlert: Bool {
        if case .none = alert { return false }
        return true
    }

    var hasSound: Bool {
        if case .none = sound { return false }
        return true
    }
}

/// Storage of ``APNsPayload/aps``; shared between copies until one of them changes it. A
/// `ManagedBuffer` because it hands out a pointer to its header: writing the value through it
/// avoids copying 500 bytes (and retaining every string in them) per payload encoded.
@usableFromInline
final class APSBox: ManagedBuffer<APNsAPS, UInt8> {
    @inlinable
    static func make(_ value: APNsAPS) -> APSBox {
        // `create` called on the subclass makes an instance of the subclass.
        unsafeDowncast(APSBox.create(minimumCapacity: 0) { _ in value }, to: APSBox.self)
    }

    @inlinable
    static func makeEmpty() -> APSBox {
        unsafeDowncast(APSBox.create(minimumCapacity: 0) { _ in APNsAPS.empty }, to: APSBox.self)
    }
}

// `APNsAPS` and `APNsAlertFields` are declared in Generated/GeneratedModel.swift, from the key table.

extension APNsAPS {
    /// What ``APNsPayload/init()`` copies into a new box (see there for why).
    @usableFromInline static let empty = APNsAPS()

    /// True for a push that only wakes the app: `content-available` with nothing to show.
    public var isBackgroundOnly: Bool { APNsRules.isBackgroundOnly(facts) }

    /// What the rules between keys look at (``APNsRules``).
    var facts: APSFacts {
        APSFacts(
            hasAlert: hasAlert, hasBadge: badge != nil, hasSound: hasSound, contentAvailable: contentAvailable, contentChanged: contentChanged,
            isLiveActivity: event != nil)
    }
}

/// `aps.alert`: a plain string, or a dictionary.
public enum APNsAlert: Sendable, Hashable {
    case text(String)
    case fields(APNsAlertFields)
}

/// A title or body: text, or — in Live Activity alerts — a localised key with arguments,
/// written as `{"loc-key": …, "loc-args": […]}`.
public enum APNsAlertText: Sendable, Hashable, ExpressibleByStringLiteral {
    case text(String)
    case localized(key: String, arguments: [String])

    public init(stringLiteral value: String) { self = .text(value) }
}

/// `aps.sound`: a file name, or the critical-alert dictionary.
public enum APNsSound: Sendable, Hashable {
    case named(String)
    case critical(APNsCriticalSound)
}

/// `{"critical": 1, "name": …, "volume": …}`.
public struct APNsCriticalSound: Sendable, Hashable {
    public var critical: Bool
    public var name: String
    /// 0...1; `0` is silent and representable.
    public var volume: Double?

    public init(critical: Bool = true, name: String = "default", volume: Double? = nil) {
        self.critical = critical
        self.name = name
        self.volume = volume
    }
}

public enum APNsInterruptionLevel: String, Sendable, Hashable, CaseIterable {
    case passive
    case active
    case timeSensitive = "time-sensitive"
    case critical
}

public enum APNsLiveActivityEvent: String, Sendable, Hashable, CaseIterable {
    case start
    case update
    case end
}
