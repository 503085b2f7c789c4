import MarqueeCore
import MarqueeJSON
import MarqueeScheduler
import Testing

import struct Foundation.TimeZone

/// The state topic's single partition, in memory: offsets in append order.
struct StateLog {
    var records: [WindowMarker] = []

    @discardableResult
    mutating func append(_ marker: WindowMarker) -> Int64 {
        self.records.append(marker)
        return Int64(self.records.count - 1)
    }

    /// A ledger that has read the first `count` records (all by default).
    func ledger(through count: Int? = nil) -> WindowLedger {
        var ledger = WindowLedger()
        for (offset, marker) in self.records.prefix(count ?? self.records.count).enumerated() {
            ledger.apply(marker, offset: Int64(offset))
        }
        return ledger
    }
}

@Suite struct WindowLedgerTests {
    static let hour: Int64 = 3_600_000
    let hourly = Schedule(
        name: "hourly",
        timing: .every(periodMilliseconds: 3_600_000),
        zone: TimeZone(identifier: "Asia/Seoul")!,
        templates: [
            JobTemplate(
                fields: [.init(name: "kind", values: [.string("tmdb.genres")], isExpanded: false, location: nil)],
                location: nil
            )
        ]
    )
    let start = instant("Asia/Seoul", 2024, 6, 1, 10, 20)
    let claimTimeout: Int64 = 60_000

    func claim(
        _ window: Int64,
        by owner: String,
        at: Int64,
        supersedes: Int64? = nil,
        schedule: String = "hourly"
    ) -> WindowMarker {
        WindowMarker(
            phase: .claimed,
            schedule: schedule,
            window: window,
            owner: owner,
            at: at,
            supersedes: supersedes,
            jobs: 1
        )
    }

    func done(_ window: Int64, by owner: String, schedule: String = "hourly") -> WindowMarker {
        WindowMarker(phase: .done, schedule: schedule, window: window, owner: owner, at: window, jobs: 1)
    }

    func next(_ ledger: WindowLedger, now: Int64, schedules: [Schedule]? = nil) -> WindowLedger.Action {
        ledger.next(schedules: schedules ?? [self.hourly], now: now, since: self.start, claimTimeout: self.claimTimeout)
    }

