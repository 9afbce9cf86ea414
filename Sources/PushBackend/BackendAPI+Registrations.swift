import HTTPTypes
import NotificationHubs
import PushCore

/// The `devices` tag: a phone's registration for pushes.
extension BackendAPI {
    /// `POST /api/register`: a fresh registration id, whether the token was known or not; the
    /// device's one installation now carries the caller's tag.
    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        let caller = try RequestScope.caller
        let platform: Installation.Platform
        var deviceToken: String
        switch input.body {
        case .json(.AppleDeviceRegistration(let device)):
            // The generator reads the enum's `null` as an empty string, which names no platform.
            guard device.platform != ._empty_ else {
                throw APIError.badRequest(.invalidField, "platform must be apns (an Apple device) or fcmv1 (an Android device)")
            }
            (platform, deviceToken) = (.apns, device.deviceToken.lowercased())
            guard Self.isAPNsToken(deviceToken) else {
                throw APIError.badRequest(.invalidDeviceToken, "deviceToken must be an APNs device token in hex (64 to 200 digits)")
            }
        case .json(.AndroidDeviceRegistration(let device)):
            (platform, deviceToken) = (.fcmv1, device.deviceToken)
            guard (try? platform.validateDeviceHandle(deviceToken)) != nil else {
                throw APIError.badRequest(
                    .invalidDeviceToken, "deviceToken must be an FCM registration token (16 to 4096 of A-Z a-z 0-9 - _ :)")
            }
        }
        let installationID = RegistrationRecord.installationID(deviceToken: deviceToken, platform: platform)
        try takeRegistrationBudget(caller)
        // A device token names one device: registering it again (as whoever is signed in on it now)
        // moves it to the caller. The row is decided first; the installation then follows the row.
        let registration = RegistrationRecord(
            id: randomHex(bytes: 16), owner: caller.name, deviceToken: deviceToken, platform: platform, installationID: installationID,
            updatedAt: unixMilliseconds())
        try await registrations.run(deviceToken) {
            let previous = try await store.registration(deviceToken: deviceToken)
            guard try await store.saveRegistration(registration, maximumPerOwner: registrationLimits.maximumDevices) else {
                throw APIError(
                    status: 409, code: .tooManyDevices,
                    "at most \(registrationLimits.maximumDevices) devices per user; unregister one first")
            }
            try await delivery.registrationChanged(deviceToken: deviceToken, platform: platform, replacing: previous)
        }
        // The same answer whether the token was known: a new id, 201; and whether pushes reach it.
        let reachable = delivery.reaches(platform)
        return .created(
            .init(
                body: .json(
                    .init(
                        id: registration.id, platform: platform == .apns ? .apns : .fcmv1, reachable: reachable,
                        reason: reachable
                            ? nil
                            : "this server sends straight to APNs, which reaches Apple devices only; the registration is kept for hub delivery"
                    ))))
    }

    /// `DELETE /api/register/{id}`: only the owner's.
    func unregisterDevice(_ input: Operations.UnregisterDevice.Input) async throws -> Operations.UnregisterDevice.Output {
        let (caller, id) = (try RequestScope.caller, input.path.id)
        let registration = try await store.registration(id: id)
        let deleted = registration?.owner == caller.name ? try await store.deleteRegistration(id: id, owner: caller.name) : false
        // Someone else's, or registered again (under a new id) since it was read.
        guard let registration, deleted else { throw APIError.notFound("no such registration") }
        try await registrations.run(registration.deviceToken) {
            try await delivery.registrationChanged(deviceToken: registration.deviceToken, platform: registration.platform, replacing: registration)
        }
        return .noContent(.init())
    }
}
