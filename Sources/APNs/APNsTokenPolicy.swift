import PushJSON

#if canImport(FoundationEssentials)
public import struct FoundationEssentials.Date
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
    /// 400 `BadDeviceToken` in both environments.
    case badDeviceToken
    /// 400 `DeviceTokenNotForTopic`: the token belongs to another app.
    case notForTopic
    /// Not a token at all: a character no device token has, so it was never sent.
    case malformed
}

/// Turns per-device results into actions on stored registrations. Only answers that say the token
/// itself is dead delete anything; timeouts, throttling, server errors and authentication failures
/// say nothing about the token and keep it.
///
/// `BadDeviceToken` is also what every token answers when the server points at the wrong
/// environment, so it deletes a well-formed token only on a second opinion: the other environment
/// refusing the same token. Without one the token is kept. A send that a configuration error fails
/// for most devices (``APNsRejectionReason/pointsAtConfiguration``) should delete nothing at all;
/// that judgement spans a whole send, so it is the caller's.
public struct APNsTokenPolicy: Sendable {
    public init() {}

    /// - Parameters:
    ///   - result: The send's result for the token.
    ///   - registeredAt: When the app last registered this token with the server. A 410 whose
    ///     timestamp is not later than this predates a re-registration, which wins.
    ///   - otherEnvironment: The same token's result from the other environment, when a
    ///     `BadDeviceToken` was checked there; without it a well-formed token is kept.
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
            // No environment takes a token that is not hexadecimal digits; there is nobody to ask.
            guard Self.isHexadecimal(result.deviceToken) else { return .delete(.malformed) }
            switch otherEnvironment?.outcome {
            case .delivered?: return .environmentMismatch
            case .rejected(_, let reason, _)? where reason.meansTokenIsDead: return .delete(.badDeviceToken)
            default: return .keep
            }
        case .rejected(_, .deviceTokenNotForTopic, _):
            return .delete(.notForTopic)
        case .rejected:
            return .keep
        }
    }

    static func isHexadecimal(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.allSatisfy { hexDigitValue($0) <= 15 }
    }
}
