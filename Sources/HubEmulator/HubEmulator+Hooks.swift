import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NotificationHubs
package import PushCore
import PushFCM
import PushInternals
package import PushServerSupport
import Synchronization

// Test hooks: `/_emulator/deliveries` as listed, `clock` and `faults`.
extension HubEmulator {
    /// A delivery as `GET /_emulator/deliveries` lists it.
    package static func hookJSON(_ delivery: Delivery) -> JSON {
        JSON.object([
            JSONMember("sequence", .number(JSONNumber(delivery.sequence))),
            JSONMember("hub", .string(delivery.hub)), JSONMember("notificationId", .string(delivery.notificationID)),
            JSONMember("platform", .string(delivery.platform.rawValue)), JSONMember("deviceHandle", .string(delivery.deviceHandle)),
            JSONMember("headers", .object(delivery.apnsHeaders.keys.sorted().map { JSONMember($0, .string(delivery.apnsHeaders[$0]!)) })),
            JSONMember("payload", .string(String(decoding: delivery.payload, as: UTF8.self))),
            JSONMember("tokenExpiry", .number(JSONNumber(Int(delivery.tokenExpiry)))),
        ])
    }

    /// `POST /_emulator/clock` with `{"advanceSeconds": N}` (0 to ten years): moves the clock that
    /// scheduled sends wait for (token expiry keeps the real one), then delivers what is due.
    func advanceClock(_ body: [UInt8]) throws -> Response {
        guard let document = parsedJSON(body), let seconds = document.root["advanceSeconds"]?.int, (0...315_360_000).contains(seconds) else {
            throw HookRefusal(400, "the body is {\"advanceSeconds\": N}, N from 0 to 315360000")
        }
        advanceClock(by: .seconds(seconds))
        return Response(status: .noContent)
    }

    /// `{"status": 100…599, "retryAfter": "…", "count": 1…}` or `{"delaySeconds": 0…300, "count": 1…}`,
    /// every field checked, so that nothing a client sends can trap the process.
    package static func faults(from body: [UInt8]) throws(HookRefusal) -> (faults: [Fault], after: Int) {
        guard let document = parsedJSON(body), document.root.kind == .object else { throw HookRefusal(400, "the body is a JSON object") }
        let root = document.root
        let known: Set<String> = ["status", "retryAfter", "delaySeconds", "count"]
        if let unknown = root.members.first(where: { !known.contains($0.key.string ?? "") }) {
            throw HookRefusal(400, "unknown field \((unknown.key.string ?? "").debugDescription)")
        }
        var count = 1
        if let value = root["count"] {
            guard let number = value.int, (1...maximumQueuedFaults).contains(number) else {
                throw HookRefusal(400, "count is a whole number from 1 to \(maximumQueuedFaults)")
            }
            count = number
        }
        let fault: Fault
        switch (root["status"], root["delaySeconds"]) {
        case (let status?, nil):
            guard let code = status.int, (100...599).contains(code) else {
                throw HookRefusal(400, "status is a whole number from 100 to 599")
            }
            var retryAfter: String?
            if let value = root["retryAfter"] {
                guard let text = value.string, (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                    throw HookRefusal(400, "retryAfter is a header value: 1 to 64 printable ASCII characters")
                }
                retryAfter = text
            }
            fault = .status(code, retryAfter: retryAfter)
        case (nil, let delay?):
            let limit = Double(maximumFaultDelay.components.seconds)
            guard root["retryAfter"] == nil, let seconds = delay.double, seconds.isFinite, (0...limit).contains(seconds) else {
                throw HookRefusal(400, "delaySeconds is a number from 0 to \(Int(limit)), without retryAfter")
            }
            fault = .delay(.milliseconds(Int64(seconds * 1000)))
        default:
            throw HookRefusal(400, "give either status or delaySeconds")
        }
        return (Array(repeating: fault, count: count), 0)
    }
}
