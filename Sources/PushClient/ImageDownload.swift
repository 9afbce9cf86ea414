import Crypto
public import Foundation
import HTTPTypes
import OpenAPIRuntime
import PushInternals

/// An image downloaded and verified by ``PushBackendClient/downloadImage(id:to:maximumBytes:within:)``.
public struct DownloadedImage: Sendable, Hashable {
    /// `image/png`, `image/jpeg` or `image/gif`.
    public let contentType: String
    public let byteCount: Int
    /// The file it was written to.
    public let file: URL
}

extension PushBackendClient {
    /// Attempts at one download: a dropped connection is resumed from the byte it reached, this
    /// many times at most (within the deadline).
    package static let maximumAttempts = 5

    /// Downloads a rich notification's image into `file`, as a notification service extension
    /// does before attaching it.
    ///
    /// The image must be PNG, JPEG or GIF and at most `maximumBytes` long: the backend's
    /// `Content-Length` is checked before any byte is read, and the count while reading. After a
    /// dropped connection the download resumes with `Range` from the byte it reached and `If-Range`
    /// with the image's `ETag`, so that a changed image restarts from its first byte. The whole
    /// image is checked against the backend's `Repr-Digest` (RFC 9530, SHA-256) before `file` is
    /// written; on any failure no file is left, and an existing `file` is untouched.
    public func downloadImage(
        id: String, to file: URL, maximumBytes: Int, within timeout: Duration
    ) async throws(PushClientError) -> DownloadedImage {
        guard PushMessage.isBackendID(id) else { throw .notFound }
        let partial = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString).partial")
        defer { try? FileManager.default.removeItem(at: partial) }
        let download = try ImageDownload(id: id, partial: partial, maximumBytes: maximumBytes)
        let contentType = try await run(within: timeout) { try await download.run(client: client) }
        // Replaces an older file at `file` in one step: a reader sees the old image or the new one.
        guard rename(partial.path, file.path) == 0 else {
            throw .transport("the image could not be moved to \(file.path): \(String(cString: strerror(errno)))")
        }
        return DownloadedImage(contentType: contentType, byteCount: download.received, file: file)
    }
}

/// One download's state across its attempts: the bytes written so far, their running digest, and
/// the validators of the image they are from.
private final class ImageDownload: @unchecked Sendable {
    // Touched by one task at a time: the attempts run one after another.
    let id: String
    let maximumBytes: Int
    let output: FileHandle
    var received = 0
    var hasher = SHA256()
    var entityTag: String?
    var expectedDigest: [UInt8]?
    var length: Int?
    var contentType = ""

    init(id: String, partial: URL, maximumBytes: Int) throws(PushClientError) {
        self.id = id
        self.maximumBytes = maximumBytes
        guard FileManager.default.createFile(atPath: partial.path, contents: nil), let output = try? FileHandle(forWritingTo: partial) else {
            throw .transport("cannot write \(partial.deletingLastPathComponent().path)")
        }
        self.output = output
    }

    deinit { try? output.close() }

    /// Downloads until the whole image is written and verified. A dropped connection, and an
    /// answer that cannot continue the part held (a 416, or a 206 that does not fit), each count as
    /// a failed attempt, and the next waits a little longer (full jitter): a server that answers
    /// every request that way ends the download after a few attempts instead of being asked
    /// again at once without end.
    /// - Returns: Its content type.
    func run(client: Client) async throws -> String {
        var failures = 0
        while true {
            let failure: any Error
            do {
                if try await attempt(client: client) { return contentType }
                failure = PushClientError.invalidResponse("the image's answers do not continue the part already downloaded")
            } catch let error as PushClientError {
                throw error
            } catch {
                // The connection dropped (or the body ended early): resume, a few times.
                failure = error
            }
            failures += 1
            guard failures < PushBackendClient.maximumAttempts, !Task.isCancelled else { throw PushBackendClient.mapped(failure) }
            try await Task.sleep(for: Self.backoff(afterFailures: failures))
        }
    }

    /// A random wait of up to 50 ms doubled for each failure before this one, at most 1 s.
    static func backoff(afterFailures failures: Int) -> Duration {
        Backoff.fullJitter(retry: failures, base: .milliseconds(50), maximum: .seconds(1))
    }