    @Test func withoutHistoryTheFirstWindowIsTheFirstAfterTheStart() {
        let ledger = WindowLedger()
        let eleven = instant("Asia/Seoul", 2024, 6, 1, 11)
        #expect(self.next(ledger, now: self.start + 1000) == .wait(until: eleven))
        #expect(
            self.next(ledger, now: eleven) == .fire(schedule: "hourly", window: eleven, supersedes: nil, skips: false)
        )
    }

    @Test func aSettledWindowIsNotFiredAgainAndTheNextOneIsAwaited() {
        var log = StateLog()
        let eleven = instant("Asia/Seoul", 2024, 6, 1, 11)
        log.append(self.claim(eleven, by: "a", at: eleven))
        log.append(self.done(eleven, by: "a"))
        #expect(self.next(log.ledger(), now: eleven + 5000) == .wait(until: eleven + Self.hour))
        #expect(
            self.next(log.ledger(), now: eleven + Self.hour)
                == .fire(schedule: "hourly", window: eleven + Self.hour, supersedes: nil, skips: false)
        )
    }

    @Test func catchUpAfterDowntimeFollowsTheSchedulesPolicy() {
        var log = StateLog()
        let eleven = instant("Asia/Seoul", 2024, 6, 1, 11)
        log.append(self.claim(eleven, by: "a", at: eleven))
        log.append(self.done(eleven, by: "a"))
        let later = eleven + 5 * Self.hour + 600_000  // 16:10: the 12:00 … 16:00 windows were missed

        var latest = self.hourly
        latest.catchUp = .latest
        #expect(
            self.next(log.ledger(), now: later, schedules: [latest])
                == .fire(schedule: "hourly", window: eleven + 5 * Self.hour, supersedes: nil, skips: false)
        )

        var all = self.hourly
        all.catchUp = .all(limit: 3)
        #expect(
            self.next(log.ledger(), now: later, schedules: [all])
                == .fire(schedule: "hourly", window: eleven + 3 * Self.hour, supersedes: nil, skips: false)
        )

        var none = self.hourly
        none.catchUp = .none
        // Ten minutes late: skipped (claimed and confirmed without jobs, so the next window is the one after it).
        #expect(
            self.next(log.ledger(), now: later, schedules: [none])
                == .fire(schedule: "hourly", window: eleven + 5 * Self.hour, supersedes: nil, skips: true)
        )
        #expect(
            self.next(log.ledger(), now: eleven + 5 * Self.hour + 30_000, schedules: [none])
                == .fire(schedule: "hourly", window: eleven + 5 * Self.hour, supersedes: nil, skips: false)
        )
    }

    @Test func theFirstClaimWinsAndATakeoverNeedsAStaleWinner() {
        var log = StateLog()
        let eleven = instant("Asia/Seoul", 2024, 6, 1, 11)
        let first = log.append(self.claim(eleven, by: "a", at: eleven))
        let second = log.append(self.claim(eleven, by: "b", at: eleven + 10))
        var ledger = log.ledger()
        #expect(ledger.isWinner(schedule: "hourly", window: eleven, offset: first))
        #expect(!ledger.isWinner(schedule: "hourly", window: eleven, offset: second))
        // Unconfirmed: wait for the winner until its claim times out…
        #expect(self.next(ledger, now: eleven + 1000) == .wait(until: eleven + self.claimTimeout))
        // …then take it over, superseding exactly that claim.
        #expect(
            self.next(ledger, now: eleven + self.claimTimeout)
                == .fire(schedule: "hourly", window: eleven, supersedes: first, skips: false)
        )
        // Two takeovers of the same claim: the first wins; a takeover of the new winner may follow later.
        let takeover = log.append(self.claim(eleven, by: "c", at: eleven + self.claimTimeout, supersedes: first))
        let late = log.append(self.claim(eleven, by: "d", at: eleven + self.claimTimeout + 5, supersedes: first))
        ledger = log.ledger()
        #expect(ledger.isWinner(schedule: "hourly", window: eleven, offset: takeover))
        #expect(!ledger.isWinner(schedule: "hourly", window: eleven, offset: late))
        #expect(self.next(ledger, now: eleven + self.claimTimeout + 1) == .wait(until: eleven + 2 * self.claimTimeout))
        log.append(self.done(eleven, by: "c"))
        #expect(self.next(log.ledger(), now: eleven + 2 * self.claimTimeout) == .wait(until: eleven + Self.hour))
    }

    @Test func readingTheTopicAgainChangesNothing() {
        var log = StateLog()
        let eleven = instant("Asia/Seoul", 2024, 6, 1, 11)
        log.append(self.claim(eleven, by: "a", at: eleven))
        log.append(WindowMarker(phase: .probe, schedule: "", window: 0, owner: "b", at: eleven))
        log.append(self.claim(eleven, by: "b", at: eleven))
        var ledger = log.ledger()
        for (offset, marker) in log.records.enumerated() { ledger.apply(marker, offset: Int64(offset)) }
        #expect(
            ledger.state(schedule: "hourly", window: eleven) == log.ledger().state(schedule: "hourly", window: eleven)
        )
        #expect(ledger.state(schedule: "hourly", window: eleven)?.claims.count == 2)
        #expect(ledger.appliedOffset == 2)
    }

    @Test func markersRoundTripThroughTheirJSON() {
        let marker = WindowMarker(
            phase: .claimed,
            schedule: "kofic-daily",
            window: 1_717_030_800_000,
            owner: "h/1/ab",
            at: 5,
            supersedes: 42,
            jobs: 3,
            skips: true
        )
        #expect(WindowMarker.decode(marker.encoded()) == marker)
        #expect(WindowMarker.decode(Array(#"{"v":1,"kind":"tmdb.list"}"#.utf8)) == nil)
        #expect(marker.key == "kofic-daily")
    }

    /// Runs a leader on a manual clock from `from` to `to`: it plans, claims, sends when its claim wins and
    /// confirms, and jumps the clock to whatever it waits for. Returns the windows it sent.
    func lead(_ log: inout StateLog, _ schedule: Schedule, owner: String, from: Int64, to: Int64) -> [Int64] {
        var now = from
        var sent: [Int64] = []
        while now <= to {
            switch log.ledger().next(schedules: [schedule], now: now, since: from, claimTimeout: self.claimTimeout) {
            case .wait(let until):
                now = until
            case .fire(let name, let window, let supersedes, let skips):
                let offset = log.append(self.claim(window, by: owner, at: now, supersedes: supersedes, schedule: name))
                if log.ledger().isWinner(schedule: name, window: window, offset: offset) {
                    if !skips { sent.append(window) }
                    log.append(self.done(window, by: owner, schedule: name))
                }
            }
        }
        return sent
    }

    @Test func aRestartAfterDowntimeCatchesUpAsTheScheduleSaysAndNeverRepeats() {
        let at = { (hour: Int, minute: Int) in instant("Asia/Seoul", 2024, 6, 1, hour, minute) }
        for (catchUp, expected) in [
            (Schedule.CatchUp.all(limit: 100), [14, 15, 16, 17, 18, 19, 20]),
            (.all(limit: 2), [17, 18, 19, 20]),
            (.latest, [18, 19, 20]),
            (.none, [19, 20]),  // 18:00 was 40 minutes late: skipped
        ] {
            var schedule = self.hourly
            schedule.catchUp = catchUp
            var log = StateLog()
            // Up from 10:20 to 13:30, down until 18:40, up again until 20:30.
            let before = self.lead(&log, schedule, owner: "first", from: at(10, 20), to: at(13, 30))
            #expect(before == [at(11, 0), at(12, 0), at(13, 0)])
            let after = self.lead(&log, schedule, owner: "second", from: at(18, 40), to: at(20, 30))
            #expect(after == expected.map { at($0, 0) }, "\(catchUp)")
            #expect(Set(before + after).count == before.count + after.count, "no window twice")
            // A third start at once finds nothing to do.
            #expect(self.lead(&log, schedule, owner: "third", from: at(20, 30), to: at(20, 59)).isEmpty)
        }
    }

    /// Two replicas that both believe they lead (a paused leader and its successor) follow the protocol
    /// against one log: each plans from a stale view of it (any prefix), they claim in either order, read
    /// back, send if they won, confirm; then both go on with full views until nothing is due. Every window is
    /// sent exactly once.
    @Test func twoLeadersAtOnceSendEachWindowOnce() {
        let ten = instant("Asia/Seoul", 2024, 6, 1, 10)
        let eleven = ten + Self.hour
        let now = eleven + 1
        for readA in 1...3 {
            for readB in 1...3 {
                for aFirst in [true, false] {
                    var log = StateLog()
                    log.append(WindowMarker(phase: .probe, schedule: "", window: 0, owner: "x", at: 0))
                    log.append(self.claim(ten, by: "x", at: ten))
                    log.append(self.done(ten, by: "x"))
                    var sent: [Int64: [String]] = [:]

                    func claimAll(_ plans: [(String, WindowLedger.Action)]) {
                        var claims: [(String, Int64, Int64)] = []
                        for (owner, plan) in plans {
                            guard case .fire(let schedule, let window, let supersedes, _) = plan else { continue }
                            claims.append(
                                (
                                    owner, window,
                                    log.append(
                                        self.claim(
                                            window,
                                            by: owner,
                                            at: now,
                                            supersedes: supersedes,
                                            schedule: schedule
                                        )
                                    )
                                )
                            )
                        }
                        for (owner, window, offset) in claims
                        where log.ledger().isWinner(schedule: "hourly", window: window, offset: offset) {
                            sent[window, default: []].append(owner)
                            log.append(self.done(window, by: owner))
                        }
                    }
                    // Stale views, claims in either order.
                    let stale = [("a", readA), ("b", readB)].map { owner, read in
                        (owner, self.next(log.ledger(through: read), now: now))
                    }
                    claimAll(aFirst ? stale : stale.reversed())
                    // Then up to date, one after the other.
                    for _ in 0..<4 {
                        for owner in ["a", "b"] { claimAll([(owner, self.next(log.ledger(), now: now))]) }
                    }
                    let context = "read \(readA), \(readB), a first: \(aFirst): sent \(sent)"
                    #expect(sent[ten] == nil, "\(context)")
                    #expect(sent[eleven]?.count == 1, "\(context)")
                    #expect(self.next(log.ledger(), now: now) == .wait(until: eleven + Self.hour), "\(context)")
                }
            }
        }
    }
}
