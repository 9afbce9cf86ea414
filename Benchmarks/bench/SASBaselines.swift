import Crypto
import Foundation
import PushCore

/// The characters a SAS token leaves unescaped, built once as a straightforward implementation
/// keeps it.
private let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

/// What a straightforward Foundation-based implementation does to mint a token: a fresh key and
/// a one-shot HMAC each time, `addingPercentEncoding`, `base64EncodedString`, interpolation.
func foundationSASToken(resource: String, keyName: String, key: String, expiry: Int64) -> String {
    let sr = resource.lowercased().addingPercentEncoding(withAllowedCharacters: unreserved)!
    let mac = HMAC<SHA256>.authenticationCode(for: Data("\(sr)\n\(expiry)".utf8), using: SymmetricKey(data: Data(key.utf8)))
    let sig = Data(mac).base64EncodedString().addingPercentEncoding(withAllowedCharacters: unreserved)!
    let skn = keyName.addingPercentEncoding(withAllowedCharacters: unreserved)!
    return "SharedAccessSignature sr=\(sr)&sig=\(sig)&se=\(expiry)&skn=\(skn)"
}

/// And its cache: a dictionary behind an `NSLock`, expiries as `Date`s.
final class FoundationSASCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String: (token: String, refreshAt: Date)] = [:]
    let keyName: String
    let key: String

    init(keyName: String, key: String) {
        self.keyName = keyName
        self.key = key
    }

    func token(for resource: String) -> String {
        let now = Date()
        lock.lock()
        defer { lock.unlock() }
        if let entry = entries[resource], now < entry.refreshAt { return entry.token }
        let expiry = Int64(now.timeIntervalSince1970) + 1200
        let token = foundationSASToken(resource: resource, keyName: keyName, key: key, expiry: expiry)
        entries[resource] = (token, now.addingTimeInterval(1080))
        return token
    }
}
