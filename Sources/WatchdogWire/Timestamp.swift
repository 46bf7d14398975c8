/// Strict RFC 3339 timestamps (`2026-11-20T10:00:01.001Z`, `2026-11-20T19:00:01+09:00`),
/// parsed without Foundation's formatters, which are slow and allocate on every call.
public enum Timestamp {
    /// Milliseconds since 1970-01-01T00:00:00Z, or `nil` when `text` is not RFC 3339
    /// (`date-time` of RFC 3339 §5.6: full date, `T` or space, time, optional fraction, `Z` or offset).
    public static func parseMilliseconds(_ text: String) -> Int64? {
        var utf8 = Array(text.utf8)
        guard utf8.count >= 20, utf8.count <= 40 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= utf8.count else { return nil }
            var value = 0
            for index in start..<(start + count) {
                let byte = utf8[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = digits(0, 4), utf8[4] == 45, let month = digits(5, 2), utf8[7] == 45,
              let day = digits(8, 2), utf8[10] == 84 || utf8[10] == 116 || utf8[10] == 32,
              let hour = digits(11, 2), utf8[13] == 58, let minute = digits(14, 2), utf8[16] == 58,
              let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var index = 19
        var millis = 0
        if utf8[index] == 46 {  // "."
            index += 1
            var fractionDigits = 0
            while index < utf8.count, utf8[index] >= 48, utf8[index] <= 57 {
                if fractionDigits < 3 { millis = millis * 10 + Int(utf8[index] - 48) }
                fractionDigits += 1
                index += 1
            }
            guard fractionDigits > 0, fractionDigits <= 9 else { return nil }
            if fractionDigits < 3 { for _ in fractionDigits..<3 { millis *= 10 } }
        }
        guard index < utf8.count else { return nil }
        var offsetSeconds = 0
        switch utf8[index] {
        case 90, 122:  // "Z", "z"
            guard index + 1 == utf8.count else { return nil }
        case 43, 45:  // "+", "-"
            guard index + 6 == utf8.count, let offsetHour = digits(index + 1, 2), utf8[index + 3] == 58,
                  let offsetMinute = digits(index + 4, 2), offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offsetSeconds = (offsetHour * 3600 + offsetMinute * 60) * (utf8[index] == 45 ? -1 : 1)
        default:
            return nil
        }
        utf8.removeAll()
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetSeconds
        return Int64(seconds) * 1000 + Int64(millis)
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-20T10:00:01.001Z`.
    public static func format(milliseconds: Int64) -> String {
        let totalSeconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let millis = Int(milliseconds - totalSeconds * 1000)
        var days = Int(totalSeconds / 86_400)
        var secondOfDay = Int(totalSeconds % 86_400)
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (year, month, day) = civilFromDays(days)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(millis, 3))Z"
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
