/// `Retry-After` (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date in any of its three forms
/// (IMF-fixdate, RFC 850, asctime), which recipients must all accept.
enum RetryAfter {
    /// How long to wait, or nil when `value` is neither form. A date in the past means no wait.
    /// - Parameter now: Unix seconds.
    static func delay(_ value: String, now: Int64) -> Duration? {
        let bytes = Array(value.utf8)
        if !bytes.isEmpty, bytes.count <= 10, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return .seconds(Int64(value)!)
        }
        guard let date = httpDate(bytes) else { return nil }
        return .seconds(max(date - now, 0))
    }

    /// Unix seconds of an HTTP-date.
    static func httpDate(_ bytes: [UInt8]) -> Int64? {
        // Split on spaces, commas, dashes and colons; the forms differ in order and in the year.
        var fields: [[UInt8]] = []
        var field: [UInt8] = []
        for byte in bytes {
            if byte == 0x20 || byte == 0x2C || byte == 0x2D || byte == 0x3A {
                if !field.isEmpty { fields.append(field) }
                field = []
            } else {
                field.append(byte)
            }
        }
        if !field.isEmpty { fields.append(field) }
        let day: Int64?, month: Int64?, year: Int64?, clock: ArraySlice<[UInt8]>
        if fields.count == 7 {
            // asctime: `Sun Nov  6 08:49:37 1994`
            guard fields[6].count == 4 else { return nil }
            (month, day, year, clock) = (monthNumber(fields[1]), number(fields[2]), number(fields[6]), fields[3...5])
        } else {
            guard fields.count == 8 else { return nil }
            // IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`
            guard fields[7] == Array("GMT".utf8), fields[2].count == 3 else { return nil }
            (day, month, clock) = (number(fields[1]), monthNumber(fields[2]), fields[4...6])
            switch (fields[3].count, number(fields[3])) {
            case (4, let value?): year = value
            // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
            case (2, let value?): year = value < 70 ? 2000 + value : 1900 + value
            default: year = nil
            }
        }
        let parts = clock.map(number)
        guard let day, let month, let year, (1...31).contains(day), (1970...9999).contains(year),
            parts.allSatisfy({ $0 != nil }), let hour = parts[parts.startIndex], let minute = parts[parts.startIndex + 1],
            let second = parts[parts.startIndex + 2], hour < 24, minute < 60, second < 61
        else { return nil }
        return daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    private static func number(_ field: [UInt8]) -> Int64? {
        guard !field.isEmpty, field.count <= 4, field.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return field.reduce(0) { $0 * 10 + Int64($1 - 0x30) }
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map { Array($0.utf8) }

    private static func monthNumber(_ field: [UInt8]) -> Int64? {
        months.firstIndex(of: field).map { Int64($0 + 1) }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
