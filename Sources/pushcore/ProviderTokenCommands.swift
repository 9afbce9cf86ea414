import ArgumentParser
import PushAPNsTokens
import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct ProviderTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Mint and verify APNs provider tokens (ES256) with a .p8 signing key.",
        discussion: """
            The key is never printed. A minted token goes in the authorization header of an APNs
            request as `bearer TOKEN`.

            Example:
              pushcore token mint --key-file AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ
            """,
        subcommands: [MintTokenCommand.self, VerifyTokenCommand.self]
    )
}

/// `--key-file`, `--key-id`, `--team-id`.
struct SigningKeyOptions: ParsableArguments {
    @Option(
        name: .customLong("key-file"),
        help: "The signing key's PEM file (the .p8; a public key PEM is enough for verify); or APNS_KEY_FILE.")
    var keyFileFlag: String?
    @Option(name: .customLong("key-id"), help: "The key's 10-character id; or APNS_KEY_ID.") var keyIDFlag: String?
    @Option(name: .customLong("team-id"), help: "The team's 10-character id; or APNS_TEAM_ID.") var teamIDFlag: String?

    /// Each from its flag, else from the environment (a flag wins), else empty.
    var keyFile: String { keyFileFlag ?? environment("APNS_KEY_FILE") ?? "" }
    var keyID: String { keyIDFlag ?? environment("APNS_KEY_ID") ?? "" }
    var teamID: String { teamIDFlag ?? environment("APNS_TEAM_ID") ?? "" }

    /// Whether any of the three is given, by flag or environment.
    var isGiven: Bool { !keyFile.isEmpty || !keyID.isEmpty || !teamID.isEmpty }

    /// Refuses a key with a part missing, naming its flag and its variable.
    func requireAll() throws {
        for (value, flag, variable) in [
            (keyFile, "--key-file", "APNS_KEY_FILE"), (keyID, "--key-id", "APNS_KEY_ID"), (teamID, "--team-id", "APNS_TEAM_ID"),
        ]
        where value.isEmpty {
            throw ValidationError("give \(flag) (or set \(variable))")
        }
    }

    /// The key file's text; nil after printing why it could not be read.
    func readKeyFile() -> String? {
        // A PEM key is well under 4 KiB; the bound keeps a wrong path (a log, a device) cheap.
        guard let input = InputText.read(keyFile, limit: 16 << 10) else { return nil }
        guard input.bytes.count <= 16 << 10 else {
            Terminal.writeError(keyFile, code: "invalidKey", "larger than a PEM key can be")
            return nil
        }
        return String(decoding: input.bytes, as: UTF8.self)
    }
}

struct MintTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mint",
        abstract: "Print a provider token, and nothing else, on stdout.",
        discussion: """
            Example:
              pushcore token mint --key-file AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ
              eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ.eyJpc3MiOiJERUYxMjNHSElKIiwiaWF0IjoxNzAwMDAwMDAwfQ.…
            """
    )

    @OptionGroup var key: SigningKeyOptions
    @Option(name: .customLong("issued-at"), help: "iat, Unix seconds (default: now).") var issuedAt: Int64?

    func validate() throws { try key.requireAll() }

    func run() throws {
        guard let pem = key.readKeyFile() else { throw CommandFailure.invalid }
        do throws(APNsTokenError) {
            let signingKey = try APNsSigningKey(pemRepresentation: pem, keyID: key.keyID, teamID: key.teamID)
            Terminal.write(try signingKey.token(issuedAt: issuedAt ?? APNsTokenClock.system.now()))
        } catch {
            Terminal.writeError(key.keyFile, code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }
    }
}

struct VerifyTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a provider token as APNs does: form, alg, kid, iss, signature and age.",
        discussion: """
            Exit status: 0 valid (its claims are printed), 1 refused (the reason on stderr:
            malformed, unsupportedAlgorithm, unknownKeyID, teamMismatch, badSignature, expired or
            issuedInFuture).

            Example:
              pushcore token verify --key-file AuthKey_ABC123DEFG.pub.pem --key-id ABC123DEFG --team-id DEF123GHIJ "$TOKEN"
            """
    )

    @OptionGroup var key: SigningKeyOptions
    @Option(help: "The time to check the age against, Unix seconds (default: now).") var now: Int64?
    @Option(name: .customLong("max-age"), help: "Oldest accepted token in seconds (default 3600, as APNs).") var maximumAge: Int64 = 3600
    @Argument(help: "The token ('-' reads it from stdin).") var token: String

    func validate() throws {
        try key.requireAll()
        if maximumAge < 0 { throw ValidationError("--max-age cannot be negative") }
    }

    func run() throws {
        guard let pem = key.readKeyFile() else { throw CommandFailure.invalid }
        let text: String
        if token == "-" {
            guard let input = InputText.read(nil, limit: APNsTokenVerifier.maximumTokenLength) else { throw CommandFailure.invalid }
            text = String(decoding: input.bytes, as: UTF8.self).trimmingASCIILineEnds()
        } else {
            text = token
        }
        do throws(APNsTokenError) {
            let verificationKey = try APNsVerificationKey(pemRepresentation: pem, keyID: key.keyID, teamID: key.teamID)
            let verifier = APNsTokenVerifier(keys: [verificationKey], maximumAge: maximumAge)
            let claims = try verifier.verify(text, now: now ?? APNsTokenClock.system.now())
            Terminal.write("valid\n\(claims)")
        } catch {
            Terminal.writeError("token", code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }
    }
}

extension String {
    /// Without the line endings a shell's `echo` or a file adds (`\r\n` is one `Character`).
    func trimmingASCIILineEnds() -> String {
        var text = self
        while let last = text.last, last == "\n" || last == "\r" || last == "\r\n" { text.removeLast() }
        return text
    }
}

/// An environment variable's value; nil when it is unset or empty.
func environment(_ name: String) -> String? {
    guard let value = getenv(name), value.pointee != 0 else { return nil }
    return String(cString: value)
}
