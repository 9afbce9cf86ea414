import PushInternals
import Testing

@Suite("Retry-After")
struct RetryAfterTests {
    @Test("Retry-After in seconds and in all three HTTP-date forms")
    func retryAfter() {
        let now: Int64 = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example date
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: now) == .seconds(0))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:51:37 GMT", now: now) == .seconds(120))
        #expect(RetryAfter.parse("Sunday, 06-Nov-94 08:50:37 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.parse("Sun Nov  6 08:49:47 1994", now: now) == .seconds(10))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", now: now) == .seconds(0))  // in the past
        #expect(RetryAfter.parse("99999999999999999999999", now: now) == .seconds(86_400 * 365))
        for garbage in ["", "-5", "1.5", "soon", "Sun, 06 Nov 1994 25:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST"] {
            #expect(RetryAfter.parse(garbage, now: now) == nil, "\(garbage)")
        }
        #expect(RetryAfter.parse("Thu, 01 Jan 1970 00:00:10 GMT", now: 0) == .seconds(10))
        #expect(RetryAfter.parse("Sat, 22 Nov 2026 10:00:00 GMT", now: 1_795_341_600 - 60) == .seconds(60))
    }

    @Test("HTTP-dates at the edges: the epoch, a leap day, fields out of range")
    func edges() {
        #expect(RetryAfter.parse("Thu, 01 Jan 1970 00:00:00 GMT", now: 0) == .seconds(0))
        #expect(RetryAfter.parse("Tue, 29 Feb 2028 23:59:59 GMT", now: 1_835_481_599 - 30) == .seconds(30))
        for bad in ["Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 1994 08:60:37 GMT"] {
            #expect(RetryAfter.parse(bad, now: 0) == nil, "\(bad)")
        }
    }
}
