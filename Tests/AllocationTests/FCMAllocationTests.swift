import CAllocationCounter
import PushCore
import PushFCM
import PushTestSupport
import Testing

@Suite("Allocations: FCM v1 messages")
struct FCMAllocationTests {
    static let message = FCMMessage(
        notification: FCMNotification(title: "Game Request", body: "Bob wants to play \"poker\" tonight"),
        data: ["gameID": "12345678", "richId": "4f1c2a9e", "richType": "img"],
        android: FCMAndroidConfig(
            collapseKey: "poker", priority: .high, ttl: .milliseconds(3_600_500),
            notification: FCMAndroidNotification(color: "#336699", sound: "default", channelID: "games")),
        analyticsLabel: "poker-invites")

    @Test("encoding into a reused buffer allocates nothing (optimised builds)", .enabled(if: isOptimizedBuild && !runningUnderSanitizer))
    func encodingDoesNotAllocate() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        var buffer: [UInt8] = []
        try Self.message.encode(into: &buffer)
        let before = pushcore_thread_allocation_count()
        for _ in 0..<100 {
            buffer.removeAll(keepingCapacity: true)
            try Self.message.encode(into: &buffer)
        }
        #expect(pushcore_thread_allocation_count() - before == 0)
        #expect(buffer.count == (try Self.message.encodedSize()))
    }

    @Test(
        "linting a clean message with a reused parser allocates nothing (optimised builds)", .enabled(if: isOptimizedBuild && !runningUnderSanitizer))
    func lintDoesNotAllocate() throws {
        try #require(pushcore_allocation_counting_available(), "allocation counting needs glibc and no sanitizer")
        let bytes = try Self.message.encoded()
        var parser = JSONParser()
        #expect(try FCMLinter.lint(bytes, parser: &parser).isEmpty)
        let before = pushcore_thread_allocation_count()
        for _ in 0..<100 { _ = try FCMLinter.lint(bytes, parser: &parser) }
        #expect(pushcore_thread_allocation_count() - before == 0)
    }
}
