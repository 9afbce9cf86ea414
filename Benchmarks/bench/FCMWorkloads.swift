import Foundation
import PushCore
import PushFCM

/// An Android message as a backend sends one through Notification Hubs' fcmv1 format: the
/// alert, the rich flow's data, and the Android delivery options.
let fcmMessage = FCMMessage(
    notification: FCMNotification(title: "Game Request", body: "Bob wants to play \"poker\" tonight 🃏"),
    data: ["richId": "4f1c2a9e", "richType": "img", "richMessage": "New photo from Bob", "gameID": "12345678"],
    android: FCMAndroidConfig(
        collapseKey: "poker", priority: .high, ttl: .seconds(3600),
        notification: FCMAndroidNotification(color: "#336699", sound: "default", clickAction: "OPEN_GAME", channelID: "games")),
    analyticsLabel: "poker-invites")

/// `build.fcm` (the writer into a reused buffer against JSONSerialization writing the same
/// dictionary) and `lint.fcm` (parse and FCM's rules against JSONSerialization's parse alone, as
/// `lint.corpus` is measured).
func makeFCMWorkloads() -> [Workload] {
    // Captured by the closure, as a caller's own message is held: a global is reached through its
    // accessor and copied (every string retained) at each use.
    let message = fcmMessage
    let bytes = try! message.encoded()
    precondition(try! FCMLinter.lint(bytes, parser: &parser).isEmpty, "the bench's FCM message must lint clean")
    return [
        Workload(
            name: "build.fcm", operations: 1, bytes: bytes.count,
            implementations: [
                Implementation(name: "pushcore") {
                    var local: [UInt8] = []
                    swap(&local, &buffer)
                    defer { swap(&local, &buffer) }
                    local.removeAll(keepingCapacity: true)
                    try! message.encode(into: &local)
                    return local.count
                },
                buildSerialization([foundationObject(bytes)]),
            ]),
        Workload(
            name: "lint.fcm", operations: 1, bytes: bytes.count,
            implementations: [
                Implementation(name: "pushcore") { try! FCMLinter.lint(bytes, parser: &parser).count },
                parseSerialization([Data(bytes)]),
            ]),
    ]
}
