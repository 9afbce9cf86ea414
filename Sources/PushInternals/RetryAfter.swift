/// `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
    /// The wait the header asks for, at `now` (Unix seconds); a date in the past means no wait.
    /// Nil for a value that is neither form.
    public static func parse(_ value: String, now: Int64) -> Duration? {
        let text = value.trimmingOptionalWhitespace()
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Saturate absurd values rather than overflow: a day is already "stop trying".
            guard text.utf8.count <= 9, let seconds = Int64(text) else { return .seconds(86_400 * 365) }
            return .seconds(seconds)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return .seconds(max(0, date - now))
    }
}

/// HTTP-dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms that
/// recipients must still accept. Returns Unix seconds.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func parse(_ text: Substring) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        let day: Int?, month: Int?, year: Int?, time: [Int]?
        switch parts.count {
        case 6 where parts[5] == "GMT":  // Sun, 06 Nov 1994 08:49:37 GMT
            (day, month, year, time) = (Int(parts[1]), months.firstIndex(of: parts[2]), Int(parts[3]), clock(parts[4]))
        case 4 where parts[3] == "GMT":  // Sunday, 06-Nov-94 08:49:37 GMT
            let date = parts[1].split(separator: "-").map(String.init)
            guard date.count == 3, date[2].count == 2, let shortYear = Int(date[2]) else { return nil }
            // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
            (day, month, year, time) = (
                Int(date[0]), months.firstIndex(of: date[1]), shortYear < 70 ? 2000 + shortYear : 1900 + shortYear, clock(parts[2])
            )
        case 5:  // Sun Nov  6 08:49:37 1994
            (day, month, year, time) = (Int(parts[2]), months.firstIndex(of: parts[1]), Int(parts[4]), clock(parts[3]))
        default:
            return nil
        }
        guard let day, let month, let year, let time, (1...31).contains(day), (1970...9999).contains(year) else { return nil }
        return UTCTime.daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + Int64(time[0] * 3600 + time[1] * 60 + time[2])
    }

    private static func clock(_ text: String) -> [Int]? {
        let fields = text.split(separator: ":").compactMap { Int($0) }
        guard fields.count == 3, (0...23).contains(fields[0]), (0...59).contains(fields[1]), (0...60).contains(fields[2]) else { return nil }
        return fields
    }

}
