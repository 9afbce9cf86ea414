package import Logging
import PushInternals

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Log lines as swift-log's `StreamLogHandler` writes them (time, level, label, metadata,
/// source, message), each handed to the kernel by one `write(2)` on a file descriptor.
///
/// `StreamLogHandler` takes the stream's lock (`flockfile`) and the time zone's (`localtime`) for
/// every line, so the request log of a busy server made every request queue on two locks. Here a
/// line is formatted on the calling thread and written whole: a write of at most `PIPE_BUF`
/// (4,096) bytes to a pipe, or any write to a file opened for appending, is never interleaved
/// with another's, so lines stay whole without a lock of ours. The time is UTC, computed without
/// the C library's time zone state.
package struct LineLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    let label: String
    let descriptor: Int32

    /// Lines to `descriptor` (2, standard error, by default), labelled `label`.
    package init(label: String, descriptor: Int32 = 2, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.descriptor = descriptor
        self.metadataProvider = metadataProvider
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error { merged["error.message"] = "\(error)" }
        var line = Self.timestamp(seconds: Int64(time(nil))) + " \(event.level)" + (label.isEmpty ? "" : " \(label)") + ":"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += " [\(event.source)] \(event.message)\n"
        Self.write(line, to: descriptor)
    }

    /// `yyyy-MM-ddTHH:mm:ssZ`.
    static func timestamp(seconds: Int64) -> String { UTCTime.format(seconds) + "Z" }

    /// The whole line, in one write unless a signal cuts it short; a logger that cannot write
    /// has nowhere to say so, and drops the line.
    static func write(_ line: String, to descriptor: Int32) {
        var line = line
        line.withUTF8 { bytes in _ = writeAll(descriptor, UnsafeRawBufferPointer(bytes)) }
    }
}
