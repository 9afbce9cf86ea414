import Crypto
import Foundation
import PushCore
import PushInternals
import _CryptoExtras

/// A salted scrypt hash of a password, stored as text in the PHC string form
/// `$scrypt$ln=15,r=8,p=1$SALT$HASH` (salt and hash in unpadded base64), so that the cost can be
/// raised later without invalidating the hashes already stored.
package struct PasswordHash: Sendable, Hashable, CustomStringConvertible {
    package struct Parameters: Sendable, Hashable {
        /// log2 of scrypt's N (CPU and memory cost).
        package var logRounds: Int
        package var blockSize: Int
        package var parallelism: Int

        package init(logRounds: Int, blockSize: Int, parallelism: Int) {
            self.logRounds = logRounds
            self.blockSize = blockSize
            self.parallelism = parallelism
        }

        /// N = 2^15, r = 8, p = 1: 32 MiB and some tens of milliseconds per check (OWASP's minimum for scrypt is N = 2^17 with r = 8 at p = 1,
        /// or an equivalent trade; we take less memory per check because checks run two at a time on a small server).
        package static let standard = Parameters(logRounds: 15, blockSize: 8, parallelism: 1)
        /// For tests only: cheap, so that suites can create users quickly. Never used by the command line.
        package static let cheapForTests = Parameters(logRounds: 4, blockSize: 8, parallelism: 1)

        /// What a stored hash may ask for: anything beyond would let an edited database exhaust memory.
        var isWithinLimits: Bool {
            (1...20).contains(logRounds) && (1...32).contains(blockSize) && (1...4).contains(parallelism)
                && (128 << logRounds) * blockSize <= 256 << 20
        }
    }

    package let parameters: Parameters
    let salt: [UInt8]
    let hash: [UInt8]

    static let saltByteCount = 16
    static let hashByteCount = 32

    /// Hashes `password` with a fresh random salt.
    package init(hashing password: some StringProtocol, parameters: Parameters = .standard) {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<Self.saltByteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        self.init(parameters: parameters, salt: salt, hash: Self.derive(Array(password.utf8), salt: salt, parameters: parameters))
    }

    init(parameters: Parameters, salt: [UInt8], hash: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    /// Reads the stored form; nil when it is not one this code wrote (or asks for too much memory).
    package init?(encoded: String) {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else { return nil }
        var values: [Substring: Int] = [:]
        for field in parts[2].split(separator: ",") {
            let pair = field.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, let value = Int(pair[1]), values.updateValue(value, forKey: pair[0]) == nil else { return nil }
        }
        guard values.count == 3, let logRounds = values["ln"], let blockSize = values["r"], let parallelism = values["p"],
            let salt = Self.decodeBase64(parts[3]), salt.count >= 8,
            let hash = Self.decodeBase64(parts[4]), hash.count == Self.hashByteCount
        else { return nil }
        let parameters = Parameters(logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
        guard parameters.isWithinLimits else { return nil }
        self.init(parameters: parameters, salt: salt, hash: hash)
    }

    package var encoded: String {
        "$scrypt$ln=\(parameters.logRounds),r=\(parameters.blockSize),p=\(parameters.parallelism)$\(Self.encodeBase64(salt))$\(Self.encodeBase64(hash))"
    }

    /// The stored form; it holds no secret a guess could be checked against faster than by scrypt.
    package var description: String { encoded }

    /// Whether `password` hashes to this hash; the comparison takes the same time wherever the bytes differ.
    /// Slow on purpose (see ``Parameters/standard``): run it off the event loops.
    package func matches(_ password: some StringProtocol) -> Bool {
        constantTimeEquals(Self.derive(Array(password.utf8), salt: salt, parameters: parameters), hash)
    }

    static func derive(_ password: [UInt8], salt: [UInt8], parameters: Parameters) -> [UInt8] {
        do {
            let key = try KDF.Scrypt.deriveKey(
                from: password, salt: salt, outputByteCount: hashByteCount, rounds: 1 << parameters.logRounds,
                blockSize: parameters.blockSize, parallelism: parameters.parallelism)
            return key.withUnsafeBytes { Array($0) }
        } catch {
            // Only reachable with parameters outside `isWithinLimits`, which neither initialiser accepts.
            preconditionFailure("scrypt refused its parameters: \(error)")
        }
    }

    private static func encodeBase64(_ bytes: [UInt8]) -> String {
        var text = Base64.encodedString(bytes)
        while text.last == "=" { text.removeLast() }
        return text
    }

    private static func decodeBase64(_ text: Substring) -> [UInt8]? {
        var padded = Array(text.utf8)
        while padded.count % 4 != 0 { padded.append(UInt8(ascii: "=")) }
        return Base64.decode(padded)
    }
}
