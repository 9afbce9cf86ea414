import APNs
import APNsEmulator
import CAllocationCounter
import Crypto
import Dispatch
import Foundation
import Logging
import NIOSSL
import PushAPNs
import PushAPNsTokens

/// `apns.send` and `apns.send.bulk`: sends through one client, over TLS and HTTP/2, to an APNs
/// emulator in this process, 1,000 devices each receiving its share. The client and the emulator
/// share the machine's cores, so these are the client's speed with a verifying server beside it.
///
/// - `apns.send`: 100 callers each sending to one device at a time, as a backend sends when
///   events arrive; every request's latency is timed (p50, p99).
/// - `apns.send.bulk`: one send call to 1,000 devices, repeated: the encode-once path.
///
/// - `apns.send.client`: as `apns.send`, against `apns-emulator --benchmark` in another process
///   pinned to the second core while this one keeps to the first: the client's own cost.
///
/// All keep 100 requests in flight. Allocations are counted over every thread of the process
/// (the client, the in-process emulator, the event loops), per request; so is the CPU time per
/// request (user and system, from the process's own usage).
func measureAPNsSend(samples: Int, sendsPerSample: Int, names: Set<String>) -> [Measurement] {
    let box = MeasurementsBox()
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            if names.contains("apns.send") || names.contains("apns.send.bulk") {
                box.measurements += try await runAPNsSend(samples: samples, sendsPerSample: sendsPerSample)
            }
            if names.contains("apns.send.client") {
                box.measurements.append(try await runAPNsSendToProcess(samples: samples, sendsPerSample: sendsPerSample))
            }
        } catch {
            box.failure = "\(error)"
        }
        done.signal()
    }
    done.wait()
    if let failure = box.failure { usage("apns.send could not run: \(failure)") }
    return box.measurements
}

private final class MeasurementsBox: @unchecked Sendable {
    var measurements: [Measurement] = []
    var failure: String?
}

private let deviceCount = 1000
private let callers = 100
private let benchTopic = "com.example.bench"
private let benchPayload = Array(#"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker"},"badge":3},"gameID":"12345678"}"#.utf8)
private let benchDevices = (0..<deviceCount).map { index in
    let hex = String(index, radix: 16)
    return String(repeating: "0", count: 64 - hex.count) + hex
}

private func runAPNsSend(samples: Int, sendsPerSample: Int) async throws -> [Measurement] {
    let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
    let privateKey = P256.Signing.PrivateKey()
    let signingKey = try APNsSigningKey(privateKey: privateKey, keyID: "BENCHKEY01", teamID: "BENCHTEAM1")
    let verificationKey = try APNsVerificationKey(publicKey: privateKey.publicKey, keyID: "BENCHKEY01", teamID: "BENCHTEAM1")
    let identity = try APNsEmulatorIdentity.generate()
    let emulator = APNsEmulator(keys: [verificationKey], bundleIDs: [benchTopic], deliveryCapacity: 2 * sendsPerSample)
    let devices = benchDevices
    let headers = APNsHeaders(pushType: .alert, topic: benchTopic)

    let (ports, listening) = AsyncStream.makeStream(of: Int.self)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await emulator.run(port: 0, identity: identity, logger: quiet) { listening.yield($0) } }
        defer { group.cancelAll() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        let client = APNsClient(
            configuration: APNsClientConfiguration(
                endpoint: "https://127.0.0.1:\(port)", authentication: .token(APNsTokenCache(key: signingKey)),
                trustRoots: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)],
                maximumConcurrentRequests: callers),
            logger: quiet)
        do {
            var measurements: [Measurement] = []
            for (name, oneDevicePerCall) in [("apns.send", true), ("apns.send.bulk", false)] {
                measurements.append(
                    try await measure(
                        name, oneDevicePerCall: oneDevicePerCall, client: client, emulator: emulator, devices: devices, payload: benchPayload,
                        headers: headers, samples: samples, sendsPerSample: sendsPerSample))
            }
            try await client.shutdown()
            return measurements
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

/// `apns.send` against `apns-emulator --benchmark`, started beside this executable.
private func runAPNsSendToProcess(samples: Int, sendsPerSample: Int) async throws -> Measurement {
    let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
    let privateKey = P256.Signing.PrivateKey()
    let signingKey = try APNsSigningKey(privateKey: privateKey, keyID: "BENCHKEY01", teamID: "BENCHTEAM1")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-apns-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let keyPath = folder.appendingPathComponent("key.pem").path
    let certificatePath = folder.appendingPathComponent("certificate.pem").path
    try privateKey.publicKey.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)

    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("apns-emulator").path
    guard FileManager.default.isExecutableFile(atPath: executable) else {
        throw BenchFailure("\(executable) is missing: build every product (swift build -c release)")
    }
    let emulatorArguments = [
        executable, "--benchmark", "--port", "0", "--team-id", "BENCHTEAM1", "--key-id", "BENCHKEY01", "--key-file", keyPath, "--topic",
        benchTopic, "--certificate-out", certificatePath,
    ]
    // Each side on its own core, when there are two and taskset is there to pin the emulator.
    let pinned = ProcessInfo.processInfo.activeProcessorCount >= 2 && FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pinned ? "/usr/bin/taskset" : executable)
    process.arguments = pinned ? ["-c", "1"] + emulatorArguments : Array(emulatorArguments.dropFirst())
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
        process.terminate()
        process.waitUntilExit()
    }
    var line: [UInt8] = []
    while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { line.append(byte) }
    guard let text = String(bytes: line, encoding: .utf8), let port = text.split(separator: ":").last.flatMap({ Int($0) }) else {
        throw BenchFailure("apns-emulator did not say where it listens")
    }
    let restoreAffinity = pinned ? pinProcess(toCPU: 0) : nil
    defer { restoreAffinity?() }
    let client = APNsClient(
        configuration: APNsClientConfiguration(
            endpoint: "https://127.0.0.1:\(port)", authentication: .token(APNsTokenCache(key: signingKey)),
            trustRoots: try NIOSSLCertificate.fromPEMFile(certificatePath), maximumConcurrentRequests: callers),
        logger: quiet)
    do {
        let measurement = try await measure(
            "apns.send.client", oneDevicePerCall: true, client: client, emulator: nil, devices: benchDevices, payload: benchPayload,
            headers: APNsHeaders(pushType: .alert, topic: benchTopic), samples: samples, sendsPerSample: sendsPerSample)
        try await client.shutdown()
        return measurement
    } catch {
        try? await client.shutdown()
        throw error
    }
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

