public import PushInternals
public import PushJSON

/// What ``FCMMessageError/code`` says went wrong: stable, and safe to match on.
@nonexhaustive
public enum FCMMessageErrorCode: String, ErrorCode {
    /// The document is not `{"message": {…}}`.
    case missingMessage
    /// A key holds the wrong JSON type (`notification.title` as a number).
    case typeMismatch
    /// A key FCM does not know: its API refuses the whole request.
    case unknownKey
    /// A key appears twice in one object.
    case duplicateKey
    /// More than one of `token`, `topic` and `condition`.
    case multipleTargets
    /// A `data` value that is not a string: FCM's data maps hold strings only.
    case dataValueNotString
    /// A `data` key FCM keeps for itself (`from`, `notification`, `message_type`, or one that
    /// starts with `google.` or `gcm.`).
    case reservedDataKey
    /// An `android.ttl` that is not a duration such as `"3600s"` or `"1.5s"`, or is over four weeks.
    case invalidTTL
    /// An `android.priority` other than `normal` or `high`.
    case invalidPriority
    /// A value out of its range or form (a color that is not `#rrggbb`, a link that is not HTTPS).
    case invalidValue
    /// The encoded message is over the limit; ``FCMMessageError/size`` and ``FCMMessageError/limit`` say by how much.
    case payloadTooLarge
}

/// Why a message is not one FCM's HTTP v1 API accepts, or does not fit its limit; also what
/// ``FCMLinter`` reports. Syntax errors in the bytes are `JSONError`s.
///
/// `code` is stable and safe to match on. Messages never quote a value, only key names.
public typealias FCMMessageError = CodedPayloadError<FCMMessageErrorCode>

/// FCM's limits and reserved names.
public enum FCMLimits {
    /// The most bytes a message may take. FCM documents 4,096 bytes for a message's payload;
    /// PushCore measures the whole `{"message":…}` body, so what fits here fits there.
    public static let messageSize = 4096
    /// The longest `android.ttl` FCM keeps a message for: four weeks.
    public static let maximumTTL = Duration.seconds(28 * 24 * 3600)
    /// Whether FCM refuses `key` in a `data` map: it keeps `from`, `notification`, `message_type`
    /// and every key starting with `google.` or `gcm.` for itself.
    public static func isReservedDataKey(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { isReservedDataKey(UnsafeRawBufferPointer($0)) }
    }

    /// The same test on a key's UTF-8 bytes, for the linter (no allocation).
    static func isReservedDataKey(_ key: UnsafeRawBufferPointer) -> Bool {
        func starts(with name: StaticString) -> Bool {
            guard key.count >= name.utf8CodeUnitCount else { return false }
            for index in 0..<name.utf8CodeUnitCount where key[index] != name.utf8Start[index] { return false }
            return true
        }
        func equals(_ name: StaticString) -> Bool { key.count == name.utf8CodeUnitCount && starts(with: name) }
        return equals("from") || equals("notification") || equals("message_type") || starts(with: "google.") || starts(with: "gcm.")
    }
}
