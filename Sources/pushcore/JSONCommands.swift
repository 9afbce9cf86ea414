public import ArgumentParser
import PushCore
import PushFCM

/// The inputs a command reads: the files given (`-` is stdin), or stdin when there are none.
func inputPaths(_ files: [String]) -> [String?] {
    files.isEmpty ? [nil] : files.map { $0 == "-" ? nil : $0 }
}

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate JSON strictly (RFC 8259): any JSON value, no extensions.",
        discussion: """
            Prints nothing for valid input; one error line per invalid input on stderr.
            Exit status: 0 all valid, 1 any invalid or unreadable, 2 usage error.

            Examples:
              pushcore check payload.json more/*.json
              printf '{"aps":{"badge":01}}' | pushcore check
              <stdin>: error: invalidNumber at byte 17 (line 1, column 18): leading zeros are not allowed
            """
    )

    @Argument(help: "JSON files to check; stdin when none is given, or for '-'.")
    var files: [String] = []

    func run() throws {
        let parser = JSONParser()
        var failed = false
        for path in inputPaths(files) {
            guard let input = InputText.read(path) else {
                failed = true
                continue
            }
            do throws(JSONError) {
                try parser.validate(input.bytes)
            } catch {
                Terminal.writeError(input.render(error))
                failed = true
            }
        }
        if failed { throw CommandFailure.invalid }
    }
}

struct CanonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "canon",
        abstract: "Print the minified, lossless re-encoding of a JSON text.",
        discussion: """
            Keeps key order, duplicate keys and number spellings; escapes only '"', '\\' and
            U+0000-U+001F; writes other characters as raw UTF-8. A newline follows the JSON.

            Example:
              printf '{ "b": 1.50, "a": "\\u00e9" }' | pushcore canon
              {"b":1.50,"a":"é"}
            """
    )

    @Argument(help: "The JSON file; stdin when none is given, or for '-'.")
    var file: String?

    func run() throws {
        guard let input = InputText.read(file == "-" ? nil : file) else { throw CommandFailure.invalid }
        var parser = JSONParser()
        do throws(JSONError) {
            var output = try parser.parse(input.bytes).canonicalBytes()
            output.append(UInt8(ascii: "\n"))
            Terminal.write(output)
        } catch {
            Terminal.writeError(input.render(error))
            throw CommandFailure.invalid
        }
    }
}

extension APNsPushType: ExpressibleByArgument {}
extension APNsInterruptionLevel: ExpressibleByArgument {}

