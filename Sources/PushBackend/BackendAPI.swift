package import APNs
import Crypto
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
package import Metrics
package import NIOCore
import NotificationHubs
package import PushCore
import PushFCM
import PushInternals
import Tracing

#if canImport(FoundationEssentials)
import struct FoundationEssentials.Data
import struct FoundationEssentials.Date
#else
import struct Foundation.Data
import struct Foundation.Date
#endif

/// APNs straight from the backend: the client, the app's bundle ID, and the Live Activity types
/// pushes must decode into; and a client of the other environment, with the same key, for a
/// second opinion on the tokens this one calls bad.
package struct DirectAPNs: Sendable {
    let client: APNsClient
    let otherEnvironment: APNsClient?
    let topic: String
    let liveActivity: APNsLiveActivitySchema?
    let policy = APNsTokenPolicy()

    package init(client: APNsClient, otherEnvironment: APNsClient?, topic: String, liveActivity: APNsLiveActivitySchema?) {
        self.client = client
        self.otherEnvironment = otherEnvironment
        self.topic = topic
        self.liveActivity = liveActivity
    }

    /// What asks the other environment about a token: a background push with no content, so
    /// that a device of that environment is woken at most, and shown nothing.
    static let probe = APNsPayload(aps: APNsAPS(contentAvailable: true))

    /// The other environment's answers for the tokens this one called `BadDeviceToken`, by index
    /// into `results`; empty without a client of the other environment, or when it could not be
    /// asked (a token without an answer is then kept).
    func secondOpinions(on results: [APNsSendResult]) async -> [Int: APNsSendResult] {
        guard let otherEnvironment else { return [:] }
        let suspects = results.indices.filter {
            if case .rejected(_, .badDeviceToken, _) = results[$0].outcome { true } else { false }
        }
        guard !suspects.isEmpty else { return [:] }
        let headers = APNsHeaders(for: Self.probe, topic: topic)
        guard let answers = try? await otherEnvironment.send(Self.probe, headers: headers, to: suspects.map { results[$0].deviceToken }) else {
            return [:]
        }
        return Dictionary(uniqueKeysWithValues: zip(suspects, answers))
    }
}

/// The HTTP API: the operations of `openapi.yaml`, whose server side is generated
/// (``APIProtocol``, in `Generated/`), implemented one tag a file (`BackendAPI+Registrations.swift`,
/// `+Notifications`, `+Images`, `+LiveActivities`, `+Channels`, `+Service`), and the three written by
/// hand beside them (the upload and the fetch of what a push names). `BackendRouter.swift` puts
/// them on the router; another method on their paths is answered 405 with `Allow`.
package struct BackendAPI: APIProtocol {
    package typealias Context = BackendRequestContext

    static let maximumRequestBody = 64 << 10

    let store: any BackendStore
    let authenticator: Authenticator
    let delivery: any PushDeliverer
    let images: ResourceRegistry
    let defaultImage: String
    let metrics: BackendMetrics
    /// Registrations of one device token, one at a time in this process: each stores its row and
    /// brings the hub in line before the next starts, so the hub's writes keep the rows' order.
    let registrations = KeyedSerializer<String>()
    /// Notifications each user may create: a burst, then a steady rate; one per device reached.
    let sendBudget: RateLimiter<String>
    let registrationLimits: RegistrationLimits
    /// Registrations of devices and activity tokens each user may make.
    let registrationBudget: RateLimiter<String>
    /// Each embedded image as it is served, made once.
    let servedImages: [String: ServedImage]
    /// What users may upload.
    let imageLimits: ImageLimits
    /// Uploaded images as they are served, read from the store once while they are in use.
    let uploadedImages: UploadedImageCache
    /// `openapi.yaml` as this server's delivery serves it.
    let contract: [UInt8]

    /// An image as every response serves it: embedded, or uploaded.
    package struct ServedImage: Sendable {
        /// The image's bytes in one buffer that every response shares: a response, or a range of
        /// one, is a slice of it, so no response copies the image and its body is one write. (The
        /// embedded images are compiled in and small; this second copy of each is made once.)
        package let bytes: ByteBuffer
        package let entityTag: EntityTag
        package let contentType: ContentType
        /// The `Repr-Digest` (RFC 9530): the SHA-256 a phone can check the whole image against,
        /// however many ranges it arrived in.
        package let digest: String

        package init(bytes: ByteBuffer, entityTag: EntityTag, contentType: ContentType, digest: String) {
            self.bytes = bytes
            self.entityTag = entityTag
            self.contentType = contentType
            self.digest = digest
        }
    }

    package init(
        store: any BackendStore, authenticator: Authenticator, delivery: any PushDeliverer, images: ResourceRegistry, defaultImage: String,
        sendQuota: RateLimit, registrationLimits: RegistrationLimits = RegistrationLimits(), imageLimits: ImageLimits = ImageLimits(),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.imageLimits = imageLimits
        uploadedImages = UploadedImageCache(capacity: imageLimits.cacheBytes)
        self.registrationLimits = registrationLimits
        registrationBudget = RateLimiter(registrationLimits.rate)
        self.store = store
        metrics = BackendMetrics(factory: metricsFactory)
        self.authenticator = authenticator
        self.delivery = delivery
        self.images = images
        self.defaultImage = defaultImage
        sendBudget = RateLimiter(sendQuota)
        var served: [String: ServedImage] = [:]
        for name in images.names {
            guard let resource = try? images.resource(named: name) else { continue }
            served[name] = ServedImage(
                bytes: ByteBuffer(bytes: resource.bytes), entityTag: resource.entityTag, contentType: resource.contentType,
                digest: "sha-256=:\(Base64.encodedString(SHA256.hash(data: resource.bytes))):")
        }
        servedImages = served
        contract = Contract.document(withLiveActivities: delivery.apns != nil)
    }

    // MARK: Shared by the handlers

    /// Device and ActivityKit push tokens as APNs takes them: whole bytes in hex, at least the 32
    /// of today's tokens (Apple may lengthen them, to at most 100 bytes here). A shorter one would
    /// be accepted here only for APNs to refuse every push to it.
    static func isAPNsToken(_ token: String) -> Bool {
        let digits = token.utf8
        return (64...200).contains(digits.count) && digits.count % 2 == 0 && digits.allSatisfy { hexDigitValue($0) <= 15 }
    }

    /// One registration of the caller's budget, or 429 with how long to wait.
    func takeRegistrationBudget(_ caller: Authenticator.User) throws(APIError) {
        if let wait = registrationBudget.take(caller.name) {
            throw APIError(
                status: 429, code: .rateLimited, "too many registrations; try again later",
                headers: [("Retry-After", String(wait.retryAfterSeconds))])
        }
    }

    /// Ids are 32 hex digits; anything else cannot exist, and matches nothing.
    static func notificationKey(_ id: String) -> String {
        id.utf8.count == 32 && id.utf8.allSatisfy { hexDigitValue($0) <= 15 } ? id.lowercased() : ""
    }

}

/// `count` random bytes in lowercase hex: request ids, notification and installation ids (128 bits).
/// A multiple of eight: each draw from the system generator is a system call, and gives a word.
func randomHex(bytes count: Int) -> String {
    precondition(count % 8 == 0, "random ids are whole words")
    var generator = SystemRandomNumberGenerator()
    var text = ""
    for _ in 0..<count / 8 { text += Hex.lowercase(generator.next() as UInt64) }
    return text
}
