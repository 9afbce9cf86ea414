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
    waitForSends("apns.send") {
        var measurements: [Measurement] = []
        if names.contains("apns.send") || names.contains("apns.send.bulk") {
            measurements += try await runAPNsSend(samples: samples, sendsPerSample: sendsPerSample)
        }
        if names.contains("apns.send.client") {
            measurements.append(try await runAPNsSendToProcess(samples: samples, sendsPerSample: sendsPerSample))
        }
        return measurements
    }
}

private let deviceCount = 1000
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
                maximumConcurrentRequests: sendCallers),
            logger: quiet)
        do {
            var measurements: [Measurement] = []
            for (name, oneDevicePerCall) in [("apns.send", true), ("apns.send.bulk", false)] {
                measurements.append(
                    try await measureSends(
                        name, oneDevicePerCall: oneDevicePerCall, target: .apns(client, headers: headers, emulator: emulator), devices: devices,
                        bytesPerSend: benchPayload.count, samples: samples, sendsPerSample: sendsPerSample))
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

    let (process, port, restoreAffinity) = try startBenchmarkEmulator(
        "apns-emulator",
        [
            "--benchmark", "--port", "0", "--team-id", "BENCHTEAM1", "--key-id", "BENCHKEY01", "--key-file", keyPath, "--topic", benchTopic,
            "--certificate-out", certificatePath,
        ])
    defer {
        restoreAffinity?()
        process.terminate()
        process.waitUntilExit()
    }
    let client = APNsClient(
        configuration: APNsClientConfiguration(
            endpoint: "https://127.0.0.1:\(port)", authentication: .token(APNsTokenCache(key: signingKey)),
            trustRoots: try NIOSSLCertificate.fromPEMFile(certificatePath), maximumConcurrentRequests: sendCallers),
        logger: quiet)
    do {
        let measurement = try await measureSends(
            "apns.send.client", oneDevicePerCall: true,
            target: .apns(client, headers: APNsHeaders(pushType: .alert, topic: benchTopic), emulator: nil),
            devices: benchDevices, bytesPerSend: benchPayload.count, samples: samples, sendsPerSample: sendsPerSample)
        try await client.shutdown()
        return measurement
    } catch {
        try? await client.shutdown()
        throw error
    }
}

/// CPU time this process has used, user and system, in nanoseconds.
func processCPUNanoseconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func nanoseconds(_ time: timeval) -> Double { Double(time.tv_sec) * 1e9 + Double(time.tv_usec) * 1e3 }
    return nanoseconds(usage.ru_utime) + nanoseconds(usage.ru_stime)
}

extension SendTarget {
    static func apns(_ client: APNsClient, headers: APNsHeaders, emulator: APNsEmulator?) -> SendTarget {
        SendTarget(
            send: { devices in try await client.send(encodedPayload: benchPayload, headers: headers, to: devices).count { $0.isDelivered } },
            reset: { emulator?.reset() }, deliveries: { emulator?.deliveries.count })
    }
}
