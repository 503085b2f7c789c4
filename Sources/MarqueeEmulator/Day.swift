import MarqueeCore

/// A calendar day as days since 1970-01-01 (UTC), with the date formats the upstreams use.
public struct Day: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public var value: Int

    /// The day `value` days after 1970-01-01.
    public init(_ value: Int) { self.value = value }

    /// The day of a civil date (the proleptic Gregorian calendar's arithmetic: ``LocalDate``).
    ///
    /// - Precondition: The day exists.
    public init(year: Int, month: Int, day: Int) {
        guard let date = LocalDate(year: year, month: month, day: day) else {
            preconditionFailure("\(year)-\(month)-\(day) is no calendar day")
        }
        self.value = Int(date.dayNumber)
    }

    /// Parses `YYYYMMDD` (KOFIC's `targetDt`) or `YYYY-MM-DD`.
    public init?(parsing text: String) {
        let digits = text.filter { $0 != "-" }
        guard digits.count == 8, digits.allSatisfy(\.isASCII), let number = Int(digits),
            let date = LocalDate(year: number / 10000, month: (number / 100) % 100, day: number % 100)
        else { return nil }
        self.init(Int(date.dayNumber))
    }

    /// Year, month, day.
    public var civil: (year: Int, month: Int, day: Int) { LocalDate(dayNumber: Int64(self.value)).components }

    /// 0 = Monday … 6 = Sunday.
    public var weekday: Int { ((self.value % 7) + 7 + 3) % 7 }

    /// The year.
    public var year: Int { self.civil.year }

    /// `YYYY-MM-DD` (TMDB, KOFIC box-office lists).
    public var iso: String { LocalDate(dayNumber: Int64(self.value)).description }

    /// `YYYYMMDD` (KOFIC `targetDt`, `showRange`, movie info `openDt`).
    public var compact: String { LocalDate(dayNumber: Int64(self.value)).compact }

    /// The description is the ISO form.
    public var description: String { self.iso }

    /// Seconds since the epoch at midnight UTC.
    public var epochSeconds: Int { self.value * 86400 }

    /// The day `days` later.
    public func adding(_ days: Int) -> Day { Day(self.value + days) }

    public static func < (lhs: Day, rhs: Day) -> Bool { lhs.value < rhs.value }

    static func pad(_ value: Int, _ width: Int) -> String { LocalDate.padded(value, width) }
}
