public import PushInternals

/// A client that cannot be made (an endpoint that is not `https://host[:port]`, a TLS setting
/// BoringSSL refuses), or a send that could not start: the headers or the payload break APNs' rules.
public struct APNsClientError: CodedError {
    @nonexhaustive
    public enum Code: String, ErrorCode {
        // Making the client.
        /// An endpoint that is not `https://host[:port]`.
        case invalidEndpoint
        /// TLS settings BoringSSL refuses, such as a certificate and a key that do not match.
        case invalidTLSConfiguration
        // Starting a send.
        /// A header APNs would refuse, or no `apns-topic`.
        case invalidHeaders
        /// A payload that cannot be encoded, or a broadcast without a Live Activity event.
        case invalidPayload
        /// A payload over its push type's limit.
        case payloadTooLarge
        /// A bundle ID or channel id that is not well formed.
        case invalidChannel
        /// The signing key could not mint a provider token.
        case noProviderToken
    }

    public let code: Code
    public let message: String

    public var description: String { message }
}
