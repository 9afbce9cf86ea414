/// A strict RFC 8259 parser that produces zero-copy ``JSONDocument``s.
///
/// Keep one parser per task and reuse it: its tape and stack are reused for the next document
/// whenever the previous document is no longer referenced, so parsing allocates nothing in
/// steady state.
///
/// ```swift
/// var parser = JSONParser()
/// let document = try parser.parse(bytes)
/// let badge = document.root["aps"]?["badge"]?.int
/// ```
public struct JSONParser: Sendable {
    public struct Options: Sendable, Hashable {
        /// Deepest nesting of objects and arrays accepted. Clamped to 1...``maximumSupportedDepth``.
        public var maximumDepth: Int
        /// Largest input accepted, in bytes. Clamped to 0...``maximumSupportedInputSize``.
        public var maximumInputSize: Int

        /// The default nesting limit.
        public static let defaultMaximumDepth = 512
        /// The default input limit: far above any APNs payload, low enough that hostile input
        /// cannot make a parser hold gigabytes.
        public static let defaultMaximumInputSize = 16 << 20
        /// Owned ``JSON`` values are converted, compared and destroyed recursively, so nesting is
        /// kept to what a 512 KiB thread stack handles with room to spare.
        public static let maximumSupportedDepth = 1024
        /// Offsets are stored in 32 bits.
        public static let maximumSupportedInputSize = Int(UInt32.max) - 1

        public init(
            maximumDepth: Int = Options.defaultMaximumDepth,
            maximumInputSize: Int = Options.defaultMaximumInputSize
        ) {
            self.maximumDepth = maximumDepth
            self.maximumInputSize = maximumInputSize
        }

        @usableFromInline var effectiveDepth: Int { Swift.min(Swift.max(maximumDepth, 1), Self.maximumSupportedDepth) }
        @usableFromInline var effectiveInputSize: Int {
            Swift.min(Swift.max(maximumInputSize, 0), Self.maximumSupportedInputSize)
        }
    }

    public var options: Options
    @usableFromInline var storage: JSONTapeStorage
    @usableFromInline var stack: JSONStack

    public init(options: Options = Options()) {
        self.options = options
        self.storage = JSONTapeStorage(capacity: 64)
        self.stack = JSONStack()
    }

    /// Parses `bytes` without copying them: the document keeps a reference to the array.
    /// - Throws: ``JSONError`` with the code and byte offset of the first problem.
    public mutating func parse(_ bytes: [UInt8]) throws(JSONError) -> JSONDocument {
        prepareStorage()
        // Scan the caller's array (borrowed, no retain), then keep a reference to it.
        try bytes.withUnsafeBufferPointer { (input) throws(JSONError) in try fillTape(input, presized: false) }
        storage.input = bytes
        return JSONDocument(storage: storage)
    }

    /// Parses any contiguous bytes (`Data`, `ByteBuffer.readableBytesView`, an `ArraySlice`, ...).
    /// They are copied once into the parser's reusable input buffer so the document can outlive
    /// the caller's storage; pass a `[UInt8]` to avoid the copy.
    @inlinable
    public mutating func parse(_ bytes: some Collection<UInt8>) throws(JSONError) -> JSONDocument {
        if let array = bytes as? [UInt8] { return try parse(array) }
        guard bytes.count <= options.effectiveInputSize else { throw Self.tooLarge(options.effectiveInputSize) }
        prepareStorage()
        storage.input.removeAll(keepingCapacity: true)
        storage.input.append(contentsOf: bytes)
        let storage = self.storage
        try storage.input.withUnsafeBufferPointer { (input) throws(JSONError) in try fillTape(input, presized: false) }
        return JSONDocument(storage: storage)
    }

    /// Parses `bytes` and calls `body` with the top-level value, without making a document:
    /// nothing is copied or reference counted. The fastest way to read a payload, and the
    /// zero-copy entry point for `Data` and `ByteBuffer` (through their `withUnsafeBytes`).
    /// The value and everything reached from it are valid only inside `body`.
    /// - Throws: ``JSONError`` for invalid input, or what `body` throws.
    @inlinable
    package mutating func parse<Result>(
        _ bytes: UnsafeRawBufferPointer, _ body: (UnsafeJSONValue) throws(JSONError) -> Result
    ) throws(JSONError) -> Result {
        prepareStorage()
        let input = bytes.assumingMemoryBound(to: UInt8.self)
        try fillTape(input, presized: true)
        // Drop a previous document's input, which nothing reads any more.
        if !storage.input.isEmpty { storage.input = [] }
        return try body(UnsafeJSONValue(entries: storage.entries, input: input.baseAddress!, index: 0))
    }

