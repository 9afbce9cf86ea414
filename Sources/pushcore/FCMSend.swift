import ArgumentParser
import FCM
import Logging
import NIOCore
import PushCore
import PushFCM
import PushInternals

/// The flags of `send --fcm` beyond those it shares with the APNs send.
struct FCMSendOptions: ParsableArguments {
    @Flag(help: "Send through FCM HTTP v1 (Android, and whatever FCM reaches) instead of APNs.") var fcm = false
    @Option(
        name: .customLong("service-account"),
        help: "FCM: the service account's JSON key file; or GOOGLE_APPLICATION_CREDENTIALS.")
    var serviceAccount: String?
    @Option(name: .customLong("project-id"), help: "FCM: the project to send in; the service account's by default.")
    var projectID: String?
    @Option(name: .customLong("token-uri"), help: "FCM: where access tokens come from, instead of the service account's token_uri.")
    var tokenURI: String?
    @Option(name: .customLong("token"), help: "FCM: a registration token to send to (repeatable).") var tokens: [String] = []
    @Option(help: "FCM: send to the devices a condition over topics picks, \"'a' in topics && 'b' in topics\".")
    var condition: String?
    @Option(name: .customLong("data"), help: "FCM: a data entry, KEY=VALUE (repeatable).") var data: [String] = []

    func validate() throws {
        guard fcm else {
            if serviceAccount != nil || projectID != nil || tokenURI != nil || !tokens.isEmpty || condition != nil || !data.isEmpty {
                throw ValidationError("--service-account, --project-id, --token-uri, --token, --condition and --data go with --fcm")
            }
            return
        }
        var keys = Set<String>()
        for entry in data {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw ValidationError("--data takes KEY=VALUE, got '\(entry)'")
            }
            guard keys.insert(String(entry[..<equals])).inserted else { throw ValidationError("--data sets '\(entry[..<equals])' twice") }
        }
    }

    /// The data entries, in the order given.
    var dataMap: FCMStringMap {
        FCMStringMap(
            data.map { entry in
                let equals = entry.firstIndex(of: "=")!  // checked in validate()
                return FCMStringMap.Entry(String(entry[..<equals]), String(entry[entry.index(after: equals)...]))
            })
    }
}

extension SendCommand {
    /// Where an FCM send goes: the registration tokens, or one topic, or one condition.
    enum FCMTarget {
        case tokens([String])
        case topic(String)
        case condition(String)
    }

    func validateFCM() throws {
        if apns.development { throw ValidationError("--development is APNs'; FCM has one environment") }
        if pushType != nil || collapseID != nil || expiration != nil || channel != nil {
            throw ValidationError("--push-type, --collapse-id, --expiration and --channel are APNs'; not with --fcm")
        }
        if let priority, priority != "normal" && priority != "high" { throw ValidationError("--priority with --fcm is normal or high") }
        let fileGiven = content.isEmpty && fcmOptions.data.isEmpty
        if fileGiven && arguments.isEmpty { throw ValidationError("give a message: --title, --body, --data or a FILE") }
        let tokensGiven = arguments.count - (fileGiven ? 1 : 0) + fcmOptions.tokens.count
        let targets = [tokensGiven > 0 || deviceFile != nil, apns.topicFlag != nil, fcmOptions.condition != nil].count { $0 }
        if targets != 1 { throw ValidationError("give tokens (or --device-file), or --topic, or --condition: one of them") }
        if deviceFile == "-" && fileGiven && arguments.first == "-" {
            throw ValidationError("the message and --device-file cannot both come from stdin")
        }
    }

