import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Both digests of a whole resource, from one pass over it.
public struct ResourceDigests: Hashable, Sendable {
    public let hash64: UInt64
    public let hash128: XXH128Digest
}

/// A regular file served in chunks with positional reads; never read whole into memory.
///
/// The file is opened once, here, and read through that descriptor. Every read checks that the file
/// still has the size and modification time it had when opened and has not been deleted, so a file
/// that is truncated, grown, rewritten or removed mid-stream ends the stream with a
/// ``ResourceError`` instead of handing out a mix of old and new bytes as if complete.
/// Reads are blocking `pread`s (a 64 KiB chunk from the page cache takes microseconds); a server
/// that serves files from slow disks should hand them to a thread pool.
public final class FileResource: Sendable {
    public let path: String
    /// The size when opened.
    public let count: Int
    /// From the first bytes; `.octetStream` when no known signature matches.
    public let contentType: ContentType
    private let descriptor: Int32
    private let modified: FileTime
    private let cachedDigests = Mutex<ResourceDigests?>(nil)

    /// Opens the regular file at `path`.
    /// - Throws: ``ResourceError`` `notFound`, `notRegularFile` (directories, FIFOs, devices) or `ioError`.
    public convenience init(path: String) throws(ResourceError) {
        try self.init(path: path, followingSymbolicLinks: true)
    }

    init(path: String, followingSymbolicLinks: Bool) throws(ResourceError) {
        // O_NONBLOCK keeps a FIFO from blocking the open; it changes nothing for regular files.
        var flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK
        if !followingSymbolicLinks { flags |= O_NOFOLLOW }
        let descriptor = open(path, flags)
        guard descriptor >= 0 else { throw ResourceError.system("open", resource: path, errno: errno) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let number = errno
            close(descriptor)
            throw ResourceError.system("fstat", resource: path, errno: number)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw ResourceError(.notRegularFile, resource: path, "not a regular file")
        }
        self.path = path
        self.descriptor = descriptor
        count = Int(info.st_size)
        modified = FileTime(info)
        var prefix = [UInt8](repeating: 0, count: ContentType.sniffLength)
        let prefixCount = prefix.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        contentType = ContentType.sniff(prefix.prefix(max(0, prefixCount))) ?? .octetStream
    }

    deinit { close(descriptor) }

    /// Fills `buffer` with the bytes at `offset`, then checks the file is unchanged.
    /// - Throws: ``ResourceError`` `rangeOutOfBounds`, `changedDuringRead`, `vanished` or `ioError`.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(ResourceError) {
        try ResourceLimits.checkRange(offset..<offset + buffer.count, count: count, resource: path)
        var done = 0
        while done < buffer.count {
            let result = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if result > 0 {
                done += result
            } else if result == 0 {
                throw ResourceError(
                    .changedDuringRead, resource: path,
                    "the file ended at byte \(offset + done); it had \(count) bytes when opened")
            } else if errno != EINTR {
                throw ResourceError.system("pread", resource: path, errno: errno)
            }
        }
        try checkUnchanged()
    }

    /// The bytes in `range`, in a new array, after the same checks as ``read(into:at:)``.
    public func bytes(in range: Range<Int>) throws(ResourceError) -> [UInt8] {
        var failure: ResourceError?
        let bytes = [UInt8](unsafeUninitializedCapacity: range.count) { buffer, initialized in
            do throws(ResourceError) {
                try read(into: UnsafeMutableRawBufferPointer(buffer), at: range.lowerBound)
                initialized = range.count
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// The first bytes of the file, up to `maximum`. Unlike ``bytes(in:)`` it reads to the end of
    /// the file, not to its size when opened: kernel files (`/proc`, `/sys`) report a size of 0 and
    /// have content all the same.
    /// - Throws: ``ResourceError`` `ioError`, or `changedDuringRead` for a file of known size that
    ///   changed.
    public func leadingBytes(upTo maximum: Int) throws(ResourceError) -> [UInt8] {
        var bytes: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        try readToEnd(through: buffer) { piece in
            bytes += piece.prefix(maximum - bytes.count)
            return bytes.count < maximum
        }
        return bytes
    }

    /// Reads from the start through `buffer` until the end of the file (or until `body` returns
    /// false), handing each piece read to `body`; then checks the file is unchanged.
    private func readToEnd(through buffer: UnsafeMutableRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) throws(ResourceError) {
        var offset = 0
        while true {
            let result = pread(descriptor, buffer.baseAddress!, buffer.count, off_t(offset))
            if result > 0 {
                offset += result
                guard body(UnsafeRawBufferPointer(rebasing: buffer[..<result])) else { break }
            } else if result == 0 {
                break
            } else if errno != EINTR {
                throw ResourceError.system("pread", resource: path, errno: errno)
            }
        }
        try checkUnchanged()
    }

    /// The file (or `range` of it) in chunks of `size` bytes, the last one shorter; each chunk is
    /// read when asked for.
    /// - Parameters:
    ///   - range: the bytes to cover; the whole file when nil.
    ///   - size: bytes per chunk, 1 ... ``ResourceLimits/maximumChunkSize``.
    ///   - digests: whether each chunk carries the XXH3-64 of its bytes.
    /// - Throws: ``ResourceError`` for a chunk size or range out of bounds.
    public func chunks(
        in range: Range<Int>? = nil, size: Int = ResourceLimits.defaultChunkSize, digests: Bool = false
    ) throws(ResourceError) -> FileChunks {
        try ResourceLimits.checkChunkSize(size, resource: path)
        let range = range ?? 0..<count
        try ResourceLimits.checkRange(range, count: count, resource: path)
        return FileChunks(file: self, range: range, chunkSize: size, digests: digests)
    }

    /// XXH3-64 and XXH3-128 of the whole file, from one streaming pass; kept after the first call.
    /// - Throws: ``ResourceError`` when the file changes or cannot be read during the pass.
    public func digests() throws(ResourceError) -> ResourceDigests {
        if let digests = cachedDigests.withLock({ $0 }) { return digests }
        var hasher64 = XXH3Hasher64()
        var hasher128 = XXH3Hasher128()
        let bufferSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 64)
        defer { buffer.deallocate() }
        if count == 0 {
            // A kernel file reports no size; its content is what reading to the end gives.
            try readToEnd(through: buffer) { piece in
                hasher64.update(piece)
                hasher128.update(piece)
                return true
            }
        } else {
            var offset = 0
            while offset < count {
                let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(bufferSize, count - offset)])
                try read(into: piece, at: offset)
                hasher64.update(UnsafeRawBufferPointer(piece))
                hasher128.update(UnsafeRawBufferPointer(piece))
                offset += piece.count
            }
            try checkUnchanged()
        }
        let digests = ResourceDigests(hash64: hasher64.digest(), hash128: hasher128.digest())
        cachedDigests.withLock { $0 = digests }
        return digests
    }

    /// The strong `ETag`: the quoted XXH3-128 digest of the file in lowercase hex.
    public func entityTag() throws(ResourceError) -> EntityTag {
        EntityTag(strong: try digests().hash128)
    }

    private func checkUnchanged() throws(ResourceError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ResourceError.system("fstat", resource: path, errno: errno) }
        guard info.st_nlink > 0 else {
            throw ResourceError(.vanished, resource: path, "the file was deleted while being read")
        }
        guard Int(info.st_size) == count, FileTime(info) == modified else {
            throw ResourceError(
                .changedDuringRead, resource: path,
                "the file changed while being read (\(count) bytes when opened, \(info.st_size) now)")
        }
    }
}

