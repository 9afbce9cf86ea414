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

    @OptionGroup var content: PayloadOptions
    @Option(name: .customLong("push-type"), help: "The push type (sets the size limit and headers); inferred when absent.")
    var pushType: APNsPushType?
    @Flag(help: "Shorten the alert text to fit the limit instead of failing.") var fit = false
    @Flag(help: "Print the derived APNs headers before the payload.") var headers = false
    @Option(help: "apns-topic for --headers (the app's bundle ID).") var topic: String?
    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id for --headers (at most 64 bytes).") var collapseID: String?
    @Option(help: "apns-expiration for --headers (Unix seconds; 0 = deliver once).") var expiration: Int?

    func validate() throws {
        if headers == false && (topic != nil || collapseID != nil || expiration != nil) {
            throw ValidationError("--topic, --collapse-id and --expiration only make sense with --headers")
        }
    }

    func run() throws {
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
}
