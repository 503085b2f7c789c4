/// A calendar day (proleptic Gregorian, years 1 to 9999), for ranges of dates.
public struct CalendarDay: Sendable, Hashable, Comparable {
    /// The year, 1 to 9999.
    public let year: Int
    /// The month, 1 to 12.
    public let month: Int
    /// The day of the month, from 1.
    public let day: Int

    /// The day `YYYY-MM-DD` names; `nil` when it is not a real calendar day.
    public init?(_ text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= Self.days(in: month, of: year)
        else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    private init(year: Int, month: Int, day: Int) { (self.year, self.month, self.day) = (year, month, day) }

    /// The days of `month` in `year`: 28 to 31.
    public static func days(in month: Int, of year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// The day after.
    public var next: CalendarDay {
        if self.day < Self.days(in: self.month, of: self.year) {
            return CalendarDay(year: self.year, month: self.month, day: self.day + 1)
        }
        return self.month < 12
            ? CalendarDay(year: self.year, month: self.month + 1, day: 1)
            : CalendarDay(year: self.year + 1, month: 1, day: 1)
    }

    /// `yyyyMMdd`, as KOFIC's `targetDt`.
    public var compact: String {
        func padded(_ value: Int, _ width: Int) -> String {
            String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
        }
        return padded(self.year, 4) + padded(self.month, 2) + padded(self.day, 2)
    }

    /// The days from `from` to `to` (default: `from`), `step` days apart; at most ten years of them.
    ///
    /// - Throws: An ``OperationsError`` for a day it cannot read, `to` before `from`, or more than ten years.
    public static func range(from: String, to: String?, step: Int) throws(OperationsError) -> [CalendarDay] {
        guard let first = CalendarDay(from), let last = CalendarDay(to ?? from) else {
            throw OperationsError(.enqueue, "--from and --to must be days as YYYY-MM-DD")
        }
        guard first <= last else { throw OperationsError(.enqueue, "--to is before --from") }
        var days: [CalendarDay] = []
        var day = first
        while day <= last {
            guard days.count < 3660 / step else { throw OperationsError(.enqueue, "at most ten years of days at once") }
            days.append(day)
            for _ in 0..<step { day = day.next }
        }
        return days
    }

    public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}
