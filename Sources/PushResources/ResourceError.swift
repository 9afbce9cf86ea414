public import PushInternals

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error from looking up, opening or streaming a resource. Messages name the resource; a stream
/// that ends with one of these has not delivered the whole resource.
public struct ResourceError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        /// The name is empty, too long, or uses a character outside `A-Z a-z 0-9 . _ -` (or starts with `.`).
        case invalidName
        /// No resource has this name (or no file exists at this path).
        case notFound
        /// A registry already holds a resource with this name.
        case duplicateName
        /// The path names a directory, a device, a socket or a symbolic link, not a regular file.
        case notRegularFile
        /// The file changed size or was modified while it was being read.
        case changedDuringRead
        /// The file was deleted while it was being read.
        case vanished
        /// A chunk size below 1 byte or above ``ResourceLimits/maximumChunkSize``.
        case invalidChunkSize
        /// A byte range outside the resource.
        case rangeOutOfBounds
        /// The operating system refused an operation; the message carries its reason.
        case ioError
    }

    public let code: Code
    /// The resource's name or path.
    public let resource: String
    public let message: String

    public init(_ code: Code, resource: String, _ message: String) {
        self.code = code
        self.resource = resource
        self.message = message
    }

    static func system(_ operation: String, resource: String, errno number: Int32) -> ResourceError {
        let reason = String(cString: strerror(number))
        switch number {
        case ENOENT, ENOTDIR: return ResourceError(.notFound, resource: resource, "\(operation): \(reason)")
        case ELOOP: return ResourceError(.notRegularFile, resource: resource, "\(operation): a symbolic link is not followed")
        default: return ResourceError(.ioError, resource: resource, "\(operation): \(reason) (errno \(number))")
        }
    }

    public var description: String { "\(resource): \(code): \(message)" }
}

/// Bounds on resources and their chunks.
public enum ResourceLimits {
    /// The chunk size used when none is given: 64 KiB.
    public static let defaultChunkSize = 65_536
    /// The largest chunk size accepted: 16 MiB.
    public static let maximumChunkSize = 16 << 20
    /// The longest resource name accepted, in bytes.
    public static let maximumNameLength = 255

    static func checkChunkSize(_ size: Int, resource: String) throws(ResourceError) {
        guard (1...maximumChunkSize).contains(size) else {
            throw ResourceError(
                .invalidChunkSize, resource: resource,
                "chunk size \(size) is outside 1...\(maximumChunkSize)")
        }
    }

    static func checkRange(_ range: Range<Int>, count: Int, resource: String) throws(ResourceError) {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw ResourceError(
                .rangeOutOfBounds, resource: resource,
                "bytes \(range.lowerBound)..<\(range.upperBound) are outside 0..<\(count)")
        }
    }

    /// Names are flat and made of `A-Z a-z 0-9 . _ -`, not starting with `.`: no separator, no
    /// `..`, no escape, no NUL can reach a path built from one.
    static func checkName(_ name: some StringProtocol) throws(ResourceError) {
        let utf8 = name.utf8
        guard !utf8.isEmpty, utf8.count <= maximumNameLength, utf8.first != UInt8(ascii: "."),
            utf8.allSatisfy(isNameByte)
        else {
            throw ResourceError(
                .invalidName, resource: String(name.prefix(64)).debugDescription,
                "a resource name is 1 to \(maximumNameLength) bytes of A-Z a-z 0-9 . _ - and does not start with '.'")
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
