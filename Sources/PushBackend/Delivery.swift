import APNs
package import FCM
import HTTPTypes
package import Logging
package import Metrics
package import NotificationHubs
import PushCore
import PushFCM
import Synchronization

#if canImport(FoundationEssentials)
import struct FoundationEssentials.Date
#else
import struct Foundation.Date
#endif

/// Where the backend's pushes go, one implementation per way: a notification hub
/// (``HubDelivery``), or straight from the backend to APNs, and to FCM with direct delivery
/// (``DirectDelivery``). The API asks it what to do; only the features just APNs has (Live
/// Activities, channels) ask for ``apns``.
package protocol PushDeliverer: Sendable {
    /// Brings the push service in line with what is stored for `deviceToken` (a token of
    /// `platform`), after its registration was saved or deleted; `replaced` is the row there was before.
    func registrationChanged(deviceToken: String, platform: Installation.Platform, replacing replaced: RegistrationRecord?) async throws
    /// Whether pushes reach devices of this platform.
    func reaches(_ platform: Installation.Platform) -> Bool
    /// What became of a send, as the hub reports it; nil when it cannot say (yet).
    func outcome(ofHubMessage id: String) async -> NotificationDetails?
    /// Straight from the backend, which Live Activities and channels need (APNs); nil through a hub.
    var apns: DirectDelivery? { get }
    /// The hub, which sends notifications itself; nil straight to APNs, where they go through the
    /// delivery queue (``DeliveryWorker``).
    var hubDelivery: HubDelivery? { get }
}

/// A notification's push in both shapes it travels in: the APNs payload sent straight to Apple,
/// and the values a hub puts into each device's template of ``kind`` (``HubTemplates``).
package struct OutgoingPush: Sendable {
    package enum Kind: String, Sendable, CaseIterable {
        case rich, richAlert, secure, secureAlert

        /// The flow's APNs payload; `id` is the `richId` or the `secureId`, `message` a secure
        /// alert's placeholder.
        func apnsPayload(id: String, richType: String, message: String) -> APNsPayload {
            switch self {
            case .rich: .silentRichPush(richId: id, richType: richType, richMessage: message)
            case .richAlert: .richAlert(richId: id, richType: richType, message: message)
            case .secure: .silentSecurePush(secureId: id)
            case .secureAlert: .secureAlert(secureId: id, placeholder: message)
            }
        }

        /// The flow's FCM v1 message, with the same keys.
        func fcmMessage(id: String, richType: String, message: String) -> FCMMessage {
            switch self {
            case .rich: .silentRichPush(richId: id, richType: richType, richMessage: message)
            case .richAlert: .richAlert(richId: id, richType: richType, message: message)
            case .secure: .silentSecurePush(secureId: id)
            case .secureAlert: .secureAlert(secureId: id, placeholder: message)
            }
        }
    }

    let kind: Kind
    /// Checked against APNs' limit, its alert shortened to fit.
    let apnsPayload: APNsPayload
    /// The template properties; the alert's text is the shortened one, so that the expansion fits too.
    let properties: [String: String]
    /// When to send, in Unix seconds; nil for now.
    let sendAt: Int64?
}

/// The flows' pushes as Notification Hubs templates, one per kind and platform: each is the
/// payload the flow's factory builds with `$(id)`, `$(richType)` and `$(message)` where its values
/// go, so that the hub's expansion is byte for byte what a native send of the same values would
/// carry. A template is tagged `push:{kind}`, and a send targets `username:{recipient} && push:{kind}`.
package enum HubTemplates {
    static func tag(_ kind: OutgoingPush.Kind) -> String { "push:\(kind.rawValue)" }

    package static func templates(for platform: Installation.Platform) -> [String: Installation.Template] {
        var templates: [String: Installation.Template] = [:]
        for kind in OutgoingPush.Kind.allCases {
            templates[kind.rawValue] = template(kind, for: platform)
        }
        return templates
    }

    /// The properties of a send of `kind` with these values: those its templates hold.
    static func properties(_ kind: OutgoingPush.Kind, id: String, richType: String, message: String) -> [String: String] {
        switch kind {
        case .secure: ["id": id]
        case .secureAlert: ["id": id, "message": message]
        case .rich, .richAlert: ["id": id, "richType": richType, "message": message]
        }
    }

    private static func template(_ kind: OutgoingPush.Kind, for platform: Installation.Platform) -> Installation.Template {
        let (id, richType, message) = ("$(id)", "$(richType)", "$(message)")
        let body: [UInt8]
        var headers: [String: String] = [:]
        // Placeholders are short and the payloads fixed: encoding cannot fail.
        switch platform {
        case .apns:
            let payload = kind.apnsPayload(id: id, richType: richType, message: message)
            body = try! payload.encoded()
            for field in APNsHeaders(for: payload).fields { headers[field.name] = field.value }
        case .fcmv1:
            body = try! kind.fcmMessage(id: id, richType: richType, message: message).encoded()
        }
        return Installation.Template(body: String(decoding: body, as: UTF8.self), headers: headers, tags: [tag(kind)])
    }
}

