import CAllocationCounter
import Dispatch
import Foundation

/// What the send workloads (`apns.send*`, `fcm.send*`) measure, whichever the service.
struct SendTarget: Sendable {
    /// Sends to the devices; returns how many were delivered.
    let send: @Sendable ([String]) async throws -> Int
    /// Forgets what an in-process emulator recorded.
    let reset: @Sendable () -> Void
    /// What an in-process emulator recorded; nil for one in another process.
    let deliveries: @Sendable () -> Int?
}

/// Runs `body` to its end on this thread, which is not one of the concurrency pool's; a failure
/// ends the bench with `name` and its error.
func waitForSends(_ name: String, _ body: @escaping @Sendable () async throws -> [Measurement]) -> [Measurement] {
    final class Outcome: @unchecked Sendable {
        var result: Result<[Measurement], any Error> = .success([])
    }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            outcome.result = .success(try await body())
        } catch {
            outcome.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    switch outcome.result {
    case .success(let measurements): return measurements
    case .failure(let error): usage("\(name) could not run: \(error)")
    }
}

/// How many callers send at once, each to one device at a time: requests in flight.
let sendCallers = 100

/// Starts `name` (built beside this executable) with `arguments`, pinned to the second core while
/// this process keeps to the first when there are two and `taskset` is there; reads the port from
/// its first line. Returns the process, the port, and what frees this process's threads again.
func startBenchmarkEmulator(_ name: String, _ arguments: [String]) throws -> (Process, Int, (() -> Void)?) {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: executable) else {
        throw BenchFailure("\(executable) is missing: build every product (swift build -c release)")
    }
    let pinned = ProcessInfo.processInfo.activeProcessorCount >= 2 && FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pinned ? "/usr/bin/taskset" : executable)
    process.arguments = pinned ? ["-c", "1", executable] + arguments : arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    var line: [UInt8] = []
    while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { line.append(byte) }
    guard let text = String(bytes: line, encoding: .utf8), let port = text.split(separator: ":").last.flatMap({ Int($0) }) else {
        process.terminate()
        throw BenchFailure("\(name) did not say where it listens")
    }
    return (process, port, pinned ? pinProcess(toCPU: 0) : nil)
}

/// Pins every thread of this process to one CPU, with `taskset`; returns what frees them again.
private func pinProcess(toCPU cpu: Int) -> () -> Void {
    func taskset(_ cpus: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        process.arguments = ["-a", "-p", "-c", cpus, String(getpid())]
        process.standardOutput = FileHandle.nullDevice
        try? process.run()
        process.waitUntilExit()
    }
    taskset(String(cpu))
    return { taskset("0-\(ProcessInfo.processInfo.activeProcessorCount - 1)") }
}

/// One workload: a warm-up round, then `samples` rounds of `sendsPerSample` requests each.
func measureSends(
    _ name: String, oneDevicePerCall: Bool, target: SendTarget, devices: [String], bytesPerSend: Int, samples: Int, sendsPerSample: Int
) async throws -> Measurement {
    /// One round: its nanoseconds, the process's allocations and CPU time, and (one device per
    /// call) each request's latency.
    func round() async throws -> (nanoseconds: Double, allocations: UInt64, cpu: Double, latencies: [Double]) {
        target.reset()
        pushcore_count_process_allocations(true)
        let allocationsBefore = pushcore_process_allocation_count()
        let cpuBefore = processCPUNanoseconds()
        let start = monotonicNanoseconds()
        var latencies: [Double] = []
        var delivered = 0
        if oneDevicePerCall {
            latencies.reserveCapacity(sendsPerSample)
            try await withThrowingTaskGroup(of: ([Double], Int).self) { group in
                for caller in 0..<sendCallers {
                    group.addTask {
                        var own: [Double] = []
                        var ok = 0
                        own.reserveCapacity(sendsPerSample / sendCallers)
                        for call in 0..<(sendsPerSample / sendCallers) {
                            let device = devices[(caller * 10 + call) % devices.count]
                            let sent = monotonicNanoseconds()
                            ok += try await target.send([device])
                            own.append(Double(monotonicNanoseconds() - sent))
                        }
                        return (own, ok)
                    }
                }
                for try await (own, ok) in group {
                    latencies += own
                    delivered += ok
                }
            }
        } else {
            for _ in 0..<(sendsPerSample / devices.count) {
                delivered += try await target.send(devices)
            }
        }
        let elapsed = Double(monotonicNanoseconds() - start)
        let cpu = processCPUNanoseconds() - cpuBefore
        let allocations = pushcore_process_allocation_count() - allocationsBefore
        pushcore_count_process_allocations(false)
        // A refused send would make the figures meaningless: every request must have been delivered.
        guard delivered == sendsPerSample, target.deliveries().map({ $0 == sendsPerSample }) ?? true else {
            throw BenchFailure("\(delivered) of \(sendsPerSample) sends delivered")
        }
        return (elapsed, allocations, cpu, latencies)
    }

    _ = try await round()  // warm-up: connection, token, caches
    var perSend: [Double] = []
    var cpuPerSend: [Double] = []
    var allocations: UInt64 = 0
    var latencies: [Double] = []
    for _ in 0..<samples {
        let sample = try await round()
        perSend.append(sample.nanoseconds / Double(sendsPerSample))
        cpuPerSend.append(sample.cpu / Double(sendsPerSample))
        allocations += sample.allocations
        latencies += sample.latencies
    }
    perSend.sort()
    cpuPerSend.sort()
    latencies.sort()
    var measurement = Measurement(
        workload: name, corpus: nil, implementation: "pushcore", bytesPerOperation: bytesPerSend,
        nanoseconds: (perSend[perSend.count / 2], perSend.first!, perSend.last!),
        allocationsPerOperation: pushcore_allocation_counting_available() ? Double(allocations) / Double(samples * sendsPerSample) : nil)
    if !latencies.isEmpty {
        measurement.latency = (latencies[latencies.count / 2], latencies[min(latencies.count - 1, latencies.count * 99 / 100)])
    }
    measurement.cpuPerOperation = (cpuPerSend[cpuPerSend.count / 2], cpuPerSend.first!, cpuPerSend.last!)
    measurement.allocationsCountProcess = true
    return measurement
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
