public import PushInternals
import PushJSON

/// The APNs request headers that follow from a payload, and their validation.
public struct APNsHeaders: Sendable, Hashable {
    public var pushType: APNsPushType
    /// 10 (deliver now), 5 (as power allows) or 1 (lowest); background pushes must use 5.
    public var priority: Int
    /// Unix seconds after which APNs stops trying; `0` means deliver once or not at all.
    public var expiration: Int?
    /// At most 64 bytes; notifications with the same id replace each other on the device.
    public var collapseID: String?
    /// A UUID in the 8-4-4-4-12 form, lowercase as APNs returns it.
    public var id: String?
    /// Usually the app's bundle ID, plus the suffix the push type requires.
    public var topic: String?

    public init(
        pushType: APNsPushType, priority: Int? = nil, expiration: Int? = nil, collapseID: String? = nil,
        id: String? = nil, topic: String? = nil
    ) {
        self.pushType = pushType
        self.priority = priority ?? Self.defaultPriority(for: pushType)
        self.expiration = expiration
        self.collapseID = collapseID
        self.id = id
        self.topic = topic
    }

    /// Headers for `payload`: the push type it implies and that type's priority.
    /// - Parameters:
    ///   - payload: The payload the headers go with.
    ///   - topic: The app's bundle ID; the push type's suffix (``APNsPushType/topicSuffix``) is
    ///     added when it is not there yet.
    ///   - collapseID: `apns-collapse-id`: notifications with the same one show as one.
    ///   - expiration: `apns-expiration`, Unix seconds; 0 for one attempt only.
    ///   - id: `apns-id`, a UUID; APNs makes one when nil.
    public init(for payload: APNsPayload, topic: String? = nil, collapseID: String? = nil, expiration: Int? = nil, id: String? = nil) {
        let pushType = Self.inferredPushType(for: payload)
        self.init(
            pushType: pushType, expiration: expiration, collapseID: collapseID, id: id, topic: topic.map { Self.topic($0, for: pushType) })
    }

    /// `bundleID` with the suffix `pushType` requires (`.voip`, `.push-type.liveactivity`, …),
    /// unless it ends with it already.
    public static func topic(_ bundleID: String, for pushType: APNsPushType) -> String {
        guard let suffix = pushType.topicSuffix, !bundleID.hasSuffix(suffix) else { return bundleID }
        return bundleID + suffix
    }

    /// `liveactivity` for a Live Activity event, `widgets` for a widget reload, `background` for
    /// a push with nothing to show, `alert` otherwise.
    public static func inferredPushType(for payload: APNsPayload) -> APNsPushType {
        APNsRules.inferredPushType(payload.aps.facts)
    }

    public static func defaultPriority(for pushType: APNsPushType) -> Int {
        switch pushType {
        case .background, .fileprovider, .widgets: return 5
        default: return 10
        }
    }

    /// Name/value pairs in the order APNs documents them; absent optional headers are left out.
    public var fields: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [("apns-push-type", pushType.rawValue), ("apns-priority", String(priority))]
        if let expiration { fields.append(("apns-expiration", String(expiration))) }
        if let collapseID { fields.append(("apns-collapse-id", collapseID)) }
        if let id { fields.append(("apns-id", id)) }
        if let topic { fields.append(("apns-topic", topic)) }
        return fields
    }

    /// Checks every header against APNs' rules.
    /// - Throws: ``ValidationError`` naming the header and what is wrong.
    public func validate() throws(ValidationError) {
        guard [1, 5, 10].contains(priority) else {
            throw ValidationError(.invalidPriority, header: "apns-priority", "must be 1, 5 or 10 (got \(priority))")
        }
        if pushType == .background && priority != 5 {
            throw ValidationError(.invalidPriority, header: "apns-priority", "background pushes must use priority 5")
        }
        if let expiration, expiration < 0 {
            throw ValidationError(.invalidExpiration, header: "apns-expiration", "must be 0 or a Unix time in seconds")
        }
        if let collapseID {
            guard collapseID.utf8.count <= APNsLimits.collapseIDSize else {
                throw ValidationError(
                    .invalidCollapseID, header: "apns-collapse-id",
                    "is \(collapseID.utf8.count) bytes; at most \(APNsLimits.collapseIDSize) are allowed")
            }
            guard !collapseID.isEmpty else {
                throw ValidationError(.invalidCollapseID, header: "apns-collapse-id", "must not be empty")
            }
            // A header value cannot carry them, and a CR or LF would start a header of its own.
            guard !collapseID.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw ValidationError(.invalidCollapseID, header: "apns-collapse-id", "must not contain control characters")
            }
        }
        if let id, !Self.isUUID(id) {
            throw ValidationError(.invalidID, header: "apns-id", "must be a UUID such as 123e4567-e89b-12d3-a456-4266554400a0")
        }
        if let topic {
            guard !topic.isEmpty, !topic.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else {
                throw ValidationError(.invalidTopic, header: "apns-topic", "must be a non-empty bundle ID without spaces")
            }
            if let suffix = pushType.topicSuffix {
                guard topic.hasSuffix(suffix), topic.count > suffix.count else {
                    throw ValidationError(
                        .invalidTopic, header: "apns-topic", "\(pushType.rawValue) pushes need the bundle ID followed by \(suffix)")
                }
            } else if let other = APNsPushType.allCases.compactMap(\.topicSuffix).first(where: { topic.hasSuffix($0) }) {
                throw ValidationError(
                    .invalidTopic, header: "apns-topic", "ends with \(other), which belongs to another push type than \(pushType.rawValue)")
            }
        }
    }

    /// 8-4-4-4-12 hexadecimal digits, either case.
    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                if byte != ASCII.minus { return false }
            } else if hexDigitValue(byte) > 15 {
                return false
            }
        }
        return true
    }

    public struct ValidationError: CodedError {
        @nonexhaustive
        public enum Code: String, ErrorCode {
            case invalidPriority, invalidExpiration, invalidCollapseID, invalidID, invalidTopic
        }

        public let code: Code
        public let header: String
        public let message: String

        public init(_ code: Code, header: String, _ message: String) {
            self.code = code
            self.header = header
            self.message = message
        }

        public var description: String { "\(header) \(message)" }
    }
}
