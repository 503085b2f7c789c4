/// A calendar day (proleptic Gregorian) without a time zone: what "yesterday" means in a schedule's zone, the
/// day of a KOFIC budget, a day an operator names.
///
/// Stored as days since 1970-01-01, so adding days and finding the weekday are plain arithmetic (the civil-date
/// conversions of Howard Hinnant's "chrono-compatible low-level date algorithms").
public struct LocalDate: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public let dayNumber: Int64

    public init(dayNumber: Int64) { self.dayNumber = dayNumber }

    /// The day `year`-`month`-`day`, or `nil` when it does not exist.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= Self.days(in: month, of: year) else { return nil }
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        self.dayNumber = era * 146_097 + dayOfEra - 719_468
    }

    /// `(year, month, day)`.
    public var components: (year: Int, month: Int, day: Int) {
        let z = self.dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    /// The day `YYYY-MM-DD` names (a year from 1 to 9999; `2024-2-9` is read too); `nil` when the text is not
    /// of that form or the day does not exist.
    public init?(parsing text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...9999).contains(year)
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The ISO weekday.
    public var weekday: Weekday {
        // 1970-01-01 was a Thursday (ISO 4).
        let index = ((self.dayNumber + 3) % 7 + 7) % 7  // 0 = Monday
        return Weekday.allCases[Int(index)]
    }

    /// The day `days` later (earlier when negative).
    public func adding(days: Int64) -> LocalDate { LocalDate(dayNumber: self.dayNumber + days) }

    /// The Monday of this day's ISO week.
    public var mondayOfWeek: LocalDate { self.adding(days: -Int64(self.weekday.rawValue - 1)) }

    /// `yyyyMMdd`, as KOFIC's `targetDt`.
    public var compact: String {
        let (year, month, day) = self.components
        return Self.padded(year, 4) + Self.padded(month, 2) + Self.padded(day, 2)
    }

    /// `yyyy-MM-dd`.
    public var description: String {
        let (year, month, day) = self.components
        return "\(Self.padded(year, 4))-\(Self.padded(month, 2))-\(Self.padded(day, 2))"
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool { lhs.dayNumber < rhs.dayNumber }

    /// The days of `month` (1 to 12) in `year`: 28 to 31.
    public static func days(in month: Int, of year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// `value` in decimal with leading zeros up to `width` digits.
    public static func padded(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}

/// An instant in UTC as a calendar day and a time of day, to the millisecond.
public struct UTCInstant: Hashable, Sendable {
    public let date: LocalDate
    /// Milliseconds since the day's midnight, 0 to 86,399,999.
    public let millisecondOfDay: Int64

    /// The instant `milliseconds` after 1970-01-01T00:00:00Z (before it when negative).
    public init(milliseconds: Int64) {
        let day = milliseconds.floorDivided(by: 86_400_000)
        self.date = LocalDate(dayNumber: day)
        self.millisecondOfDay = milliseconds - day * 86_400_000
    }

    /// `HH:mm:ss`, the milliseconds left out.
    public var time: String {
        let seconds = Int(self.millisecondOfDay / 1000)
        return
            "\(LocalDate.padded(seconds / 3600, 2)):\(LocalDate.padded(seconds / 60 % 60, 2)):\(LocalDate.padded(seconds % 60, 2))"
    }

    /// `2024-05-30T01:00:00Z`, with `.123` before the `Z` when the instant is not a whole second.
    public var iso8601: String {
        let milliseconds = Int(self.millisecondOfDay % 1000)
        return "\(self.date)T\(self.time)" + (milliseconds == 0 ? "" : "." + LocalDate.padded(milliseconds, 3)) + "Z"
    }
}

/// A wall-clock time of day, to the second.
public struct LocalTime: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Seconds since midnight, 0 to 86,399.
    public let secondOfDay: Int

    public init?(hour: Int, minute: Int, second: Int = 0) {
        guard (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second) else { return nil }
        self.secondOfDay = hour * 3600 + minute * 60 + second
    }

    /// `HH:mm` or `HH:mm:ss`.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count),
            parts.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isASCII) }),
            let hour = Int(parts[0]), let minute = Int(parts[1]), parts[1].count == 2
        else { return nil }
        let second = parts.count == 3 ? Int(parts[2]) : 0
        guard let second, parts.count == 2 || parts[2].count == 2 else { return nil }
        self.init(hour: hour, minute: minute, second: second)
    }

    public var description: String {
        let (hour, minute, second) = (self.secondOfDay / 3600, self.secondOfDay / 60 % 60, self.secondOfDay % 60)
        let base = "\(LocalDate.padded(hour, 2)):\(LocalDate.padded(minute, 2))"
        return second == 0 ? base : base + ":\(LocalDate.padded(second, 2))"
    }

    public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool { lhs.secondOfDay < rhs.secondOfDay }
}

/// An ISO weekday (Monday is 1).
public enum Weekday: Int, Hashable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    case monday = 1
    case tuesday, wednesday, thursday, friday, saturday, sunday

    /// `monday` … `sunday`, or their three-letter forms (any case).
    public init?(name: String) {
        let name = name.lowercased()
        guard let day = Self.allCases.first(where: { $0.description == name || $0.description.prefix(3) == name })
        else {
            return nil
        }
        self = day
    }

    public var description: String {
        switch self {
        case .monday: "monday"
        case .tuesday: "tuesday"
        case .wednesday: "wednesday"
        case .thursday: "thursday"
        case .friday: "friday"
        case .saturday: "saturday"
        case .sunday: "sunday"
        }
    }

    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension Int64 {
    /// The quotient rounded towards negative infinity (`-1` for `-1 / 86_400`, where `/` gives 0): the day of an
    /// instant before 1970, the window an instant falls in.
    public func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
