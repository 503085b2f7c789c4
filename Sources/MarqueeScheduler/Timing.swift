public import MarqueeCore

/// When a schedule fires: the instants that start its windows.
///
/// A window is named by the instant it starts (epoch milliseconds); the schedule's jobs for it are enqueued
/// once, at or soon after that instant.
public enum Timing: Hashable, Sendable, CustomStringConvertible {
    /// Every `period` of real time, counted from each wall-clock midnight of the zone: `every: 1h` fires at
    /// 00:00, 01:00, … 23:00 local time (23 windows on a spring-forward day, 25 on a fall-back day: one per real
    /// hour). A period that does not divide the day starts again at the next midnight (7h: 00, 07, 14, 21).
    /// From 1 second to 24 hours.
    case every(periodMilliseconds: Int64)
    /// Every day at each of these wall-clock times.
    case daily(times: [LocalTime])
    /// On these weekdays, at each of these wall-clock times.
    case weekly(days: [Weekday], times: [LocalTime])

    public var description: String {
        switch self {
        case .every(let period): "every \(Self.describe(milliseconds: period))"
        case .daily(let times): "daily at \(times.map(\.description).joined(separator: ", "))"
        case .weekly(let days, let times):
            "\(days.map(\.description).joined(separator: ", ")) at \(times.map(\.description).joined(separator: ", "))"
        }
    }

    /// The first window that starts strictly after `instant`.
    public func window(after instant: Int64, in calendar: ZonedCalendar) -> Int64 {
        switch self {
        case .every(let period):
            var date = calendar.localDate(at: instant)
            var start = calendar.startOfDay(date)
            if start > instant {  // only in a zone whose midnight was skipped or repeated
                date = date.adding(days: -1)
                start = calendar.startOfDay(date)
            }
            let next = start + ((instant - start).floorDivided(by: period) + 1) * period
            let nextDay = calendar.startOfDay(date.adding(days: 1))
            return next < nextDay ? next : nextDay
        case .daily, .weekly:
            let today = calendar.localDate(at: instant)
            for offset in Int64(-1)...8 {
                if let first = self.starts(on: today.adding(days: offset), in: calendar).first(where: { $0 > instant })
                {
                    return first
                }
            }
            preconditionFailure("a weekly timing fires at least once in 10 days")
        }
    }

    /// The last window that starts at or before `instant`.
    public func window(atOrBefore instant: Int64, in calendar: ZonedCalendar) -> Int64 {
        switch self {
        case .every(let period):
            var date = calendar.localDate(at: instant)
            var start = calendar.startOfDay(date)
            if start > instant {
                date = date.adding(days: -1)
                start = calendar.startOfDay(date)
            }
            return start + (instant - start).floorDivided(by: period) * period
        case .daily, .weekly:
            let today = calendar.localDate(at: instant)
            for offset in stride(from: Int64(1), through: -8, by: -1) {
                if let last = self.starts(on: today.adding(days: offset), in: calendar).last(where: { $0 <= instant }) {
                    return last
                }
            }
            preconditionFailure("a weekly timing fires at least once in 10 days")
        }
    }

    /// The windows that start after `after` and at or before `through`, oldest first, at most `limit` of them
    /// (the latest ones when there are more).
    public func windows(after: Int64, through: Int64, limit: Int, in calendar: ZonedCalendar) -> [Int64] {
        // Backwards from the latest, so a long downtime costs `limit` steps, not one per missed window.
        var windows: [Int64] = []
        var cursor = self.window(atOrBefore: through, in: calendar)
        while cursor > after, windows.count < limit {
            windows.append(cursor)
            cursor = self.window(atOrBefore: cursor - 1, in: calendar)
        }
        return windows.reversed()
    }

    /// The window starts of daily and weekly timings on one wall-clock day, in order.
    private func starts(on date: LocalDate, in calendar: ZonedCalendar) -> [Int64] {
        switch self {
        case .every: return []
        case .daily(let times): return Array(Set(times.map { calendar.instant(of: date, at: $0) })).sorted()
        case .weekly(let days, let times):
            guard days.contains(date.weekday) else { return [] }
            return Array(Set(times.map { calendar.instant(of: date, at: $0) })).sorted()
        }
    }

    static func describe(milliseconds: Int64) -> String {
        if milliseconds % 3_600_000 == 0 { return "\(milliseconds / 3_600_000)h" }
        if milliseconds % 60_000 == 0 { return "\(milliseconds / 60_000)m" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        return "\(milliseconds)ms"
    }
}