/// CPU time this process has used, user and system, in nanoseconds.
private func processCPUNanoseconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func nanoseconds(_ time: timeval) -> Double { Double(time.tv_sec) * 1e9 + Double(time.tv_usec) * 1e3 }
    return nanoseconds(usage.ru_utime) + nanoseconds(usage.ru_stime)
}

/// One workload: a warm-up round, then `samples` rounds of `sendsPerSample` requests each.
private func measure(
    _ name: String, oneDevicePerCall: Bool, client: APNsClient, emulator: APNsEmulator?, devices: [String], payload: [UInt8],
    headers: APNsHeaders, samples: Int, sendsPerSample: Int
) async throws -> Measurement {
    /// One round: its nanoseconds, the process's allocations and CPU time, and (one device per
    /// call) each request's latency.
    func round() async throws -> (nanoseconds: Double, allocations: UInt64, cpu: Double, latencies: [Double]) {
        emulator?.reset()
        pushcore_count_process_allocations(true)
        let allocationsBefore = pushcore_process_allocation_count()
        let cpuBefore = processCPUNanoseconds()
        let start = monotonicNanoseconds()
        var latencies: [Double] = []
        var delivered = 0
        if oneDevicePerCall {
            latencies.reserveCapacity(sendsPerSample)
            try await withThrowingTaskGroup(of: ([Double], Int).self) { group in
                for caller in 0..<callers {
                    group.addTask {
                        var own: [Double] = []
                        var ok = 0
                        own.reserveCapacity(sendsPerSample / callers)
                        for call in 0..<(sendsPerSample / callers) {
                            let device = devices[(caller * 10 + call) % devices.count]
                            let sent = monotonicNanoseconds()
                            let results = try await client.send(encodedPayload: payload, headers: headers, to: [device])
                            own.append(Double(monotonicNanoseconds() - sent))
                            if results[0].isDelivered { ok += 1 }
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
                delivered += try await client.send(encodedPayload: payload, headers: headers, to: devices).count(where: { $0.isDelivered })
            }
        }
        let elapsed = Double(monotonicNanoseconds() - start)
        let cpu = processCPUNanoseconds() - cpuBefore
        let allocations = pushcore_process_allocation_count() - allocationsBefore
        pushcore_count_process_allocations(false)
        // A refused send would make the figures meaningless: every request must have been delivered.
        guard delivered == sendsPerSample, emulator.map({ $0.deliveries.count == sendsPerSample }) ?? true else {
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
        workload: name, corpus: nil, implementation: "pushcore", bytesPerOperation: payload.count,
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
