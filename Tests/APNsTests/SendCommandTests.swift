import APNsTestSupport
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PushCore
import PushTestSupport
import Testing

/// `pushcore send` against an `apns-emulator` process, both the built binaries.
@Suite("pushcore send against apns-emulator", .serialized)
struct SendCommandTests {
    let teamID = "DEF123GHIJ"
    let keyID = "ABC123DEFG"
    let topic = "com.example.app"
    let active = String(repeating: "ab", count: 32)
    let other = String(repeating: "cd", count: 32)

    struct Emulator {
        let folder: URL
        let endpoint: String
        let process: Process
        var keyPath: String { folder.appendingPathComponent("AuthKey.p8").path }
        var certificatePath: String { folder.appendingPathComponent("emulator.pem").path }
        func file(_ name: String) -> String { folder.appendingPathComponent(name).path }

        /// `POST /_emulator/subscriptions`: the devices subscribe to the channel.
        func subscribe(_ devices: [String], to channelID: String) async throws {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificatePath))
            let http = patientHTTPClient(tls)
            var request = HTTPClientRequest(url: endpoint + "/_emulator/subscriptions")
            request.method = .POST
            var body: [UInt8] = []
            try JSON.object([JSONMember("channel", .string(channelID)), JSONMember("devices", .array(devices.map(JSON.string)))]).write(into: &body)
            request.body = .bytes(ByteBuffer(bytes: body))
            do {
                let response = try await http.execute(request, timeout: patientTimeout)
                try #require(response.status == .noContent)
                try await http.shutdown()
            } catch {
                try? await http.shutdown()
                throw error
            }
        }

        /// `PUT /_emulator/devices/{token}` with `state`, a JSON object.
        func setDevice(_ token: String, _ state: String) async throws {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificatePath))
            let http = patientHTTPClient(tls)
            var request = HTTPClientRequest(url: endpoint + "/_emulator/devices/\(token)")
            request.method = .PUT
            request.body = .bytes(ByteBuffer(string: state))
            do {
                let response = try await http.execute(request, timeout: patientTimeout)
                try #require(response.status == .noContent || response.status == .ok, "\(response.status)")
                try await http.shutdown()
            } catch {
                try? await http.shutdown()
                throw error
            }
        }

        /// `GET /_emulator/deliveries`, parsed.
        func deliveries() async throws -> [(deviceToken: String, pushType: String, topic: String, payload: String)] {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificatePath))
            let http = patientHTTPClient(tls)
            let bytes: [UInt8]
            do {
                let response = try await http.execute(HTTPClientRequest(url: endpoint + "/_emulator/deliveries"), timeout: patientTimeout)
                bytes = Array(try await response.body.collect(upTo: 1 << 20).readableBytesView)
                try await http.shutdown()
            } catch {
                try await http.shutdown()
                throw error
            }
            var parser = JSONParser()
            let document = try parser.parse(bytes)
            return (0..<document.root.count).compactMap { index in
                let delivery = document.root[index]
                guard let token = delivery?["deviceToken"]?.string, let pushType = delivery?["pushType"]?.string,
                    let topic = delivery?["topic"]?.string, let payload = delivery?["payload"]?.string
                else { return nil }
                return (token, pushType, topic, payload)
            }
        }
    }

    /// - Parameter clientCA: Also take client certificates that chain to this PEM file.
    func withEmulator(clientCA: String? = nil, _ body: (Emulator) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushcore-send-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = P256.Signing.PrivateKey()
        try key.pemRepresentation.write(to: folder.appendingPathComponent("AuthKey.p8"), atomically: true, encoding: .utf8)
        let publicKeyPath = folder.appendingPathComponent("AuthKey.pub.pem").path
        try key.publicKey.pemRepresentation.write(toFile: publicKeyPath, atomically: true, encoding: .utf8)

        let (process, lines) = try await ServerProcess.start(
            PushCoreBinary.builtExecutable("apns-emulator"),
            [
                "--port", "0", "--team-id", teamID, "--key-id", keyID, "--key-file", publicKeyPath, "--topic", topic,
                "--certificate-out", folder.appendingPathComponent("emulator.pem").path,
            ] + (clientCA.map { ["--client-ca-file", $0] } ?? []), readingLines: 1)
        defer { process.terminate() }
        let first = lines.first ?? ""
        try #require(first.hasPrefix("listening on https://127.0.0.1:"))
        try await body(Emulator(folder: folder, endpoint: String(first.dropFirst("listening on ".count)), process: process))
    }

    func send(_ emulator: Emulator, _ arguments: [String], stdin: [UInt8] = []) async throws -> CommandResult {
        try await PushCoreBinary.run(
            [
                "send", "--key-file", emulator.keyPath, "--key-id", keyID, "--team-id", teamID, "--topic", topic,
                "--endpoint", emulator.endpoint, "--ca-file", emulator.certificatePath,
            ] + patientTimeoutOptions + arguments, stdin: stdin)
    }

    @Test("A payload from flags, from a file and from stdin: one line per device, exit 1 when any failed")
    func sends() async throws {
        try await withEmulator { emulator in
            let fromFlags = try await send(emulator, ["--title", "Hello", "--body", "From PushCore", active, other, "not-a-token", "a/b"])
            #expect(fromFlags.status == 1, "\(fromFlags.err)")
            let lines = fromFlags.out.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            try #require(lines.count == 4, "\(fromFlags.out)")
            #expect(lines[0].count == 4 && lines[0][0] == active && lines[0][1] == "200" && lines[0][2] == "-" && lines[0][3].count == 36)
            #expect(lines[1][0] == other && lines[1][1] == "200")
            #expect(lines[2].count == 4 && lines[2][0] == "not-a-token" && lines[2][1] == "400" && lines[2][2] == "BadDeviceToken")
            #expect(lines[3] == ["a/b", "-", "not-a-device-token", "-"])

            let file = emulator.file("payload.json")
            let written = #"{"aps":{"content-available":1},"sync":"inbox"}"#
            try written.write(toFile: file, atomically: true, encoding: .utf8)
            let fromFile = try await send(emulator, [file, active])
            #expect(fromFile.status == 0, "\(fromFile.err)")

            let liveActivity = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"2-1"}}}"#
            let fromStdin = try await send(emulator, ["-", active], stdin: Array(liveActivity.utf8))
            #expect(fromStdin.status == 0, "\(fromStdin.err)")

            let deviceFile = emulator.file("devices.txt")
            try "\(other)\r\n\n  \(active)\t\n".write(toFile: deviceFile, atomically: true, encoding: .utf8)
            let fromDeviceFile = try await send(emulator, ["--device-file", deviceFile, "--title", "Listed"])
            #expect(fromDeviceFile.status == 0, "\(fromDeviceFile.err)")
            #expect(fromDeviceFile.out.split(separator: "\n").map { $0.split(separator: " ")[0] } == [Substring(other), Substring(active)])

            let deliveries = try await emulator.deliveries()
            try #require(deliveries.count == 6)
            #expect(deliveries[0].pushType == "alert" && deliveries[0].payload.contains("From PushCore"))
            // A file's payload is sent as written, its push type and topic suffix derived from it.
            #expect(deliveries[2].payload == written && deliveries[2].pushType == "background" && deliveries[2].topic == topic)
            #expect(deliveries[3].payload == liveActivity && deliveries[3].pushType == "liveactivity")
            #expect(deliveries[3].topic == topic + ".push-type.liveactivity")
        }
    }

    @Test("--format json: an object a device; the 410 timestamp in both formats")
    func formats() async throws {
        try await withEmulator { emulator in
            let gone = String(repeating: "ef", count: 32)
            try await emulator.setDevice(gone, #"{"state": "unregistered", "since": 1700000000123}"#)
            let json = try await send(emulator, ["--format", "json", "--title", "Hi", active, gone, "a/b"])
            #expect(json.status == 1, "\(json.err)")
            var parser = JSONParser()
            let lines = try json.out.split(separator: "\n").map { try parser.parse(Array($0.utf8)) }
            try #require(lines.count == 3, "\(json.out)")
            #expect(lines[0].root["token"]?.string == active && lines[0].root["status"]?.int == 200 && lines[0].root["reason"]?.isNull == true)
            #expect(lines[0].root["apnsId"]?.string?.count == 36 && lines[0].root["unregisteredSince"] == nil)
            #expect(lines[1].root["status"]?.int == 410 && lines[1].root["reason"]?.string == "Unregistered")
            #expect(lines[1].root["unregisteredSince"]?.int == 1_700_000_000_123)
            #expect(lines[2].root["status"]?.isNull == true && lines[2].root["reason"]?.string == "not a device token")
            #expect(lines[2].root["mayHaveBeenDelivered"]?.bool == false && lines[2].root["apnsId"]?.isNull == true)

            let text = try await send(emulator, ["--title", "Hi", gone])
            let fields = text.out.split(separator: " ").map(String.init)
            #expect(fields.count == 5 && fields[1] == "410" && fields[2] == "Unregistered" && fields[4] == "1700000000123\n", "\(text.out)")
        }
    }

    @Test("The key, key id, team id and topic from the environment; a flag wins over its variable")
    func environmentSettings() async throws {
        try await withEmulator { emulator in
            let environment = ProcessInfo.processInfo.environment.merging(
                ["APNS_KEY_FILE": emulator.keyPath, "APNS_KEY_ID": keyID, "APNS_TEAM_ID": teamID, "APNS_TOPIC": "com.example.other"]
            ) { $1 }
            let fromEnvironment = try await PushCoreBinary.run(
                ["send", "--topic", topic, "--endpoint", emulator.endpoint, "--ca-file", emulator.certificatePath, "--title", "Hi", active]
                    + patientTimeoutOptions, environment: environment)
            #expect(fromEnvironment.status == 0 && fromEnvironment.out.hasPrefix("\(active) 200 "), "\(fromEnvironment.err)")
            #expect(try await emulator.deliveries().map(\.topic) == [topic])
            var missing = environment
            missing["APNS_TEAM_ID"] = nil
            let refused = try await PushCoreBinary.run(["send", "--endpoint", emulator.endpoint, "--title", "Hi", active], environment: missing)
            #expect(refused.status == 2 && refused.err.contains("--team-id (or set APNS_TEAM_ID)"), "\(refused.err)")
        }
    }

    @Test("Through an HTTP proxy from --proxy or HTTPS_PROXY; a refused tunnel names the proxy and never its password")
    func proxy() async throws {
        let proxy = try TinyProxy.start(username: "pusher", password: "s3cret-proxy-pw")
        defer { proxy.stop() }
        try await withEmulator { emulator in
            let viaFlag = try await send(emulator, ["--proxy", "http://pusher:s3cret-proxy-pw@127.0.0.1:\(proxy.port)", "--title", "Hi", active])
            #expect(viaFlag.status == 0 && viaFlag.out.hasPrefix("\(active) 200 "), "\(viaFlag.err)")
            let environment = ProcessInfo.processInfo.environment.merging(["HTTPS_PROXY": "http://pusher:wrong-pw@127.0.0.1:\(proxy.port)"]) {
                $1
            }
            let refused = try await PushCoreBinary.run(
                [
                    "send", "--key-file", emulator.keyPath, "--key-id", keyID, "--team-id", teamID, "--topic", topic, "--endpoint",
                    emulator.endpoint, "--ca-file", emulator.certificatePath, "--title", "Hi", other,
                ] + patientTimeoutOptions, environment: environment)
            #expect(refused.status == 1 && refused.out.hasPrefix("\(other) - proxy-127.0.0.1:\(proxy.port)-refused-the-tunnel:-40"), "\(refused.out)")
            #expect(!(refused.out + refused.err).contains("wrong-pw"))
            let malformed = try await send(emulator, ["--proxy", "socks5://127.0.0.1:1080", "--title", "Hi", active])
            #expect(malformed.status == 2 && malformed.err.contains("--proxy: a proxy is http://"), "\(malformed.err)")
            #expect(try await emulator.deliveries().map(\.deviceToken) == [active])
        }
    }

    @Test("A client certificate instead of a signing key: a PEM pair, a PKCS#12 file; a wrong password is refused unsent, and not repeated")
    func certificates() async throws {
        let files = try ClientIdentityFiles.make(password: "correct horse")
        defer { files.remove() }
        try await withEmulator(clientCA: files.path("ca.pem")) { emulator in
            func send(_ credentials: [String], password: String? = nil) async throws -> CommandResult {
                var environment = ProcessInfo.processInfo.environment
                environment["APNS_PKCS12_PASSWORD"] = password
                return try await PushCoreBinary.run(
                    ["send", "--topic", topic, "--endpoint", emulator.endpoint, "--ca-file", emulator.certificatePath]
                        + credentials + patientTimeoutOptions + ["--title", "Hi", active], environment: environment)
            }
            let pem = try await send(["--certificate", files.path("client.pem"), "--private-key", files.path("client.key")])
            #expect(pem.status == 0 && pem.out.hasPrefix("\(active) 200 "), "\(pem.out) \(pem.err)")
            let p12 = try await send(["--pkcs12", files.path("client.p12")], password: "correct horse")
            #expect(p12.status == 0 && p12.out.hasPrefix("\(active) 200 "), "\(p12.out) \(p12.err)")
            let wrong = try await send(["--pkcs12", files.path("client.p12")], password: "battery staple")
            #expect(wrong.status == 1 && wrong.err.contains("invalidCertificate") && wrong.out.isEmpty, "\(wrong.err)")
            #expect(!wrong.err.contains("battery") && !wrong.err.contains("horse"))
            let half = try await send(["--certificate", files.path("client.pem")])
            #expect(half.status == 2 && half.err.contains("--certificate and --private-key go together"), "\(half.err)")
            #expect(try await emulator.deliveries().count == 2)
        }
    }

    @Test(
        "A long send says how far it got on a terminal's stderr, and nothing when stderr is not a terminal",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func progress() async throws {
        try await withEmulator { emulator in
            let devices = emulator.file("devices.txt")
            try (0..<1500).map { String(format: "%064x", $0) }.joined(separator: "\n").write(toFile: devices, atomically: true, encoding: .utf8)
            let arguments =
                [
                    "send", "--key-file", emulator.keyPath, "--key-id", keyID, "--team-id", teamID, "--topic", topic,
                    "--endpoint", emulator.endpoint, "--ca-file", emulator.certificatePath,
                ] + patientTimeoutOptions + ["--title", "Hi", "--device-file", devices]
            let plain = try await PushCoreBinary.run(arguments)
            #expect(plain.status == 0 && plain.err.isEmpty && plain.out.split(separator: "\n").count == 1500, "\(plain.err)")
            // script(1) gives the command a terminal; its results still go to a file.
            let results = emulator.file("results.txt")
            let command = ([PushCoreBinary.url.path] + arguments).map { "'\($0)'" }.joined(separator: " ") + " > '\(results)'"
            let onTerminal = try await PushCoreBinary.run(["-qc", command, "/dev/null"], executable: URL(fileURLWithPath: "/usr/bin/script"))
            #expect(onTerminal.out.contains("\rsent 1000 of 1500") && onTerminal.out.contains("\rsent 1500 of 1500"), "\(onTerminal.out)")
            #expect(try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n").count == 1500)
        }
    }

    @Test("Invalid input is refused before anything is sent, and nothing secret is repeated")
    func invalidInput() async throws {
        try await withEmulator { emulator in
            let badPayload = try await send(emulator, ["-", active], stdin: Array(#"{"aps":{"badge":"x"}}"#.utf8))
            #expect(badPayload.status == 1 && badPayload.err.contains("typeMismatch"), "\(badPayload.err)")
            let notJSON = try await send(emulator, ["-", active], stdin: Array(#"{"aps":"#.utf8))
            #expect(notJSON.status == 1 && notJSON.err.contains("at byte"), "\(notJSON.err)")
            let badPriority = try await send(emulator, ["--priority", "7", "--title", "Hi", active])
            #expect(badPriority.status == 1 && badPriority.err.contains("invalidPriority"), "\(badPriority.err)")
            let tooLarge = try await send(emulator, ["--body", String(repeating: "x", count: 5000), active])
            #expect(tooLarge.status == 1 && tooLarge.err.contains("payloadTooLarge"), "\(tooLarge.err)")
            let notACertificate = try await PushCoreBinary.run([
                "send", "--key-file", emulator.keyPath, "--key-id", keyID, "--team-id", teamID, "--topic", topic,
                "--endpoint", emulator.endpoint, "--ca-file", emulator.keyPath, "--title", "Hi", active,
            ])
            #expect(notACertificate.status == 1 && notACertificate.err.contains("invalidCertificate"), "\(notACertificate.err)")
            let key = try String(contentsOfFile: emulator.keyPath, encoding: .utf8)
            let keyBody = key.split(separator: "\n")[1]
            #expect(!notACertificate.err.contains(keyBody))
            #expect(try await emulator.deliveries().isEmpty)

            // Without --ca-file the emulator's certificate is not trusted: a TLS failure, not a delivery.
            let untrusted = try await PushCoreBinary.run([
                "send", "--key-file", emulator.keyPath, "--key-id", keyID, "--team-id", teamID, "--topic", topic,
                "--endpoint", emulator.endpoint, "--connect-timeout", "2", "--title", "Hi", active,
            ])
            #expect(untrusted.status == 1 && untrusted.out == "\(active) - TLS-handshake-failed -\n", "\(untrusted.out)")

            // A token with a terminal escape and a newline cannot forge a result line.
            let forged = try await send(emulator, ["--title", "Hi", "\u{1b}[2K\(other)\n\(active) 200 - forged"])
            #expect(forged.status == 1)
            #expect(
                forged.out.split(separator: "\n").count == 1 && forged.out.hasPrefix("\\u{1b}[2K\(other)\\u{a}\(active) 200 - forged "),
                "\(forged.out)")
            #expect(!forged.out.contains("\u{1b}"))
            let collapse = try await send(emulator, ["--title", "Hi", "--collapse-id", "a\r\napns-priority: 10", active])
            #expect(collapse.status == 1 && collapse.err.contains("invalidCollapseID"), "\(collapse.err)")
        }
    }

    @Test("channels create, list, show and delete; send --channel reaches every subscriber with one request")
    func channels() async throws {
        try await withEmulator { emulator in
            func channels(_ arguments: [String]) async throws -> CommandResult {
                try await PushCoreBinary.run(
                    ["channels"] + arguments.prefix(1) + [
                        "--key-file", emulator.keyPath, "--key-id", keyID, "--team-id", teamID, "--topic", topic, "--endpoint", emulator.endpoint,
                        "--ca-file", emulator.certificatePath,
                    ] + patientTimeoutOptions + arguments.dropFirst())
            }
            let created = try await channels(["create", "--storage", "most-recent"])
            #expect(created.status == 0, "\(created.err)")
            let id = created.out.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(Data(base64Encoded: id)?.count == 16)
            let second = try await channels(["create"]).out.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(Set(try await channels(["list"]).out.split(separator: "\n").map(String.init)) == [id, second])
            #expect(try await channels(["show", id]).out == "\(id) most-recent\n")
            #expect(try await channels(["show", second]).out == "\(second) none\n")

            try await emulator.subscribe([active, other], to: id)
            let update = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"2-1"}}}"#
            let sent = try await send(emulator, ["--channel", id, "-"], stdin: Array(update.utf8))
            #expect(sent.status == 0, "\(sent.err)")
            let line = sent.out.split(separator: " ").map(String.init)
            #expect(line.count == 4 && line[0] == id && line[1] == "200" && line[2] == "-", "\(sent.out)")
            let deliveries = try await emulator.deliveries()
            #expect(Set(deliveries.map(\.deviceToken)) == [active, other])
            #expect(deliveries.allSatisfy { $0.payload == update && $0.pushType == "liveactivity" })

            let deleted = try await channels(["delete", id, second])
            #expect(deleted.status == 0 && deleted.out.isEmpty, "\(deleted.err)")
            #expect(try await channels(["list"]).out.isEmpty)
            let gone = try await channels(["show", id])
            #expect(gone.status == 1 && gone.err.hasPrefix("channels: error: ChannelNotRegistered"), "\(gone.err)")
            let broadcastToNothing = try await send(emulator, ["--channel", id, "-"], stdin: Array(update.utf8))
            #expect(broadcastToNothing.status == 1 && broadcastToNothing.out.hasPrefix("\(id) 404 ChannelNotRegistered "))
            let malformed = try await channels(["show", "not a channel"])
            #expect(malformed.status == 1 && malformed.err.contains("invalidRequest"), "\(malformed.err)")
        }
    }

    @Test(
        "Usage errors exit 2",
        arguments: [
            ["send"], ["send", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t", "payload.json"],
            ["send", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t", "--title", "Hi"],
            ["send", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t", "--development", "--endpoint", "https://x", "p", "d"],
            ["send", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t", "--concurrency", "0", "p", "d"],
            ["send", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t", "--connect-timeout", "0", "p", "d"],
            ["send", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t", "--device-file", "-", "-"],
            ["send", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t", "--channel", "Y2g=", "p", "d"],
            ["send", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t", "--channel", "Y2g=", "--push-type", "alert", "p"],
            ["channels", "create", "--key-file", "k", "--key-id", "K", "--team-id", "T"],
            ["channels", "create", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t", "--storage", "forever"],
            ["channels", "delete", "--key-file", "k", "--key-id", "K", "--team-id", "T", "--topic", "t"],
        ])
    func usage(arguments: [String]) async throws {
        let result = try await PushCoreBinary.run(arguments)
        #expect(result.status == 2, "\(result.err)")
    }
}