    func sendFCM() async throws {
        let fileGiven = content.isEmpty && fcmOptions.data.isEmpty
        let body = try readFCMBody(fromFile: fileGiven)
        let listed = Array(arguments.dropFirst(fileGiven ? 1 : 0)) + fcmOptions.tokens
        let target: FCMTarget =
            if let topic = apns.topicFlag { .topic(topic) } else if let condition = fcmOptions.condition { .condition(condition) } else {
                .tokens(try listed + readDeviceFile())
            }
        if case .tokens(let tokens) = target, tokens.isEmpty {
            Terminal.writeError(deviceFile ?? "send", code: "noDevices", "no registration token to send to")
            throw CommandFailure.invalid
        }
        guard let client = makeFCMClient() else { throw CommandFailure.invalid }
        var results: [FCMSendResult] = []
        do throws(FCMClientError) {
            switch target {
            case .tokens(let tokens):
                let progress = Progress(total: tokens.count)
                // In batches only to say how far it got: each batch waits for its slowest answer.
                let step = progress.isShown ? Progress.batch : max(tokens.count, 1)
                for start in stride(from: 0, to: tokens.count, by: step) {
                    results += try await client.send(encodedMessage: body, to: Array(tokens[start..<min(start + step, tokens.count)]))
                    progress.show(sent: results.count)
                }
                progress.end()
            case .topic(let topic): results = [try await client.send(encodedMessage: body, toTopic: topic)]
            case .condition(let condition): results = [try await client.send(encodedMessage: body, toCondition: condition)]
            }
        } catch {
            try? await client.shutdown()
            Terminal.writeError("send", code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }
        try? await client.shutdown()
        for result in results { Terminal.write(format.line(for: result)) }
        if !results.allSatisfy(\.isDelivered) { throw CommandFailure.invalid }
    }

    /// `{"message": {…}}` from the flags, or as the file holds it (checked by the client).
    private func readFCMBody(fromFile: Bool) throws -> [UInt8] {
        guard fromFile else {
            var message = FCMMessage(data: fcmOptions.dataMap)
            if content.title != nil || content.body != nil {
                message.notification = FCMNotification(title: content.title, body: content.body)
            }
            if let priority = priority.flatMap(FCMAndroidConfig.Priority.init(argument:)) {
                message.android = FCMAndroidConfig(priority: priority)
            }
            do throws(FCMMessageError) {
                return try message.encoded()
            } catch {
                Terminal.writeError("send", code: error.code.rawValue, error.message)
                throw CommandFailure.invalid
            }
        }
        let path = arguments[0]
        guard let input = InputText.read(path == "-" ? nil : path, limit: 64 << 10) else { throw CommandFailure.invalid }
        return input.bytes
    }

    /// A client of FCM (or of `--endpoint`), as the service account, with the shared connection
    /// options; nil after printing why the account or an option is unusable (never the key).
    private func makeFCMClient() -> FCMClient? {
        var account: FCMServiceAccount
        do throws(FCMCredentialsError) {
            if let path = fcmOptions.serviceAccount {
                account = try FCMServiceAccount(contentsOfFile: path)
            } else if let fromEnvironment = try FCMServiceAccount.fromEnvironment() {
                account = fromEnvironment
            } else {
                Terminal.writeError("send", code: "noCredentials", "give --service-account (or set GOOGLE_APPLICATION_CREDENTIALS)")
                return nil
            }
        } catch {
            Terminal.writeError(fcmOptions.serviceAccount ?? "GOOGLE_APPLICATION_CREDENTIALS", code: "invalidCredentials", error.message)
            return nil
        }
        if let tokenURI = fcmOptions.tokenURI { account.tokenURI = tokenURI }
        guard case .success(let trustRoots) = apns.trustRoots() else { return nil }
        let endpoint = apns.endpoint ?? FCMClientConfiguration.production
        guard case .success(let proxy) = apns.proxy(for: endpoint) else { return nil }
        let configuration = FCMClientConfiguration(
            endpoint: endpoint, serviceAccount: account, projectID: fcmOptions.projectID, trustRoots: trustRoots,
            maximumConcurrentRequests: concurrency, connections: connections, requestTimeout: .seconds(Int64(apns.timeout)),
            connectTimeout: .seconds(Int64(apns.connectTimeout)), proxy: proxy)
        return FCMClient(
            configuration: configuration, logger: Logger(label: "pushcore", factory: { label in StreamLogHandler.standardError(label: label) }))
    }
}

extension OutputFormat {
    /// `TARGET STATUS CODE NAME`, or one JSON object: `{"token" (or "topic", "condition"), "status",
    /// "code", "name", "message"?, "mayHaveBeenDelivered"?}`.
    func line(for result: FCMSendResult) -> String {
        switch self {
        case .text:
            return "\(escapingControls(result.target)) \(result.summary)"
        case .json:
            let key = result.target.hasPrefix("/topics/") ? "topic" : result.target.contains(" ") ? "condition" : "token"
            var members = [JSONMember(key, .string(key == "topic" ? String(result.target.dropFirst(8)) : result.target))]
            switch result.outcome {
            case .delivered(let name):
                members += [JSONMember("status", 200), JSONMember("code", nil), JSONMember("name", .string(name))]
            case .rejected(let status, let code, let message):
                members += [
                    JSONMember("status", .number(JSONNumber(status))), JSONMember("code", .string(code.rawValue)), JSONMember("name", nil),
                    JSONMember("message", .string(message)),
                ]
            case .failed(let failure, let mayHaveBeenDelivered):
                members += [
                    JSONMember("status", nil), JSONMember("code", .string(failure.description)), JSONMember("name", nil),
                    JSONMember("mayHaveBeenDelivered", .bool(mayHaveBeenDelivered)),
                ]
            }
            var bytes: [UInt8] = []
            try? JSON.object(members).write(into: &bytes)  // strings from the result: always valid
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