/// A modification time to the nanosecond.
private struct FileTime: Equatable {
    let seconds: Int
    let nanoseconds: Int

    init(_ info: stat) {
        #if canImport(Darwin)
        seconds = Int(info.st_mtimespec.tv_sec)
        nanoseconds = Int(info.st_mtimespec.tv_nsec)
        #else
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
        #endif
    }
}

/// The chunks of a ``FileResource``, read one at a time: with ``makeReader()`` synchronously, or
/// with `for try await`. A reader reads every chunk into one buffer of its own: a consumer that lets
/// each chunk go before asking for the next costs no allocation per chunk, and one that keeps a
/// chunk keeps its bytes (the next read then gets fresh storage), so memory stays bounded by the
/// chunks the consumer holds.
public struct FileChunks: AsyncSequence, Sendable {
    public typealias Element = ResourceChunk
    public typealias Failure = ResourceError

    let file: FileResource
    let range: Range<Int>
    let chunkSize: Int
    let digests: Bool

    public func makeReader() -> FileChunkReader {
        FileChunkReader(file: file, end: range.upperBound, chunkSize: chunkSize, digests: digests, offset: range.lowerBound)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Failure = ResourceError
        var reader: FileChunkReader

        public mutating func next() async throws(ResourceError) -> ResourceChunk? { try reader.next() }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ResourceError) -> ResourceChunk? {
            try reader.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: makeReader()) }
}

/// Reads a ``FileChunks`` in order. After an error it returns nil: the stream has ended, incomplete.
public struct FileChunkReader: Sendable {
    let file: FileResource
    let end: Int
    let chunkSize: Int
    let digests: Bool
    var offset: Int
    /// Every chunk is read into this. The chunk handed out shares it; when the consumer still
    /// holds that chunk at the next read, writing makes the buffer unique first (copy on write),
    /// so a chunk's bytes never change under its holder.
    private var buffer: [UInt8] = []

    init(file: FileResource, end: Int, chunkSize: Int, digests: Bool, offset: Int) {
        self.file = file
        self.end = end
        self.chunkSize = chunkSize
        self.digests = digests
        self.offset = offset
    }

    public mutating func next() throws(ResourceError) -> ResourceChunk? {
        guard offset < end else { return nil }
        let start = offset
        let count = min(chunkSize, end - start)
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
        let file = file
        let read: Result<Void, ResourceError> = buffer.withUnsafeMutableBytes { whole in
            do throws(ResourceError) {
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: whole[..<count]), at: start)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if case .failure(let error) = read {
            offset = end
            throw error
        }
        offset += count
        return ResourceChunk(offset: start, bytes: buffer[..<count], digests: digests)
    }
}

/// Files under one folder, by name. Names are flat (`A-Z a-z 0-9 . _ -`, not starting with `.`)
/// and symbolic links are not followed, so a name from a request cannot reach outside the folder.
public struct ResourceDirectory: Sendable {
    public let root: String

    public init(root: String) { self.root = root }

    /// Opens the regular file `name` directly inside the folder.
    /// - Throws: ``ResourceError`` `invalidName`, `notFound`, `notRegularFile` or `ioError`.
    public func resource(named name: some StringProtocol) throws(ResourceError) -> FileResource {
        try ResourceLimits.checkName(name)
        let separator = root.hasSuffix("/") ? "" : "/"
        return try FileResource(path: root + separator + name, followingSymbolicLinks: false)
    }
}