    /// One request: the whole image, or the rest of it from `received`.
    /// - Returns: Whether the image is complete and verified.
    private func attempt(client: Client) async throws -> Bool {
        let resume = received > 0 ? entityTag.map { ResumeHeaders(range: "bytes=\(received)-", ifRange: $0) } : nil
        let answer = try await ResumeHeaders.$current.withValue(resume) { try await client.fetchNotification(path: .init(id: id)) }
        let body: HTTPBody
        switch answer {
        case .ok(let whole):
            // The whole image: the first answer, or the image changed since the part we hold.
            let image: (String, HTTPBody)
            switch whole.body {
            case .png(let bytes): image = ("image/png", bytes)
            case .jpeg(let bytes): image = ("image/jpeg", bytes)
            case .imageGif(let bytes): image = ("image/gif", bytes)
            case .json: throw PushClientError.unsupportedType("a secure body, not an image")
            }
            try restart(contentType: image.0, entityTag: whole.headers.eTag, digest: whole.headers.reprDigest, length: image.1.length)
            body = image.1
        case .partialContent(let part):
            guard received > 0, part.headers.eTag == entityTag, let range = ContentRange(part.headers.contentRange), range.first == received,
                range.length == length
            else {
                try discard()
                return false
            }
            switch part.body {
            case .png(let bytes), .jpeg(let bytes), .imageGif(let bytes): body = bytes
            }
        case .rangeNotSatisfiable:
            // The image is shorter than the part held: it changed. Start again.
            try discard()
            return false
        default:
            throw PushClientError.invalidResponse("the image answered otherwise than 200 or 206")
        }
        for try await chunk in body {
            // The length was held to the limit before a byte was read; a body that runs past it
            // is not the image its headers described.
            guard let length, received + chunk.count <= length else {
                throw PushClientError.invalidResponse("the image's body runs past its length of \(length ?? 0) bytes")
            }
            try output.write(contentsOf: chunk)
            hasher.update(data: chunk)
            received += chunk.count
        }
        // A body that ends short of its length is a dropped connection too: resumed, not refused.
        guard let length, received == length else { throw ShortBody(received: received) }
        guard Array(hasher.finalize()) == expectedDigest else { throw PushClientError.digestMismatch }
        return true
    }

    /// Starts over with a whole image, checking what its headers promise before reading it.
    private func restart(contentType: String, entityTag: String?, digest: String?, length: HTTPBody.Length) throws {
        try discard()
        guard let digest, let expected = ReprDigest.sha256(in: digest) else {
            throw PushClientError.invalidResponse("an image without a SHA-256 Repr-Digest cannot be verified")
        }
        guard case .known(let count) = length else { throw PushClientError.invalidResponse("an image without a Content-Length") }
        guard count <= maximumBytes else { throw PushClientError.tooLarge(limit: maximumBytes, length: Int(count)) }
        self.contentType = contentType
        self.entityTag = entityTag
        self.expectedDigest = expected
        self.length = Int(count)
    }

    /// Forgets the bytes written so far.
    private func discard() throws {
        try output.truncate(atOffset: 0)
        try output.seek(toOffset: 0)
        received = 0
        hasher = SHA256()
    }
}

/// The `Range` and `If-Range` of a resumed download. They are set by ``ResumeHeaders/Middleware``
/// rather than as the generated operation's header parameters, which the OpenAPI runtime
/// percent-encodes: `If-Range: %22…%22` matches no ETag, so every resumption restarted from 0.
struct ResumeHeaders: Sendable {
    let range: String
    let ifRange: String

    @TaskLocal static var current: ResumeHeaders?

    struct Middleware: ClientMiddleware {
        func intercept(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
            next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            guard let resume = ResumeHeaders.current else { return try await next(request, body, baseURL) }
            var request = request
            request.headerFields[.range] = resume.range
            request.headerFields[.ifRange] = resume.ifRange
            return try await next(request, body, baseURL)
        }
    }
}

/// A body that ended before its `Content-Length`.
struct ShortBody: Error, CustomStringConvertible {
    let received: Int
    var description: String { "the image ended after \(received) bytes" }
}

/// `Content-Range: bytes FIRST-LAST/LENGTH`.
package struct ContentRange: Equatable {
    package let first: Int
    package let last: Int
    package let length: Int

    package init?(_ text: String) {
        guard text.hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let length = Int(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first <= last, last < length else { return nil }
        self.first = first
        self.last = last
        self.length = length
    }
}

/// `Repr-Digest` (RFC 9530): a structured-field dictionary of algorithms and byte sequences.
package enum ReprDigest {
    /// The SHA-256 digest among the members of `field`, or nil when it has none or it is malformed.
    package static func sha256(in field: String) -> [UInt8]? {
        for member in field.split(separator: ",") {
            let member = member.trimmingCharacters(in: .whitespaces)
            guard member.hasPrefix("sha-256=:") else { continue }
            let value = member.dropFirst("sha-256=:".count)
            // A byte sequence, then perhaps parameters (`;name=value`), which say nothing here.
            guard let end = value.firstIndex(of: ":"), let bytes = Base64.decode(value[..<end].utf8), bytes.count == 32 else {
                return nil
            }
            return bytes
        }
        return nil
    }
}
