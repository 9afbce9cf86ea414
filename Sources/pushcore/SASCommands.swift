import ArgumentParser
import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct SASCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sas",
        abstract: "Sign, verify and inspect Azure Notification Hubs SAS tokens.",
        discussion: """
            The connection string comes from --connection-string or, to keep it out of shell
            history, the PUSHCORE_CONNECTION_STRING environment variable. The key is never printed.

            Example:
              export PUSHCORE_CONNECTION_STRING='Endpoint=sb://my-ns.servicebus.windows.net/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey=…'
              pushcore sas sign --uri https://my-ns.servicebus.windows.net/my-hub
            """,
        subcommands: [SignCommand.self, VerifyCommand.self, InspectCommand.self]
    )
}

/// `--connection-string`, falling back to `PUSHCORE_CONNECTION_STRING`.
struct ConnectionOptions: ParsableArguments {
    static let environmentVariable = "PUSHCORE_CONNECTION_STRING"

    @Option(name: .customLong("connection-string"), help: "The hub's connection string (or set \(environmentVariable)).")
    var connectionString: String?

    /// The parsed connection string; a missing one is a usage error, a malformed one a refusal.
    func resolve() throws -> ConnectionString {
        let text: String
        if let connectionString {
            text = connectionString
        } else if let value = getenv(Self.environmentVariable) {
            text = String(cString: value)
        } else {
            throw ValidationError("give --connection-string or set \(Self.environmentVariable)")
        }
        do throws(SASError) {
            return try ConnectionString(text)
        } catch {
            // SASError messages name the part, never the key.
            Terminal.writeError("connection string", code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }
    }
}

struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print a SAS token for a URI, and nothing else, on stdout.",
        discussion: """
            Example:
              pushcore sas sign --uri https://my-ns.servicebus.windows.net/my-hub --ttl 600
              SharedAccessSignature sr=https%3A%2F%2Fmy-ns.servicebus.windows.net%2Fmy-hub&sig=…&se=…&skn=…
            """
    )

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "The resource URI the token grants access to.") var uri: String
    @Option(help: "Seconds from now until the token expires (default 1200).") var ttl: Int64?
    @Option(help: "The expiry as Unix seconds, instead of --ttl.") var expiry: Int64?

    func validate() throws {
        if ttl != nil && expiry != nil { throw ValidationError("give --ttl or --expiry, not both") }
        if let ttl, ttl <= 0 { throw ValidationError("--ttl must be positive") }
    }

    func run() throws {
        let signer = SASSigner(try connection.resolve())
        do throws(SASError) {
            let token: String
            if let expiry {
                token = try signer.token(for: uri, expiry: expiry)
            } else {
                token = try signer.token(for: uri, ttl: ttl ?? 1200)
            }
            Terminal.write(token)
        } catch {
            Terminal.writeError("sign", code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }
    }
}

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a SAS token's signature, expiry and resource for a request URI.",
        discussion: """
            Exit status: 0 valid (its fields are printed), 1 refused (the reason on stderr:
            malformed, unknownKeyName, badSignature, expired or resourceMismatch).

            Example:
              pushcore sas verify --uri https://my-ns.servicebus.windows.net/my-hub/messages/ "$TOKEN"
            """
    )

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "The URI of the request the token came with.") var uri: String
    @Option(help: "The time to check the expiry against, Unix seconds (default: now).") var now: Int64?
    @Option(help: "Seconds a token is still accepted after it expires.") var skew: Int64 = 0
    @Argument(help: "The token ('-' reads it from stdin).") var token: String

    func validate() throws {
        if skew < 0 { throw ValidationError("--skew cannot be negative") }
    }

    func run() throws {
        let verifier = SASVerifier(try connection.resolve(), clockSkew: skew)
        do throws(SASError) {
            let info = try verifier.verify(try readToken(token), uri: uri, now: now ?? SASClock.system.now())
            Terminal.write("valid\n\(info)")
        } catch {
            Terminal.writeError("token", code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }
    }
}

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a SAS token's fields without checking it; the signature is redacted.",
        discussion: """
            Example:
              pushcore sas inspect "$TOKEN"
              resource: https://my-ns.servicebus.windows.net/my-hub
              key name: DefaultFullSharedAccessSignature
              expiry: 1700000000
              signature: <redacted>
            """
    )

    @Argument(help: "The token ('-' reads it from stdin).") var token: String

    func run() throws {
        do throws(SASError) {
            Terminal.write(String(describing: try SASVerifier.inspect(try readToken(token))))
        } catch {
            Terminal.writeError("token", code: error.code.rawValue, error.message)
            throw CommandFailure.invalid
        }
    }
}

/// The token as given, or read from stdin for `-` (without its line ending). Stdin is read up to
/// the verifier's limit plus one byte, so an endless stream is refused, not buffered.
private func readToken(_ argument: String) throws(SASError) -> String {
    guard argument == "-" else { return argument }
    guard let input = InputText.read(nil, limit: SASVerifier.maximumTokenLength) else {
        throw SASError(.malformed, "the token could not be read from stdin")
    }
    return String(decoding: input.bytes, as: UTF8.self).trimmingASCIILineEnds()
}
