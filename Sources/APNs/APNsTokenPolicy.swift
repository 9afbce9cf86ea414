#if canImport(FoundationEssentials)
import struct FoundationEssentials.Date
#else
import struct Foundation.Date
#endif

/// What to do with a stored device token after a send to it.
public enum APNsTokenAction: Hashable, Sendable {
    case keep
    /// Delete the registration: APNs will not deliver to this token again.
    case delete(APNsTokenDeletionReason)
    /// APNs refused the token in this environment and the other one accepts it: the app was
    /// built for the other environment (a development build on a production server, say). Keep
    /// it and tell someone; nothing is re-registered behind the app's back.
    case environmentMismatch
}

public enum APNsTokenDeletionReason: Hashable, Sendable {
    /// 410: the app was removed or stopped taking notifications after the token was registered.
    case unregistered
    /// 400 `BadDeviceToken` (in both environments, when the other was asked).
    case badDeviceToken
    /// 400 `DeviceTokenNotForTopic`: the token belongs to another app.
    case notForTopic
    /// Not a token at all: a character no device token has, so it was never sent.
    case malformed
}

/// Turns per-device results into actions on stored registrations. Only answers that say the token
/// itself is dead delete anything; timeouts, throttling, server errors and authentication failures
/// say nothing about the token and keep it.
public struct APNsTokenPolicy: Sendable {
    public init() {}

    /// - Parameters:
    ///   - result: The send's result for the token.
    ///   - registeredAt: When the app last registered this token with the server. A 410 whose
    ///     timestamp is not later than this predates a re-registration, which wins.
    ///   - otherEnvironment: The same token's result from the other environment, when a
    ///     `BadDeviceToken` was checked there.
    public func action(for result: APNsSendResult, registeredAt: Date, otherEnvironment: APNsSendResult? = nil) -> APNsTokenAction {
        switch result.outcome {
        case .delivered:
            return .keep
        case .failed(.invalidDeviceToken, _):
            return .delete(.malformed)
        case .failed:
            return .keep
        case .rejected(_, .unregistered, _), .rejected(_, .expiredToken, _):
            // APNs sends the time with every 410; without one there is nothing to weigh against
            // the registration, and APNs' word that the token is inactive stands.
            guard let since = result.unregisteredSince else { return .delete(.unregistered) }
            return since > registeredAt ? .delete(.unregistered) : .keep
        case .rejected(_, .badDeviceToken, _):
            return otherEnvironment?.isDelivered == true ? .environmentMismatch : .delete(.badDeviceToken)
        case .rejected(_, .deviceTokenNotForTopic, _):
            return .delete(.notForTopic)
        case .rejected:
            return .keep
        }
    }
}
