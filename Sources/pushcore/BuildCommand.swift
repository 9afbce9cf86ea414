import ArgumentParser
import PushCore
import PushFCM

struct BuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Build an APNs payload, or with --fcm an FCM v1 message, from flags and print it.",
        discussion: """
            --custom takes KEY=VALUE; VALUE is used as JSON when it is valid JSON (5, true,
            {"a":1}, "quoted") and as a string otherwise (Bob, 007). Over the push type's limit
            (4096 bytes; 5120 for voip) the payload is refused unless --fit shortens the alert
            body, then subtitle, then title; what was cut is reported on stderr.
            With --headers the derived APNs headers come first, then a blank line, then the payload.

            --fcm prints an FCM HTTP v1 message ({"message":{…}}, as Notification Hubs' fcmv1
            format and FCM itself take it): --title and --body as its notification, --sound and
            --channel-id for Android, --custom and the rich and secure flows' keys as data (every
            value the text given: FCM's data holds strings). Over 4096 bytes it is refused.

            Examples:
              pushcore build --title 'Game Request' --body 'Bob wants to play poker' --badge 3 --custom gameID=12345678
              pushcore build --rich-id 4f1c2a9e --rich-type img --rich-message 'New photo' --headers --topic com.example.app
              pushcore build --fcm --title 'Game Request' --body 'Bob wants to play' --priority high --ttl 3600 --custom gameID=12345678
            """
    )

    @OptionGroup var content: PayloadOptions
    @Flag(help: "Build an FCM v1 message instead of an APNs payload.") var fcm = false
    @OptionGroup(title: "FCM options (with --fcm)") var fcmOptions: FCMOptions
    @Option(name: .customLong("push-type"), help: "The push type (sets the size limit and headers); inferred when absent.")
    var pushType: APNsPushType?
    @Flag(help: "Shorten the alert text to fit the limit instead of failing.") var fit = false
    @Flag(help: "Print the derived APNs headers before the payload.") var headers = false
    @Option(help: "apns-topic for --headers (the app's bundle ID).") var topic: String?
    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id for --headers (at most 64 bytes).") var collapseID: String?
    @Option(help: "apns-expiration for --headers (Unix seconds; 0 = deliver once).") var expiration: Int?

    func validate() throws {
        if fcm {
            let apnsOnly = [
                content.subtitle != nil, content.badge != nil, content.criticalVolume != nil, content.threadID != nil, content.category != nil,
                content.contentAvailable, content.mutableContent, content.interruptionLevel != nil, pushType != nil, fit, headers,
            ]
            if apnsOnly.contains(true) {
                throw ValidationError(
                    "--fcm takes --title, --body, --sound, --custom and the --rich-*/--secure-id flags, not APNs-only ones")
            }
        } else if !fcmOptions.isEmpty {
            throw ValidationError("--priority, --ttl, --collapse-key, --channel-id, --image and --token need --fcm")
        }
        if headers == false && (topic != nil || collapseID != nil || expiration != nil) {
            throw ValidationError("--topic, --collapse-id and --expiration only make sense with --headers")
        }
    }

    func run() throws {
        if fcm { return try runFCM() }
        var payload = content.payload()
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
            let derived = APNsHeaders(pushType: type, expiration: expiration, collapseID: collapseID, topic: topic)
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

    private func runFCM() throws {
        do throws(FCMMessageError) {
            Terminal.write(try fcmOptions.message(content).encoded() + [UInt8(ascii: "\n")])
        } catch {
            Terminal.writeError("build", code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }
    }
}
