import Foundation
import PushTestSupport
import Testing
import _CryptoExtras

/// `pushcore send --fcm` against an `fcm-emulator` process, both the built binaries.
@Suite("pushcore send --fcm against fcm-emulator", .serialized)
struct SendFCMCommandTests {
    struct Emulator {
        let folder: URL
        let endpoint: String
        var certificatePath: String { file("emulator.pem") }
        /// The key file as Google makes it: its token_uri is Google's.
        var accountPath: String { file("service-account.json") }
        func file(_ name: String) -> String { folder.appendingPathComponent(name).path }

        /// A test hook, answered 204.
        func hook(_ method: String, _ path: String, _ body: String) async throws {
            let result = try await PushCoreBinary.run(
                ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", certificatePath, "-X", method, "-d", body, endpoint + path],
                executable: URL(fileURLWithPath: "/usr/bin/curl"))
            try #require(result.out == "204", "\(result.out) \(result.err)")
        }
    }

    /// A service account with a fresh key, written as Google's key file, and an emulator that takes it.
    func withEmulator(_ body: (Emulator, _ privateKeyPEM: String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushcore-fcm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let fields = [
            "type": "service_account", "project_id": "demo-project", "private_key_id": "k1", "private_key": key.pemRepresentation,
            "client_email": "pusher@demo-project.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
        ]
        let accountPath = folder.appendingPathComponent("service-account.json")
        try JSONSerialization.data(withJSONObject: fields).write(to: accountPath)
        let (process, lines) = try await ServerProcess.start(
            PushCoreBinary.builtExecutable("fcm-emulator"),
            ["--port", "0", "--service-account", accountPath.path, "--certificate-out", folder.appendingPathComponent("emulator.pem").path],
            readingLines: 1)
        defer { process.terminate() }
        let first = lines.first ?? ""
        try #require(first.hasPrefix("listening on https://127.0.0.1:"))
        try await body(Emulator(folder: folder, endpoint: String(first.dropFirst("listening on ".count))), key.pemRepresentation)
    }

    func send(_ emulator: Emulator, _ arguments: [String], stdin: [UInt8] = []) async throws -> CommandResult {
        try await PushCoreBinary.run(
            [
                "send", "--fcm", "--service-account", emulator.accountPath, "--token-uri", emulator.endpoint + "/token",
                "--endpoint", emulator.endpoint, "--ca-file", emulator.certificatePath, "--timeout", "60", "--connect-timeout", "60",
            ] + arguments, stdin: stdin)
    }

    let active = "dAAAAAAAAAAAAAAAAAAAAA:APA91b" + String(repeating: "a", count: 120)
    let gone = "dBBBBBBBBBBBBBBBBBBBBB:APA91b" + String(repeating: "b", count: 120)

    @Test("Flags or a file to tokens, a topic, a condition: a line per target, exit 1 when any failed")
    func sends() async throws {
        try await withEmulator { emulator, privateKeyPEM in
            try await emulator.hook("PUT", "/_emulator/tokens/\(gone)", #"{"state":"unregistered"}"#)
            let fromFlags = try await send(
                emulator, ["--title", "Hello", "--body", "From PushCore", "--data", "richId=42", "--priority", "high", active, "--token", gone])
            #expect(fromFlags.status == 1, "\(fromFlags.err)")
            let lines = fromFlags.out.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            try #require(lines.count == 2, "\(fromFlags.out)")
            #expect(lines[0] == [active, "200", "-", "projects/demo-project/messages/1"])
            #expect(lines[1] == [gone, "404", "UNREGISTERED", "-"])
            #expect(!fromFlags.err.contains(privateKeyPEM.split(separator: "\n")[3]))

            let file = emulator.file("message.json")
            try #"{"message": {"data": {"k": "v"}, "android": {"ttl": "60s"}}}"#.write(toFile: file, atomically: true, encoding: .utf8)
            let fromFile = try await send(emulator, [file, active, "--format", "json"])
            #expect(fromFile.status == 0, "\(fromFile.err)")
            #expect(fromFile.out == #"{"token":"\#(active)","status":200,"code":null,"name":"projects/demo-project/messages/2"}"# + "\n")

            let topic = try await send(emulator, ["--data", "k=v", "--topic", "news"])
            #expect(topic.status == 0 && topic.out == "/topics/news 200 - projects/demo-project/messages/3\n", "\(topic.out)\(topic.err)")
            let condition = try await send(emulator, ["-", "--condition", "'news' in topics"], stdin: Array(#"{"message":{}}"#.utf8))
            #expect(condition.status == 0 && condition.out.hasPrefix("'news' in topics 200 - "), "\(condition.out)\(condition.err)")

            // The account from GOOGLE_APPLICATION_CREDENTIALS, its token_uri the emulator's.
            let local = emulator.file("local.json")
            var account = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: emulator.accountPath))) as! [String: String]
            account["token_uri"] = emulator.endpoint + "/token"
            try JSONSerialization.data(withJSONObject: account).write(to: URL(fileURLWithPath: local))
            let fromEnvironment = try await PushCoreBinary.run(
                ["send", "--fcm", "--endpoint", emulator.endpoint, "--ca-file", emulator.certificatePath, "--data", "k=v", active],
                environment: ["GOOGLE_APPLICATION_CREDENTIALS": local])
            #expect(
                fromEnvironment.status == 0 && fromEnvironment.out.hasSuffix("200 - projects/demo-project/messages/5\n"), "\(fromEnvironment.err)")
        }
    }

    @Test("A message FCM would refuse, a target given twice, APNs' flags: refused before anything is sent")
    func refusals() async throws {
        try await withEmulator { emulator, _ in
            let reserved = try await send(emulator, ["--data", "from=x", active])
            #expect(reserved.status == 1 && reserved.err.contains("reservedDataKey"), "\(reserved.err)")
            let file = emulator.file("targeted.json")
            try #"{"message":{"token":"x","data":{}}}"#.write(toFile: file, atomically: true, encoding: .utf8)
            let targeted = try await send(emulator, [file, active])
            #expect(targeted.status == 1 && targeted.err.contains("already has a token"), "\(targeted.err)")
            for arguments in [
                ["--data", "k=v", "--topic", "a", "--condition", "b"], ["--data", "k=v", "--development", active],
                ["--data", "k=v", "--priority", "10", active], ["--data", "novalue", active],
            ] {
                let usage = try await send(emulator, arguments)
                #expect(usage.status == 2, "\(arguments): \(usage.err)")
            }
            let unreadable = try await PushCoreBinary.run(
                ["send", "--fcm", "--service-account", "/nonexistent.json", "--data", "k=v", active])
            #expect(unreadable.status == 1 && unreadable.err.contains("cannot read the service account file"), "\(unreadable.err)")
        }
    }
}
