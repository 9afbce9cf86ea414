import ArgumentParser
import PushCore
import PushInternals

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct PushCoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushcore",
        abstract: "Check, build, lint and send APNs payloads; sign and verify SAS and provider tokens; digest files.",
        discussion: """
            Exit status: 0 success, 1 invalid input or a refusal, 2 a usage error.
            Errors go to stderr as FILE: error: CODE at byte N (line L, column C): message.

            Example:
              pushcore build --title Hello --body 'From PushCore' | pushcore lint
            """,
        version: PushCoreVersion.current,
        subcommands: [
            CheckCommand.self, CanonCommand.self, LintCommand.self, BuildCommand.self, SendCommand.self, SASCommand.self,
            ProviderTokenCommand.self, ChannelsCommand.self, DigestCommand.self, ChunksCommand.self, PhoneCommand.self,
        ]
    )

    /// Runs the command line, with usage errors exiting 2 (ArgumentParser's default is 64).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as CommandFailure {
            exit(withError: ExitCode(failure.status))
        } catch {
            let status = exitCode(for: error)
            if status == .validationFailure {
                Terminal.writeError(fullMessage(for: error))
                exit(withError: ExitCode(2))
            }
            exit(withError: error)
        }
    }
}

/// Ends a command with this exit status once its messages have been written.
struct CommandFailure: Error {
    let status: Int32
    static let invalid = CommandFailure(status: 1)
}

/// stdout for results, stderr for messages; unbuffered writes of whole lines.
enum Terminal {
    static func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeAll(1, $0) }
    }

    static func write(_ line: String) {
        write(Array((line + "\n").utf8))
    }

    /// One line that carries a peer's words (a sender's message, a server's error), with its
    /// control characters escaped: it stays one line and cannot clear the screen, retitle the
    /// window or print a forged line of its own.
    static func write(escaping line: String) {
        write(escapingControls(line))
    }

    static func writeError(escaping line: String) {
        writeError(escapingControls(line))
    }

    /// `SUBJECT: error: CODE: message`, the error form for messages with no byte to point at. The
    /// subject and message may carry a peer's words (a file name, a service's reason): their control
    /// characters are escaped, so they cannot start a forged line or drive the terminal.
    static func writeError(_ subject: String, code: String, _ message: String) {
        writeError("\(escapingControls(subject)): error: \(code): \(escapingControls(message))")
    }

    static func writeError(_ line: String) {
        writeErrorBytes(Array((line + "\n").utf8))
    }

    /// Bytes to stderr as they are: a progress line rewrites itself with `\r`.
    static func writeErrorBytes(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeAll(2, $0) }
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) {
        // stdout closed (e.g. piped into `head`): nothing more can be said.
        if !PushInternals.writeAll(descriptor, bytes) { exit(1) }
    }
}
