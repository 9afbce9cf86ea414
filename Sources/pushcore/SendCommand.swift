import APNs
import ArgumentParser
import PushCore
import PushInternals

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a notification straight to APNs (or, with --fcm, through FCM); one line per device.",
        discussion: """
            The payload is built from the same flags as `build`, or, when none is given, read from
            the file named by the first argument ('-' for stdin) and sent as it is. Every other
            argument is a device token (hex); --device-file adds a file of them, one per line. The push type's topic suffix (.voip,
            .push-type.liveactivity, …) is added to --topic when it is missing.

            Each device gets a line on stdout, TOKEN STATUS REASON APNS-ID, and for a 410 the time
            (Unix milliseconds) APNs says the app was uninstalled (tokens shortened here):
              7c3d0e5f…a4b5 200 - 8e2a2d5b-6e0c-4a44-9c9a-2b1a9b0c1d2e
              5f1a33c0…7a6b 410 Unregistered 1a6d7b2c-0f3e-4d5a-8b9c-0d1e2f3a4b5c 1700000000123
              0b9e8d7c…4c77 - timeout -
            --format json prints an object a line instead: {"token", "status", "reason", "apnsId",
            "unregisteredSince"?, "mayHaveBeenDelivered"? (for an unanswered request)}. A send to
            more than 1,000 devices says how far it got on stderr when that is a terminal.

            The key, its id, the team id and the topic may come from APNS_KEY_FILE, APNS_KEY_ID,
            APNS_TEAM_ID and APNS_TOPIC (a flag wins). A client certificate may replace the key:
            --certificate with --private-key (PEM), or --pkcs12 with its password in
            APNS_PKCS12_PASSWORD (never on the command line, where `ps` shows it).
            With --channel ID the payload (a Live Activity update or end) is broadcast to the
            channel's subscribers in one request, and the one line is CHANNEL STATUS REASON
            REQUEST-ID (see `pushcore channels`).
            Exit status: 0 every device accepted, 1 any refused or unanswered (or the input is
            invalid, said on stderr), 2 a usage error. Logs go to stderr and never hold the key,
            the provider token or the payload.

            With --fcm the message goes through FCM HTTP v1 instead, as the service account in
            --service-account (or GOOGLE_APPLICATION_CREDENTIALS): from --title, --body, --data
            KEY=VALUE and --priority normal|high, or a FILE holding {"message": {…}} without a
            target; to registration tokens (arguments, --token, --device-file), or one --topic, or
            one --condition. Each target gets a line, TARGET STATUS CODE NAME (shortened here):
              dAAAAAAA…(162) 200 - projects/my-project/messages/0:1700000000%abc
              eBBBBBBB…(162) 404 UNREGISTERED -
            and --format json an object: {"token" (or "topic", "condition"), "status", "code",
            "name", "message"?, "mayHaveBeenDelivered"?}. --endpoint, --ca-file, --token-uri (where
            access tokens come from) and the proxy reach an emulator.

            Examples:
              pushcore send --key-file AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ \\
                --topic com.example.app --development --title Hello --body 'From PushCore' "$DEVICE"
              pushcore send --key-file AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ --topic com.example.app \\
                --endpoint https://127.0.0.1:8443 --ca-file emulator.pem payload.json "$DEVICE1" "$DEVICE2"
              pushcore send --key-file AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ --topic com.example.app \\
                --development --channel "$CHANNEL" score-update.json
              pushcore send --fcm --service-account service-account.json --title Hello --body 'From PushCore' "$TOKEN"
            """
    )

    @OptionGroup var apns: APNsConnectionOptions
    @OptionGroup var fcmOptions: FCMSendOptions
    @Option(name: .customLong("push-type"), help: "apns-push-type; inferred from the payload when absent.") var pushType: APNsPushType?
    @Option(help: "apns-priority: 10, 5 or 1 (default: the push type's); with --fcm, android.priority: normal or high.")
    var priority: String?
    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id (at most 64 bytes).") var collapseID: String?
    @Option(help: "apns-expiration (Unix seconds; 0 = deliver once).") var expiration: Int?
    @Option(help: "Requests in flight at once.") var concurrency: Int = 100
    @Option(help: "HTTP/2 connections to open, each on its own event loop.") var connections: Int = 1
    @Option(help: "Broadcast to this channel's subscribers instead of sending to devices (a Live Activity update or end).")
    var channel: String?
    @OptionGroup var content: PayloadOptions
    @Option(name: .customLong("device-file"), help: "Also send to the tokens in this file, one per line.") var deviceFile: String?
    @Option(help: "text (a line a device) or json (an object a device, one a line).") var format: OutputFormat = .text
    @Argument(help: "[FILE] DEVICE…: the payload's file when no payload flag is given, then the device tokens.")
    var arguments: [String] = []

    func validate() throws {
        if concurrency < 1 || !(1...64).contains(connections) {
            throw ValidationError("--concurrency must be at least 1, --connections 1 to 64")
        }
        if fcmOptions.fcm { return try validateFCM() }
        try apns.requireAPNsCredentials()
        if let priority, Int(priority) == nil { throw ValidationError("--priority is 10, 5 or 1") }
        let devicesGiven = arguments.count - (content.isEmpty ? 1 : 0)
        if content.isEmpty && arguments.isEmpty { throw ValidationError("give a payload: build's flags or a FILE") }
        if deviceFile == "-" && content.isEmpty && arguments.first == "-" {
            throw ValidationError("the payload and --device-file cannot both come from stdin")
        }
        if channel != nil {
            if devicesGiven > 0 || deviceFile != nil { throw ValidationError("--channel broadcasts: give no device tokens") }
            if pushType.map({ $0 != .liveactivity }) == true || collapseID != nil {
                throw ValidationError("a broadcast is a liveactivity push, without --collapse-id")
            }
        } else if devicesGiven < 1 && deviceFile == nil {
            throw ValidationError("give at least one device token (or --device-file)")
        }
    }

    func run() throws {
        try waitForTask { fcmOptions.fcm ? try await sendFCM() : try await send() }
    }

    private func send() async throws {
        let (body, payload, listedDevices) = try readPayload()
        let devices = try listedDevices + readDeviceFile()
        if channel == nil && devices.isEmpty {
            Terminal.writeError(deviceFile ?? "send", code: "noDevices", "no device token to send to")
            throw CommandFailure.invalid
        }
        let headers = try makeHeaders(for: payload, size: body.count)
        guard let client = apns.makeClient(concurrency: concurrency, connections: connections) else { throw CommandFailure.invalid }
        if let channel {
            let result: APNsBroadcastResult
            do throws(APNsClientError) {
                result = try await client.broadcast(
                    encodedPayload: body, to: channel, bundleID: apns.topic, priority: headers.priority, expiration: headers.expiration)
            } catch {
                try? await client.shutdown()
                Terminal.writeError("send", code: "invalidRequest", error.message)
                throw CommandFailure.invalid
            }
            try? await client.shutdown()
            Terminal.write("\(escapingControls(channel)) \(result.summary)")
            if !result.isDelivered { throw CommandFailure.invalid }
            return
        }
        var results: [APNsSendResult] = []
        let progress = Progress(total: devices.count)
        do throws(APNsClientError) {
            // In batches only to say how far it got: each batch waits for its slowest answer.
            let step = progress.isShown ? Progress.batch : max(devices.count, 1)
            for start in stride(from: 0, to: devices.count, by: step) {
                let batch = Array(devices[start..<min(start + step, devices.count)])
                results += try await client.send(encodedPayload: body, headers: headers, to: batch)
                progress.show(sent: results.count)
            }
        } catch {
            progress.end()
            try? await client.shutdown()
            Terminal.writeError("send", code: "invalidRequest", error.message)
            throw CommandFailure.invalid
        }
        progress.end()
        try? await client.shutdown()
        for result in results { Terminal.write(format.line(for: result)) }
        if !results.allSatisfy(\.isDelivered) { throw CommandFailure.invalid }
    }

    /// The body to send, its model (for the headers), and the device tokens.
    private func readPayload() throws -> ([UInt8], APNsPayload, [String]) {
        if !content.isEmpty {
            let payload = content.payload()
            do throws(APNsPayloadError) {
                return (try payload.encoded(limit: (pushType ?? APNsHeaders.inferredPushType(for: payload)).payloadLimit), payload, arguments)
            } catch {
                Terminal.writeError("send", code: error.code.rawValue, error.message)
                throw CommandFailure.invalid
            }
        }
        let path = arguments[0]
        // The largest payload APNs takes is 5 KiB (VoIP); the bound keeps a wrong path cheap.
        guard let input = InputText.read(path == "-" ? nil : path, limit: 64 << 10) else { throw CommandFailure.invalid }
        var parser = JSONParser()
        do {
            let payload = try APNsPayload(decoding: input.bytes, parser: &parser)
            return (input.bytes, payload, Array(arguments.dropFirst()))
        } catch let error as JSONError {
            Terminal.writeError(input.render(error))
        } catch let error as APNsPayloadError {
            Terminal.writeError(input.name, code: error.code.rawValue, error.message)
        }
        throw CommandFailure.invalid
    }

    /// The tokens in `--device-file`, one per line; blank lines and surrounding spaces ignored.
    func readDeviceFile() throws -> [String] {
        guard let deviceFile else { return [] }
        // 64 MiB: a million tokens with room to spare; the bound keeps a wrong path cheap.
        guard let input = InputText.read(deviceFile == "-" ? nil : deviceFile, limit: 64 << 20) else { throw CommandFailure.invalid }
        guard input.bytes.count <= 64 << 20 else {
            Terminal.writeError(input.name, code: "inputTooLarge", "more than 64 MiB of device tokens")
            throw CommandFailure.invalid
        }
        return input.bytes.split(whereSeparator: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }).compactMap { line in
            let token = String(decoding: line, as: UTF8.self).trimmingOptionalWhitespace()
            return token.isEmpty ? nil : String(token)
        }
    }

    private func makeHeaders(for payload: APNsPayload, size: Int) throws -> APNsHeaders {
        let type = pushType ?? APNsHeaders.inferredPushType(for: payload)
        let headers = APNsHeaders(
            pushType: type, priority: priority.flatMap { Int($0) }, expiration: expiration, collapseID: collapseID,
            topic: APNsHeaders.topic(apns.topic, for: type))
        do throws(APNsHeaders.ValidationError) {
            try headers.validate()
        } catch {
            Terminal.writeError("send", code: error.code.rawValue, "\(error)")
            throw CommandFailure.invalid
        }
        guard size <= headers.pushType.payloadLimit else {
            Terminal.writeError(
                "send", code: "payloadTooLarge",
                "the payload is \(size) bytes; \(headers.pushType.rawValue) pushes take at most \(headers.pushType.payloadLimit)")
            throw CommandFailure.invalid
        }
        return headers
    }
}

