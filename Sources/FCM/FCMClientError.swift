public import PushInternals

/// A client that cannot be made (an endpoint or token URI that is not `https://host[:port]`, TLS
/// settings BoringSSL refuses), or a send that could not start: the message breaks FCM's rules.
public struct FCMClientError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        case invalidEndpoint
        case invalidTLSConfiguration
        /// A message FCM would refuse (a reserved data key, a TTL out of range, …).
        case invalidMessage
        /// A message over FCM's 4,096 bytes.
        case payloadTooLarge
        /// A topic name or condition FCM would refuse.
        case invalidTarget
    }

    public let code: Code
    public let message: String

    public var description: String { message }
}
