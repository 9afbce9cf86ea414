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
            "1969-12-31T23:59:59", "2023-1-01T00:00:00", "", "2023-01-01T00:00:00+01:00", "２０２３-01-01T00:00:00",
        ])
    func refused(text: String) {
        #expect(UTCTime.parse(text) == nil)
    }
}