/// Through a notification hub: each device's installation carries its owner's tag and the
/// flows' templates for its platform, and a push is one template send to the owner's tag, which
/// reaches every platform they use.
package final class HubDelivery: PushDeliverer {
    /// Rounds of bringing a device's installation in line with its stored registration before
    /// giving up (each round is one hub call; more than one only while another process sharing the
    /// store registers the same token, since this one registers a token one request at a time).
    static let maximumSyncRounds = 8

    let hub: NotificationHubClient
    let store: any BackendStore
    /// Device tokens whose installation this process has written with the current templates.
    /// Installations an earlier version wrote carry none, and a template send would pass them
    /// by: each is written again before the first push to it after a start.
    private let written = Mutex<Set<String>>([])

    package init(hub: NotificationHubClient, store: any BackendStore) {
        self.hub = hub
        self.store = store
    }

    package var apns: DirectDelivery? { nil }
    package var hubDelivery: HubDelivery? { self }
    package func reaches(_ platform: Installation.Platform) -> Bool { true }

    package func registrationChanged(
        deviceToken: String, platform: Installation.Platform, replacing replaced: RegistrationRecord?
    ) async throws {
        try await syncInstallation(deviceToken: deviceToken, platform: platform)
        // An installation made under another id: before ids were derived from the token, or for the other platform.
        if let replaced, replaced.installationID != RegistrationRecord.installationID(deviceToken: deviceToken, platform: platform) {
            try await hub.deleteInstallation(id: replaced.installationID)
        }
    }

    /// Sends a notification's push to its recipient, whose registrations are `devices`; the
    /// hub's id for the send, when it gives one to ask ``outcome(ofHubMessage:)`` with.
    package func send(_ push: OutgoingPush, to recipient: String, devices: [RegistrationRecord], logger: Logger) async throws -> String? {
        for device in devices where !written.withLock({ $0.contains(device.deviceToken) }) {
            try await syncInstallation(deviceToken: device.deviceToken, platform: device.platform)
        }
        let target = SendTarget.expression(.tag("username:\(recipient)") && .tag(HubTemplates.tag(push.kind)))
        guard let sendAt = push.sendAt else {
            return try await hub.send(templateProperties: push.properties, to: target).notificationID
        }
        // The hub finds the devices when the time comes; its id for the send is known only then.
        try await hub.schedule(templateProperties: push.properties, at: sendAt, to: target)
        return nil
    }

    package func outcome(ofHubMessage id: String) async -> NotificationDetails? {
        try? await hub.notificationDetails(id: id)
    }

    /// Brings the hub's installation for `deviceToken` in line with the stored registration: the
    /// owner's tag, or no installation when there is no registration. The row is read again after
    /// each hub call until the two agree, so that whichever registration of a token is stored last,
    /// its owner is what the installation carries once every request has returned.
    private func syncInstallation(deviceToken: String, platform: Installation.Platform) async throws {
        var applied: String??  // the owner last written to the hub; .some(nil) once deleted
        for _ in 0..<Self.maximumSyncRounds {
            let registration = try await store.registration(deviceToken: deviceToken)
            let owner = registration?.owner
            if let applied, applied == owner {
                if owner != nil { written.withLock { _ = $0.insert(deviceToken) } }
                return
            }
            if let registration {
                try await hub.createOrUpdate(Self.installation(of: registration))
            } else {
                try await hub.deleteInstallation(id: RegistrationRecord.installationID(deviceToken: deviceToken, platform: platform))
                written.withLock { _ = $0.remove(deviceToken) }
            }
            applied = .some(owner)
        }
        throw APIError(status: 503, code: .registrationContended, "this device is being registered by others at the same time; try again")
    }

    private static func installation(of registration: RegistrationRecord) -> Installation {
        Installation(
            installationID: RegistrationRecord.installationID(deviceToken: registration.deviceToken, platform: registration.platform),
            platform: registration.platform, pushChannel: registration.deviceToken, tags: ["username:\(registration.owner)"],
            userID: registration.owner, templates: HubTemplates.templates(for: registration.platform))
    }
}

