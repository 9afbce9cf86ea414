import Foundation
import Logging
import PushBackend
import PushTestSupport
import Testing

@Suite("The request log: whole lines, one write each, no lock")
struct LineLogHandlerTests {
    @Test("Lines from many threads at once arrive whole, formatted as StreamLogHandler formats them, the time in UTC")
    func wholeLines() async throws {
        // A file opened for appending, as a service manager's log file is (a pipe read here would
        // also be held open by every child process the other tests start at the same time).
        let path = try temporaryDirectory() + "/log"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        var handler = LineLogHandler(label: "push-backend", descriptor: descriptor, metadataProvider: nil)
        handler.logLevel = .info
        handler[metadataKey: "instance"] = "a"
        let logger = Logger(label: "push-backend") { _ in handler }
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for line in 0..<200 {
                        logger.info(
                            "request \(task)-\(line) \(String(repeating: "x", count: 300))", metadata: ["request-id": "\(task * 1000 + line)"])
                    }
                }
            }
        }
        close(descriptor)
        let lines = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 1600)
        let pattern =
            /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ info push-backend: instance=a request-id=(\d+) \[PushBackendTests\] request (\d)-(\d+) x{300}$/
        var seen = Set<String>()
        for line in lines {
            let match = try #require(try pattern.wholeMatch(in: String(line)), "\(line.prefix(120))")
            #expect(Int(match.output.1)! == Int(match.output.2)! * 1000 + Int(match.output.3)!)
            seen.insert(String(match.output.1))
        }
        #expect(seen.count == 1600)
    }
}
