public import HTTP2Transport
import PushInternals
import PushJSON

#if canImport(FoundationEssentials)
public import struct FoundationEssentials.Date
#else
import struct Foundation.Date
#endif

/// Why APNs refused a notification: every reason in Apple's table, and any other it sends. Later
/// versions may name a reason that is `other` today: a `switch` outside this package needs a
/// `default` case.
@nonexhaustive
public enum APNsRejectionReason: Hashable, Sendable, CustomStringConvertible {
    case badCollapseId, badDeviceToken, badExpirationDate, badMessageId, badPriority, badTopic, deviceTokenNotForTopic
    case duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken, missingTopic, payloadEmpty, topicDisallowed
    case badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden, invalidProviderToken, missingProviderToken
    case unrelatedKeyIdInToken, badEnvironmentKeyIdInToken
    case badPath, methodNotAllowed, expiredToken, unregistered, payloadTooLarge, tooManyProviderTokenUpdates, tooManyRequests
    case internalServerError, serviceUnavailable, shutdown
    // Broadcast channels.
    case badChannelId, channelNotRegistered, missingChannelId, badMessageStoragePolicy, missingPushType, cannotCreateChannelConfig
    /// A reason this version does not know, as sent.
    case other(String)

    static let known: [String: APNsRejectionReason] = [
        "BadCollapseId": .badCollapseId, "BadDeviceToken": .badDeviceToken, "BadExpirationDate": .badExpirationDate,
        "BadMessageId": .badMessageId, "BadPriority": .badPriority, "BadTopic": .badTopic, "DeviceTokenNotForTopic": .deviceTokenNotForTopic,
        "DuplicateHeaders": .duplicateHeaders, "IdleTimeout": .idleTimeout, "InvalidPushType": .invalidPushType,
        "MissingDeviceToken": .missingDeviceToken, "MissingTopic": .missingTopic, "PayloadEmpty": .payloadEmpty,
        "TopicDisallowed": .topicDisallowed, "BadCertificate": .badCertificate, "BadCertificateEnvironment": .badCertificateEnvironment,
        "ExpiredProviderToken": .expiredProviderToken, "Forbidden": .forbidden, "InvalidProviderToken": .invalidProviderToken,
        "MissingProviderToken": .missingProviderToken, "UnrelatedKeyIdInToken": .unrelatedKeyIdInToken,
        "BadEnvironmentKeyIdInToken": .badEnvironmentKeyIdInToken, "BadPath": .badPath, "MethodNotAllowed": .methodNotAllowed,
        "ExpiredToken": .expiredToken, "Unregistered": .unregistered, "PayloadTooLarge": .payloadTooLarge,
        "TooManyProviderTokenUpdates": .tooManyProviderTokenUpdates, "TooManyRequests": .tooManyRequests,
        "InternalServerError": .internalServerError, "ServiceUnavailable": .serviceUnavailable, "Shutdown": .shutdown,
        "BadChannelId": .badChannelId, "ChannelNotRegistered": .channelNotRegistered, "MissingChannelId": .missingChannelId,
        "BadMessageStoragePolicy": .badMessageStoragePolicy, "MissingPushType": .missingPushType,
        "CannotCreateChannelConfig": .cannotCreateChannelConfig,
    ]

    public init(_ text: String) {
        self = Self.known[text] ?? .other(text)
    }

    /// The reason as APNs spells it.
    public var rawValue: String {
        if case .other(let text) = self { return text }
        return Self.known.first { $0.value == self }!.key
    }

    public var description: String { rawValue }

    /// The device token will never work again: stop sending to it (410, or a token APNs calls bad).
    public var meansTokenIsDead: Bool {
        switch self {
        case .unregistered, .expiredToken, .badDeviceToken: true
        default: false
        }
    }

    /// What every device answers when the sender is misconfigured (the wrong environment, topic,
    /// key or certificate), so that most of a send failing with it blames the sender, not the
    /// devices.
    public var pointsAtConfiguration: Bool {
        switch self {
        case .badDeviceToken, .deviceTokenNotForTopic, .topicDisallowed, .badTopic, .invalidProviderToken, .badCertificateEnvironment,
            .badCertificate:
            true
        default: false
        }
    }
}

