public import ArgumentParser
import PushCore
public import PushFCM

/// The flags of `build --fcm` beyond the shared payload flags.
struct FCMOptions: ParsableArguments {
    @Option(name: .customLong("priority"), help: "FCM: android.priority, normal or high.") var priority: FCMAndroidConfig.Priority?
    @Option(name: .customLong("ttl"), help: "FCM: android.ttl in seconds (0 to 2419200, four weeks).") var ttlSeconds: Int?
    @Option(name: .customLong("collapse-key"), help: "FCM: android.collapse_key.") var collapseKey: String?
    @Option(name: .customLong("channel-id"), help: "FCM: android.notification.channel_id.") var channelID: String?
    @Option(help: "FCM: notification.image, an HTTPS URL.") var image: String?
    @Option(help: "FCM: the registration token to send to (left out for Notification Hubs).") var token: String?

    var isEmpty: Bool { priority == nil && ttlSeconds == nil && collapseKey == nil && channelID == nil && image == nil && token == nil }

    /// The message the shared flags and these make: the alert as `notification`, `--sound` and
    /// `--channel-id` for Android, `--custom` and the flows' keys as `data` (strings, as FCM wants).
    func message(_ content: PayloadOptions) -> FCMMessage {
        var message = FCMMessage(target: token.map(FCMMessage.Target.token))
        if content.title != nil || content.body != nil || image != nil {
            message.notification = FCMNotification(title: content.title, body: content.body, image: image)
        }
        var data = FCMStringMap()
        if let richID = content.richID, let richType = content.richType, let richMessage = content.richMessage {
            data.entries += [.init("richId", richID), .init("richType", richType), .init("richMessage", richMessage)]
        }
        if let secureID = content.secureID { data.entries.append(.init("secureId", secureID)) }
        for entry in content.custom {
            let equals = entry.firstIndex(of: "=")!  // checked in PayloadOptions.validate()
            data.entries.append(.init(String(entry[..<equals]), String(entry[entry.index(after: equals)...])))
        }
        message.data = data
        if priority != nil || ttlSeconds != nil || collapseKey != nil || channelID != nil || content.sound != nil {
            var android = FCMAndroidConfig(collapseKey: collapseKey, priority: priority, ttl: ttlSeconds.map { .seconds($0) })
            if channelID != nil || content.sound != nil {
                android.notification = FCMAndroidNotification(sound: content.sound, channelID: channelID)
            }
            message.android = android
        }
        return message
    }
}

extension FCMAndroidConfig.Priority: ExpressibleByArgument {
    public static var allValueStrings: [String] { ["normal", "high"] }

    public init?(argument: String) {
        switch argument.lowercased() {
        case "normal": self = .normal
        case "high": self = .high
        default: return nil
        }
    }
}
