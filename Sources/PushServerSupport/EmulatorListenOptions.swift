package import ArgumentParser
import Foundation
import Logging

/// Where a TLS emulator (APNs, FCM) listens and where its certificate goes, and how it tells
/// scripts its address.
package struct EmulatorListenOptions: ParsableArguments {
    /// The first lines of the command's discussion.
    package static let discussion = """
        Prints "listening on https://127.0.0.1:PORT" as its first line. Its certificate is made at
        start for 127.0.0.1 and localhost; --certificate-out writes it (PEM) for clients to trust.
        """

    @Option(help: "The port; 0 picks a free one.") package var port: Int = 0
    @Option(name: .customLong("certificate-out"), help: "Write the server's certificate (PEM) here.") package var certificateOut: String?

    package init() {}

    package func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    }

    /// Writes the certificate where asked, and sends logs to stderr: stdout's first line is the
    /// address, for scripts to read.
    package func prepare(certificatePEM: String) throws {
        if let certificateOut { try certificatePEM.write(toFile: certificateOut, atomically: true, encoding: .utf8) }
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
    }

    /// Prints the address, flushed: stdout is a pipe when scripts read it.
    @Sendable package static func announce(port: Int) async {
        print("listening on https://127.0.0.1:\(port)")
        fflush(nil)
    }
}
