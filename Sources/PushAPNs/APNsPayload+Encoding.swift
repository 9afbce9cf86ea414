public import PushJSON

extension APNsPayload {
    /// Appends the payload's JSON to `buffer`: `aps` first with its keys in a fixed order, then
    /// the custom keys in order; minified, minimal escaping. Reuse one buffer
    /// (`removeAll(keepingCapacity: true)`) and encoding allocates nothing.
    /// - Parameters:
    ///   - buffer: Bytes are appended; on error it is left as it was.
    ///   - limit: The most bytes the payload may take, by default the limit of ``APNsPushType/alert``.
    /// - Throws: ``APNsPayloadError``: `payloadTooLarge` with the size and the limit;
    ///   `invalidValue`, `typeMismatch` or `duplicateKey` for a model no valid payload can express.
    @inlinable
    public func encode(into buffer: inout [UInt8], limit: Int = APNsLimits.payloadSize) throws(APNsPayloadError) {
        // Limits of 0 or less fit nothing; the growing path reports the size like any other overflow.
        guard limit > 0, limit <= Self.largestInPlaceLimit,
            #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
        else {
            return try encodeGrowing(into: &buffer, limit: limit)
        }
        var written: Result<Int, APNsPayloadError> = .success(0)
        // The closure sees the payload through pointers: capturing `self` in it retained and
        // released both of its references for every payload.
        withUnsafeParts { aps, customKeys in
            written = Result { () throws(APNsPayloadError) in
                try buffer.appendJSON(inPlaceUpTo: limit) { (output: inout BoundedOutput) throws(APNsPayloadError) in
                    try Self.write(aps: aps, customKeys: customKeys, to: &output)
                }
            }
        }
        let size = try written.get()
        if size > limit { throw Self.tooLarge(size: size, limit: limit) }
    }

    /// `aps` in its box and the custom keys in their array, by pointer, for the duration of `body`.
    @inlinable
    func withUnsafeParts<Result>(
        _ body: (UnsafeMutablePointer<APNsAPS>, UnsafeBufferPointer<JSONMember>) -> Result
    ) -> Result {
        apsBox.withUnsafeMutablePointerToHeader { aps in
            customKeys.withUnsafeBufferPointer { customKeys in body(aps, customKeys) }
        }
    }

    /// Limits above this (`.max`, say) grow the array as they write instead of reserving the limit.
    @usableFromInline static var largestInPlaceLimit: Int { 64 << 10 }

    @usableFromInline
    func encodeGrowing(into buffer: inout [UInt8], limit: Int) throws(APNsPayloadError) {
        let start = buffer.count
        do {
            try buffer.withJSONOutput { (output: inout ByteArrayOutput) throws(APNsPayloadError) in try write(to: &output) }
        } catch {
            buffer.removeSubrange(start...)
            throw error
        }
        let size = buffer.count - start
        if size > limit {
            buffer.removeSubrange(start...)
            throw Self.tooLarge(size: size, limit: limit)
        }
    }

    /// Appends the payload to any growable byte collection, such as `Data`.
    @inlinable
    public func encode<Bytes: RangeReplaceableCollection<UInt8>>(
        into bytes: inout Bytes, limit: Int = APNsLimits.payloadSize
    ) throws(APNsPayloadError) {
        var encoded: [UInt8] = []
        try encode(into: &encoded, limit: limit)
        bytes.append(contentsOf: encoded)
    }

