import Synchronization

/// A resource whose bytes live in memory for the life of the process: compiled into the binary with
/// SwiftPM's `.embedInCode`, or registered at start-up. Chunks are views of those bytes, never copies.
public final class EmbeddedResource: Sendable {
    public let name: String
    public let bytes: [UInt8]
    /// From the first bytes; `.octetStream` when no known signature matches.
    public let contentType: ContentType
    private let cachedDigest = Mutex<XXH128Digest?>(nil)

    init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
        contentType = ContentType.sniff(bytes) ?? .octetStream
    }

    public var count: Int { bytes.count }

    /// XXH3-128 of the whole resource, computed on first use and kept.
    public var digest: XXH128Digest {
        if let digest = cachedDigest.withLock({ $0 }) { return digest }
        // Hashed outside the lock; two first callers may both hash, and they agree.
        let digest = XXH3.hash128(bytes)
        cachedDigest.withLock { $0 = digest }
        return digest
    }

    /// The strong `ETag`: the quoted XXH3-128 digest in lowercase hex.
    public var entityTag: EntityTag { EntityTag(strong: digest) }

    /// The resource (or `range` of it) in chunks of `size` bytes, the last one shorter.
    /// - Parameters:
    ///   - range: the bytes to cover; the whole resource when nil.
    ///   - size: bytes per chunk, 1 ... ``ResourceLimits/maximumChunkSize``.
    ///   - digests: whether each chunk carries the XXH3-64 of its bytes.
    /// - Throws: ``ResourceError`` for a chunk size or range out of bounds.
    public func chunks(
        in range: Range<Int>? = nil, size: Int = ResourceLimits.defaultChunkSize, digests: Bool = false
    ) throws(ResourceError) -> EmbeddedChunks {
        try ResourceLimits.checkChunkSize(size, resource: name)
        let range = range ?? 0..<bytes.count
        try ResourceLimits.checkRange(range, count: bytes.count, resource: name)
        return EmbeddedChunks(bytes: bytes, range: range, chunkSize: size, digests: digests)
    }
}

/// One piece of a resource.
public struct ResourceChunk: Hashable, Sendable {
    /// Where `bytes` start in the resource.
    public let offset: Int
    public let bytes: ArraySlice<UInt8>
    /// XXH3-64 of `bytes`, when digests were asked for.
    public let digest: UInt64?

    init(offset: Int, bytes: ArraySlice<UInt8>, digests: Bool) {
        self.offset = offset
        self.bytes = bytes
        digest = digests ? XXH3.hash64(bytes) : nil
    }
}

/// The chunks of an ``EmbeddedResource``, in order; usable with `for` and with `for await`.
public struct EmbeddedChunks: Sequence, AsyncSequence, Sendable {
    public typealias Element = ResourceChunk
    public typealias Failure = Never

    let bytes: [UInt8]
    let range: Range<Int>
    let chunkSize: Int
    let digests: Bool

    public var underestimatedCount: Int { (range.count + chunkSize - 1) / chunkSize }

    public struct Iterator: IteratorProtocol {
        let bytes: [UInt8]
        let end: Int
        let chunkSize: Int
        let digests: Bool
        var offset: Int

        public mutating func next() -> ResourceChunk? {
            guard offset < end else { return nil }
            let chunkEnd = offset + Swift.min(chunkSize, end - offset)
            defer { offset = chunkEnd }
            return ResourceChunk(offset: offset, bytes: bytes[offset..<chunkEnd], digests: digests)
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Iterator
        public mutating func next() async -> ResourceChunk? { base.next() }
    }

    public func makeIterator() -> Iterator {
        Iterator(bytes: bytes, end: range.upperBound, chunkSize: chunkSize, digests: digests, offset: range.lowerBound)
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: makeIterator()) }
}

/// Embedded resources by name. Names are flat (`A-Z a-z 0-9 . _ -`, not starting with `.`), so a
/// name taken from a request can only ever find a registered resource.
public struct ResourceRegistry: Sendable {
    private var resources: [String: EmbeddedResource] = [:]

    public init() {}

    /// A registry holding `entries`.
    /// - Throws: ``ResourceError`` for an invalid or repeated name.
    public init(_ entries: [(name: String, bytes: [UInt8])]) throws(ResourceError) {
        for entry in entries { try register(entry.name, bytes: entry.bytes) }
    }

    /// Adds a resource.
    /// - Throws: ``ResourceError`` `invalidName` or `duplicateName`.
    @discardableResult
    public mutating func register(_ name: String, bytes: [UInt8]) throws(ResourceError) -> EmbeddedResource {
        try ResourceLimits.checkName(name)
        guard resources[name] == nil else {
            throw ResourceError(.duplicateName, resource: name, "a resource with this name is already registered")
        }
        let resource = EmbeddedResource(name: name, bytes: bytes)
        resources[name] = resource
        return resource
    }

    /// The resource with this exact (case-sensitive) name.
    /// - Throws: ``ResourceError`` `invalidName` for a name no resource could have, `notFound` otherwise.
    public func resource(named name: some StringProtocol) throws(ResourceError) -> EmbeddedResource {
        try ResourceLimits.checkName(name)
        guard let resource = resources[String(name)] else {
            throw ResourceError(.notFound, resource: String(name), "no resource has this name")
        }
        return resource
    }

    /// Every registered name, sorted.
    public var names: [String] { resources.keys.sorted() }
}
