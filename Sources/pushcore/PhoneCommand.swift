import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PushClient
import PushJSON

struct PhoneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phone",
        abstract: "Play the app against push-backend and an emulator: register, then show each push as the app would.",
        discussion: """
            Registers a device token for USER (the password is the first line of stdin, or kept in
            the --credentials file, mode 0600, as an app keeps it in the Keychain), then
            follows the emulator's deliveries to that token (`serve --demo` prints the emulator's
            address: a hub's, or APNs' with --delivery apns) and, for each push, prints what the
            app would show, through PushClient: a rich push's text and its image, downloaded and
            checked against the backend's Repr-Digest into --images; a secure push's text, fetched
            from the backend. A push that fails prints its error on stderr, and the next is read.

            Lines on stdout:
              registered 0f0e0d0c…(64) for alice as c7d0f21b7a7d349c02460e5ef6cff64a
              rich e96f4669…: Sunset at the pier [image/png, 6486 bytes, sha-256 verified: images/e96f4669….png]
              alert 5d1c0b9a…: Look up [image/png, 882 bytes, sha-256 verified: images/5d1c0b9a….png]
              secure c4a19e1a…: Your code is 4242
              other: {"aps":{"alert":"Hello"}}
            The APNs emulator's certificate is made for each run: an https emulator on a loopback
            address is read without checking it, unless --emulator-ca-file names it. The backend's
            certificate is always checked.
            Exit status: 0 after --count pushes (the device is then unregistered), 1 when the
            device cannot be registered or the emulator read, 2 a usage error.

            Example:
              printf '%s\\n' alice-pw | pushcore phone --backend http://127.0.0.1:8080 --user alice \\
                --emulator http://127.0.0.1:41305 --images ./images
            """
    )

    @Option(help: "The backend's address.") var backend: String
    @Option(help: "The user to sign in as; the password is the first line of stdin.") var user: String
    @Option(help: "The emulator's address, as `serve --demo` prints it.") var emulator: String
    @Option(name: .customLong("emulator-ca-file"), help: "The emulator's certificate (PEM), to check it against.") var emulatorCAFile: String?
    @Option(name: .customLong("device-token"), help: "The device token to register (hex); a random 32-byte one by default.")
    var deviceToken: String?
    @Option(help: "Where downloaded images go.") var images: String = "."
    @Option(name: .customLong("max-image-bytes"), help: "The largest image to download.") var maxImageBytes: Int = 10 << 20
    @Option(help: "Seconds each fetch or download may take, as a service extension has about 30.") var timeout: Int = 25
    @Option(help: "Stop after this many pushes, and unregister the device.") var count: Int?
    @Option(
        name: .customLong("credentials"),
        help: "A file for USER's credentials (mode 0600): read from it when it holds USER's, else the password from stdin, saved there.")
    var credentialsFile: String?

    func validate() throws {
        if let deviceToken, Self.bytes(ofHex: deviceToken) == nil { throw ValidationError("--device-token must be hex, whole bytes") }
        if maxImageBytes < 1 || timeout < 1 || count.map({ $0 < 1 }) == true {
            throw ValidationError("--max-image-bytes, --timeout and --count must be at least 1")
        }
        guard let url = URL(string: backend), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--backend must be an http or https URL")
        }
        guard let url = URL(string: emulator), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--emulator must be an http or https URL")
        }
    }

    func run() throws {
        let file = credentialsFile.map { FileCredentialStore(file: URL(fileURLWithPath: $0)) }
        try waitForTask { [self] in
            var kept: PushCredentials?
            do { kept = try await file?.credentials() } catch {
                Terminal.writeError(escaping: "phone: error: \(credentialsFile ?? ""): \(error)")
                throw CommandFailure.invalid
            }
            let credentials: PushCredentials
            if let kept, kept.user == user {
                credentials = kept
            } else {
                guard let password = readLine(strippingNewline: true), !password.isEmpty else {
                    Terminal.writeError("phone: error: give the password as the first line of stdin")
                    throw CommandFailure.invalid
                }
                credentials = PushCredentials(user: user, password: password)
                do { try file?.save(credentials) } catch {
                    Terminal.writeError(escaping: "phone: error: cannot keep the credentials in \(credentialsFile ?? ""): \(error)")
                    throw CommandFailure.invalid
                }
            }
            try await follow(credentials, store: file ?? FixedCredentials(credentials))
        }
    }

    private func follow(_ credentials: PushCredentials, store: any PushCredentialStore) async throws {
        let client = PushBackendClient(serverURL: URL(string: backend)!, credentials: store)
        let feed = try EmulatorFeed(base: emulator, caFile: emulatorCAFile)
        do {
            try await follow(feed, client: client, credentials: credentials)
        } catch {
            try? await feed.http.shutdown()
            throw error
        }
        try await feed.http.shutdown()
    }

    private func follow(_ feed: EmulatorFeed, client: PushBackendClient, credentials: PushCredentials) async throws {
        let token = deviceToken.flatMap(Self.bytes(ofHex:)) ?? (0..<32).map { _ in UInt8.random(in: 0...255) }
        let hex = PushBackendClient.hex(token)
        // Only what arrives from now on: earlier deliveries went to whoever held the token before.
        var since = try await feed.latestSequence()
        let registration: String
        do {
            registration = try await client.registerDevice(token: token, within: .seconds(timeout)).id
        } catch {
            Terminal.writeError(escaping: "phone: error: cannot register the device: \(error)")
            throw CommandFailure.invalid
        }
        Terminal.write(escaping: "registered \(hex.prefix(8))…(\(hex.count)) for \(credentials.user) as \(registration)")
        var shown = 0
        while count.map({ shown < $0 }) ?? true {
            let batch = try await feed.deliveries(since: since)
            since = batch.last?.sequence ?? since
            for delivery in batch where delivery.device == hex && count.map({ shown < $0 }) ?? true {
                await show(PushMessage(json: delivery.payload), payload: delivery.payload, client: client)
                shown += 1
            }
            if batch.isEmpty { try await Task.sleep(for: .milliseconds(200)) }
        }
        do {
            try await client.unregisterDevice(registrationID: registration, within: .seconds(timeout))
        } catch {
            Terminal.writeError(escaping: "phone: cannot unregister the device: \(error)")
        }
    }

    /// One push, as the app shows it: a line on stdout, or its error on stderr; everything in it
    /// that came from the sender or the server is escaped.
    private func show(_ message: PushMessage, payload: [UInt8], client: PushBackendClient) async {
        let within = Duration.seconds(timeout)
        do {
            switch message {
            case .richSilent(let id, _, let text):
                Terminal.write(escaping: "rich \(id.prefix(8))…: \(text) [\(try await download(id, client))]")
            case .richAlert(let id, _, let alert):
                Terminal.write(escaping: "alert \(id.prefix(8))…: \(Self.shown(alert)) [\(try await download(id, client))]")
            case .secure(let id):
                Terminal.write(escaping: "secure \(id.prefix(8))…: \(try await client.secureBody(id: id, within: within))")
            case .secureAlert(let id, let placeholder):
                Terminal.write(
                    escaping:
                        "secure alert \(id.prefix(8))…: \(try await client.secureBody(id: id, within: within)) (in place of \(Self.shown(placeholder)))"
                )
            default:
                Terminal.write(escaping: "other: \(String(decoding: payload, as: UTF8.self))")
            }
        } catch {
            Terminal.writeError(escaping: "phone: \(message.id.map { "\($0.prefix(8))…" } ?? "push"): \(error)")
        }
    }

    /// An alert's lines as a phone without the app's strings shows them: the text, else the key.
    private static func shown(_ alert: PushAlert) -> String {
        [alert.title, alert.subtitle, alert.body].compactMap { $0.flatMap { $0.text ?? $0.localizationKey } }.joined(separator: " — ")
    }

    private func download(_ id: String, _ client: PushBackendClient) async throws -> String {
        let directory = URL(fileURLWithPath: images, isDirectory: true)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let kind = ["image/png": "png", "image/jpeg": "jpg", "image/gif": "gif"]
        // Downloaded under the id, then named for its type once it is known.
        let file = directory.appendingPathComponent(id)
        let image = try await client.downloadImage(id: id, to: file, maximumBytes: maxImageBytes, within: .seconds(timeout))
        let named = file.appendingPathExtension(kind[image.contentType] ?? "img")
        try? FileManager.default.removeItem(at: named)
        try FileManager.default.moveItem(at: file, to: named)
        return "\(image.contentType), \(image.byteCount) bytes, sha-256 verified: \(images == "." ? "" : images + "/")\(named.lastPathComponent)"
    }

    static func bytes(ofHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexDigit(digits[index]), let low = hexDigit(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        let value = hexDigitValue(byte)
        return value <= 15 ? value : nil
    }
}