    /// The encoded payload in a new array.
    public func encoded(limit: Int = APNsLimits.payloadSize) throws(APNsPayloadError) -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(into: &bytes, limit: limit)
        return bytes
    }

    /// The exact number of bytes `encode(into:limit:)` writes, computed without writing them.
    public func encodedSize() throws(APNsPayloadError) -> Int {
        var counter = ByteCountOutput()
        try write(to: &counter)
        return counter.count
    }

    @usableFromInline @inline(never)
    static func tooLarge(size: Int, limit: Int) -> APNsPayloadError {
        .tooLarge(size: size, limit: limit)
    }

    @inlinable
    func write<Output: JSONOutput>(to output: inout Output) throws(APNsPayloadError) {
        var failure: APNsPayloadError?
        withUnsafeParts { aps, customKeys in
            do throws(APNsPayloadError) {
                try Self.write(aps: aps, customKeys: customKeys, to: &output)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// `aps` is read in place through the box's pointer, custom keys through the array's buffer:
    /// iterating the array would retain every key and value.
    @inlinable
    static func write<Output: JSONOutput>(
        aps: UnsafeMutablePointer<APNsAPS>, customKeys: UnsafeBufferPointer<JSONMember>, to output: inout Output
    ) throws(APNsPayloadError) {
        JSONWriter.writeStatic("{\"aps\":", to: &output)
        try aps.pointee.writeInPlace(to: &output)
        if !customKeys.isEmpty {
            // One conversion of the JSON writer's errors for all the members, naming the member
            // being written; the errors are built out of line, so the writer's loop stays small
            // enough to be inlined into its callers.
            var current = -1
            var namesAPS = false
            do throws(JSONError) {
                try checkUniqueKeys(customKeys)
                try forEachInPlace(customKeys) { (index, member) throws(JSONError) in
                    current = index
                    if member.key == "aps" { namesAPS = true }
                    output.append(ASCII.comma)
                    try member.writeInPlace(to: &output, depth: 1)
                }
            } catch {
                throw customKeyError(error, in: customKeys, at: current)
            }
            if namesAPS { throw customKeyNamedAPS() }
        }
        output.append(ASCII.closeBrace)
    }
}

extension APNsPayload {
    @usableFromInline @inline(never)
    static func customKeyError(_ error: JSONError, in customKeys: UnsafeBufferPointer<JSONMember>, at index: Int) -> APNsPayloadError {
        APNsPayloadError(error, path: index < 0 ? "" : customKeys[index].key)
    }

    @usableFromInline @inline(never)
    static func customKeyNamedAPS() -> APNsPayloadError {
        APNsPayloadError(.duplicateKey, path: "aps", "a custom key named \"aps\" would repeat the aps dictionary")
    }
}

/// Writes the members of one object, placing the commas.
@usableFromInline
struct ObjectWriter<Output: JSONOutput> {
    @usableFromInline var isFirst = true

    @inlinable init() {}

    /// Writes the key's `"name":`, after a comma unless it is the first.
    @inlinable @inline(__always)
    mutating func key(_ key: some PayloadKey, _ output: inout Output) {
        if !isFirst { output.append(ASCII.comma) }
        isFirst = false
        JSONWriter.writeStatic(key.member, to: &output)
    }

    @inlinable @inline(__always)
    mutating func string(_ key: some PayloadKey, _ value: String?, _ output: inout Output) {
        guard let value else { return }
        self.key(key, &output)
        JSONWriter.writeString(value, to: &output)
    }

    @inlinable @inline(__always)
    mutating func integer(_ key: some PayloadKey, _ value: Int?, _ output: inout Output) {
        guard let value else { return }
        self.key(key, &output)
        JSONWriter.writeInteger(value, to: &output)
    }

    @inlinable @inline(__always)
    mutating func strings(_ key: some PayloadKey, _ values: [String]?, _ output: inout Output) {
        guard let values else { return }
        self.key(key, &output)
        writeStringArray(values, to: &output)
    }

    /// A flag APNs wants as the number 1, written only when set.
    @inlinable @inline(__always)
    mutating func one(_ key: some PayloadKey, _ isSet: Bool, _ output: inout Output) {
        guard isSet else { return }
        self.key(key, &output)
        output.append(UInt8(ascii: "1"))
    }

    /// A count APNs takes from 0 up (`badge`).
    @inlinable @inline(__always)
    mutating func count(_ key: some PayloadKey, _ value: Int?, _ output: inout Output) throws(APNsPayloadError) {
        guard let value else { return }
        guard value >= 0 else { throw .invalidValue(key.path, "must not be negative", got: String(value)) }
        self.key(key, &output)
        JSONWriter.writeInteger(value, to: &output)
    }

    /// A flag written as `true`, and only when set.
    @inlinable @inline(__always)
    mutating func literalTrue(_ key: some PayloadKey, _ isSet: Bool, _ output: inout Output) {
        guard isSet else { return }
        self.key(key, &output)
        JSONWriter.writeStatic("true", to: &output)
    }

    /// One of a fixed set of spellings (`interruption-level`, `event`).
    @inlinable @inline(__always)
    mutating func spelling<Spelled: RawRepresentable<String>>(_ key: some PayloadKey, _ value: Spelled?, _ output: inout Output) {
        guard let value else { return }
        self.key(key, &output)
        JSONWriter.writeString(value.rawValue, to: &output)
    }

    @inlinable @inline(__always)
    mutating func relevanceScore(
        _ key: some PayloadKey, _ value: Double?, isLiveActivity: Bool, _ output: inout Output
    ) throws(APNsPayloadError) {
        guard let value else { return }
        guard APNsRules.allowsRelevanceScore(value, isLiveActivity: isLiveActivity) else {
            throw .invalidValue(key.path, "must be within 0...1", got: String(value))
        }
        self.key(key, &output)
        try writeDouble(value, to: &output, path: key.path)
    }

    @inlinable
    mutating func others<Key: PayloadKey>(_ members: [JSONMember], known: KeyTable<Key>, _ output: inout Output) throws(APNsPayloadError) {
        guard !members.isEmpty else { return }
        var current = -1
        var named: String?
        do throws(JSONError) {
            try checkUniqueKeys(members)
            try members.withUnsafeBufferPointer { (buffer) throws(JSONError) in
                try forEachInPlace(buffer) { (index, member) throws(JSONError) in
                    current = index
                    if named == nil, known.contains(member.key) { named = member.key }
                    if !isFirst { output.append(ASCII.comma) }
                    isFirst = false
                    try member.writeInPlace(to: &output, depth: 2)
                }
            }
        } catch {
            throw Self.otherKeyError(error, parentPath: Key.parentPath, key: current < 0 ? nil : members[current].key)
        }
        if let named { throw Self.namedField(named, parentPath: Key.parentPath) }
    }

    @usableFromInline @inline(never)
    static func otherKeyError(_ error: JSONError, parentPath: String, key: String?) -> APNsPayloadError {
        APNsPayloadError(error, path: key.map { parentPath + "." + $0 } ?? parentPath)
    }

    @usableFromInline @inline(never)
    static func namedField(_ name: String, parentPath: String) -> APNsPayloadError {
        APNsPayloadError(.duplicateKey, path: parentPath + "." + name, "\"\(name)\" is a named field; set it there, not among the other keys")
    }
}

extension JSON {
    /// Writes the value, reporting an error in it at `path`.
    @inlinable
    func write<Output: JSONOutput>(to output: inout Output, depth: Int, path: @autoclosure () -> String) throws(APNsPayloadError) {
        do throws(JSONError) {
            try write(to: &output, depth: depth)
        } catch {
            throw APNsPayloadError(error, path: path())
        }
    }
}

/// Writes a finite number; NaN and infinities are refused at `path`.
@inlinable
func writeDouble<Output: JSONOutput>(_ value: Double, to output: inout Output, path: @autoclosure () -> String) throws(APNsPayloadError) {
    do throws(JSONError) {
        try JSONWriter.writeDouble(value, to: &output)
    } catch {
        throw .invalidValue(path(), "must be a finite number", got: String(value))
    }
}

@inlinable
func writeStringArray<Output: JSONOutput>(_ values: [String], to output: inout Output) {
    output.append(ASCII.openBracket)
    for (position, value) in values.enumerated() {
        if position > 0 { output.append(ASCII.comma) }
        JSONWriter.writeString(value, to: &output)
    }
    output.append(ASCII.closeBracket)
}

extension APNsAlert {
    @inlinable
    func write<Output: JSONOutput>(to output: inout Output) throws(APNsPayloadError) {
        switch self {
        case .text(let text): JSONWriter.writeString(text, to: &output)
        case .fields(let fields): try fields.write(to: &output)
        }
    }
}

extension APNsSound {
    @inlinable
    func write<Output: JSONOutput>(to output: inout Output) throws(APNsPayloadError) {
        switch self {
        case .named(let name): JSONWriter.writeString(name, to: &output)
        case .critical(let critical): try critical.write(to: &output)
        }
    }
}

extension APNsAlertText {
    @inlinable
    func write<Output: JSONOutput>(to output: inout Output) {
        switch self {
        case .text(let text):
            JSONWriter.writeString(text, to: &output)
        case .localized(let key, let arguments):
            JSONWriter.writeStatic("{\"loc-key\":", to: &output)
            JSONWriter.writeString(key, to: &output)
            JSONWriter.writeStatic(",\"loc-args\":", to: &output)
            writeStringArray(arguments, to: &output)
            output.append(ASCII.closeBrace)
        }
    }
}

extension APNsCriticalSound {
    @inlinable
    func write<Output: JSONOutput>(to output: inout Output) throws(APNsPayloadError) {
        JSONWriter.writeStatic(critical ? "{\"critical\":1,\"name\":" : "{\"critical\":0,\"name\":", to: &output)
        JSONWriter.writeString(name, to: &output)
        if let volume {
            guard (0...1).contains(volume) else {
                throw .invalidValue("aps.sound.volume", "must be within 0...1", got: String(volume))
            }
            JSONWriter.writeStatic(",\"volume\":", to: &output)
            try writeDouble(volume, to: &output, path: "aps.sound.volume")
        }
        output.append(ASCII.closeBrace)
    }
}

extension JSON {
    @usableFromInline
    func requireObject(path: @autoclosure () -> String) throws(APNsPayloadError) {
        switch self {
        case .object: return
        case .raw(let raw) where raw.bytes.first == ASCII.openBrace: return
        default: throw APNsPayloadError(.typeMismatch, path: path(), "\(path()) must be an object")
        }
    }
}
