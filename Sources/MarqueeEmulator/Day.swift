/// A calendar day as days since 1970-01-01 (UTC), with the date formats the upstreams use.
public struct Day: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public var value: Int

    /// The day `value` days after 1970-01-01.
    public init(_ value: Int) { self.value = value }

    /// The day of a civil date.
    public init(year: Int, month: Int, day: Int) {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        self.value = era * 146_097 + doe - 719_468
    }

    /// Parses `YYYYMMDD` (KOFIC's `targetDt`) or `YYYY-MM-DD`.
    public init?(parsing text: String) {
        let digits = text.filter { $0 != "-" }
        guard digits.count == 8, digits.allSatisfy(\.isASCII), let number = Int(digits) else { return nil }
        let year = number / 10000
        let month = (number / 100) % 100
        let day = number % 100
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        self.init(year: year, month: month, day: day)
        guard self.civil == (year, month, day) else { return nil }
    }

    /// Year, month, day.
    public var civil: (year: Int, month: Int, day: Int) {
        let z = self.value + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    /// 0 = Monday … 6 = Sunday.
    public var weekday: Int { ((self.value % 7) + 7 + 3) % 7 }

    /// The year.
    public var year: Int { self.civil.year }

    /// `YYYY-MM-DD` (TMDB, KOFIC box-office lists).
    public var iso: String {
        let (y, m, d) = self.civil
        return "\(Self.pad(y, 4))-\(Self.pad(m, 2))-\(Self.pad(d, 2))"
    }

    /// `YYYYMMDD` (KOFIC `targetDt`, `showRange`, movie info `openDt`).
    public var compact: String {
        let (y, m, d) = self.civil
        return "\(Self.pad(y, 4))\(Self.pad(m, 2))\(Self.pad(d, 2))"
    }

    /// The description is the ISO form.
    public var description: String { self.iso }

    /// Seconds since the epoch at midnight UTC.
    public var epochSeconds: Int { self.value * 86400 }

    /// The day `days` later.
    public func adding(_ days: Int) -> Day { Day(self.value + days) }

    public static func < (lhs: Day, rhs: Day) -> Bool { lhs.value < rhs.value }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
