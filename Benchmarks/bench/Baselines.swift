import Foundation
import PushCore

/// Reads every value of a parsed document through the zero-copy view, in document order: keys
/// and strings as their raw bytes (not decoded), numbers as Int or Double, and so on. It walks
/// the view's flat `descendants`, as a reader that needs no structure would, rather than
/// recursing through members and elements (the recursion alone costs a 512-deep document more
/// than scanning it). The parse.* workloads use it.
func touchEveryValue(_ root: UnsafeJSONValue) -> Int {
    var checksum = touch(root)
    for value in root.descendants { checksum &+= touch(value) }
    return checksum
}

@inline(__always)
func touch(_ value: UnsafeJSONValue) -> Int {
    switch value.kind {
    case .object, .array: return 0
    case .string:
        let bytes = value.rawStringBytes!
        return value.isObjectKey ? bytes.count : bytes.count &+ Int(bytes.first ?? 0)
    case .number: return value.int ?? Int(truncatingIfNeeded: value.double!.bitPattern)
    case .bool: return value.bool! ? 1 : 2
    case .null: return 3
    }
}

/// The same reads on what JSONSerialization returns, with the casts a Foundation user writes.
func touchEveryFoundationValue(_ value: Any) -> Int {
    if let object = value as? [String: Any] {
        var checksum = 0
        for (key, member) in object { checksum &+= key.utf8.count &+ touchEveryFoundationValue(member) }
        return checksum
    }
    if let array = value as? [Any] {
        var checksum = 0
        for element in array { checksum &+= touchEveryFoundationValue(element) }
        return checksum
    }
    if let string = value as? String { return string.utf8.count &+ Int(string.utf8.first ?? 0) }
    if let number = value as? NSNumber {
        if isBoolean(number) { return number.boolValue ? 1 : 2 }
        let double = number.doubleValue
        return double == double.rounded() && abs(double) < 1e18 ? number.intValue : Int(truncatingIfNeeded: double.bitPattern)
    }
    return 3
}

func isBoolean(_ number: NSNumber) -> Bool {
    String(cString: number.objCType) == "c" || type(of: number) != NSNumber.self && "\(type(of: number))".contains("Bool")
}

/// Builds PushCore's model from JSONSerialization's output: the decode.corpus baseline.
func payloadFromFoundation(_ object: Any) -> APNsPayload? {
    guard let root = object as? [String: Any], let apsObject = root["aps"] as? [String: Any] else { return nil }
    var aps = APNsAPS()
    for (key, value) in apsObject {
        switch key {
        case "alert":
            if let text = value as? String {
                aps.alert = .text(text)
            } else if let fields = value as? [String: Any] {
                aps.alert = .fields(alertFromFoundation(fields))
            }
        case "badge": aps.badge = (value as? NSNumber)?.intValue
        case "sound":
            if let name = value as? String {
                aps.sound = .named(name)
            } else if let critical = value as? [String: Any] {
                aps.sound = .critical(
                    APNsCriticalSound(
                        critical: (critical["critical"] as? NSNumber)?.intValue == 1, name: critical["name"] as? String ?? "",
                        volume: (critical["volume"] as? NSNumber)?.doubleValue))
            }
        case "thread-id": aps.threadID = value as? String
        case "category": aps.category = value as? String
        case "content-available": aps.contentAvailable = (value as? NSNumber)?.intValue == 1
        case "mutable-content": aps.mutableContent = (value as? NSNumber)?.intValue == 1
        case "target-content-id": aps.targetContentID = value as? String
        case "interruption-level": aps.interruptionLevel = (value as? String).flatMap(APNsInterruptionLevel.init(rawValue:))
        case "relevance-score": aps.relevanceScore = (value as? NSNumber)?.doubleValue
        case "filter-criteria": aps.filterCriteria = value as? String
        case "stale-date": aps.staleDate = (value as? NSNumber)?.intValue
        case "timestamp": aps.timestamp = (value as? NSNumber)?.intValue
        case "event": aps.event = (value as? String).flatMap(APNsLiveActivityEvent.init(rawValue:))
        case "dismissal-date": aps.dismissalDate = (value as? NSNumber)?.intValue
        case "content-state": aps.contentState = jsonFromFoundation(value)
        case "attributes-type": aps.attributesType = value as? String
        case "attributes": aps.attributes = jsonFromFoundation(value)
        case "input-push-token": aps.inputPushToken = (value as? NSNumber)?.intValue == 1
        case "input-push-channel": aps.inputPushChannel = value as? String
        case "content-changed": aps.contentChanged = (value as? NSNumber)?.boolValue ?? false
        case "url-args": aps.urlArgs = value as? [String]
        default: aps.otherKeys.append(JSONMember(key, jsonFromFoundation(value)))
        }
    }
    var payload = APNsPayload(aps: aps)
    for (key, value) in root where key != "aps" { payload.customKeys.append(JSONMember(key, jsonFromFoundation(value))) }
    return payload
}

func alertFromFoundation(_ fields: [String: Any]) -> APNsAlertFields {
    func text(_ value: Any?) -> APNsAlertText? {
        if let text = value as? String { return .text(text) }
        guard let object = value as? [String: Any], let key = object["loc-key"] as? String else { return nil }
        return .localized(key: key, arguments: object["loc-args"] as? [String] ?? [])
    }
    var alert = APNsAlertFields(
        title: text(fields["title"]), subtitle: fields["subtitle"] as? String, body: text(fields["body"]),
        launchImage: fields["launch-image"] as? String, titleLocKey: fields["title-loc-key"] as? String,
        titleLocArgs: fields["title-loc-args"] as? [String], subtitleLocKey: fields["subtitle-loc-key"] as? String,
        subtitleLocArgs: fields["subtitle-loc-args"] as? [String], locKey: fields["loc-key"] as? String,
        locArgs: fields["loc-args"] as? [String], sound: fields["sound"] as? String)
    let known: Set<String> = [
        "title", "subtitle", "body", "launch-image", "title-loc-key", "title-loc-args", "subtitle-loc-key",
        "subtitle-loc-args", "loc-key", "loc-args", "sound",
    ]
    for (key, value) in fields where !known.contains(key) { alert.otherKeys.append(JSONMember(key, jsonFromFoundation(value))) }
    return alert
}

func jsonFromFoundation(_ value: Any) -> JSON {
    if let object = value as? [String: Any] { return .object(object.map { JSONMember($0.key, jsonFromFoundation($0.value)) }) }
    if let array = value as? [Any] { return .array(array.map(jsonFromFoundation)) }
    if let string = value as? String { return .string(string) }
    if let number = value as? NSNumber {
        if isBoolean(number) { return .bool(number.boolValue) }
        let double = number.doubleValue
        if double == double.rounded() && abs(double) < 9e15 { return .number(JSONNumber(number.intValue)) }
        return (try? JSONNumber(double)).map(JSON.number) ?? .null
    }
    return .null
}
