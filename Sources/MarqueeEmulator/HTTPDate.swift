/// HTTP dates (RFC 9110 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`) for `Last-Modified` and
/// `If-Modified-Since`.
enum HTTPDate {
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Formats seconds since the epoch.
    static func format(_ seconds: Int) -> String {
        let day = Day(seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400)
        let second = seconds - day.value * 86400
        let (year, month, date) = day.civil
        return "\(weekdays[day.weekday]), \(Day.pad(date, 2)) \(months[month - 1]) \(Day.pad(year, 4)) "
            + "\(Day.pad(second / 3600, 2)):\(Day.pad(second / 60 % 60, 2)):\(Day.pad(second % 60, 2)) GMT"
    }

    /// Parses an IMF-fixdate; nil for anything else.
    static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let date = Int(parts[1]),
            let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3 else { return nil }
        return Day(year: year, month: month + 1, day: date).epochSeconds + time[0] * 3600 + time[1] * 60 + time[2]
    }
}
