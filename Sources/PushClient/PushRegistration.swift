public import Foundation

/// The backend's registration of this device.
public struct PushRegistration: Sendable, Hashable, Codable {
    /// What ``PushBackendClient/unregisterDevice(registrationID:within:)`` takes.
    public let id: String
    /// The device token registered, in lowercase hex.
    public let deviceToken: String
    /// Whether the backend's pushes reach the device: a server that sends straight to APNs
    /// keeps an Android phone's registration but reaches it only through a hub.
    public let reachable: Bool
    /// Why not, when they do not.
    public let reason: String?

    public init(id: String, deviceToken: String, reachable: Bool, reason: String?) {
        self.id = id
        self.deviceToken = deviceToken
        self.reachable = reachable
        self.reason = reason
    }
}

/// Where a ``PushRegistrationKeeper`` keeps the device's registration between launches.
public protocol PushRegistrationStore: Sendable {
    func load() throws -> PushRegistration?
    /// Replaces what is kept; nil forgets it.
    func save(_ registration: PushRegistration?) throws
}

/// A registration kept in a file of its own, readable by its owner only (mode 0600): in the
/// app's container, or an app group's that its extension shares.
public struct FileRegistrationStore: PushRegistrationStore {
    let file: URL

    public init(file: URL) { self.file = file }

    public func load() throws -> PushRegistration? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        return try JSONDecoder().decode(PushRegistration.self, from: Data(contentsOf: file))
    }

    public func save(_ registration: PushRegistration?) throws {
        try PrivateFile.replace(file, with: registration.map { try JSONEncoder().encode($0) })
    }
}

/// Files only their owner can read, replaced in one step.
enum PrivateFile {
    /// Writes `contents` to `file` with mode 0600 (nil removes it). The bytes go to a staged file
    /// first, renamed over `file`: a crash leaves the old contents or the new, never a part.
    static func replace(_ file: URL, with contents: Data?) throws {
        guard let contents else {
            if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
            return
        }
        let staged = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: staged.path, contents: contents, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        guard rename(staged.path, file.path) == 0 else {
            try? FileManager.default.removeItem(at: staged)
            throw CocoaError(.fileWriteUnknown)
        }
    }
}

/// Keeps the device's one valid registration across launches and token changes.
///
/// The backend gives each registration of a token a new id and forgets the old one, so an app
/// that registers on every launch holds ids that stop working. The keeper registers only when
/// there is nothing kept or the token differs from the one kept; for a new token, it then deletes
/// the old token's registration. Signing out deletes the registration and forgets it, so that the
/// next user's token is registered for them.
public actor PushRegistrationKeeper {
    let backend: PushBackendClient
    let store: any PushRegistrationStore

    public init(backend: PushBackendClient, store: any PushRegistrationStore) {
        self.backend = backend
        self.store = store
    }

    /// The registration kept, if any.
    public var current: PushRegistration? { try? store.load() }

    /// Call with each token the system hands over (`didRegisterForRemoteNotificationsWithDeviceToken`,
    /// every launch).
    /// - Returns: The registration for `token`: the one kept, without a request, or a new one.
    public func tokenReceived(_ token: some Sequence<UInt8>, within timeout: Duration) async throws(PushClientError) -> PushRegistration {
        let bytes = Array(token)
        let kept = try? store.load()
        if let kept, kept.deviceToken == PushBackendClient.hex(bytes) { return kept }
        let registration = try await backend.registerDevice(token: bytes, within: timeout)
        do { try store.save(registration) } catch { throw .transport("the registration could not be kept: \(error.localizedDescription)") }
        if let kept {
            // The old token's registration; a failure leaves it for the backend to prune once APNs
            // refuses the token.
            try? await backend.unregisterDevice(registrationID: kept.id, within: timeout)
        }
        return registration
    }

    /// Call when the user signs out: the registration is deleted and forgotten.
    public func signOut(within timeout: Duration) async throws(PushClientError) {
        guard let kept = try? store.load() else { return }
        do {
            try await backend.unregisterDevice(registrationID: kept.id, within: timeout)
        } catch .notFound {
            // Gone already: another registration of the token replaced it.
        }
        try? store.save(nil)
    }
}
