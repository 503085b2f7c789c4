import MarqueeCore
import MarqueeScheduler
import Testing

import struct Foundation.TimeZone

/// Epoch milliseconds of a wall-clock time in a zone.
func instant(_ zone: String, _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0) -> Int64 {
    ZonedCalendar(zone: TimeZone(identifier: zone)!)
        .instant(of: LocalDate(year: year, month: month, day: day)!, at: LocalTime(hour: hour, minute: minute)!)
}

/// Epoch milliseconds of a UTC time.
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0) -> Int64 {
    instant("UTC", year, month, day, hour, minute)
}

func calendar(_ zone: String) -> ZonedCalendar { ZonedCalendar(zone: TimeZone(identifier: zone)!) }

@Suite struct TimingTests {
    let hourly = Timing.every(periodMilliseconds: 3_600_000)
    let dailyAt10 = Timing.daily(times: [LocalTime(hour: 10, minute: 0)!])
    let mondaysAt10 = Timing.weekly(days: [.monday], times: [LocalTime(hour: 10, minute: 0)!])

    @Test func localDatesRoundTripAndKnowTheirWeekday() {
        let day = LocalDate(year: 2024, month: 2, day: 29)!
        #expect(day.components == (2024, 2, 29))
        #expect(day.compact == "20240229")
        #expect(day.weekday == .thursday)
        #expect(day.adding(days: 1).description == "2024-03-01")
        #expect(LocalDate(year: 1970, month: 1, day: 1)!.dayNumber == 0)
        #expect(LocalDate(year: 2023, month: 2, day: 29) == nil)
        #expect(LocalDate(year: 2024, month: 6, day: 5)!.mondayOfWeek.description == "2024-06-03")
        #expect(LocalDate(year: 2024, month: 6, day: 9)!.mondayOfWeek.description == "2024-06-03")  // a Sunday
    }

