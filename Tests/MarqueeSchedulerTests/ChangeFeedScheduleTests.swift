import MarqueeCore
import MarqueeScheduler
import Testing

/// A daily `tmdb.changes` schedule for the previous day: after an outage the leader sends each missed day once,
/// up to 14 days back, and reports the older ones as a gap for a backfill.
@Suite struct ChangeFeedScheduleTests {
    static let yaml = """
        schedules:
          - name: tmdb-changes-daily
            at: "03:00"
            zone: UTC
            catch_up: 14
            jobs:
              - kind: tmdb.changes
                start_date: "${yesterday:iso}"
                end_date: "${yesterday:iso}"
                languages: [[en-US, ko-KR]]
                follow: {images: true}
        """

    static func schedule() throws -> Schedule {
        let file = try ScheduleFile.parse(yaml: Self.yaml, file: "schedule.yaml", now: utc(2026, 11, 1, 0))
        return try #require(file.schedules.first)
    }

    /// A state log in which the schedule's window at `last` was sent and confirmed.
    static func log(settledThrough last: Int64, schedule: Schedule) -> StateLog {
        var log = StateLog()
        for phase in [WindowMarker.Phase.claimed, .done] {
            log.append(
                WindowMarker(phase: phase, schedule: schedule.name, window: last, owner: "old", at: last, jobs: 1)
            )
        }
        return log
    }

    /// The days (`start_date`) of the jobs the replicas send, leading in turn from the same log until nothing is
    /// due at `now`: every replica decides from the same view before any writes its claim (the race of two
    /// leaders with stale views), and only a claim that wins sends.
    static func sentDays(log: inout StateLog, schedule: Schedule, now: Int64, replicas: [String]) throws -> [String] {
        var days: [String] = []
        for _ in 0..<100 {
            let ledger = log.ledger()
            let actions = replicas.map {
                ($0, ledger.next(schedules: [schedule], now: now, since: now, claimTimeout: 60_000))
            }
            var fired = false
            var claims: [(owner: String, window: Int64, offset: Int64)] = []
            for (owner, action) in actions {
                guard case .fire(_, let window, nil, false) = action else { continue }
                fired = true
                let claim = WindowMarker(
                    phase: .claimed,
                    schedule: schedule.name,
                    window: window,
                    owner: owner,
                    at: now,
                    jobs: 1
                )
                claims.append((owner, window, log.append(claim)))
            }
            guard fired else { return days }
            for claim in claims
            where log.ledger().isWinner(schedule: schedule.name, window: claim.window, offset: claim.offset) {
                for job in try schedule.jobs(for: claim.window) {
                    guard case .tmdbChanges(let start, let end, 1, ["en-US", "ko-KR"], let follow) = job, start == end,
                        follow == Follow(images: true)
                    else {
                        Issue.record("unexpected job \(job)")
                        continue
                    }
                    days.append(start)
                }
                log.append(
                    WindowMarker(
                        phase: .done,
                        schedule: schedule.name,
                        window: claim.window,
                        owner: claim.owner,
                        at: now,
                        jobs: 1
                    )
                )
            }
        }
        Issue.record("the replicas never settled")
        return days
    }

    @Test(arguments: [["a"], ["a", "b"]])
    func aThreeDayOutageSendsEachMissingDayOnce(replicas: [String]) throws {
        let schedule = try Self.schedule()
        // The producer last sent the window of 2026-11-10 (for the 9th), then was down until the 13th at noon.
        var log = Self.log(settledThrough: utc(2026, 11, 10, 3), schedule: schedule)
        let now = utc(2026, 11, 13, 12)
        let catchUp = log.ledger().catchUp(schedules: [schedule], now: now)
        #expect(
            catchUp == [
                .init(
                    schedule: schedule.name,
                    sent: [utc(2026, 11, 11, 3), utc(2026, 11, 12, 3), utc(2026, 11, 13, 3)],
                    notSent: 0,
                    notSentRange: nil
                )
            ]
        )
        let days = try Self.sentDays(log: &log, schedule: schedule, now: now, replicas: replicas)
        #expect(days == ["2026-11-10", "2026-11-11", "2026-11-12"])
        // Once caught up, nothing more until the next day's window.
        #expect(try Self.sentDays(log: &log, schedule: schedule, now: now + 3_600_000, replicas: replicas).isEmpty)
    }

    @Test func daysBeyondFourteenAreReportedForABackfill() throws {
        let schedule = try Self.schedule()
        var log = Self.log(settledThrough: utc(2026, 10, 1, 3), schedule: schedule)
        // 20 windows missed (2 … 21 October): the latest 14 are sent, the 6 before them are a gap.
        let now = utc(2026, 10, 21, 4)
        let catchUp = try #require(log.ledger().catchUp(schedules: [schedule], now: now).first)
        #expect(catchUp.sent.count == 14)
        #expect(catchUp.sent.first == utc(2026, 10, 8, 3))
        #expect(catchUp.notSent == 6)
        #expect(catchUp.notSentRange == utc(2026, 10, 2, 3)...utc(2026, 10, 7, 3))
        let days = try Self.sentDays(log: &log, schedule: schedule, now: now, replicas: ["a", "b"])
        #expect(days == (7...20).map { "2026-10-\($0 < 10 ? "0" : "")\($0)" })
    }

    @Test func theBackfillGapIsAMetricPerSchedule() throws {
        let schedule = try Self.schedule()
        let lists = try #require(
            try ScheduleFile.parse(
                yaml: """
                    schedules:
                      - name: lists
                        every: 1h
                        jobs:
                          - kind: tmdb.genres
                            language: en
                    """,
                file: "schedule.yaml",
                now: utc(2026, 10, 1, 0)
            ).schedules.first
        )
        let metrics = ProducerMetrics()
        let log = Self.log(settledThrough: utc(2026, 10, 1, 3), schedule: schedule)
        metrics.catchUp(
            log.ledger().catchUp(schedules: [schedule, lists], now: utc(2026, 10, 21, 4)),
            schedules: [schedule, lists]
        )
        let text = metrics.render()
        #expect(text.contains(#"marquee_producer_backfill_windows{schedule="tmdb-changes-daily"} 6"#))
        #expect(text.contains(#"marquee_producer_catch_up_windows{schedule="tmdb-changes-daily"} 14"#))
        // A `catch_up: latest` schedule never leaves a gap to count.
        #expect(!text.contains(#"schedule="lists""#))

        // Caught up on time, a later leader's view clears the gauge.
        let onTime = Self.log(settledThrough: utc(2026, 11, 10, 3), schedule: schedule)
        metrics.catchUp(
            onTime.ledger().catchUp(schedules: [schedule], now: utc(2026, 11, 11, 3, 1)),
            schedules: [schedule]
        )
        #expect(metrics.render().contains(#"marquee_producer_backfill_windows{schedule="tmdb-changes-daily"} 0"#))
    }

    @Test func onTimeThereIsNothingToCatchUp() throws {
        let schedule = try Self.schedule()
        let log = Self.log(settledThrough: utc(2026, 11, 10, 3), schedule: schedule)
        #expect(log.ledger().catchUp(schedules: [schedule], now: utc(2026, 11, 11, 3, 1)).isEmpty)
    }
}
