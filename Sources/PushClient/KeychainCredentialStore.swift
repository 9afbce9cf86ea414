#if canImport(Security)
import Foundation
import Security

/// The signed-in user's credentials as a Keychain generic-password item: its account is the user
/// name, its data the password. Kept in an access group the app and its notification service
/// extension share (the `keychain-access-groups` entitlement of both), and readable after the
/// device's first unlock, so that the extension can fetch while the device is locked; never
/// synchronised to the user's other devices.
///
/// Reading before the first unlock, or any other Keychain failure, is
/// ``PushClientError/credentialsUnavailable``; no item is `nil` (nobody signed in). The Keychain's
/// status codes are not kept: they can name the item. (Not built on Linux, where this repository's
/// checks run; `check-apple-shape` type-checks it against a stand-in of the Security framework.)
public struct KeychainCredentialStore: PushCredentialStore {
    public let service: String
    public let accessGroup: String?

    /// - Parameters:
    ///   - service: The item's service, the same in the app and its extension.
    ///   - accessGroup: `TEAMID.com.example.shared`, one of the `keychain-access-groups` of both
    ///     targets; nil for the app's default group (the extension then sees nothing).
    public init(service: String = "PushClient", accessGroup: String?) {
        self.service = service
        self.accessGroup = accessGroup
    }

    public func credentials() async throws -> PushCredentials? {
        var query = itemQuery
        query[kSecReturnData] = true
        query[kSecReturnAttributes] = true
        query[kSecMatchLimit] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status != errSecItemNotFound else { return nil }
        guard status == errSecSuccess, let item = result as? NSDictionary, let user = item[kSecAttrAccount] as? String,
            let data = item[kSecValueData] as? Data, let password = String(data: data, encoding: .utf8)
        else { throw PushClientError.credentialsUnavailable }
        return PushCredentials(user: user, password: password)
    }

    /// Keeps `credentials` in place of any before them: when the user signs in.
    public func save(_ credentials: PushCredentials) throws(PushClientError) {
        try delete()
        var item = itemQuery
        item[kSecAttrAccount] = credentials.user
        item[kSecValueData] = Data(credentials.password.utf8)
        item[kSecAttrAccessible] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        guard SecItemAdd(item as CFDictionary, nil) == errSecSuccess else { throw .credentialsUnavailable }
    }

    /// Forgets the credentials: when the user signs out.
    public func delete() throws(PushClientError) {
        let status = SecItemDelete(itemQuery as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw .credentialsUnavailable }
    }

    /// The item, wherever the platform keeps it: on macOS the data-protection Keychain, as on iOS.
    private var itemQuery: [CFString: Any] {
        var query: [CFString: Any] = [
            kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecUseDataProtectionKeychain: true,
            kSecAttrSynchronizable: false,
        ]
        if let accessGroup { query[kSecAttrAccessGroup] = accessGroup }
        return query
    }
}
#endif
