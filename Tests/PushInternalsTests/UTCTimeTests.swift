import PushInternals
import Testing

@Suite("UTC times as Notification Hubs writes them")
struct UTCTimeTests {
    @Test("Known dates, leap days and the ends of the range")
    func knownDates() {
        #expect(UTCTime.format(0) == "1970-01-01T00:00:00")
        #expect(UTCTime.format(951_782_400) == "2000-02-29T00:00:00")
        #expect(UTCTime.format(1_795_331_629) == "2026-11-22T07:13:49")
        #expect(UTCTime.format(253_402_300_799) == "9999-12-31T23:59:59")
        #expect(UTCTime.parse("2000-02-29T00:00:00") == 951_782_400)
        #expect(UTCTime.parse("2026-11-22T07:13:49Z") == 1_795_331_629 && UTCTime.parse("2026-11-22T07:13:49.6641371Z") == 1_795_331_629)
    }

    @Test(
        "Each client's spelling of the same instant: JavaScript's toISOString, Python's isoformat, .NET's round trip, offsets",
        arguments: [
            "2026-11-28T04:52:00.123Z", "2026-11-28T04:52:00.123456+00:00", "2026-11-28T04:52:00.1234567Z",
            "2026-11-28T04:52:00", "2026-11-28T04:52:00z", "2026-11-28t04:52:00Z", "2026-11-28T05:52:00+01:00",
            "2026-11-28T05:52:00+0100", "2026-11-28T05:52:00+01", "2026-11-27T23:22:00.5-05:30", "2026-11-28T04:52:00-00:00",
            "2026-11-28T04:52:00,25Z",
        ])
    func clientSpellings(text: String) {
        #expect(UTCTime.parse(text) == 1_795_841_520)
    }

    @Test("Every second of a few thousand spread over the range reads back as written")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let seconds = Int64.random(in: 0...253_402_300_799, using: &generator)
            #expect(UTCTime.parse(UTCTime.format(seconds)) == seconds)
        }
    }

    @Test(
        "Dates that do not exist and other text are refused",
        arguments: [
            "2023-02-29T00:00:00", "2023-13-01T00:00:00", "2023-04-31T00:00:00", "2023-01-01T24:00:00", "2023-01-01 00:00:00",
            "1969-12-31T23:59:59", "2023-1-01T00:00:00", "", "２０２３-01-01T00:00:00",
            "2023-01-01T00:00:00.", "2023-01-01T00:00:00.5.5", "2023-01-01T00:00:00+1", "2023-01-01T00:00:00+01:0",
            "2023-01-01T00:00:00+24:00", "2023-01-01T00:00:00+01:60", "2023-01-01T00:00:00Z ", "2023-01-01T00:00:00ZZ",
            "2023-01-01T00:00:00 +01:00", "1970-01-01T00:30:00+01:00",
        ])
    func refused(text: String) {
        #expect(UTCTime.parse(text) == nil)
    }
}