/// How `send` prints each device's result.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json

    /// `TOKEN STATUS REASON APNS-ID [UNREGISTERED-SINCE-MS]`, or one JSON object. Tokens are printed
    /// as given, but a control character in one cannot start a forged line.
    func line(for result: APNsSendResult) -> String {
        switch self {
        case .text:
            var line = "\(escapingControls(result.deviceToken)) \(result.summary)"
            if case .rejected(_, _, let since?) = result.outcome { line += " \(since)" }
            return line
        case .json:
            var members = [JSONMember("token", .string(result.deviceToken))]
            switch result.outcome {
            case .delivered:
                members += [JSONMember("status", 200), JSONMember("reason", nil)]
            case .rejected(let status, let reason, _):
                members += [JSONMember("status", .number(JSONNumber(status))), JSONMember("reason", .string(reason.rawValue))]
            case .failed(let failure, let mayHaveBeenDelivered):
                members += [
                    JSONMember("status", nil), JSONMember("reason", .string(failure.description)),
                    JSONMember("mayHaveBeenDelivered", .bool(mayHaveBeenDelivered)),
                ]
            }
            members.append(JSONMember("apnsId", result.apnsID.map(JSON.string) ?? nil))
            if case .rejected(_, _, let since?) = result.outcome {
                members.append(JSONMember("unregisteredSince", .number(JSONNumber(Int(since)))))
            }
            var bytes: [UInt8] = []
            try? JSON.object(members).write(into: &bytes)  // strings from the result: always valid
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

/// "sent N of M" on standard error while a long send runs, when it is a terminal.
struct Progress {
    /// Devices a batch; sends shorter than this show nothing.
    static let batch = 1000
    let total: Int
    let isShown: Bool

    init(total: Int) {
        self.total = total
        isShown = total > Self.batch && isatty(2) == 1
    }

    func show(sent: Int) {
        guard isShown else { return }
        Terminal.writeErrorBytes(Array("\rsent \(sent) of \(total)".utf8))
    }

    func end() {
        if isShown { Terminal.writeErrorBytes(Array("\n".utf8)) }
    }
}
