import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP connection to a loopback port, for what an HTTP client library will not do:
/// hold a socket idle, trickle a request byte by byte, or come from another loopback address
/// (Linux routes all of 127.0.0.0/8 to the loopback interface).
///
/// Used from one task or thread at a time. Blocking calls belong on threads of their own
/// (``offPool(_:)``): the cooperative pool has a thread per core, and the server under test needs them.
final class RawConnection: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private var descriptor: Int32

    /// - Parameters:
    ///   - receiveBuffer: `SO_RCVBUF` in bytes, set before connecting (a client that means to read
    ///     nothing keeps it small); the kernel's default when nil.
    ///   - sendTimeout: How long one ``send(_:)`` may block before it fails; without end when nil.
    init(port: Int, from source: String = "127.0.0.1", receiveBuffer: Int32? = nil, sendTimeout: Int? = nil) throws {
        // Close-on-exec: a process a test starts meanwhile must not keep the connection open.
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let sendTimeout {
            var limit = timeval(tv_sec: sendTimeout, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, connected == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw Failure(description: "connect from \(source): \(message)")
        }
    }

    deinit { close() }

    func send(_ text: String) throws {
        try send(bytes: Array(text.utf8))
    }

    func send(bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// Reads until the server closes the connection or `timeout` passes.
    /// - Returns: What was read, and whether the server closed (or reset) the connection.
    func readUntilClosed(timeout: Duration) -> (bytes: [UInt8], closed: Bool) {
        let deadline = ContinuousClock.now + timeout
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let left = deadline - ContinuousClock.now
            let milliseconds = Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (bytes, true) }
            bytes += buffer[..<count]
        }
        return (bytes, false)
    }

    /// Whether the server ends the connection (a FIN or a reset) within `timeout`, found without
    /// reading: what the server sent stays unread, as a client that never reads leaves it.
    func hungUpWithoutReading(within timeout: Duration) -> Bool {
        // Linux's POLLRDHUP, which Glibc's module leaves out (it needs _GNU_SOURCE).
        let readHangUp: Int16 = 0x2000
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: readHangUp, revents: 0)
            if poll(&poller, 1, 100) > 0, poller.revents & (readHangUp | Int16(POLLHUP | POLLERR)) != 0 { return true }
        }
        return false
    }

    /// Sends `request` (which should ask for `Connection: close`) and returns the response's status code.
    func statusOf(_ request: String, timeout: Duration = .seconds(30)) throws -> Int {
        try send(request)
        let response = String(decoding: readUntilClosed(timeout: timeout).bytes, as: UTF8.self)
        let parts = response.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw Failure(description: "no HTTP response: \(response.prefix(80).debugDescription)")
        }
        return status
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}

/// A `GET` request with Basic credentials that closes the connection after the answer.
func rawGet(_ path: String, user: String, password: String) -> String {
    let credentials = Data("\(user):\(password)".utf8).base64EncodedString()
    return "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic \(credentials)\r\nConnection: close\r\n\r\n"
}

/// The head of a chunked `POST` of JSON with Basic credentials; the body's chunks follow it.
func rawChunkedPost(_ path: String, user: String, password: String, closing: Bool = true) -> String {
    let credentials = Data("\(user):\(password)".utf8).base64EncodedString()
    return "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic \(credentials)\r\n"
        + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\(closing ? "Connection: close\r\n" : "")\r\n"
}

/// Runs blocking work on a thread of its own, so that it cannot hold one of the cooperative pool's
/// few threads while the in-process server waits for it.
func offPool<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Swift.Result { try work() }) }.start()
    }
}

extension RawConnection {
    /// ``readUntilClosed(timeout:)`` off the cooperative pool.
    func closed(within timeout: Duration) async throws -> (bytes: [UInt8], closed: Bool) {
        try await offPool { self.readUntilClosed(timeout: timeout) }
    }

    /// Sends `piece` every `interval`, up to `times` times, until the server closes the connection.
    /// - Returns: How long the server let it trickle, or nil when it never closed the connection.
    func trickle(_ piece: String, every interval: Duration, times: Int = 100) async throws -> Duration? {
        let started = ContinuousClock.now
        for _ in 0..<times {
            do {
                try send(piece)
            } catch {
                return ContinuousClock.now - started  // reset by the server
            }
            if try await closed(within: interval).closed { return ContinuousClock.now - started }
        }
        return nil
    }
}
