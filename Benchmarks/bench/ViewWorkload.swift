import PushCore

/// Reads every `aps` field of a payload and every custom value through the view, as an app
/// server that routes or checks a payload would: numbers, flags and enums typed, strings by their
/// raw bytes (as `touchEveryValue` reads them), custom values walked in document order. The
/// view.corpus workload.
func readEveryField(_ payload: APNsPayloadView) -> Int {
    let aps = payload.aps
    var checksum = 0
    switch aps.alert {
    case .text(let text): checksum &+= touch(text)
    case .fields(let fields): checksum &+= touch(fields)
    case nil: break
    }
    checksum &+= aps.badge ?? 0
    switch aps.sound {
    case .named(let name): checksum &+= touch(name)
    case .critical(let sound): checksum &+= touch(sound.name) &+ (sound.isCritical ? 1 : 0) &+ Int(truncatingIfNeeded: sound.volume?.bitPattern ?? 0)
    case nil: break
    }
    checksum &+= touch(aps.threadID) &+ touch(aps.category) &+ touch(aps.targetContentID) &+ touch(aps.filterCriteria)
    checksum &+= touch(aps.attributesType) &+ touch(aps.inputPushChannel)
    checksum &+= (aps.contentAvailable ? 1 : 0) &+ (aps.mutableContent ? 2 : 0) &+ (aps.inputPushToken ? 4 : 0) &+ (aps.contentChanged ? 8 : 0)
    checksum &+= aps.interruptionLevel == .timeSensitive ? 16 : 0
    checksum &+= aps.event == .end ? 32 : 0
    checksum &+= Int(truncatingIfNeeded: aps.relevanceScore?.bitPattern ?? 0)
    checksum &+= (aps.staleDate ?? 0) &+ (aps.timestamp ?? 0) &+ (aps.dismissalDate ?? 0)
    if let state = aps.contentState { checksum &+= touchEveryValue(state) }
    if let attributes = aps.attributes { checksum &+= touchEveryValue(attributes) }
    if let urlArgs = aps.urlArgs { checksum &+= touch(urlArgs) }
    aps.forEachOtherKey { key, value in checksum &+= touch(key) &+ touchEveryValue(value) }
    payload.forEachCustomKey { key, value in checksum &+= touch(key) &+ touchEveryValue(value) }
    return checksum
}

func touch(_ fields: APNsAlertFieldsView) -> Int {
    var checksum = touch(fields.title) &+ touch(fields.body) &+ touch(fields.subtitle) &+ touch(fields.launchImage)
    checksum &+= touch(fields.titleLocKey) &+ touch(fields.subtitleLocKey) &+ touch(fields.locKey) &+ touch(fields.sound)
    checksum &+= touch(fields.titleLocArgs) &+ touch(fields.subtitleLocArgs) &+ touch(fields.locArgs)
    fields.forEachOtherKey { key, value in checksum &+= touch(key) &+ touchEveryValue(value) }
    return checksum
}

func touch(_ text: APNsAlertTextView?) -> Int {
    switch text {
    case .text(let string): touch(string)
    case .localized(let key, let arguments): touch(key) &+ touch(arguments)
    case nil: 0
    }
}

func touch(_ strings: APNsStringsView?) -> Int {
    guard let strings else { return 0 }
    var checksum = 0
    strings.forEach { checksum &+= touch($0) }
    return checksum
}

func touch(_ string: JSONStringView?) -> Int {
    guard let string else { return 0 }
    return string.withRawBytes { $0.count &+ Int($0.first ?? 0) }
}

/// `touchEveryValue` through the public view.
func touchEveryValue(_ root: JSONView) -> Int {
    var checksum = touch(root)
    root.forEachDescendant { checksum &+= touch($0) }
    return checksum
}

@inline(__always)
func touch(_ value: JSONView) -> Int {
    switch value.kind {
    case .object, .array: return 0
    case .string:
        let count = value.string!.withRawBytes { $0.count &+ (value.isObjectKey ? 0 : Int($0.first ?? 0)) }
        return count
    case .number: return value.int ?? Int(truncatingIfNeeded: value.double!.bitPattern)
    case .bool: return value.bool! ? 1 : 2
    case .null: return 3
    }
}
