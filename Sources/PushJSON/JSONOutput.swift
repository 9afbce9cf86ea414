/// Where encoded JSON goes. The encoders are generic over it, so the exact size of a payload is
/// computed by the same code that writes it (`ByteCountOutput`) and cannot drift from it.
@usableFromInline
package protocol JSONOutput {
    mutating func append(_ byte: UInt8)
    mutating func append(_ bytes: UnsafeRawBufferPointer)
}

/// Appends to a byte array. Use ``withJSONOutput(_:_:)`` to write into a caller-owned array.
@usableFromInline
package struct ByteArrayOutput: JSONOutput {
    @usableFromInline var bytes: [UInt8]

    @inlinable init(bytes: [UInt8]) { self.bytes = bytes }

    @inlinable @inline(__always)
    package mutating func append(_ byte: UInt8) { bytes.append(byte) }

    @inlinable @inline(__always)
    package mutating func append(_ raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw.assumingMemoryBound(to: UInt8.self))
    }
}

/// Writes into a fixed-size buffer; past its end it keeps counting without writing, so a
/// payload over the limit still reports its real size.
@usableFromInline
package struct BoundedOutput: JSONOutput {
    @usableFromInline let base: UnsafeMutableRawPointer
    @usableFromInline let capacity: Int
    @usableFromInline package var count = 0

    @inlinable
    package init(_ buffer: UnsafeMutableRawBufferPointer) {
        base = buffer.baseAddress!
        capacity = buffer.count
    }

    @inlinable @inline(__always)
    package mutating func append(_ byte: UInt8) {
        if count < capacity { base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self) }
        count &+= 1
    }

    @inlinable @inline(__always)
    package mutating func append(_ raw: UnsafeRawBufferPointer) {
        let end = count &+ raw.count
        if end <= capacity, let source = raw.baseAddress {
            let length = raw.count
            let target = base + count
            // Keys, punctuation and short values: a call to memmove costs more than the copy.
            // From 4 to 16 bytes, two possibly overlapping words cover them, whatever the length.
            if length >= 8 && length <= 16 {
                let head = source.loadUnaligned(as: UInt64.self)
                let tail = source.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self)
                target.storeBytes(of: head, as: UInt64.self)
                target.storeBytes(of: tail, toByteOffset: length &- 8, as: UInt64.self)
            } else if length >= 4 && length < 8 {
                let head = source.loadUnaligned(as: UInt32.self)
                let tail = source.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self)
                target.storeBytes(of: head, as: UInt32.self)
                target.storeBytes(of: tail, toByteOffset: length &- 4, as: UInt32.self)
            } else if length < 4 {
                for offset in 0..<length {
                    target.storeBytes(of: source.load(fromByteOffset: offset, as: UInt8.self), toByteOffset: offset, as: UInt8.self)
                }
            } else {
                target.copyMemory(from: source, byteCount: length)
            }
        }
        count = end
    }
}

/// Counts bytes without writing them: the size oracle.
@usableFromInline
package struct ByteCountOutput: JSONOutput {
    @usableFromInline package var count = 0

    @inlinable package init() {}

    @inlinable @inline(__always)
    package mutating func append(_ byte: UInt8) { count += 1 }

    @inlinable @inline(__always)
    package mutating func append(_ raw: UnsafeRawBufferPointer) { count += raw.count }
}

extension Array<UInt8> {
    /// Runs `body` with an output that appends to this array, without copying it.
    @inlinable
    package mutating func withJSONOutput<Result, Failure: Error>(
        _ body: (inout ByteArrayOutput) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var output = ByteArrayOutput(bytes: [])
        swap(&self, &output.bytes)
        defer { swap(&self, &output.bytes) }
        return try body(&output)
    }

    /// Appends what `write` writes, in place: room for `limit` bytes is made once (a reused
    /// array keeps it), then each fragment is stored behind one bounds check instead of an append
    /// with its uniqueness and capacity checks. The encoders' limits are a few KiB.
    /// - Returns: How many bytes `write` wrote; over `limit`, none of them is appended.
    @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    @inlinable
    package mutating func appendJSON<Failure: Error>(
        inPlaceUpTo limit: Int, _ write: (inout BoundedOutput) throws(Failure) -> Void
    ) throws(Failure) -> Int {
        var failure: Failure?
        var size = 0
        append(addingCapacity: limit) { (span: inout OutputSpan<UInt8>) in
            span.withUnsafeMutableBufferPointer { space, initialized in
                var output = BoundedOutput(UnsafeMutableRawBufferPointer(space))
                do throws(Failure) {
                    try write(&output)
                } catch {
                    failure = error
                    return
                }
                size = output.count
                if size <= limit { initialized = size }
            }
        }
        if let failure { throw failure }
        return size
    }
}
