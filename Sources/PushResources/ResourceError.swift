// Re-exported: a user of this module reads its error codes (`rawValue`, `description`)
// without importing the module that declares them.
@_exported public import PushErrorCodes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error from looking up, opening or streaming a resource. Messages name the resource; a stream
/// that ends with one of these has not delivered the whole resource.
public struct ResourceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The names of ``Code``'s values; match on codes, not on these.
    public enum CodeName: String, ErrorCodeName {
        case invalidName, notFound, duplicateName, notRegularFile, changedDuringRead, vanished, invalidChunkSize, rangeOutOfBounds, ioError
    }

    /// A stable error code. Later versions may add codes without breaking a `switch` that has a
    /// `default` case; `rawValue` and `description` are its name.
    public typealias Code = ErrorCode<CodeName>

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

extension ErrorCode<ResourceError.CodeName> {
    /// The name is empty, too long, or uses a character outside `A-Z a-z 0-9 . _ -` (or starts with `.`).
    public static let invalidName = Self(.invalidName)
    /// No resource has this name (or no file exists at this path).
    public static let notFound = Self(.notFound)
    /// A registry already holds a resource with this name.
    public static let duplicateName = Self(.duplicateName)
    /// The path names a directory, a device, a socket or a symbolic link, not a regular file.
    public static let notRegularFile = Self(.notRegularFile)
    /// The file changed size or was modified while it was being read.
    public static let changedDuringRead = Self(.changedDuringRead)
    /// The file was deleted while it was being read.
    public static let vanished = Self(.vanished)
    /// A chunk size below 1 byte or above ``ResourceLimits/maximumChunkSize``.
    public static let invalidChunkSize = Self(.invalidChunkSize)
    /// A byte range outside the resource.
    public static let rangeOutOfBounds = Self(.rangeOutOfBounds)
    /// The operating system refused an operation; the message carries its reason.
    public static let ioError = Self(.ioError)
}
