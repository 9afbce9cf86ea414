/// What to do with a stored registration token after a send to it.
public enum FCMTokenAction: Hashable, Sendable {
    case keep
    /// Delete the registration: FCM will not deliver to this token again.
    case delete(FCMTokenDeletionReason)
}

public enum FCMTokenDeletionReason: Hashable, Sendable {
    /// `UNREGISTERED`: the app was uninstalled, or the token expired or was deleted.
    case unregistered
    /// `SENDER_ID_MISMATCH`: the token belongs to another project; this sender can never reach it.
    case senderIDMismatch
    /// Not a token at all: a character no registration token has, so it was never sent.
    case malformed
}

/// Turns per-token results into actions on stored registrations. Only `UNREGISTERED` and
/// `SENDER_ID_MISMATCH` delete: `INVALID_ARGUMENT` may be the message's fault as much as the
/// token's, and throttling, server errors and authentication failures say nothing about the token.
public struct FCMTokenPolicy: Sendable {
    public init() {}

    public func action(for result: FCMSendResult) -> FCMTokenAction {
        switch result.outcome {
        case .rejected(_, .unregistered, _): .delete(.unregistered)
        case .rejected(_, .senderIDMismatch, _): .delete(.senderIDMismatch)
        case .failed(.invalidRegistrationToken, _): .delete(.malformed)
        case .delivered, .rejected, .failed: .keep
        }
    }
}
