/// `Retry-After` values (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
enum RetryAfter {
    /// The delay `value` asks for, measured from `now` (epoch milliseconds); a date in the past is zero.
    static func parse(_ value: String, now: Int64) -> Duration? {
        let text = value.trimmingASCIIWhitespace()
        if let seconds = Int64(text) {
            return seconds >= 0 ? .seconds(seconds) : nil
        }
        guard let epochSeconds = self.httpDate(text) else { return nil }
        let delayMilliseconds = epochSeconds * 1000 - now
        return .milliseconds(max(0, delayMilliseconds))
    }

    /// Seconds since the epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) or an RFC 850 date
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`).
    static func httpDate(_ text: String) -> Int64? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        let day: Int64
        let month: Int64
        var year: Int64
        let time: String
        if parts.count == 6, parts[5].uppercased() == "GMT" {
            // Sun, 06 Nov 1994 08:49:37 GMT
            guard let d = Int64(parts[1]), let m = months.firstIndex(of: parts[2].lowercased()), let y = Int64(parts[3])
            else { return nil }
            (day, month, year, time) = (d, Int64(m) + 1, y, parts[4])
        } else if parts.count == 4, parts[3].uppercased() == "GMT" {
            // Sunday, 06-Nov-94 08:49:37 GMT
            let date = parts[1].split(separator: "-").map(String.init)
            guard date.count == 3, let d = Int64(date[0]), let m = months.firstIndex(of: date[1].lowercased()),
                let y = Int64(date[2])
            else { return nil }
            (day, month, year, time) = (d, Int64(m) + 1, y, parts[2])
            if year < 100 { year += year < 70 ? 2000 : 1900 }
        } else {
            return nil
        }
        let clock = time.split(separator: ":").compactMap { Int64($0) }
        guard clock.count == 3, (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]),
            (0...60).contains(clock[2])
        else { return nil }
        return (Self.daysFromCivil(year: year, month: month, day: day) * 86_400) + clock[0] * 3600 + clock[1] * 60
            + clock[2]
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
