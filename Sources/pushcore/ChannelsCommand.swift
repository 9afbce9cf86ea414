public import APNs
public import ArgumentParser
import PushCore

extension APNsMessageStoragePolicy: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument {
        case "none", "0": self = .noStorage
        case "most-recent", "1": self = .mostRecentMessage
        default: return nil
        }
    }

    public static var allValueStrings: [String] { ["none", "most-recent"] }

    public var defaultValueDescription: String { self == .noStorage ? "none" : "most-recent" }
}

struct ChannelsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Manage the app's broadcast channels for Live Activities (iOS 18).",
        discussion: """
            Devices subscribe to a channel through ActivityKit; `pushcore send --channel ID` then
            reaches all of them with one request. APNs keeps at most 10,000 channels per app and
            environment: delete a channel when its event is over.

            Example:
              pushcore channels create --key-file AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ \\
                --topic com.example.app --development --storage most-recent
              dHN0LXNyY2gtY2hubA==
            """,
        subcommands: [CreateChannelCommand.self, ListChannelsCommand.self, ShowChannelCommand.self, DeleteChannelCommand.self]
    )
}

/// Runs a channel request with a client for `apns`, printing `channels: error: REASON …` and
/// failing when it is refused.
private func runChannelRequest(
    _ apns: APNsConnectionOptions, _ body: @escaping @Sendable (APNsClient) async throws(APNsChannelError) -> Void
) throws {
    try waitForTask {
        guard let client = apns.makeClient() else { throw CommandFailure.invalid }
        var failure: APNsChannelError?
        do throws(APNsChannelError) {
            try await body(client)
        } catch {
            failure = error
        }
        try? await client.shutdown()
        guard let failure else { return }
        let code =
            switch failure.failure {
            case .rejected(_, let reason): reason.rawValue
            case .unanswered: "unanswered"
            case .unreadableAnswer: "unreadableAnswer"
            case .invalidRequest: "invalidRequest"
            }
        Terminal.writeError("channels", code: code, "\(failure)\(failure.requestID.map { " (apns-request-id \($0))" } ?? "")")
        throw CommandFailure.invalid
    }
}

struct CreateChannelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a channel; prints its id.")

    @OptionGroup var apns: APNsConnectionOptions
    @Option(help: "What APNs keeps for offline devices: none (deliver now or never) or most-recent.")
    var storage: APNsMessageStoragePolicy = .noStorage

    func validate() throws {
        try apns.requireAPNsCredentials()
    }

    func run() throws {
        try runChannelRequest(apns) { client throws(APNsChannelError) in
            let channel = try await client.createChannel(bundleID: apns.topic, storagePolicy: storage)
            Terminal.write(channel.id)
        }
    }
}

struct ListChannelsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Print the id of every channel, one per line.")

    @OptionGroup var apns: APNsConnectionOptions

    func validate() throws {
        try apns.requireAPNsCredentials()
    }

    func run() throws {
        try runChannelRequest(apns) { client throws(APNsChannelError) in
            for id in try await client.channelIDs(bundleID: apns.topic) { Terminal.write(id) }
        }
    }
}

struct ShowChannelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a channel's id and storage policy.")

    @OptionGroup var apns: APNsConnectionOptions
    @Argument(help: "The channel's id.") var id: String

    func validate() throws {
        try apns.requireAPNsCredentials()
    }

    func run() throws {
        try runChannelRequest(apns) { client throws(APNsChannelError) in
            let channel = try await client.channel(id, bundleID: apns.topic)
            Terminal.write("\(channel.id) \(channel.storagePolicy == .noStorage ? "none" : "most-recent")")
        }
    }
}

struct DeleteChannelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete channels.")

    @OptionGroup var apns: APNsConnectionOptions
    @Argument(help: "The channels' ids.") var ids: [String]

    func validate() throws {
        try apns.requireAPNsCredentials()
        if ids.isEmpty { throw ValidationError("give the id of at least one channel") }
    }

    func run() throws {
        try runChannelRequest(apns) { client throws(APNsChannelError) in
            for id in ids { try await client.deleteChannel(id, bundleID: apns.topic) }
        }
    }
}
