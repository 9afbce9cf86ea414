import APNsEmulator
import Dispatch
import FCM
import FCMEmulator
import Foundation
import Logging
import NIOSSL
import PushFCM
import _CryptoExtras

/// `fcm.send` and `fcm.send.client`: `apns.send`'s two rows for FCM HTTP v1, through one
/// `FCMClient` on the same HTTP/2 transport, 100 callers each sending to one registration token at
/// a time (1,000 tokens), every request's latency timed.
///
/// - `fcm.send`: against an FCM emulator in this process, which checks each access token, lints
///   each body and records each message.
/// - `fcm.send.client`: against `fcm-emulator --benchmark` in another process pinned to the second
///   core while this one keeps to the first: the client's own cost, to set beside `apns.send.client`'s.
func measureFCMSend(samples: Int, sendsPerSample: Int, names: Set<String>) -> [Measurement] {
    waitForSends("fcm.send") {
        var measurements: [Measurement] = []
        let (account, keyFile) = try benchServiceAccount()
        if names.contains("fcm.send") {
            measurements.append(try await runFCMSend(account: account, samples: samples, sendsPerSample: sendsPerSample))
        }
        if names.contains("fcm.send.client") {
            measurements.append(
                try await runFCMSendToProcess(account: account, keyFile: keyFile, samples: samples, sendsPerSample: sendsPerSample))
        }
        return measurements
    }
}

/// Two sentences and a data entry, as `apns.send`'s payload: 142 bytes encoded, before the token.
private let benchMessage = FCMMessage(
    notification: FCMNotification(title: "Game Request", body: "Bob wants to play poker"), data: ["gameID": "12345678"],
    android: FCMAndroidConfig(priority: .high))
private let benchTokens = (0..<1000).map { index in
    "f" + String(index, radix: 16).padding(toLength: 21, withPad: "_", startingAt: 0) + ":APA91b" + String(repeating: "Bench", count: 27)
}

/// A fresh 2048-bit service account, and its key file's JSON for an emulator in another process.
private func benchServiceAccount() throws -> (FCMServiceAccount, [UInt8]) {
    let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    let fields = [
        "type": "service_account", "project_id": "bench-project", "private_key_id": "bench", "private_key": key.pemRepresentation,
        "client_email": "bench@bench-project.iam.gserviceaccount.com", "token_uri": FCMServiceAccount.defaultTokenURI,
    ]
    let json = Array(try JSONSerialization.data(withJSONObject: fields))
    return (try FCMServiceAccount(json: json), json)
}

private func fcmClient(_ account: FCMServiceAccount, port: Int, trustRoots: [NIOSSLCertificate]) -> FCMClient {
    var account = account
    account.tokenURI = "https://127.0.0.1:\(port)/token"
    return FCMClient(
        configuration: FCMClientConfiguration(
            endpoint: "https://127.0.0.1:\(port)", serviceAccount: account, trustRoots: trustRoots, maximumConcurrentRequests: sendCallers),
        logger: Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() }))
}

extension SendTarget {
    static func fcm(_ client: FCMClient, emulator: FCMEmulator?) -> SendTarget {
        SendTarget(
            send: { tokens in try await client.send(benchMessage, to: tokens).count { $0.isDelivered } },
            reset: { emulator?.reset() }, deliveries: { emulator?.deliveries.count })
    }
}

private func runFCMSend(account: FCMServiceAccount, samples: Int, sendsPerSample: Int) async throws -> Measurement {
    let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
    let identity = try APNsEmulatorIdentity.generate()
    let emulator = FCMEmulator(serviceAccount: account, deliveryCapacity: 2 * sendsPerSample)
    let (ports, listening) = AsyncStream.makeStream(of: Int.self)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await emulator.run(port: 0, identity: identity, logger: quiet) { listening.yield($0) } }
        defer { group.cancelAll() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        let client = fcmClient(account, port: port, trustRoots: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)])
        do {
            let measurement = try await measureSends(
                "fcm.send", oneDevicePerCall: true, target: .fcm(client, emulator: emulator), devices: benchTokens,
                bytesPerSend: try benchMessage.encodedSize(), samples: samples, sendsPerSample: sendsPerSample)
            try await client.shutdown()
            return measurement
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

/// `fcm.send` against `fcm-emulator --benchmark`, started beside this executable.
private func runFCMSendToProcess(account: FCMServiceAccount, keyFile: [UInt8], samples: Int, sendsPerSample: Int) async throws -> Measurement {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-fcm-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let keyPath = folder.appendingPathComponent("service-account.json").path
    let certificatePath = folder.appendingPathComponent("certificate.pem").path
    try Data(keyFile).write(to: URL(fileURLWithPath: keyPath))
    let (process, port, restoreAffinity) = try startBenchmarkEmulator(
        "fcm-emulator", ["--benchmark", "--port", "0", "--service-account", keyPath, "--certificate-out", certificatePath])
    defer {
        restoreAffinity?()
        process.terminate()
        process.waitUntilExit()
    }
    let client = fcmClient(account, port: port, trustRoots: try NIOSSLCertificate.fromPEMFile(certificatePath))
    do {
        let measurement = try await measureSends(
            "fcm.send.client", oneDevicePerCall: true, target: .fcm(client, emulator: nil), devices: benchTokens,
            bytesPerSend: try benchMessage.encodedSize(), samples: samples, sendsPerSample: sendsPerSample)
        try await client.shutdown()
        return measurement
    } catch {
        try? await client.shutdown()
        throw error
    }
}
