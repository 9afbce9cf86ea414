import APNs
import APNsEmulator
import APNsTestSupport
import Foundation
import Testing

@Suite("Token hygiene: which registrations a send's results delete", .serialized)
struct TokenPolicyTests {
    let policy = APNsTokenPolicy()
    let registeredAt = Date(timeIntervalSince1970: 1_700_000_000)

    func result(_ outcome: APNsSendOutcome) -> APNsSendResult {
        APNsSendResult(deviceToken: deviceToken(1), outcome: outcome)
    }

    /// The backend's test sends to 1,000 registrations (`APNsDeliveryTests`); this one checks the
    /// client and the policy alone, on fewer devices to keep the ASan run short.
    @Test("A send to 200 devices, 20 unregistered (half before, half after registering) and 4 malformed: exactly the right ones are deleted")
    func thousandRegistrations() async throws {
        try await withEmulatorAndClient(clock: SharedClock()) { emulator, client, _, _ in
            let registeredMilliseconds: Int64 = 1_700_000_000_000
            var devices: [String] = []
            var expected: [String: APNsTokenAction] = [:]
            for index in 0..<200 {
                var token = deviceToken(index)
                if index % 20 == 3 {
                    // The app registered again after APNs saw it unregistered: the registration wins.
                    emulator.setState(.unregistered(sinceMilliseconds: registeredMilliseconds - 60_000), for: token)
                    expected[token] = .keep
                } else if index % 20 == 8 {
                    emulator.setState(.unregistered(sinceMilliseconds: registeredMilliseconds + 60_000), for: token)
                    expected[token] = .delete(.unregistered)
                } else if index % 100 == 20 {
                    token = "not/a token \(index)"
                    expected[token] = .delete(.malformed)
                } else if index % 100 == 71 {
                    // Path-safe, but not hexadecimal: APNs answers BadDeviceToken, and no
                    // environment could take it, so it goes without a second opinion.
                    token = "zz" + token.dropFirst(2)
                    expected[token] = .delete(.malformed)
                } else {
                    expected[token] = .keep
                }
                devices.append(token)
            }
            #expect(expected.count == 200)
            let results = try await client.send(encodedPayload: alertPayload, headers: alertHeaders, to: devices)
            var actions: [String: APNsTokenAction] = [:]
            for result in results {
                let action = policy.action(for: result, registeredAt: registeredAt)
                actions[result.deviceToken] = action
                // One line per wrong token, with the answer it got, rather than two 200-entry dictionaries.
                #expect(action == expected[result.deviceToken], "\(result.deviceToken): \(result.outcome)")
            }
            #expect(Set(actions.keys) == Set(expected.keys))
            #expect(actions.values.count { $0 != .keep } == 14)
            #expect(actions.values.count { $0 == .delete(.unregistered) } == 10)
            #expect(results.count { if case .rejected(410, .unregistered, _) = $0.outcome { true } else { false } } == 20)
            #expect(emulator.deliveries.count == 176)
        }
    }

    @Test("Each outcome's action: only answers about the token itself delete it")
    func outcomes() {
        let before = Int64(1_699_999_999_000)
        let after = Int64(1_700_000_001_000)
        let exactly = Int64(1_700_000_000_000)
        let cases: [(APNsSendOutcome, APNsTokenAction)] = [
            (.delivered, .keep),
            (.rejected(status: 410, reason: .unregistered, unregisteredSinceMilliseconds: after), .delete(.unregistered)),
            (.rejected(status: 410, reason: .unregistered, unregisteredSinceMilliseconds: before), .keep),
            (.rejected(status: 410, reason: .unregistered, unregisteredSinceMilliseconds: exactly), .keep),
            (.rejected(status: 410, reason: .unregistered, unregisteredSinceMilliseconds: nil), .delete(.unregistered)),
            (.rejected(status: 410, reason: .expiredToken, unregisteredSinceMilliseconds: after), .delete(.unregistered)),
            // Without the other environment's word, a well-formed token APNs calls bad is kept.
            (.rejected(status: 400, reason: .badDeviceToken, unregisteredSinceMilliseconds: nil), .keep),
            (.rejected(status: 400, reason: .deviceTokenNotForTopic, unregisteredSinceMilliseconds: nil), .delete(.notForTopic)),
            (.failed(.invalidDeviceToken, mayHaveBeenDelivered: false), .delete(.malformed)),
            // Nothing here is about the token.
            (.rejected(status: 429, reason: .tooManyRequests, unregisteredSinceMilliseconds: nil), .keep),
            (.rejected(status: 403, reason: .expiredProviderToken, unregisteredSinceMilliseconds: nil), .keep),
            (.rejected(status: 400, reason: .topicDisallowed, unregisteredSinceMilliseconds: nil), .keep),
            (.rejected(status: 503, reason: .serviceUnavailable, unregisteredSinceMilliseconds: nil), .keep),
            (.rejected(status: 400, reason: .other("SomethingNew"), unregisteredSinceMilliseconds: nil), .keep),
            (.failed(.timeout, mayHaveBeenDelivered: true), .keep),
            (.failed(.connectionRefused, mayHaveBeenDelivered: false), .keep),
            (.failed(.tls, mayHaveBeenDelivered: false), .keep),
        ]
        for (outcome, action) in cases {
            #expect(policy.action(for: result(outcome), registeredAt: registeredAt) == action, "\(outcome)")
        }
    }

    @Test("BadDeviceToken deletes only when the other environment refuses the token too; accepted there, it is a mismatch to report")
    func environmentMismatch() {
        let bad = result(.rejected(status: 400, reason: .badDeviceToken, unregisteredSinceMilliseconds: nil))
        #expect(policy.action(for: bad, registeredAt: registeredAt, otherEnvironment: result(.delivered)) == .environmentMismatch)
        #expect(policy.action(for: bad, registeredAt: registeredAt, otherEnvironment: bad) == .delete(.badDeviceToken))
        let goneThere = result(.rejected(status: 410, reason: .unregistered, unregisteredSinceMilliseconds: 1))
        #expect(policy.action(for: bad, registeredAt: registeredAt, otherEnvironment: goneThere) == .delete(.badDeviceToken))
        // No clear answer there is no second opinion.
        for other in [
            APNsSendOutcome.failed(.timeout, mayHaveBeenDelivered: true),
            .rejected(status: 429, reason: .tooManyRequests, unregisteredSinceMilliseconds: nil),
            .rejected(status: 403, reason: .invalidProviderToken, unregisteredSinceMilliseconds: nil),
        ] {
            #expect(policy.action(for: bad, registeredAt: registeredAt, otherEnvironment: result(other)) == .keep, "\(other)")
        }
        #expect(policy.action(for: bad, registeredAt: registeredAt) == .keep)
        let notHex = APNsSendResult(deviceToken: "zz" + deviceToken(1).dropFirst(2), outcome: bad.outcome)
        #expect(policy.action(for: notHex, registeredAt: registeredAt) == .delete(.malformed))
    }
}
