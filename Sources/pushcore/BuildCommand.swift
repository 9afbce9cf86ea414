import ArgumentParser
import PushCore

struct BuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Build an APNs payload from flags and print it.",
        discussion: """
            --custom takes KEY=VALUE; VALUE is used as JSON when it is valid JSON (5, true,
            {"a":1}, "quoted") and as a string otherwise (Bob, 007). Over the push type's limit
            (4096 bytes; 5120 for voip) the payload is refused unless --fit shortens the alert
            body, then subtitle, then title; what was cut is reported on stderr.
            With --headers the derived APNs headers come first, then a blank line, then the payload.

            Examples:
              pushcore build --title 'Game Request' --body 'Bob wants to play poker' --badge 3 --custom gameID=12345678
              pushcore build --rich-id 4f1c2a9e --rich-type img --rich-message 'New photo' --headers --topic com.example.app
            """
    )

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
    @Option(name: .customLong("push-type"), help: "The push type (sets the size limit and headers); inferred when absent.")
    var pushType: APNsPushType?
    @Flag(help: "Shorten the alert text to fit the limit instead of failing.") var fit = false
    @Flag(help: "Print the derived APNs headers before the payload.") var headers = false
    @Option(help: "apns-topic for --headers (the app's bundle ID).") var topic: String?
    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id for --headers (at most 64 bytes).") var collapseID: String?
    @Option(help: "apns-expiration for --headers (Unix seconds; 0 = deliver once).") var expiration: Int?

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
        if headers == false && (topic != nil || collapseID != nil || expiration != nil) {
            throw ValidationError("--topic, --collapse-id and --expiration only make sense with --headers")
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

    func run() throws {
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

        let type = pushType ?? APNsHeaders.inferredPushType(for: payload)
        let limit = type.payloadLimit
        let bytes: [UInt8]
        do throws(APNsPayloadError) {
            if fit {
                let report = try payload.fit(limit: limit)
                for cut in report.cuts {
                    Terminal.writeError(
                        "build: fit: \(cut.field.rawValue) shortened by \(cut.bytesSaved) bytes, "
                            + "from \(cut.original.count) to \(cut.shortened.count) characters")
                }
            }
            bytes = try payload.encoded(limit: limit)
        } catch {
            Terminal.writeError("build", code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }

        if headers {
            var derived = APNsHeaders(for: payload, topic: topic, collapseID: collapseID, expiration: expiration)
            if let pushType {
                derived.pushType = pushType
                derived.priority = APNsHeaders.defaultPriority(for: pushType)
            }
            do throws(APNsHeaders.ValidationError) {
                try derived.validate()
            } catch {
                Terminal.writeError("build", code: error.code.rawValue, "\(error)")
                throw CommandFailure.invalid
            }
            for field in derived.fields { Terminal.write("\(field.name): \(field.value)") }
            Terminal.write("")
        }
        Terminal.write(bytes + [UInt8(ascii: "\n")])
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
