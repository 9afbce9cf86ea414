public import PushInternals
public import PushJSON

/// Why a payload is not one APNs accepts or an app can read, or does not fit its limit; also
/// what lint warns about. Syntax errors in the bytes are `JSONError`s.
///
/// `code` is stable and safe to match on. Messages never quote a value, only key names.
public typealias APNsPayloadError = CodedPayloadError<APNsPayloadErrorCode>

/// What ``APNsPayloadError/code`` says went wrong.
@nonexhaustive
public enum APNsPayloadErrorCode: String, ErrorCode {
    // The model.
    /// A key holds the wrong JSON type (`aps.badge` as a string).
    case typeMismatch
    /// A value out of its range or none of its names (a negative `aps.badge`, an unknown `aps.event`).
    case invalidValue
    /// A key the payload needs is missing (`aps`, or `aps.timestamp` in a Live Activity push).
    case missingKey
    /// A key appears twice in one dictionary, or a named field is set again among the other keys.
    case duplicateKey
    // Size.
    /// The encoded payload is over the limit; ``APNsPayloadError/size`` and ``APNsPayloadError/limit`` say by how much.
    case payloadTooLarge
    /// Even with its alert text emptied the payload is over ``APNsPayloadError/limit``.
    case cannotFit
    // Lint.
    /// A key APNs does not know (a warning; the key is passed through).
    case unknownKey
    /// A `content-available` push that also shows something (a warning).
    case backgroundPushWithAlert
    /// The payload does not match the push type it is sent as.
    case pushTypeMismatch
    /// A Live Activity's `content-state` or `attributes` does not match the app's declared
    /// fields (``APNsFieldSchema``): the device would drop the push.
    case schemaMismatch
}

extension APNsPayloadError {
    /// An error in a custom JSON value of the model (a repeated key, a non-finite number, nesting
    /// too deep), found while encoding it.
    @usableFromInline @inline(never)
    init(_ error: JSONError, path: String) {
        self.init(error.code == .duplicateKey ? .duplicateKey : .invalidValue, path: path, error.message)
    }

    /// `PATH RULE (got VALUE)`. The encoder's refusals are built out of line, here, so that its
    /// loops stay small enough to be inlined into their callers.
    @usableFromInline @inline(never)
    static func invalidValue(_ path: String, _ rule: StaticString, got value: String) -> APNsPayloadError {
        APNsPayloadError(.invalidValue, path: path, "\(path) \(rule) (got \(value))")
    }

    @usableFromInline @inline(never)
    static func tooLarge(size: Int, limit: Int, offset: Int? = nil, pushType: APNsPushType? = nil) -> APNsPayloadError {
        let limitName = pushType.map { "the \($0.rawValue) limit" } ?? "the limit"
        return APNsPayloadError(
            .payloadTooLarge, path: "", offset: offset, size: size, limit: limit, "payload is \(size) bytes, over \(limitName) of \(limit) bytes")
    }
}