/// What happened to one device's notification.
public enum APNsSendOutcome: Hashable, Sendable {
    /// APNs accepted it (200).
    case delivered
    /// APNs answered with an error status.
    case rejected(status: Int, reason: APNsRejectionReason, unregisteredSinceMilliseconds: Int64?)
    /// No answer came. `mayHaveBeenDelivered` is false only when the request was never written
    /// (the connection could not be made), so sending again cannot show the user a duplicate.
    case failed(APNsTransportFailure, mayHaveBeenDelivered: Bool)
}

extension APNsSendOutcome {
    /// How `apns_sends_total` labels it: the status (`none` unanswered), Apple's reason (`other`
    /// for one this version does not name, `none` delivered or unanswered).
    var metricLabels: (status: String, reason: String) {
        switch self {
        case .delivered: ("200", "none")
        case .rejected(let status, .other, _): (String(status), "other")
        case .rejected(let status, let reason, _): (String(status), reason.rawValue)
        case .failed: ("none", "none")
        }
    }
}

/// Why a request got no answer.
public typealias APNsTransportFailure = TransportFailure

/// The proxy the client's connections tunnel through.
public typealias APNsProxy = HTTPProxy
public typealias APNsProxyError = HTTPProxyError

/// One device's result of a send.
public struct APNsSendResult: Hashable, Sendable, CustomStringConvertible {
    public let deviceToken: String
    public let outcome: APNsSendOutcome
    /// `apns-id` of the answer: the request's, or the one APNs made.
    public let apnsID: String?
    /// `apns-unique-id`, which the development environment adds for looking a delivery up.
    public let uniqueID: String?
    /// Requests made for this device (retries included).
    public let attempts: Int

    /// A result as the client makes one; public for code that stores results or tests what it does with them.
    public init(deviceToken: String, outcome: APNsSendOutcome, apnsID: String? = nil, uniqueID: String? = nil, attempts: Int = 1) {
        self.deviceToken = deviceToken
        self.outcome = outcome
        self.apnsID = apnsID
        self.uniqueID = uniqueID
        self.attempts = attempts
    }

    public var isDelivered: Bool { outcome == .delivered }

    /// When APNs learnt the token stopped being valid (a 410's `timestamp`): drop the token unless
    /// the app registered it again after this time.
    public var unregisteredSince: Date? {
        guard case .rejected(_, _, let milliseconds?) = outcome else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// The status APNs answered, if any.
    public var status: Int? {
        switch outcome {
        case .delivered: 200
        case .rejected(let status, _, _): status
        case .failed: nil
        }
    }

    /// `TOKEN STATUS REASON APNS-ID` with the token shortened, as `pushcore send` prints it in full.
    public var description: String {
        "\(APNsClient.shortened(deviceToken)) \(summary)"
    }

    /// `STATUS REASON APNS-ID`: `200 - ID`, `410 Unregistered ID`, `- timeout -`. The reason and
    /// the id are the server's words: each is one column with its control characters escaped, so
    /// a line printed from it cannot be split, forged or turned into terminal commands.
    public var summary: String {
        let id = apnsID.map(Self.column) ?? "-"
        return switch outcome {
        case .delivered: "200 - \(id)"
        case .rejected(let status, let reason, _): "\(status) \(Self.column(reason.description)) \(id)"
        case .failed(let failure, _): "- \(Self.column(failure.description)) -"
        }
    }

    private static func column(_ text: String) -> String {
        String(escapingControls(text).map { $0 == " " ? "-" : $0 })
    }
}

/// `{"reason": "…", "timestamp": …}` from an error answer's body.
func parseErrorBody(_ bytes: [UInt8]) -> (reason: String?, timestamp: Int64?) {
    var parser = JSONParser()
    guard let document = try? parser.parse(bytes), document.root.kind == .object else { return (nil, nil) }
    let timestamp = document.root["timestamp"]?.int.map(Int64.init)
    return (document.root["reason"]?.string, timestamp)
}
