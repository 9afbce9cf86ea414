import PushCore
import PushFCM

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON text to check, from a file or stdin, read with a bound: never more than the parser's
/// input limit plus one byte, so a 100 MiB file costs 16 MiB at most and is refused as too large.
struct InputText {
    /// The name used in messages: the path, or `<stdin>`.
    let name: String
    let bytes: [UInt8]

    static let stdinName = "<stdin>"

    /// Reads `path` (or stdin when nil). Returns nil after printing `NAME: error: …` to stderr.
    static func read(_ path: String?, limit: Int = JSONParser.Options.defaultMaximumInputSize) -> InputText? {
        let name = path ?? stdinName
        if let path {
            do throws(ResourceError) {
                // Opening as a resource refuses directories, FIFOs and devices with a typed error.
                let file = try FileResource(path: path)
                // At most `limit + 1` bytes: enough for the parser to say the input is too large.
                return InputText(name: name, bytes: try file.leadingBytes(upTo: limit + 1))
            } catch {
                Terminal.writeError(name, code: error.code.rawValue, error.message)
                return nil
            }
        }
        let standardInput: Int32 = 0
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count <= limit {
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let count = chunk.withUnsafeMutableBytes { systemRead(standardInput, $0.baseAddress!, wanted) }
            if count > 0 {
                bytes += chunk[..<count]
            } else if count == 0 {
                break
            } else if errno != EINTR {
                Terminal.writeError(name, code: "ioError", String(cString: strerror(errno)))
                return nil
            }
        }
        return InputText(name: name, bytes: bytes)
    }

    /// `NAME: error: CODE at byte N (line L, column C): message`.
    func render(_ error: JSONError) -> String { error.rendered(in: bytes, fileName: name) }

    /// The same form for a lint finding, with its severity.
    func render(_ finding: LintFinding) -> String {
        let (line, column) = JSONError.location(ofByte: finding.offset, in: bytes)
        return "\(name): \(finding.severity): \(finding.code) at byte \(finding.offset) (line \(line), column \(column)): \(finding.message)"
    }
}

/// A line of `lint` output: an APNs or FCM finding, or the syntax error that kept the payload from being read.
struct LintFinding {
    let severity: APNsDiagnostic.Severity
    let code: String
    let offset: Int
    let message: String

    init(_ diagnostic: APNsDiagnostic) {
        severity = diagnostic.severity
        code = diagnostic.code.rawValue
        offset = diagnostic.offset
        message = diagnostic.message
    }

    init(_ diagnostic: FCMDiagnostic) {
        severity = diagnostic.severity == .error ? .error : .warning
        code = diagnostic.code.rawValue
        offset = diagnostic.offset
        message = diagnostic.message
    }

    init(_ error: JSONError) {
        severity = .error
        code = error.code.rawValue
        offset = error.offset
        message = error.message
    }
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
