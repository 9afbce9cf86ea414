import APNs
import APNsEmulator
import CAllocationCounter
import Crypto
import Dispatch
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
/// Both keep 100 requests in flight. Allocations are counted over every thread of the process
/// (the client, the emulator, the event loops), per request.
func measureAPNsSend(samples: Int, sendsPerSample: Int) -> [Measurement] {
    let box = MeasurementsBox()
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            box.measurements = try await runAPNsSend(samples: samples, sendsPerSample: sendsPerSample)
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

private func runAPNsSend(samples: Int, sendsPerSample: Int) async throws -> [Measurement] {
    let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
    let privateKey = P256.Signing.PrivateKey()
    let signingKey = try APNsSigningKey(privateKey: privateKey, keyID: "BENCHKEY01", teamID: "BENCHTEAM1")
    let verificationKey = try APNsVerificationKey(publicKey: privateKey.publicKey, keyID: "BENCHKEY01", teamID: "BENCHTEAM1")
    let identity = try APNsEmulatorIdentity.generate()
    let emulator = APNsEmulator(keys: [verificationKey], bundleIDs: [benchTopic], deliveryCapacity: 2 * sendsPerSample)
    let devices = (0..<deviceCount).map { index in
        let hex = String(index, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }
    let payload = Array(#"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker"},"badge":3},"gameID":"12345678"}"#.utf8)
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
            let measurements = try await measureBoth(
                client: client, emulator: emulator, devices: devices, payload: payload, headers: headers, samples: samples,
                sendsPerSample: sendsPerSample)
            try await client.shutdown()
            return measurements
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

private func measureBoth(
    client: APNsClient, emulator: APNsEmulator, devices: [String], payload: [UInt8], headers: APNsHeaders, samples: Int,
    sendsPerSample: Int
) async throws -> [Measurement] {
    /// One round of `sendsPerSample` requests: its nanoseconds, the process's allocations, and
    /// (one device per call) each request's latency.
    func round(oneDevicePerCall: Bool) async throws -> (nanoseconds: Double, allocations: UInt64, latencies: [Double]) {
        emulator.reset()
        pushcore_count_process_allocations(true)
        let allocationsBefore = pushcore_process_allocation_count()
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
        let allocations = pushcore_process_allocation_count() - allocationsBefore
        pushcore_count_process_allocations(false)
        // A refused send would make the figures meaningless: every request must have been delivered.
        guard delivered == sendsPerSample, emulator.deliveries.count == sendsPerSample else {
            throw BenchFailure("\(delivered) of \(sendsPerSample) sends delivered")
        }
        return (elapsed, allocations, latencies)
    }

    var measurements: [Measurement] = []
    for (name, oneDevicePerCall) in [("apns.send", true), ("apns.send.bulk", false)] {
        _ = try await round(oneDevicePerCall: oneDevicePerCall)  // warm-up: connection, token, caches
        var perSend: [Double] = []
        var allocations: UInt64 = 0
        var latencies: [Double] = []
        for _ in 0..<samples {
            let sample = try await round(oneDevicePerCall: oneDevicePerCall)
            perSend.append(sample.nanoseconds / Double(sendsPerSample))
            allocations += sample.allocations
            latencies += sample.latencies
        }
        perSend.sort()
        latencies.sort()
        var measurement = Measurement(
            workload: name, corpus: nil, implementation: "pushcore", bytesPerOperation: payload.count,
            nanoseconds: (perSend[perSend.count / 2], perSend.first!, perSend.last!),
            allocationsPerOperation: pushcore_allocation_counting_available()
                ? Double(allocations) / Double(samples * sendsPerSample) : nil)
        if !latencies.isEmpty {
            measurement.latency = (latencies[latencies.count / 2], latencies[min(latencies.count - 1, latencies.count * 99 / 100)])
        }
        measurement.allocationsCountProcess = true
        measurements.append(measurement)
    }
    return measurements
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
