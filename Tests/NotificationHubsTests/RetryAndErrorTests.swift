import NotificationHubs
import PushTestSupport
import Testing

@Suite("Retries and hub errors")
struct RetryAndErrorTests {
    @Test("Which outcomes are retried, and when")
    func decisions() {
        var random = SeededGenerator(seed: 1)
        let policy = RetryPolicy(jitter: 0)
        #expect(policy.delay(afterAttempt: 1, elapsed: .zero, outcome: .response(status: 429, retryAfter: nil), using: &random) == .milliseconds(200))
        #expect(policy.delay(afterAttempt: 2, elapsed: .zero, outcome: .response(status: 503, retryAfter: nil), using: &random) == .milliseconds(400))
        #expect(
            policy.delay(afterAttempt: 1, elapsed: .zero, outcome: .response(status: 429, retryAfter: .seconds(3)), using: &random) == .seconds(3))
        #expect(
            policy.delay(afterAttempt: 1, elapsed: .zero, outcome: .response(status: 403, retryAfter: .seconds(1)), using: &random) == .seconds(1))
        // 403 without Retry-After is a permission problem: retrying will not help.
        #expect(policy.delay(afterAttempt: 1, elapsed: .zero, outcome: .response(status: 403, retryAfter: nil), using: &random) == nil)
        for status in [200, 201, 400, 401, 404, 413, 500] {
            #expect(policy.delay(afterAttempt: 1, elapsed: .zero, outcome: .response(status: status, retryAfter: nil), using: &random) == nil)
        }
        #expect(policy.delay(afterAttempt: 1, elapsed: .zero, outcome: .notSent, using: &random) == .milliseconds(200))
        // A POST that may have reached the hub is not sent twice, unless asked for.
        #expect(policy.delay(afterAttempt: 1, elapsed: .zero, outcome: .unknown, using: &random) == nil)
        var eager = policy
        eager.retriesUnknownOutcome = true
        #expect(eager.delay(afterAttempt: 1, elapsed: .zero, outcome: .unknown, using: &random) == .milliseconds(200))
        // Attempts and budget.
        #expect(policy.delay(afterAttempt: 4, elapsed: .zero, outcome: .notSent, using: &random) == nil)
        #expect(policy.delay(afterAttempt: 1, elapsed: .seconds(29), outcome: .response(status: 429, retryAfter: .seconds(2)), using: &random) == nil)
        #expect(RetryPolicy.none.delay(afterAttempt: 1, elapsed: .zero, outcome: .notSent, using: &random) == nil)
    }

    @Test("Backoff doubles up to its ceiling, with jitter inside its bounds")
    func backoff() {
        var random = SeededGenerator(seed: 2)
        let policy = RetryPolicy(
            maximumAttempts: 20, initialBackoff: .milliseconds(100), maximumBackoff: .seconds(1), budget: .seconds(3600), jitter: 0.5)
        for attempt in 1..<20 {
            let nominal = min(Duration.milliseconds(100) * (1 << (attempt - 1)), .seconds(1))
            let delay = policy.delay(afterAttempt: attempt, elapsed: .zero, outcome: .notSent, using: &random)!
            #expect(delay <= nominal && delay >= nominal / 2, "attempt \(attempt): \(delay)")
        }
    }

    @Test("Errors are typed from the status, Retry-After and the XML body, with the tracking id")
    func hubErrors() {
        let body = Array(
            "<Error><Code>401</Code><Detail>ExpiredToken: . TrackingId:8f2c-11,TimeStamp:2026-11-22T10:00:00 &amp; more</Detail></Error>".utf8)
        let expired = NotificationHubError(status: 401, body: body, trackingID: nil, retryAfter: nil)
        #expect(expired.code == .unauthorized && expired.trackingID == "8f2c-11")
        #expect(expired.message.hasPrefix("ExpiredToken: .") && expired.message.hasSuffix("& more"))
        #expect(expired.serviceCode == 401)
        let finer = NotificationHubError(
            status: 400, body: Array("<Error><Code>40000</Code><Detail>The request is malformed.</Detail></Error>".utf8), trackingID: "t",
            retryAfter: nil)
        #expect(finer.code == .badRequest && finer.serviceCode == 40000)
        #expect(NotificationHubError(status: 502, body: Array("<html/>".utf8), trackingID: nil, retryAfter: nil).serviceCode == nil)
        let cases: [(Int, Duration?, NotificationHubError.Code)] = [
            (400, nil, .badRequest), (403, nil, .forbidden), (403, .seconds(5), .throttled), (429, nil, .throttled),
            (404, nil, .notFound), (413, nil, .payloadTooLarge), (500, nil, .serverError), (503, nil, .serverError), (418, nil, .unexpectedStatus),
        ]
        for (status, retryAfter, code) in cases {
            let error = NotificationHubError(status: status, body: [], trackingID: "t-1", retryAfter: retryAfter)
            #expect(error.code == code && error.status == status && error.trackingID == "t-1" && error.retryAfter == retryAfter)
        }
        let html = NotificationHubError(status: 502, body: Array("<html>Bad gateway</html>".utf8), trackingID: nil, retryAfter: nil)
        #expect(html.message == "<html>Bad gateway</html>" && html.description == "serverError (HTTP 502): <html>Bad gateway</html>")
    }
}