    /// Parses `bytes` and calls `body` with the top-level value; see ``parse(_:_:)-(UnsafeRawBufferPointer,_)``.
    @inlinable
    package mutating func parse<Result>(
        _ bytes: [UInt8], _ body: (UnsafeJSONValue) throws(JSONError) -> Result
    ) throws(JSONError) -> Result {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONError) in try parse(UnsafeRawBufferPointer(buffer), body) }
    }

    /// Checks that `bytes` are one valid JSON text without recording anything: no copy, no tape,
    /// and no allocation unless the text nests deeper than ``validationStackDepth``.
    package func validate(_ bytes: UnsafeRawBufferPointer) throws(JSONError) {
        guard bytes.count <= options.effectiveInputSize else { throw Self.tooLarge(options.effectiveInputSize) }
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            throw JSONError(.unexpectedEnd, at: 0, "empty input, expected a value")
        }
        let input = base.assumingMemoryBound(to: UInt8.self)
        let depth = options.effectiveDepth
        // The standard library keeps a temporary allocation on the stack only up to 1 KiB, so a
        // stack for the whole depth limit (2 KiB by default) would be a malloc per call. Scan
        // with a small one first: an error before the nesting outgrows it is the text's first
        // error either way; only a text that does outgrow it is scanned again with the full stack.
        let shallow = Swift.min(depth, Self.validationStackDepth)
        do {
            try Self.validate(input, count: bytes.count, depth: shallow)
        } catch  where error.code == .depthLimitExceeded && depth > shallow {
            try Self.validate(input, count: bytes.count, depth: depth)
        }
    }

    /// Nesting that ``validate(_:)-(UnsafeRawBufferPointer)`` checks without allocating.
    package static let validationStackDepth = 256

    /// Scans with a stack of `depth` slots, which is also the nesting limit.
    private static func validate(_ input: UnsafePointer<UInt8>, count: Int, depth: Int) throws(JSONError) {
        try withUnsafeTemporaryAllocation(of: UInt32.self, capacity: depth) { (stack) throws(JSONError) in
            var scanner = JSONScanner(bytes: input, count: count, sink: ValidationSink(), stack: stack.baseAddress!, maximumDepth: depth)
            try scanner.scanDocument()
        }
    }

    /// Checks that `bytes` are one valid JSON text without recording anything: no copy, no tape,
    /// and no allocation unless the text nests more than 256 deep.
    public func validate(_ bytes: [UInt8]) throws(JSONError) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONError) in try validate(UnsafeRawBufferPointer(buffer)) }
    }

    /// Makes `storage` safe to overwrite: a document from the previous parse that is still
    /// alive keeps its tape, and this parser starts a new one.
    @usableFromInline
    mutating func prepareStorage() {
        if !isKnownUniquelyReferenced(&storage) {
            // Not more than a growing tape needs for a 24 KiB document: a tape presized for a
            // large input is not passed on to every document that follows.
            storage = JSONTapeStorage(capacity: Swift.min(storage.capacity, 4096))
        }
        storage.count = 0
    }

    /// Scans `input` into `storage`'s tape, which `prepareStorage()` made safe to overwrite.
    /// `presized` when the tape is only read inside the call (no document keeps it): inputs up
    /// to ``presizedTapeInputLimit`` then get a tape with room for the worst case, one entry
    /// per input byte, and the scan checks no capacity.
    @usableFromInline
    mutating func fillTape(_ input: UnsafeBufferPointer<UInt8>, presized: Bool) throws(JSONError) {
        guard input.count <= options.effectiveInputSize else { throw Self.tooLarge(options.effectiveInputSize) }
        guard let base = input.baseAddress, !input.isEmpty else {
            throw JSONError(.unexpectedEnd, at: 0, "empty input, expected a value")
        }
        let depth = options.effectiveDepth
        if !isKnownUniquelyReferenced(&stack) { stack = JSONStack() }
        if presized && input.count <= Self.presizedTapeInputLimit {
            // A tape entry per input byte at most: sized for that, the scan checks no capacity.
            if storage.capacity <= input.count { storage.grow(keeping: 0, minimum: input.count + 1) }
            try scan(base, count: input.count, into: PresizedTapeSink(entries: storage.entries), depth: depth)
        } else {
            let expectedEntries = input.count / 6 + 16
            if storage.capacity < expectedEntries { storage.grow(keeping: 0, minimum: expectedEntries) }
            try scan(base, count: input.count, into: TapeSink(storage: storage), depth: depth)
        }
    }

    private mutating func scan<Sink: TapeRecording>(
        _ input: UnsafePointer<UInt8>, count: Int, into sink: Sink, depth: Int
    ) throws(JSONError) {
        var scanner = JSONScanner(bytes: input, count: count, sink: sink, stack: stack.slots(depth), maximumDepth: depth)
        defer { storage.count = scanner.sink.count }
        try scanner.scanDocument()
    }

    /// Inputs up to this size (above any APNs payload) read through `parse(_:_:)` are scanned
    /// into a tape sized for the worst case, 16 bytes per input byte (512 KiB at most, with
    /// the doubling), which the parser keeps for the next document; larger ones, and those that
    /// become a ``JSONDocument``, into a tape that grows as needed.
    @usableFromInline static var presizedTapeInputLimit: Int { 16 << 10 }

    @usableFromInline
    static func tooLarge(_ limit: Int) -> JSONError {
        JSONError(.inputTooLarge, at: limit, "input is larger than the limit of \(limit) bytes")
    }
}

/// The parser's stack of open containers, reused between documents.
@usableFromInline
final class JSONStack: @unchecked Sendable {
    var storage: UnsafeMutablePointer<UInt32>?
    var capacity = 0

    @usableFromInline init() {}

    deinit { storage?.deallocate() }

    @usableFromInline
    func slots(_ count: Int) -> UnsafeMutablePointer<UInt32> {
        if let storage, capacity >= count { return storage }
        storage?.deallocate()
        let slots = UnsafeMutablePointer<UInt32>.allocate(capacity: count)
        storage = slots
        capacity = count
        return slots
    }
}
