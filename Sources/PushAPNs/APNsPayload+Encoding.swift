import PushJSON

extension APNsPayload {
    /// Appends the payload's JSON to `buffer`: `aps` first with its keys in a fixed order, then
    /// the custom keys in order; minified, minimal escaping. Reuse one buffer
    /// (`removeAll(keepingCapacity: true)`) and encoding allocates nothing.
    /// - Parameters:
    ///   - buffer: Bytes are appended; on error it is left as it was.
    ///   - limit: The most bytes the payload may take, by default the limit of ``APNsPushType/alert``.
    /// - Throws: `payloadTooLarge` naming the size and the limit; `invalidValue`, `typeMismatch` or
    ///   `duplicateKey` for a model no valid payload can express.
    @inlinable
    public func encode(into buffer: inout [UInt8], limit: Int = APNsLimits.payloadSize) throws(JSONError) {
        // Limits of 0 or less fit nothing; the growing path reports the size like any other overflow.
        guard limit > 0, limit <= Self.largestInPlaceLimit,
            #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
        else {
            return try encodeGrowing(into: &buffer, limit: limit)
        }
        // APNs limits are a few KiB: make room for `limit` bytes once (a reused buffer keeps it),
        // then write in place with one bounds check per fragment instead of an append, with its
        // uniqueness and capacity checks, per fragment.
        var failure: JSONError?
        // The closures see the payload through pointers: capturing `self` in them retained and
        // released both of its references for every payload.
        withUnsafeParts { aps, customKeys in
            buffer.append(addingCapacity: limit) { (span: inout OutputSpan<UInt8>) in
                span.withUnsafeMutableBufferPointer { space, initialized in
                    var output = BoundedOutput(UnsafeMutableRawBufferPointer(space))
                    do throws(JSONError) {
                        try Self.write(aps: aps, customKeys: customKeys, to: &output)
                    } catch {
                        failure = error
                        return
                    }
                    guard output.count <= limit else {
                        failure = Self.tooLarge(size: output.count, limit: limit)
                        return
                    }
                    initialized = output.count
                }
            }
        }
        if let failure { throw failure }
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
    func encodeGrowing(into buffer: inout [UInt8], limit: Int) throws(JSONError) {
        let start = buffer.count
        do {
            try buffer.withJSONOutput { (output: inout ByteArrayOutput) throws(JSONError) in try write(to: &output) }
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
    ) throws(JSONError) {
        var encoded: [UInt8] = []
        try encode(into: &encoded, limit: limit)
        bytes.append(contentsOf: encoded)
    }

    /// The encoded payload in a new array.
    public func encoded(limit: Int = APNsLimits.payloadSize) throws(JSONError) -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(into: &bytes, limit: limit)
        return bytes
    }

    /// The exact number of bytes ``encode(into:limit:)`` writes, computed without writing them.
    public func encodedSize() throws(JSONError) -> Int {
        var counter = ByteCountOutput()
        try write(to: &counter)
        return counter.count
    }

    @usableFromInline
    static func tooLarge(size: Int, limit: Int) -> JSONError {
        JSONError(.payloadTooLarge, at: limit, "payload is \(size) bytes, over the limit of \(limit) bytes")
    }

    @inlinable
    func write<Output: JSONOutput>(to output: inout Output) throws(JSONError) {
        var failure: JSONError?
        withUnsafeParts { aps, customKeys in
            do throws(JSONError) {
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
    ) throws(JSONError) {
        JSONWriter.writeStatic("{\"aps\":", to: &output)
        try aps.pointee.writeInPlace(to: &output)
        if !customKeys.isEmpty {
            try checkUniqueKeys(customKeys)
            try forEachInPlace(customKeys) { (_, member) throws(JSONError) in
                guard member.key != "aps" else {
                    throw JSONError(.duplicateKey, at: 0, "a custom key named \"aps\" would repeat the aps dictionary")
                }
                output.append(ASCII.comma)
                try member.writeInPlace(to: &output, depth: 1)
            }
        }
        output.append(ASCII.closeBrace)
    }
}

/// Writes the members of one object, placing the commas.
@usableFromInline
struct ObjectWriter<Output: JSONOutput> {
    @usableFromInline var isFirst = true

    @inlinable init() {}

    /// `keyAndColon` is the quoted key followed by `:`, e.g. `"\"badge\":"`.
    @inlinable
    mutating func key(_ keyAndColon: StaticString, _ output: inout Output) {
        if !isFirst { output.append(ASCII.comma) }
        isFirst = false
        JSONWriter.writeStatic(keyAndColon, to: &output)
    }

    @inlinable @inline(__always)
    mutating func string(_ keyAndColon: StaticString, _ value: String?, _ output: inout Output) {
        guard let value else { return }
        key(keyAndColon, &output)
        JSONWriter.writeString(value, to: &output)
    }

    @inlinable @inline(__always)
    mutating func integer(_ keyAndColon: StaticString, _ value: Int?, _ output: inout Output) {
        guard let value else { return }
        key(keyAndColon, &output)
        JSONWriter.writeInteger(value, to: &output)
    }

    @inlinable @inline(__always)
    mutating func strings(_ keyAndColon: StaticString, _ values: [String]?, _ output: inout Output) {
        guard let values else { return }
        key(keyAndColon, &output)
        writeStringArray(values, to: &output)
    }

    @inlinable
    mutating func others(_ members: [JSONMember], known: KeyTable<some Sendable>, _ output: inout Output) throws(JSONError) {
        guard !members.isEmpty else { return }
        try checkUniqueKeys(members)
        try members.withUnsafeBufferPointer { (buffer) throws(JSONError) in
            try forEachInPlace(buffer) { (_, member) throws(JSONError) in
                guard !known.contains(member.key) else {
                    throw JSONError(.duplicateKey, at: 0, "\"\(member.key)\" is a named field; set it there, not among the other keys")
                }
                if !isFirst { output.append(ASCII.comma) }
                isFirst = false
                try member.writeInPlace(to: &output, depth: 2)
            }
        }
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

extension APNsAPS {
    /// Writes the `aps` dictionary. Mutating only so that `self` is passed by address: the
    /// caller reaches it through the box's pointer, and a non-mutating method called on a
    /// pointer's `pointee` gets a copy of the whole value first (480 bytes copied, and a
    /// `memcpy` per payload). Nothing is written to `self`.
    @inlinable
    mutating func writeInPlace<Output: JSONOutput>(to output: inout Output) throws(JSONError) {
        output.append(ASCII.openBrace)
        var members = ObjectWriter<Output>()
        if let alert {
            members.key("\"alert\":", &output)
            switch alert {
            case .text(let text): JSONWriter.writeString(text, to: &output)
            case .fields(let fields): try fields.write(to: &output)
            }
        }
        if let badge {
            guard badge >= 0 else { throw JSONError(.invalidValue, at: 0, "aps.badge must not be negative (got \(badge))") }
            members.integer("\"badge\":", badge, &output)
        }
        if let sound {
            members.key("\"sound\":", &output)
            switch sound {
            case .named(let name): JSONWriter.writeString(name, to: &output)
            case .critical(let critical): try critical.write(to: &output)
            }
        }
        members.string("\"thread-id\":", threadID, &output)
        members.string("\"category\":", category, &output)
        if contentAvailable { members.key("\"content-available\":1", &output) }
        if mutableContent { members.key("\"mutable-content\":1", &output) }
        members.string("\"target-content-id\":", targetContentID, &output)
        if let interruptionLevel {
            members.key("\"interruption-level\":", &output)
            JSONWriter.writeString(interruptionLevel.rawValue, to: &output)
        }
        if let relevanceScore {
            guard event != nil || (0...1).contains(relevanceScore) else {
                throw JSONError(.invalidValue, at: 0, "aps.relevance-score must be within 0...1 (got \(relevanceScore))")
            }
            members.key("\"relevance-score\":", &output)
            try JSONWriter.writeDouble(relevanceScore, to: &output)
        }
        members.string("\"filter-criteria\":", filterCriteria, &output)
        members.integer("\"stale-date\":", staleDate, &output)
        members.integer("\"timestamp\":", timestamp, &output)
        if let event {
            members.key("\"event\":", &output)
            JSONWriter.writeString(event.rawValue, to: &output)
        }
        members.integer("\"dismissal-date\":", dismissalDate, &output)
        if let contentState {
            try contentState.requireObject("aps.content-state")
            members.key("\"content-state\":", &output)
            try contentState.write(to: &output, depth: 2)
        }
        members.string("\"attributes-type\":", attributesType, &output)
        if let attributes {
            try attributes.requireObject("aps.attributes")
            members.key("\"attributes\":", &output)
            try attributes.write(to: &output, depth: 2)
        }
        if inputPushToken { members.key("\"input-push-token\":1", &output) }
        members.string("\"input-push-channel\":", inputPushChannel, &output)
        if contentChanged { members.key("\"content-changed\":true", &output) }
        members.strings("\"url-args\":", urlArgs, &output)
        try members.others(otherKeys, known: APSKey.table, &output)
        output.append(ASCII.closeBrace)
    }
}

extension APNsAlertFields {
    @inlinable
    func write<Output: JSONOutput>(to output: inout Output) throws(JSONError) {
        output.append(ASCII.openBrace)
        var members = ObjectWriter<Output>()
        if let title {
            members.key("\"title\":", &output)
            title.write(to: &output)
        }
        members.string("\"subtitle\":", subtitle, &output)
        if let body {
            members.key("\"body\":", &output)
            body.write(to: &output)
        }
        members.string("\"launch-image\":", launchImage, &output)
        members.string("\"title-loc-key\":", titleLocKey, &output)
        members.strings("\"title-loc-args\":", titleLocArgs, &output)
        members.string("\"subtitle-loc-key\":", subtitleLocKey, &output)
        members.strings("\"subtitle-loc-args\":", subtitleLocArgs, &output)
        members.string("\"loc-key\":", locKey, &output)
        members.strings("\"loc-args\":", locArgs, &output)
        members.string("\"sound\":", sound, &output)
        try members.others(otherKeys, known: AlertKey.table, &output)
        output.append(ASCII.closeBrace)
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
    func write<Output: JSONOutput>(to output: inout Output) throws(JSONError) {
        JSONWriter.writeStatic(critical ? "{\"critical\":1,\"name\":" : "{\"critical\":0,\"name\":", to: &output)
        JSONWriter.writeString(name, to: &output)
        if let volume {
            guard (0...1).contains(volume) else {
                throw JSONError(.invalidValue, at: 0, "aps.sound.volume must be within 0...1 (got \(volume))")
            }
            JSONWriter.writeStatic(",\"volume\":", to: &output)
            try JSONWriter.writeDouble(volume, to: &output)
        }
        output.append(ASCII.closeBrace)
    }
}

extension JSON {
    @usableFromInline
    func requireObject(_ path: String) throws(JSONError) {
        switch self {
        case .object: return
        case .raw(let raw) where raw.bytes.first == ASCII.openBrace: return
        default: throw JSONError(.typeMismatch, at: 0, "\(path) must be an object")
        }
    }
}
