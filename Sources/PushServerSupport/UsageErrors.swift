package import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ParsableCommand {
    /// Parses the command line and runs the command, as `pushcore` does: a usage error prints its
    /// message and exits 2 (ArgumentParser's default is 64), so that scripts can tell a mistyped
    /// command from a failed one.
    package static func runExitingTwoOnUsageErrors() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand { try await command.run() } else { try command.run() }
        } catch {
            if exitCode(for: error) == .validationFailure {
                let message = fullMessage(for: error) + "\n"
                _ = message.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
                exit(withError: ExitCode(2))
            }
            exit(withError: error)
        }
    }
}