/// Straight from the server: APNs for Apple devices and, with direct delivery, FCM for Android
/// ones. The delivery worker sends to each of the recipient's registrations, and prunes the ones
/// the service calls dead, unless the answers blame the configuration instead.
package struct DirectDelivery: PushDeliverer {
    package let direct: DirectAPNs
    /// FCM for Android devices; nil with APNs delivery alone, which keeps Android registrations
    /// for a hub to reach later.
    let fcm: FCMClient?
    let store: any BackendStore
    let metrics: BackendMetrics
    /// Holds pruning back when a send's answers blame the configuration.
    let pruningBrake = PruningBrake()
    let fcmPolicy = FCMTokenPolicy()

    package init(_ direct: DirectAPNs, fcm: FCMClient? = nil, store: any BackendStore, metricsFactory: any MetricsFactory = MetricsSystem.factory) {
        self.direct = direct
        self.fcm = fcm
        self.store = store
        metrics = BackendMetrics(factory: metricsFactory)
    }

    package var apns: DirectDelivery? { self }
    package var hubDelivery: HubDelivery? { nil }
    var client: APNsClient { direct.client }
    var topic: String { direct.topic }
    var liveActivity: APNsLiveActivitySchema? { direct.liveActivity }

    package func reaches(_ platform: Installation.Platform) -> Bool {
        switch platform {
        case .apns: true
        case .fcmv1: fcm != nil
        }
    }

    /// Deletes the registrations FCM calls dead. `SENDER_ID_MISMATCH` is what every token answers
    /// when the server is configured with the wrong project, so it deletes only when another token
    /// of the same job was delivered: the project is right, and this token is another's.
    func pruneFCM(_ results: [FCMSendResult], of registrations: [RegistrationRecord], projectIsRight: Bool, logger: Logger) async {
        for (result, registration) in zip(results, registrations) {
            guard case .delete(let reason) = fcmPolicy.action(for: result), reason != .senderIDMismatch || projectIsRight else { continue }
            guard (try? await store.deleteRegistration(id: registration.id, owner: registration.owner)) == true else { continue }
            logger.notice(
                "pruned a dead registration token",
                metadata: ["device": "\(FCMClient.shortened(registration.deviceToken))", "reason": "\(reason)", "owner": "\(registration.owner)"])
        }
    }
    package func outcome(ofHubMessage id: String) async -> NotificationDetails? { nil }

    /// APNs keeps no registrations: a device's token is all a push needs.
    package func registrationChanged(
        deviceToken: String, platform: Installation.Platform, replacing replaced: RegistrationRecord?
    ) async throws {}

    /// Deletes the registrations whose results the token policy calls dead, unless the brake holds.
    /// A registration made again since it was read has a new id, so it is not touched.
    func prune(_ results: [APNsSendResult], of registrations: [RegistrationRecord], recipient: String, logger: Logger) async {
        let actions = await tokenActions(for: results, registeredAt: registrations.map(\.updatedAt), recipient: recipient, logger: logger)
        for (action, registration) in zip(actions, registrations) {
            switch action {
            case .keep:
                continue
            case .environmentMismatch:
                logger.warning(
                    "device token of the other APNs environment", metadata: ["device": "\(APNsClient.shortened(registration.deviceToken))"])
            case .delete(let reason):
                guard (try? await store.deleteRegistration(id: registration.id, owner: registration.owner)) == true else { continue }
                logger.notice(
                    "pruned a dead device token",
                    metadata: [
                        "device": "\(APNsClient.shortened(registration.deviceToken))", "reason": "\(reason)", "owner": "\(registration.owner)",
                    ])
            }
        }
    }

    /// The token policy's action for each result; when the brake holds, every one `.keep` but a
    /// 410's, which no configuration produces. Device tokens this environment calls bad are first
    /// put to the other one.
    /// - Parameters:
    ///   - registeredAt: When each token was last registered, in Unix milliseconds.
    ///   - recipient: Whose devices these are: the brake judges recipients.
    ///   - askOtherEnvironment: False for Live Activity tokens, which take no background push to
    ///     ask with; a `BadDeviceToken` then keeps the token.
    func tokenActions(
        for results: [APNsSendResult], registeredAt: [Int64], recipient: String, askOtherEnvironment: Bool = true, logger: Logger
    ) async -> [APNsTokenAction] {
        func policyAction(_ index: Int, otherEnvironment: APNsSendResult? = nil) -> APNsTokenAction {
            direct.policy.action(
                for: results[index], registeredAt: Date(timeIntervalSince1970: Double(registeredAt[index]) / 1000),
                otherEnvironment: otherEnvironment)
        }
        if let blamed = pruningBrake.judge(results, recipient: recipient) {
            metrics.pruningHeld(blaming: blamed)
            if pruningBrake.logIsDue() {
                logger.error(
                    "APNs configuration suspect: most recipients' devices answered the same refusal, so no registration is pruned but those APNs calls unregistered; check the environment, topic and key",
                    metadata: ["reason": "\(blamed)", "devices": "\(results.count)", "topic": "\(direct.topic)"])
            }
            return results.indices.map { index in
                if case .rejected(410, _, _) = results[index].outcome { return policyAction(index) }
                return .keep
            }
        }
        let others = askOtherEnvironment ? await direct.secondOpinions(on: results) : [:]
        return results.indices.map { policyAction($0, otherEnvironment: others[$0]) }
    }
}
