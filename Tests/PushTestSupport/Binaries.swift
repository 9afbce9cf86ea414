package import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension Process {
    private static let launches = NSLock()

    /// `run()`, one launch at a time in this process: Foundation's `Process.run()` on Linux has
    /// crashed (a bad read inside it) when suites running in parallel launched children at once.
    package func runOneAtATime() throws {
        try Self.launches.withLock { try run() }
    }
}

/// What one run of the built `pushcore` binary did.
package struct CommandResult {
    package let status: Int32
    /// The child's resident high-water mark (VmHWM) in KiB, as last seen while it ran; Linux only.
    package var peakResidentKiB = 0
    package let stdout: [UInt8]
    package let stderr: [UInt8]
    package var out: String { String(decoding: stdout, as: UTF8.self) }
    package var err: String { String(decoding: stderr, as: UTF8.self) }
}

package enum PushCoreBinary {
    package static let url = builtExecutable("pushcore")

    /// An executable product of this package: from `PUSHCORE_BIN_PATH` when set, else from the
    /// folder the tests were built into, where `swift build` puts the products (`make test` runs it
    /// before `swift test`; no test target links an executable).
    package static func builtExecutable(_ name: String) -> URL {
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates = [testBundle, testBundle.deletingLastPathComponent()]
        if let binPath = ProcessInfo.processInfo.environment["PUSHCORE_BIN_PATH"] { candidates.insert(URL(fileURLWithPath: binPath), at: 0) }
        let folder = candidates[0]
        for candidate in candidates {
            let url = candidate.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return folder.appendingPathComponent(name)
    }

    /// Runs `pushcore arguments…` with `stdin` as its standard input (empty when nil) and, when
    /// given, `environment` as its environment (plus the sanitizers' settings); output goes through
    /// files, so any size works. The wait for the child is on a thread of its own: the concurrent
    /// tests share as many threads as there are cores, and two children waited for on them would
    /// stop every in-process server until they end.
    package static func run(
        _ arguments: [String], executable: URL = url, stdin: [UInt8] = [], environment: [String: String]? = nil
    ) async throws -> CommandResult {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("pushcore-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inURL = scratch.appendingPathComponent("stdin"), outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        try Data(stdin).write(to: inURL)
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if var environment {
            // The sanitizers' settings (make test-asan's report folder and leak suppressions) reach
            // every child, whatever else its environment leaves out.
            let current = ProcessInfo.processInfo.environment
            for name in ["ASAN_OPTIONS", "LSAN_OPTIONS", "SWIFT_BACKTRACE"] where environment[name] == nil {
                environment[name] = current[name]
            }
            process.environment = environment
        }
        process.standardInput = try FileHandle(forReadingFrom: inURL)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.runOneAtATime()
        // VmHWM belongs to the child's own address space (getrusage would also count the pages it
        // shared with this large test process before exec). It only grows, so the last reading
        // before the child exits is its peak, give or take the final millisecond.
        let peak = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var peak = 0
                while process.isRunning {
                    if let kib = residentPeakKiB(process.processIdentifier) { peak = max(peak, kib) }
                    usleep(1000)
                }
                process.waitUntilExit()
                continuation.resume(returning: peak)
            }
        }
        var result = CommandResult(
            status: process.terminationStatus, stdout: [UInt8](try Data(contentsOf: outURL)),
            stderr: [UInt8](try Data(contentsOf: errURL)))
        result.peakResidentKiB = peak
        return result
    }
}

/// A server binary of this package (`push-backend serve`, `hub-emulator`, `apns-emulator`) started
/// for a test.
package enum ServerProcess {
    /// Starts `executable arguments…` and reads the first `count` lines it prints (its addresses);
    /// fewer if it exits first. Its standard error is copied to the test's, not inherited: a server
    /// still running when the test process dies (a sanitizer report aborts it) would otherwise hold
    /// `swift test`'s pipe open, and the run would never end.
    /// - Parameter stdin: Written to its standard input, which is then closed.
    package static func start(
        _ executable: URL, _ arguments: [String], stdin: [UInt8]? = nil, readingLines count: Int
    ) async throws -> (Process, [String]) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let input = stdin.map { _ in Pipe() }
        if let input { process.standardInput = input }
        try process.runOneAtATime()
        if let input, let stdin {
            try input.fileHandleForWriting.write(contentsOf: stdin)
            try input.fileHandleForWriting.close()
        }
        let reader = errors.fileHandleForReading
        Thread.detachNewThread {
            while let chunk = try? reader.read(upToCount: 4096), !chunk.isEmpty { FileHandle.standardError.write(chunk) }
        }
        return (process, await readLines(count, from: output.fileHandleForReading))
    }
}

/// A process's peak resident set (VmHWM) in KiB; nil once it has exited.
package func residentPeakKiB(_ pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return nil }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
}

/// The first `count` lines written to `handle`, read on a thread of its own (a blocking read must
/// not hold one of the few threads the concurrent tests share).
private func readLines(_ count: Int, from handle: FileHandle) async -> [String] {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            var lines: [String] = []
            var line: [UInt8] = []
            while lines.count < count, let byte = try? handle.read(upToCount: 1), !byte.isEmpty {
                if byte[0] == UInt8(ascii: "\n") {
                    lines.append(String(decoding: line, as: UTF8.self))
                    line = []
                } else {
                    line += byte
                }
            }
            continuation.resume(returning: lines)
        }
    }
}

#if DEBUG
package let isOptimizedBuild = false
#else
package let isOptimizedBuild = true
#endif