/// The emulator's `GET /_emulator/deliveries`, a hub's or APNs'.
struct EmulatorFeed {
    struct Delivery {
        let sequence: Int
        /// The device token, lowercase.
        let device: String
        let payload: [UInt8]
    }

    let base: String
    let http: HTTPClient

    init(base: String, caFile: String?) throws {
        var configuration = HTTPClient.Configuration()
        if base.hasPrefix("https:") {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let caFile {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } else if let host = URL(string: base)?.host, ["127.0.0.1", "::1", "localhost"].contains(host) {
                // The demo's emulator makes its certificate for each run, on loopback.
                tls.certificateVerification = .none
            }
            configuration.tlsConfiguration = tls
        }
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// The newest delivery's sequence number, 0 before the first.
    func latestSequence() async throws -> Int {
        try await deliveries(since: 0).last?.sequence ?? 0
    }

    /// The deliveries after `since`, to any device, oldest first.
    func deliveries(since: Int) async throws -> [Delivery] {
        let request = HTTPClientRequest(url: "\(base)/_emulator/deliveries?since=\(since)")
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 64 << 20)
        guard response.status == .ok else { throw PhoneFailure("the emulator answered \(response.status.code) to its deliveries") }
        var parser = JSONParser()
        let document = try parser.parse(Array(body.readableBytesView))
        return document.root.elements.compactMap { delivery in
            // A hub names the device `deviceHandle`, APNs `deviceToken`.
            guard let sequence = delivery["sequence"]?.int, sequence > since,
                let device = (delivery["deviceToken"] ?? delivery["deviceHandle"])?.string, let payload = delivery["payload"]?.string
            else { return nil }
            return Delivery(sequence: sequence, device: device.lowercased(), payload: Array(payload.utf8))
        }
    }
}

struct PhoneFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