struct LintCommand: ParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    enum Platform: String, ExpressibleByArgument, CaseIterable {
        case apns, fcmv1
    }

    static let configuration = CommandConfiguration(
        commandName: "lint",
        abstract: "Check APNs payloads against Apple's rules, or FCM v1 messages against FCM's: errors and warnings with byte offsets.",
        discussion: """
            text (the default) writes one line per finding on stderr:
              FILE: error|warning: CODE at byte N (line L, column C): message
            json writes one object per file on stdout:
              {"file":…,"errors":N,"warnings":N,"diagnostics":[{"severity":…,"code":…,"offset":…,"line":…,"column":…,"message":…}]}
            The push type is inferred from each payload unless --push-type is given.

            --content-state-schema checks each Live Activity payload's content-state against the
            app's ContentState, declared as a JSON object of field names and types (string,
            number, integer, bool, array, object; a trailing ? for optional):
              {"score":"integer","team":"string","note":"string?"}
            A missing field, a wrong type or null in a required field is an error (the device
            drops such a push); a field the app does not declare is a warning (it is ignored).
            --attributes-schema does the same for a start event's attributes.
            --platform fcmv1 checks FCM HTTP v1 messages ({"message":{…}}) instead: unknown keys,
            data values that are not strings, reserved data keys (from, notification,
            message_type, google.*, gcm.*), android.ttl and priority, more than one target, the
            4096-byte limit.
            Exit status: 0 no errors (warnings allowed), 1 any error, 2 usage error.

            Examples:
              pushcore lint --push-type background payload.json
              pushcore lint --content-state-schema score-state.json update.json
              pushcore lint --platform fcmv1 android-message.json
            """
    )

    @Option(help: "What the files are: apns (the default) payloads or fcmv1 messages.")
    var platform: Platform = .apns

    @Option(name: .customLong("push-type"), help: "Lint as this push type: \(APNsPushType.allCases.map(\.rawValue).joined(separator: ", ")).")
    var pushType: APNsPushType?

    @Option(help: "Output format: text or json.")
    var format: Format = .text

    @Option(name: .customLong("content-state-schema"), help: "The app's ContentState fields and types, a JSON file.")
    var contentStateSchema: String?

    @Option(name: .customLong("attributes-schema"), help: "The app's ActivityAttributes fields and types, a JSON file.")
    var attributesSchema: String?

    @Argument(help: "Payload files; stdin when none is given, or for '-'.")
    var files: [String] = []

    func validate() throws {
        if platform == .fcmv1 && (pushType != nil || contentStateSchema != nil) {
            throw ValidationError("--push-type and the schemas are for APNs payloads, not --platform fcmv1")
        }
        if attributesSchema != nil && contentStateSchema == nil { throw ValidationError("--attributes-schema needs --content-state-schema") }
        if contentStateSchema == "-" || attributesSchema == "-" { throw ValidationError("a schema is read from a file, not stdin") }
    }

    func run() throws {
        var parser = JSONParser()
        var failed = false
        var liveActivity: APNsLiveActivitySchema?
        if let contentStateSchema {
            liveActivity = APNsLiveActivitySchema(
                contentState: try Self.readSchema(contentStateSchema), attributes: try attributesSchema.map(Self.readSchema))
        }
        for path in inputPaths(files) {
            guard let input = InputText.read(path) else {
                failed = true
                continue
            }
            let findings: [LintFinding]
            do throws(JSONError) {
                switch platform {
                case .apns:
                    findings = try APNsLinter.lint(input.bytes, pushType: pushType, liveActivity: liveActivity, parser: &parser).map(
                        LintFinding.init)
                case .fcmv1:
                    findings = try FCMLinter.lint(input.bytes, parser: &parser).map(LintFinding.init)
                }
            } catch {
                findings = [LintFinding(error)]
            }
            if findings.contains(where: { $0.severity == .error }) { failed = true }
            switch format {
            case .text:
                for finding in findings { Terminal.writeError(input.render(finding)) }
            case .json:
                Terminal.write(jsonReport(input, findings))
            }
        }
        if failed { throw CommandFailure.invalid }
    }

    private static func readSchema(_ path: String) throws -> APNsFieldSchema {
        // A declaration names a type's fields: 1 MiB is far more than any has.
        guard let input = InputText.read(path, limit: 1 << 20) else { throw CommandFailure.invalid }
        do throws(APNsFieldSchema.ParseError) {
            return try APNsFieldSchema(json: input.bytes)
        } catch {
            let (line, column) = JSONError.location(ofByte: error.offset, in: input.bytes)
            Terminal.writeError("\(input.name): error: invalidSchema at byte \(error.offset) (line \(line), column \(column)): \(error.message)")
            throw CommandFailure.invalid
        }
    }

    private func jsonReport(_ input: InputText, _ diagnostics: [LintFinding]) -> [UInt8] {
        let findings: [JSON] = diagnostics.map { finding in
            let (line, column) = JSONError.location(ofByte: finding.offset, in: input.bytes)
            return .object([
                JSONMember("severity", .string(finding.severity.rawValue)),
                JSONMember("code", .string(finding.code)),
                JSONMember("offset", .number(JSONNumber(finding.offset))),
                JSONMember("line", .number(JSONNumber(line))),
                JSONMember("column", .number(JSONNumber(column))),
                JSONMember("message", .string(finding.message)),
            ])
        }
        let report = JSON.object([
            JSONMember("file", .string(input.name)),
            JSONMember("errors", .number(JSONNumber(diagnostics.count { $0.severity == .error }))),
            JSONMember("warnings", .number(JSONNumber(diagnostics.count { $0.severity == .warning }))),
            JSONMember("diagnostics", .array(findings)),
        ])
        var bytes: [UInt8] = []
        // Strings and integers always encode; nothing here can fail.
        try! report.write(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}
