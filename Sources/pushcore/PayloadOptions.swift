import ArgumentParser
import PushCore

/// The flags that make a payload, shared by `build` and `send`.
struct PayloadOptions: ParsableArguments {
    @Option(help: "Alert title.") var title: String?
    @Option(help: "Alert subtitle.") var subtitle: String?
    @Option(help: "Alert body.") var body: String?
    @Option(help: "Badge number (0 clears it).") var badge: Int?
    @Option(help: "Sound file name ('default' for the system sound).") var sound: String?
    @Option(name: .customLong("critical-volume"), help: "Make the sound critical, at this volume (0 to 1).")
    var criticalVolume: Double?
    @Option(name: .customLong("thread-id"), help: "Thread identifier for grouping.") var threadID: String?
    @Option(help: "Notification category.") var category: String?
    @Flag(name: .customLong("content-available"), help: "Wake the app in the background (content-available: 1).")
    var contentAvailable = false
    @Flag(name: .customLong("mutable-content"), help: "Let a notification service extension modify it.")
    var mutableContent = false
    @Option(name: .customLong("interruption-level"), help: "passive, active, time-sensitive or critical.")
    var interruptionLevel: APNsInterruptionLevel?
    @Option(name: .customLong("custom"), help: "A custom root key, KEY=VALUE (repeatable).")
    var custom: [String] = []
    @Option(name: .customLong("rich-id"), help: "Rich-push flow: the stored item's id.") var richID: String?
    @Option(name: .customLong("rich-type"), help: "Rich-push flow: the item's type (img).") var richType: String?
    @Option(name: .customLong("rich-message"), help: "Rich-push flow: the message.") var richMessage: String?
    @Option(name: .customLong("secure-id"), help: "Secure-push flow: the secret message's id.") var secureID: String?

    /// True when no flag was given: the payload comes from elsewhere (a file for `send`).
    var isEmpty: Bool {
        [title, subtitle, body, sound, threadID, category, richID, richType, richMessage, secureID].allSatisfy { $0 == nil }
            && badge == nil && criticalVolume == nil && interruptionLevel == nil && custom.isEmpty && !contentAvailable
            && !mutableContent
    }

    func validate() throws {
        let rich = [richID, richType, richMessage].compactMap { $0 }
        if !rich.isEmpty && rich.count != 3 {
            throw ValidationError("--rich-id, --rich-type and --rich-message go together")
        }
        if !rich.isEmpty && secureID != nil {
            throw ValidationError("a payload is either a rich push (--rich-*) or a secure push (--secure-id), not both")
        }
        if let criticalVolume, !(0...1).contains(criticalVolume) {
            throw ValidationError("--critical-volume must be between 0 and 1")
        }
        var keys = Set<String>()
        for entry in custom {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw ValidationError("--custom takes KEY=VALUE, got '\(entry)'")
            }
            let key = String(entry[..<equals])
            guard key != "aps" else { throw ValidationError("--custom cannot set 'aps'; use the flags") }
            guard keys.insert(key).inserted else { throw ValidationError("--custom sets '\(key)' twice") }
        }
    }

    func payload() -> APNsPayload {
        var payload = basePayload()
        var aps = payload.aps
        if title != nil || subtitle != nil {
            aps.alert = .fields(APNsAlertFields(title: title.map(APNsAlertText.text), subtitle: subtitle, body: body.map(APNsAlertText.text)))
        } else if let body {
            aps.alert = .text(body)
        }
        if let badge { aps.badge = badge }
        if let criticalVolume {
            aps.sound = .critical(APNsCriticalSound(name: sound ?? "default", volume: criticalVolume))
        } else if let sound {
            aps.sound = .named(sound)
        }
        if let threadID { aps.threadID = threadID }
        if let category { aps.category = category }
        if contentAvailable { aps.contentAvailable = true }
        if mutableContent { aps.mutableContent = true }
        if let interruptionLevel { aps.interruptionLevel = interruptionLevel }
        payload.aps = aps
        var parser = JSONParser()
        for entry in custom {
            let equals = entry.firstIndex(of: "=")!  // checked in validate()
            payload[String(entry[..<equals])] = customValue(String(entry[entry.index(after: equals)...]), parser: &parser)
        }
        return payload
    }

    private func basePayload() -> APNsPayload {
        if let richID, let richType, let richMessage {
            return .silentRichPush(richId: richID, richType: richType, richMessage: richMessage)
        }
        if let secureID { return .silentSecurePush(secureId: secureID) }
        return APNsPayload()
    }

    /// VALUE as JSON when it parses as JSON, else as a string.
    private func customValue(_ text: String, parser: inout JSONParser) -> JSON {
        guard let document = try? parser.parse(Array(text.utf8)), let value = try? JSON(document.root) else {
            return .string(text)
        }
        return value
    }
}
