import Foundation

#if canImport(Glibc)
import Glibc
private let streamType = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
private let streamType = SOCK_STREAM
#endif

private func systemClose(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #else
    _ = Darwin.close(descriptor)
    #endif
}

/// A TCP listener on 127.0.0.1 that hands each accepted connection to `handle` on a thread of
/// its own, then closes it: a server that misbehaves exactly as a test needs.
package final class TCPListener: @unchecked Sendable {
    let descriptor: Int32
    package let port: UInt16

    package init(handle: @escaping @Sendable (Int32) -> Void) throws {
        (descriptor, port) = try Self.bound()
        guard listen(descriptor, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        let descriptor = descriptor
        Thread.detachNewThread {
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                Thread.detachNewThread {
                    handle(connection)
                    systemClose(connection)
                }
            }
        }
    }

    package func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        systemClose(descriptor)
    }

    /// A port nothing listens on: bound, then closed.
    package static func unusedPort() throws -> UInt16 {
        let (descriptor, port) = try bound()
        systemClose(descriptor)
        return port
    }

    private static func bound() throws -> (Int32, UInt16) {
        let descriptor = socket(AF_INET, streamType, 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            systemClose(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}
