import APNs
import HTTPTypes
package import Logging
package import Metrics
package import NotificationHubs
package import PushCore

#if canImport(FoundationEssentials)
import struct FoundationEssentials.Date
#else
import struct Foundation.Date
#endif

/// Where the backend's pushes go, one implementation per way: a notification hub
/// (``HubDelivery``), or APNs straight from the backend (``APNsDelivery``). The API asks it what
/// to do; only the features just APNs has (Live Activities, channels) ask for ``apns``.
package protocol PushDeliverer: Sendable {
    /// Brings the push service in line with what is stored for `deviceToken`, after its
    /// registration was saved or deleted; `replaced` is the row there was before.
    func registrationChanged(deviceToken: String, replacing replaced: RegistrationRecord?) async throws
    /// Sends a notification's push to its recipient, whose registrations are `devices`.
    func send(_ payload: APNsPayload, to recipient: String, devices: [RegistrationRecord], logger: Logger) async throws
    /// APNs straight from the backend, which Live Activities and channels need; nil through a hub.
    var apns: APNsDelivery? { get }
}

/// Through a notification hub: each device's installation carries its owner's tag, and a push
/// goes to the tag.
package struct HubDelivery: PushDeliverer {
    /// Rounds of bringing a device's installation in line with its stored registration before
    /// giving up (each round is one hub call; more than one only while another process sharing the
    /// store registers the same token, since this one registers a token one request at a time).
    static let maximumSyncRounds = 8

    let hub: NotificationHubClient
    let store: any BackendStore

    package init(hub: NotificationHubClient, store: any BackendStore) {
        self.hub = hub
        self.store = store
    }

    package var apns: APNsDelivery? { nil }

    package func registrationChanged(deviceToken: String, replacing replaced: RegistrationRecord?) async throws {
        try await syncInstallation(deviceToken: deviceToken)
        if let replaced { try await removeFormerInstallation(of: replaced) }
    }

    package func send(_ payload: APNsPayload, to recipient: String, devices: [RegistrationRecord], logger: Logger) async throws {
        try await hub.send(payload, to: .tag("username:\(recipient)"))
    }

    /// Brings the hub's installation for `deviceToken` in line with the stored registration: the
    /// owner's tag, or no installation when there is no registration. The row is read again after
    /// each hub call until the two agree, so that whichever registration of a token is stored last,
    /// its owner is what the installation carries once every request has returned.
    private func syncInstallation(deviceToken: String) async throws {
        let installationID = RegistrationRecord.installationID(deviceToken: deviceToken)
        var applied: String??  // the owner last written to the hub; .some(nil) once deleted
        for _ in 0..<Self.maximumSyncRounds {
            let owner = try await store.registration(deviceToken: deviceToken)?.owner
            if let applied, applied == owner { return }
            if let owner {
                try await hub.createOrUpdate(Self.installation(installationID, deviceToken: deviceToken, owner: owner))
            } else {
                try await hub.deleteInstallation(id: installationID)
            }
            applied = .some(owner)
        }
        throw APIError(status: 503, code: .registrationContended, "this device is being registered by others at the same time; try again")
    }

    /// Deletes the installation a registration from before token-derived installation ids was made under.
    private func removeFormerInstallation(of registration: RegistrationRecord) async throws {
        guard registration.installationID != RegistrationRecord.installationID(deviceToken: registration.deviceToken) else { return }
        try await hub.deleteInstallation(id: registration.installationID)
    }

    private static func installation(_ id: String, deviceToken: String, owner: String) -> Installation {
        Installation(installationID: id, pushChannel: deviceToken, tags: ["username:\(owner)"], userID: owner)
    }
}

/// Straight to APNs: the server sends to each of the recipient's registrations itself, and prunes
/// the ones APNs calls dead, unless most answers blame the configuration instead.
package struct APNsDelivery: PushDeliverer {
    package let direct: DirectAPNs
    let store: any BackendStore
    let metrics: BackendMetrics
    /// Holds pruning back when a send's answers blame the configuration.
    let pruningBrake = PruningBrake()

    package init(_ direct: DirectAPNs, store: any BackendStore, metricsFactory: any MetricsFactory = MetricsSystem.factory) {
        self.direct = direct
        self.store = store
        metrics = BackendMetrics(factory: metricsFactory)
    }

    package var apns: APNsDelivery? { self }
    var client: APNsClient { direct.client }
    var topic: String { direct.topic }
    var liveActivity: APNsLiveActivitySchema? { direct.liveActivity }

    /// APNs keeps no registrations: a device's token is all a push needs.
    package func registrationChanged(deviceToken: String, replacing replaced: RegistrationRecord?) async throws {}

    /// Sends to each of the recipient's registrations and prunes those APNs calls dead. Fails only
    /// when APNs could be reached for none of them; a refused device is that device's business.
    package func send(_ payload: APNsPayload, to recipient: String, devices: [RegistrationRecord], logger: Logger) async throws {
        guard !devices.isEmpty else { return }
        let results: [APNsSendResult]
        do throws(APNsClientError) {
            results = try await direct.client.send(payload, headers: APNsHeaders(for: payload, topic: direct.topic), to: devices.map(\.deviceToken))
        } catch {
            throw APIError(status: 500, code: .internalError, "the push could not be sent: \(error.message)")
        }
        await prune(results, of: devices, logger: logger)
        let unanswered = results.contains { if case .failed(let failure, _) = $0.outcome { failure != .invalidDeviceToken } else { false } }
        if unanswered && !results.contains(where: \.isDelivered) {
            throw APIError(status: 502, code: .apnsUnavailable, "APNs could not be reached for any of the recipient's devices")
        }
    }

    /// Deletes the registrations whose results the token policy calls dead, unless the brake holds.
    /// A registration made again since it was read has a new id, so it is not touched.
    func prune(_ results: [APNsSendResult], of registrations: [RegistrationRecord], logger: Logger) async {
        let actions = await tokenActions(for: results, registeredAt: registrations.map(\.updatedAt), logger: logger)
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

    /// The token policy's action for each result, every one `.keep` when the brake holds; device
    /// tokens this environment calls bad are first put to the other one.
    /// - Parameters:
    ///   - registeredAt: When each token was last registered, in Unix milliseconds.
    ///   - askOtherEnvironment: False for Live Activity tokens, which take no background push to
    ///     ask with; a `BadDeviceToken` then keeps the token.
    func tokenActions(
        for results: [APNsSendResult], registeredAt: [Int64], askOtherEnvironment: Bool = true, logger: Logger
    ) async -> [APNsTokenAction] {
        if let blamed = pruningBrake.judge(results) {
            metrics.pruningHeld(blaming: blamed)
            if pruningBrake.logIsDue() {
                logger.error(
                    "APNs configuration suspect: most devices answered the same refusal, so no registration is pruned; check the environment, topic and key",
                    metadata: ["reason": "\(blamed)", "devices": "\(results.count)", "topic": "\(direct.topic)"])
            }
            return results.map { _ in .keep }
        }
        let others = askOtherEnvironment ? await direct.secondOpinions(on: results) : [:]
        return zip(results.indices, registeredAt).map { index, milliseconds in
            direct.policy.action(
                for: results[index], registeredAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000), otherEnvironment: others[index])
        }
    }
}
