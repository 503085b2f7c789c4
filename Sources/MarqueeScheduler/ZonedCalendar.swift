public import MarqueeCore

public import struct Foundation.Date
public import struct Foundation.TimeZone

/// Conversions between instants (epoch milliseconds) and wall-clock days and times in one IANA time zone.
///
/// Only ``Foundation/TimeZone/secondsFromGMT(for:)`` is asked of Foundation; the rules for wall times that do
/// not exist or exist twice are this type's own, so they are the same on every platform:
/// - a time in a spring-forward gap (02:30 in New York on the second Sunday of March) is moved forward by the
///   gap (03:30 EDT), as the clock would read had it not jumped;
/// - a time that happens twice (01:30 on the first Sunday of November in New York) means its first occurrence.
public struct ZonedCalendar: Sendable {
    /// The zone.
    public let zone: TimeZone

    public init(zone: TimeZone) { self.zone = zone }

    /// The zone's offset from UTC at `instant`, in seconds.
    public func offset(at instant: Int64) -> Int64 {
        Int64(self.zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant.floorDivided(by: 1000)))))
    }

    /// The wall-clock day at `instant`.
    public func localDate(at instant: Int64) -> LocalDate {
        let local = instant.floorDivided(by: 1000) + self.offset(at: instant)
        return LocalDate(dayNumber: local.floorDivided(by: 86_400))
    }

    /// The wall-clock second of the day at `instant`.
    public func localTime(at instant: Int64) -> LocalTime {
        let local = instant.floorDivided(by: 1000) + self.offset(at: instant)
        let second = Int(local - local.floorDivided(by: 86_400) * 86_400)
        return LocalTime(hour: second / 3600, minute: second / 60 % 60, second: second % 60)!
    }

    /// The instant (epoch milliseconds) when the wall clock shows `time` on `date` (see the type's rules for
    /// gaps and repeats).
    public func instant(of date: LocalDate, at time: LocalTime) -> Int64 {
        let local = date.dayNumber * 86_400 + Int64(time.secondOfDay)
        // The offsets in force a day around it: every candidate instant uses one of them.
        let before = self.offset(at: (local - 86_400) * 1000)
        let after = self.offset(at: (local + 86_400) * 1000)
        let matching = Set([before, after]).map { local - $0 }.filter { self.offset(at: $0 * 1000) == local - $0 }
        if let first = matching.min() { return first * 1000 }
        // In a gap: the wall clock jumped over this time; keep the offset before the jump (moves it forward).
        return (local - before) * 1000
    }

    /// The instant the wall-clock day `date` begins.
    public func startOfDay(_ date: LocalDate) -> Int64 {
        self.instant(of: date, at: LocalTime(hour: 0, minute: 0)!)
    }
}