    @Test func hourlyInSeoulFiresOnTheHour() {
        let seoul = calendar("Asia/Seoul")
        let now = instant("Asia/Seoul", 2024, 5, 30, 10, 20)
        #expect(self.hourly.window(after: now, in: seoul) == instant("Asia/Seoul", 2024, 5, 30, 11))
        #expect(self.hourly.window(atOrBefore: now, in: seoul) == instant("Asia/Seoul", 2024, 5, 30, 10))
        // On the hour exactly: that window is the latest, the next one an hour on.
        let ten = instant("Asia/Seoul", 2024, 5, 30, 10)
        #expect(self.hourly.window(atOrBefore: ten, in: seoul) == ten)
        #expect(self.hourly.window(after: ten, in: seoul) == ten + 3_600_000)
        // Across midnight.
        #expect(
            self.hourly.window(after: instant("Asia/Seoul", 2024, 5, 30, 23, 59), in: seoul)
                == instant("Asia/Seoul", 2024, 5, 31, 0)
        )
    }

    @Test func dailyAtTenInSeoulIsOneInUTC() {
        let seoul = calendar("Asia/Seoul")
        let window = self.dailyAt10.window(after: utc(2024, 5, 30, 0, 30), in: seoul)
        #expect(window == utc(2024, 5, 30, 1))  // 10:00 KST = 01:00 UTC
        #expect(self.dailyAt10.window(after: window, in: seoul) == utc(2024, 5, 31, 1))
        #expect(self.dailyAt10.window(atOrBefore: utc(2024, 5, 30, 0, 59), in: seoul) == utc(2024, 5, 29, 1))
        #expect(seoul.localDate(at: window).description == "2024-05-30")
    }

    @Test func weeklyOnMondays() {
        let seoul = calendar("Asia/Seoul")
        let wednesday = instant("Asia/Seoul", 2024, 6, 5, 12)
        let monday = self.mondaysAt10.window(after: wednesday, in: seoul)
        #expect(monday == instant("Asia/Seoul", 2024, 6, 10, 10))
        #expect(self.mondaysAt10.window(atOrBefore: wednesday, in: seoul) == instant("Asia/Seoul", 2024, 6, 3, 10))
        #expect(self.mondaysAt10.window(after: monday, in: seoul) == instant("Asia/Seoul", 2024, 6, 17, 10))
    }

    @Test func hourlyInNewYorkHasOneWindowPerRealHourAcrossDaylightSaving() {
        let newYork = calendar("America/New_York")
        // 2024-03-10: clocks jump from 02:00 to 03:00 (a 23-hour day); 2024-11-03: 02:00 back to 01:00 (25 hours).
        for (day, hours) in [
            (LocalDate(year: 2024, month: 3, day: 10)!, 23), (LocalDate(year: 2024, month: 11, day: 3)!, 25),
        ] {
            let start = newYork.startOfDay(day)
            let end = newYork.startOfDay(day.adding(days: 1))
            let windows = self.hourly.windows(after: start - 1, through: end - 1, limit: 100, in: newYork)
            #expect(windows.count == hours)
            #expect(zip(windows, windows.dropFirst()).allSatisfy { $1 - $0 == 3_600_000 }, "one real hour apart")
        }
        // The spring-forward day: 01:00 EST, then 03:00 EDT one real hour later.
        #expect(
            self.hourly.window(after: instant("America/New_York", 2024, 3, 10, 1, 30), in: newYork)
                == utc(2024, 3, 10, 7)
        )
    }

    @Test func timesInADaylightSavingGapMoveForwardAndRepeatedTimesFireOnce() {
        let newYork = calendar("America/New_York")
        let at0230 = Timing.daily(times: [LocalTime(hour: 2, minute: 30)!])
        // 02:30 does not exist on 2024-03-10: 03:30 EDT (07:30 UTC).
        #expect(
            at0230.window(after: instant("America/New_York", 2024, 3, 9, 12), in: newYork) == utc(2024, 3, 10, 7, 30)
        )
        #expect(at0230.window(after: utc(2024, 3, 10, 7, 30), in: newYork) == utc(2024, 3, 11, 6, 30))
        // 01:30 happens twice on 2024-11-03: the first (EDT, 05:30 UTC) only.
        let at0130 = Timing.daily(times: [LocalTime(hour: 1, minute: 30)!])
        let first = at0130.window(after: utc(2024, 11, 3, 0), in: newYork)
        #expect(first == utc(2024, 11, 3, 5, 30))
        #expect(at0130.window(after: first, in: newYork) == utc(2024, 11, 4, 6, 30))  // EST from now on
        // Daily at 10:00 keeps 10:00 local on both sides of the change.
        #expect(self.dailyAt10.window(after: utc(2024, 3, 9, 16), in: newYork) == utc(2024, 3, 10, 14))
        #expect(self.dailyAt10.window(after: utc(2024, 3, 8, 16), in: newYork) == utc(2024, 3, 9, 15))
    }

    @Test func aPeriodThatDoesNotDivideTheDayStartsAgainAtMidnight() {
        let seoul = calendar("Asia/Seoul")
        let every7h = Timing.every(periodMilliseconds: 7 * 3_600_000)
        let day = LocalDate(year: 2024, month: 5, day: 30)!
        let windows = every7h.windows(
            after: seoul.startOfDay(day) - 1,
            through: seoul.startOfDay(day.adding(days: 1)),
            limit: 10,
            in: seoul
        )
        #expect(windows.map { seoul.localTime(at: $0).description } == ["00:00", "07:00", "14:00", "21:00", "00:00"])
    }

    @Test func missedWindowsAreCountedBackwardsFromTheLatest() {
        let seoul = calendar("Asia/Seoul")
        let last = instant("Asia/Seoul", 2024, 5, 30, 10)
        let now = instant("Asia/Seoul", 2024, 5, 30, 15, 30)
        #expect(self.hourly.windows(after: last, through: now, limit: 100, in: seoul).count == 5)
        #expect(
            self.hourly.windows(after: last, through: now, limit: 2, in: seoul) == [now - 5_400_000, now - 1_800_000]
        )
        // A year of seconds costs no more than the limit.
        let everySecond = Timing.every(periodMilliseconds: 1000)
        #expect(
            everySecond.windows(after: 0, through: 31_536_000_000, limit: 3, in: seoul) == [
                31_535_998_000, 31_535_999_000, 31_536_000_000,
            ]
        )
    }

    @Test func dateExpressionsNameDaysAroundTheWindow() throws {
        let day = LocalDate(year: 2024, month: 6, day: 5)!  // a Wednesday
        func text(_ expression: String) -> String? { DateExpression(parsing: Substring(expression))?.text(for: day) }
        #expect(text("today") == "20240605")
        #expect(text("yesterday") == "20240604")
        #expect(text("today-7d") == "20240529")
        #expect(text("week") == "20240603")
        #expect(text("week-1w") == "20240527")
        #expect(text("yesterday:iso") == "2024-06-04")
        #expect(text("today+2w") == "20240619")
        #expect(text("tomorrow") == nil)
        #expect(text("today-7") == nil)
        #expect(text("today-x d") == nil)
    }
}
