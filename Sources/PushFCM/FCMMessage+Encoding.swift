import PushJSON

extension FCMMessage {
    /// Appends `{"message":{…}}` to `buffer`: the keys in a fixed order, minified, minimal
    /// escaping. Reuse one buffer (`removeAll(keepingCapacity: true)`) and encoding allocates nothing.
    /// - Parameters:
    ///   - buffer: Bytes are appended; on error it is left as it was.
    ///   - limit: The most bytes the message may take, by default ``FCMLimits/messageSize``.
    /// - Throws: ``FCMMessageError``: `payloadTooLarge` with the size and the limit; `reservedDataKey`,
    ///   `invalidTTL` or `invalidValue` for a model FCM would refuse.
    public func encode(into buffer: inout [UInt8], limit: Int = FCMLimits.messageSize) throws(FCMMessageError) {
        // In place, as the APNs encoder writes: one bounds check per fragment, not an array append.
        if limit > 0, limit <= 64 << 10, #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            let size = try buffer.appendJSON(inPlaceUpTo: limit) { (output: inout BoundedOutput) throws(FCMMessageError) in try write(to: &output) }
            if size > limit { throw Self.tooLarge(size: size, limit: limit) }
            return
        }
        let start = buffer.count
        do {
            try buffer.withJSONOutput { (output: inout ByteArrayOutput) throws(FCMMessageError) in try write(to: &output) }
        } catch {
            buffer.removeSubrange(start...)
            throw error
        }
        let size = buffer.count - start
        guard size <= limit else {
            buffer.removeSubrange(start...)
            throw Self.tooLarge(size: size, limit: limit)
        }
    }

    /// The encoded message in a new array.
    public func encoded(limit: Int = FCMLimits.messageSize) throws(FCMMessageError) -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(into: &bytes, limit: limit)
        return bytes
    }

    /// The exact number of bytes ``encode(into:limit:)`` writes, counted by the same code without
    /// writing anything; no limit applies.
    public func encodedSize() throws(FCMMessageError) -> Int {
        var counter = ByteCountOutput()
        try write(to: &counter)
        return counter.count
    }

    static func tooLarge(size: Int, limit: Int) -> FCMMessageError {
        FCMMessageError(
            .payloadTooLarge, path: "", offset: limit, size: size, limit: limit, "the message takes \(size) bytes; FCM takes at most \(limit)")
    }

    func write<Output: JSONOutput>(to output: inout Output) throws(FCMMessageError) {
        JSONWriter.writeStatic(#"{"message":{"#, to: &output)
        var message = MemberWriter<Output>()
        switch target {
        case .token(let token): message.string(#""token":"#, token, &output)
        case .topic(let topic): message.string(#""topic":"#, topic, &output)
        case .condition(let condition): message.string(#""condition":"#, condition, &output)
        case nil: break
        }
        if let notification {
            message.open(#""notification":"#, &output)
            var fields = MemberWriter<Output>()
            fields.string(#""title":"#, notification.title, &output)
            fields.string(#""body":"#, notification.body, &output)
            fields.string(#""image":"#, notification.image, &output)
            output.append(UInt8(ascii: "}"))
        }
        try message.data(#""data":"#, data, path: "message.data", &output)
        if let android { try message.android(android, &output) }
        if let apns {
            message.open(#""apns":"#, &output)
            var fields = MemberWriter<Output>()
            try fields.data(#""headers":"#, apns.headers, path: nil, &output)
            fields.raw(#""payload":"#, apns.payload, &output)
            output.append(UInt8(ascii: "}"))
        }
        if let webpush {
            message.open(#""webpush":"#, &output)
            var fields = MemberWriter<Output>()
            try fields.data(#""headers":"#, webpush.headers, path: nil, &output)
            try fields.data(#""data":"#, webpush.data, path: "message.webpush.data", &output)
            fields.raw(#""notification":"#, webpush.notification, &output)
            if let link = webpush.link {
                guard FCMRules.isHTTPSLink(link) else {
                    throw FCMMessageError(.invalidValue, path: "message.webpush.fcm_options.link", "must be an https:// URL")
                }
                fields.open(#""fcm_options":"#, &output)
                JSONWriter.writeStatic(#""link":"#, to: &output)
                JSONWriter.writeString(link, to: &output)
                output.append(UInt8(ascii: "}"))
            }
            output.append(UInt8(ascii: "}"))
        }
        if let analyticsLabel {
            guard FCMRules.isAnalyticsLabel(analyticsLabel) else {
                throw FCMMessageError(
                    .invalidValue, path: "message.fcm_options.analytics_label", "must be 1 to 50 characters from A-Z a-z 0-9 - _ . ~ %")
            }
            message.open(#""fcm_options":"#, &output)
            JSONWriter.writeStatic(#""analytics_label":"#, to: &output)
            JSONWriter.writeString(analyticsLabel, to: &output)
            output.append(UInt8(ascii: "}"))
        }
        JSONWriter.writeStatic("}}", to: &output)
    }
}

/// Writes the members of one object, placing the commas.
struct MemberWriter<Output: JSONOutput> {
    private var isFirst = true

    /// Writes `"name":` (given with its quotes and colon), after a comma unless it is the first.
    mutating func key(_ member: StaticString, _ output: inout Output) {
        if !isFirst { output.append(UInt8(ascii: ",")) }
        isFirst = false
        JSONWriter.writeStatic(member, to: &output)
    }

    /// Writes `"name":{`; the caller writes the members and the `}`.
    mutating func open(_ member: StaticString, _ output: inout Output) {
        key(member, &output)
        output.append(UInt8(ascii: "{"))
    }

    mutating func string(_ member: StaticString, _ value: String?, _ output: inout Output) {
        guard let value else { return }
        key(member, &output)
        JSONWriter.writeString(value, to: &output)
    }

    mutating func raw(_ member: StaticString, _ value: RawJSON?, _ output: inout Output) {
        guard let value else { return }
        key(member, &output)
        value.bytes.withUnsafeBytes { output.append($0) }
    }

    /// A string map, left out when empty. With a `path`, it is a `data` map: its reserved keys are refused.
    mutating func data(_ member: StaticString, _ map: FCMStringMap, path: String?, _ output: inout Output) throws(FCMMessageError) {
        guard !map.isEmpty else { return }
        key(member, &output)
        output.append(UInt8(ascii: "{"))
        var entries = MemberWriter<Output>()
        for entry in map.entries {
            if let path, FCMLimits.isReservedDataKey(entry.key) {
                throw FCMMessageError(.reservedDataKey, path: path, "the data key \"\(entry.key)\" is reserved by FCM")
            }
            if !entries.isFirst { output.append(UInt8(ascii: ",")) }
            entries.isFirst = false
            JSONWriter.writeString(entry.key, to: &output)
            output.append(UInt8(ascii: ":"))
            JSONWriter.writeString(entry.value, to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    mutating func android(_ android: FCMAndroidConfig, _ output: inout Output) throws(FCMMessageError) {
        open(#""android":"#, &output)
        var fields = MemberWriter<Output>()
        fields.string(#""collapse_key":"#, android.collapseKey, &output)
        if let priority = android.priority {
            fields.key(#""priority":"#, &output)
            JSONWriter.writeStatic(priority == .high ? #""HIGH""# : #""NORMAL""#, to: &output)
        }
        if let ttl = android.ttl {
            guard ttl >= .zero && ttl <= FCMLimits.maximumTTL else {
                throw FCMMessageError(.invalidTTL, path: "message.android.ttl", "must be from 0 to four weeks")
            }
            fields.key(#""ttl":"#, &output)
            FCMRules.writeDuration(ttl, to: &output)
        }
        fields.string(#""restricted_package_name":"#, android.restrictedPackageName, &output)
        try fields.data(#""data":"#, android.data, path: "message.android.data", &output)
        if let notification = android.notification {
            if let color = notification.color, !FCMRules.isColor(color) {
                throw FCMMessageError(.invalidValue, path: "message.android.notification.color", "must be #rrggbb")
            }
            fields.open(#""notification":"#, &output)
            var shown = MemberWriter<Output>()
            shown.string(#""title":"#, notification.title, &output)
            shown.string(#""body":"#, notification.body, &output)
            shown.string(#""icon":"#, notification.icon, &output)
            shown.string(#""color":"#, notification.color, &output)
            shown.string(#""sound":"#, notification.sound, &output)
            shown.string(#""tag":"#, notification.tag, &output)
            shown.string(#""click_action":"#, notification.clickAction, &output)
            shown.string(#""channel_id":"#, notification.channelID, &output)
            shown.string(#""image":"#, notification.image, &output)
            output.append(UInt8(ascii: "}"))
        }
        if let directBootOK = android.directBootOK {
            fields.key(#""direct_boot_ok":"#, &output)
            JSONWriter.writeStatic(directBootOK ? "true" : "false", to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}

/// Value rules the model and the linter share.
enum FCMRules {
    /// `#rrggbb`.
    static func isColor(_ color: String) -> Bool {
        var color = color
        return color.withUTF8 { isColor(UnsafeRawBufferPointer($0)) }
    }

    static func isColor(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count == 7 && bytes[0] == UInt8(ascii: "#") && bytes.dropFirst().allSatisfy(isHexDigit)
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }

    static func isAnalyticsLabel(_ label: String) -> Bool {
        var label = label
        return label.withUTF8 { isAnalyticsLabel(UnsafeRawBufferPointer($0)) }
    }

    /// FCM's `^[a-zA-Z0-9-_.~%]{1,50}$`.
    static func isAnalyticsLabel(_ bytes: UnsafeRawBufferPointer) -> Bool {
        (1...50).contains(bytes.count)
            && bytes.allSatisfy { byte in
                let lower = byte | 0x20
                return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~")
                    || byte == UInt8(ascii: "%")
            }
    }

    static func isHTTPSLink(_ link: String) -> Bool {
        link.utf8.count > 8 && link.utf8.starts(with: "https://".utf8)
    }

    /// A protobuf JSON duration: whole seconds, then 3, 6 or 9 digits of fraction when there is one, then `s`.
    static func writeDuration<Output: JSONOutput>(_ duration: Duration, to output: inout Output) {
        let (seconds, attoseconds) = duration.components
        output.append(UInt8(ascii: "\""))
        JSONWriter.writeInteger(Int(seconds), to: &output)
        var nanoseconds = Int(attoseconds / 1_000_000_000)
        if nanoseconds > 0 {
            var digits = 9
            while digits > 3 && nanoseconds % 1000 == 0 {
                nanoseconds /= 1000
                digits -= 3
            }
            output.append(UInt8(ascii: "."))
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor > 0 {
                output.append(UInt8(ascii: "0") + UInt8(nanoseconds / divisor % 10))
                divisor /= 10
            }
        }
        JSONWriter.writeStatic("s\"", to: &output)
    }

    /// Reads a protobuf JSON duration (`"3600s"`, `"1.5s"`): its length in nanoseconds, or nil
    /// when it is not one (a sign, no `s`, more than nine digits of fraction).
    static func durationNanoseconds(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard bytes.count >= 2, bytes[bytes.count - 1] == UInt8(ascii: "s") else { return nil }
        var seconds: Int64 = 0, fraction: Int64 = 0, fractionDigits = 0, index = 0, wholeDigits = 0
        while index < bytes.count - 1, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            guard wholeDigits < 12 else { return nil }
            seconds = seconds * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            wholeDigits += 1
            index += 1
        }
        guard wholeDigits > 0 else { return nil }
        if index < bytes.count - 1 {
            guard bytes[index] == UInt8(ascii: ".") else { return nil }
            index += 1
            while index < bytes.count - 1 {
                guard fractionDigits < 9, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
                fraction = fraction * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                fractionDigits += 1
                index += 1
            }
            guard fractionDigits > 0 else { return nil }
            for _ in fractionDigits..<9 { fraction *= 10 }
        }
        return seconds * 1_000_000_000 + fraction
    }
}
