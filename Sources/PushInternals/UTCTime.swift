/// UTC times as Notification Hubs writes them, `yyyy-MM-ddTHH:mm:ss` (its schedule header; the
/// XML times add a `Z`), to and from Unix seconds; read back in any ISO 8601 spelling clients send.
public enum UTCTime {
    /// `yyyy-MM-ddTHH:mm:ss` of a time from year 1970 to 9999.
    public static func format(_ unixSeconds: Int64) -> String {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let seconds = Int(unixSeconds - days * 86_400)
        let (year, month, day) = civilFromDays(days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        var yearText = String(year)
        while yearText.utf8.count < 4 { yearText = "0" + yearText }
        return "\(yearText)-\(two(month))-\(two(day))T\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
    }

    /// Reads an ISO 8601 time as the service takes it: `yyyy-MM-ddTHH:mm:ss`, then optionally a
    /// fraction of a second (dropped) and a zone, `Z` or an offset `±HH:MM`, `±HHMM` or `±HH`; no
    /// zone means UTC, as the hub writes it. This covers JavaScript's `toISOString()`
    /// (`…T04:52:00.123Z`), Python's `isoformat()` (`…T04:52:00.123456+00:00`) and .NET's `"o"`
    /// (`…T04:52:00.1234567Z`). Nil for anything else, a date that does not exist, or a time before
    /// 1970 once the offset is applied.
    public static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"), bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), (1970...9999).contains(year), (1...12).contains(month),
            (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ",") {
            index += 1
            let digits = index
            while index < bytes.count, number(index..<index + 1) != nil { index += 1 }
            guard index > digits else { return nil }
        }
        var offsetSeconds = 0
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                index += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                guard let hours = number(index + 1..<index + 3), hours < 24 else { return nil }
                index += 3
                var minutes = 0
                if index < bytes.count {
                    if bytes[index] == UInt8(ascii: ":") { index += 1 }
                    guard let written = number(index..<index + 2), written < 60 else { return nil }
                    minutes = written
                    index += 2
                }
                offsetSeconds = sign * (hours * 3600 + minutes * 60)
            default:
                return nil
            }
        }
        guard index == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        // A day past its month's end (February 30) comes back as another date.
        guard civilFromDays(days) == (year, month, day) else { return nil }
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
        return seconds >= 0 ? seconds : nil
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day since 1970-01-01 (the same algorithm, backwards).
    package static func civilFromDays(_ days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthPrime + 2) / 5 + 1)
        let month = Int(monthPrime < 10 ? monthPrime + 3 : monthPrime - 9)
        return (Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0), month, day)
    }
}
