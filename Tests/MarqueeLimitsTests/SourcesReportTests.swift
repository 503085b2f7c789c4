import MarqueeLimits
import MarqueeStore
import Testing

import class Foundation.JSONEncoder
import class Foundation.JSONSerialization
import class Foundation.NSNull

@Suite struct SourcesReportTests {
    typealias Snapshot = Store.CoordinationSnapshot

    /// 2026-05-01T10:00:00Z on the store's clock.
    static let now: Int64 = 1_777_629_600_000_000
    static let second: Int64 = 1_000_000

    static let tmdb = "tmdb:key-1a2b3c4d@api.themoviedb.org"
    static let kofic = "kofic:key-9f8e7d6c@kobis.or.kr"

    static func limit(_ id: String, rate: Double, factor: Double = 1, blockedUntil: Int64 = 0) -> Snapshot.Limit {
        let parts = id.split(separator: ":", maxSplits: 1)
        let keyAndHost = parts[1].split(separator: "@", maxSplits: 1)
        return Snapshot.Limit(
            id: id,
            source: String(parts[0]),
            keyID: String(keyAndHost[0]),
            host: String(keyAndHost[1]),
            rate: rate,
            factor: factor,
            blockedUntil: blockedUntil
        )
    }

    static func usage(_ id: String, _ member: String, rate: Double, throttled: Int = 0) -> Snapshot.Usage {
        Snapshot.Usage(
            limitID: id,
            member: member,
            requests: 1000,
            throttled: Int64(throttled),
            waitedMicroseconds: 0,
            recentRate: rate,
            recentThrottled: throttled
        )
    }

    static func member(_ id: String) -> Snapshot.Member {
        Snapshot.Member(
            member: id,
            stage: "fetch",
            host: "host",
            startedAt: Self.now - 3600 * Self.second,
            seenAt: Self.now
        )
    }

    static func budget(
        _ id: String = kofic,
        day: String,
        budget: Int = 3000,
        spent: Int,
        resetAt: Int64
    )
        -> Snapshot.Budget
    {
        Snapshot.Budget(key: id, day: day, budget: budget, spent: spent, resetAt: resetAt)
    }

    static func snapshot(
        limits: [Snapshot.Limit] = [],
        usage: [Snapshot.Usage] = [],
        members: [String] = [],
        budgets: [Snapshot.Budget] = [],
        circuits: [Store.Circuit] = []
    ) -> Snapshot {
        Snapshot(
            now: Self.now,
            limits: limits,
            usage: usage,
            members: members.map(Self.member),
            budgets: budgets,
            circuits: circuits
        )
    }

    static let a = "fetch/host-a/101/aa11"
    static let b = "fetch/host-b/202/bb22"
    static let gone = "fetch/host-c/303/cc33"

    @Test func sumsTheLiveWorkersRatesAndThrottles() throws {
        let report = SourcesReport(
            snapshot: Self.snapshot(
                limits: [Self.limit(Self.tmdb, rate: 40, factor: 0.8)],
                usage: [
                    Self.usage(Self.tmdb, Self.a, rate: 10, throttled: 2),
                    Self.usage(Self.tmdb, Self.b, rate: 30, throttled: 1),
                    // No longer a member: its figures do not count.
                    Self.usage(Self.tmdb, Self.gone, rate: 100, throttled: 50),
                ],
                members: [Self.a, Self.b]
            )
        )
        let row = try #require(report.rows.first)
        #expect(report.rows.count == 1)
        #expect(row.source == "tmdb")
        #expect(row.keyID == "key-1a2b3c4d")
        #expect(row.host == "api.themoviedb.org")
        #expect(row.limit == 40)
        #expect(row.rate == 40)
        #expect(row.factor == 0.8)
        #expect(row.throttledLastMinute == 3)
        #expect(row.state == .running)
        #expect(report.workers == 2)
    }

    @Test func sharesAreEachWorkersFractionOfTheRate() throws {
        let report = SourcesReport(
            snapshot: Self.snapshot(
                limits: [Self.limit(Self.tmdb, rate: 40), Self.limit(Self.kofic, rate: 10)],
                usage: [
                    Self.usage(Self.tmdb, Self.b, rate: 30),
                    Self.usage(Self.tmdb, Self.a, rate: 10),
                    Self.usage(Self.kofic, Self.a, rate: 0),
                ],
                members: [Self.a, Self.b]
            )
        )
        let tmdb = try #require(report.rows.first { $0.id == Self.tmdb })
        #expect(tmdb.workers.map(\.member) == [Self.a, Self.b])
        #expect(tmdb.workers.map(\.rate) == [10, 30])
        #expect(tmdb.workers.map(\.share) == [0.25, 0.75])
        // No pace at all: nobody's share is a fraction of it.
        let kofic = try #require(report.rows.first { $0.id == Self.kofic })
        #expect(kofic.workers.map(\.share) == [nil])
        #expect(kofic.state == .idle)
    }

    @Test func budgetLeftIsTodaysNewestDay() throws {
        let resetAt = Self.now + 5 * 3600 * Self.second
        let report = SourcesReport(
            snapshot: Self.snapshot(
                limits: [Self.limit(Self.kofic, rate: 10)],
                budgets: [
                    Self.budget(day: "2026-05-01", spent: 1800, resetAt: resetAt),
                    Self.budget(day: "2026-04-30", spent: 3000, resetAt: Self.now - 19 * 3600 * Self.second),
                ]
            )
        )
        let budget = try #require(report.rows.first?.budget)
        #expect(budget.day == "2026-05-01")
        #expect(budget.budget == 3000)
        #expect(budget.spent == 1800)
        #expect(budget.left == 1200)
        #expect(budget.resetAt == resetAt)
        #expect(report.rows.first?.state == .idle)
    }

    @Test func aSpentBudgetHoldsTheSourceBackUntilItsDayEnds() throws {
        let spent = SourcesReport(
            snapshot: Self.snapshot(
                limits: [Self.limit(Self.kofic, rate: 10)],
                budgets: [Self.budget(day: "2026-05-01", spent: 3000, resetAt: Self.now + Self.second)]
            )
        )
        #expect(spent.rows.first?.budget?.left == 0)
        #expect(spent.rows.first?.state == .budgetSpent)

        // The newest day has ended and no call made today's row yet: today's budget is whole.
        let nextDay = SourcesReport(
            snapshot: Self.snapshot(
                limits: [Self.limit(Self.kofic, rate: 10)],
                budgets: [Self.budget(day: "2026-04-30", spent: 3000, resetAt: Self.now - Self.second)]
            )
        )
        let budget = try #require(nextDay.rows.first?.budget)
        #expect(budget.day == nil)
        #expect(budget.spent == 0)
        #expect(budget.left == 3000)
        #expect(budget.resetAt == nil)
        #expect(nextDay.rows.first?.state == .idle)
    }

    @Test func pausedRowsSayWhyAndWhenTheNextProbeRuns() throws {
        let circuit = Store.Circuit(
            limitID: Self.kofic,
            source: "kofic",
            reason: "HTTP 401: 유효하지 않은 키값입니다.",
            openedAt: Self.now - 724 * Self.second,
            openedBy: Self.a,
            probeAt: Self.now + 30 * Self.second,
            probes: 2
        )
        let report = SourcesReport(
            snapshot: Self.snapshot(
                limits: [
                    Self.limit(Self.kofic, rate: 10),
                    Self.limit(Self.tmdb, rate: 40, blockedUntil: Self.now + 25 * Self.second),
                ],
                circuits: [circuit]
            )
        )
        let kofic = try #require(report.rows.first { $0.id == Self.kofic })
        #expect(kofic.isPaused)
        #expect(kofic.state == .paused)
        #expect(kofic.pause?.reason == circuit.reason)
        #expect(kofic.pause?.since == circuit.openedAt)
        #expect(kofic.pause?.by == Self.a)
        #expect(kofic.pause?.nextProbe == circuit.probeAt)
        #expect(kofic.pause?.probes == 2)
        let tmdb = try #require(report.rows.first { $0.id == Self.tmdb })
        #expect(!tmdb.isPaused)
        #expect(tmdb.state == .blocked)
        #expect(tmdb.blockedUntil == Self.now + 25 * Self.second)

        let text = report.text()
        #expect(
            text.contains(
                "\(Self.kofic) paused for 12m04s (since 2026-05-01T09:47:56Z) by \(Self.a): "
                    + "HTTP 401: 유효하지 않은 키값입니다.; next probe in 30s, 2 probes so far"
            ),
            "\(text)"
        )
        #expect(text.contains("blocked 25s"), "\(text)")
    }

    @Test func aSourceWithOnlyACircuitOrABudgetIsARow() throws {
        let report = SourcesReport(
            snapshot: Self.snapshot(
                budgets: [
                    Self.budget(
                        "kakao:key-00ff00ff@dapi.kakao.com",
                        day: "2026-05-01",
                        budget: 100,
                        spent: 4,
                        resetAt: Self.now + Self.second
                    )
                ],
                circuits: [
                    .init(
                        limitID: "openlibrary:anonymous@openlibrary.org:443",
                        source: "openlibrary",
                        reason: "5 failures in a row",
                        openedAt: Self.now,
                        openedBy: Self.b,
                        probeAt: Self.now,
                        probes: 0
                    )
                ]
            )
        )
        #expect(
            report.rows.map(\.id) == ["kakao:key-00ff00ff@dapi.kakao.com", "openlibrary:anonymous@openlibrary.org:443"]
        )
        let kakao = report.rows[0]
        #expect(kakao.source == "kakao")
        #expect(kakao.keyID == "key-00ff00ff")
        #expect(kakao.host == "dapi.kakao.com")
        #expect(kakao.limit == nil)
        #expect(kakao.factor == nil)
        #expect(kakao.budget?.left == 96)
        #expect(!kakao.isPaused)
        let openLibrary = report.rows[1]
        #expect(openLibrary.source == "openlibrary")
        #expect(openLibrary.keyID == "anonymous")
        #expect(openLibrary.host == "openlibrary.org:443")
        #expect(openLibrary.isPaused)
        #expect(openLibrary.budget == nil)
        #expect(report.text().contains("next probe due now, 0 probes so far"))
    }

    @Test func anEmptySnapshotSaysSo() {
        let report = SourcesReport(snapshot: Self.snapshot())
        #expect(report.isEmpty)
        #expect(report.text() == SourcesReport.emptyMessage)
        #expect(report.text().hasPrefix("no limits recorded yet"))
    }

    @Test func textTable() {
        let report = SourcesReport(
            snapshot: Self.snapshot(
                limits: [Self.limit(Self.tmdb, rate: 40, factor: 0.8), Self.limit(Self.kofic, rate: 10)],
                usage: [
                    Self.usage(Self.tmdb, Self.a, rate: 12.5, throttled: 3), Self.usage(Self.tmdb, Self.b, rate: 25.5),
                ],
                members: [Self.a, Self.b],
                budgets: [Self.budget(day: "2026-05-01", spent: 1800, resetAt: Self.now + 18_120 * Self.second)]
            )
        )
        #expect(
            report.text() == """
                SOURCE  KEY           HOST                LIMIT/S  RATE/S  FACTOR  429S/MIN     BUDGET LEFT  RESETS IN  STATE
                kofic   key-9f8e7d6c  kobis.or.kr            10.0     0.0    1.00         0  1,200 of 3,000      5h02m  idle
                tmdb    key-1a2b3c4d  api.themoviedb.org     40.0    38.0    0.80         3               –          –  running

                SOURCE  KEY           HOST                WORKER                 RATE/S  SHARE
                tmdb    key-1a2b3c4d  api.themoviedb.org  fetch/host-a/101/aa11    12.5  32.9%
                tmdb    key-1a2b3c4d  api.themoviedb.org  fetch/host-b/202/bb22    25.5  67.1%

                2 sources, 2 workers reporting; store clock 2026-05-01T10:00:00Z
                """
        )
    }

    @Test func jsonKeys() throws {
        let report = SourcesReport(
            snapshot: Self.snapshot(
                limits: [Self.limit(Self.kofic, rate: 10)],
                usage: [Self.usage(Self.kofic, Self.a, rate: 1.1 + 2.2)],
                members: [Self.a],
                budgets: [Self.budget(day: "2026-05-01", spent: 1800, resetAt: Self.now + Self.second)],
                circuits: [
                    .init(
                        limitID: Self.kofic,
                        source: "kofic",
                        reason: "HTTP 401",
                        openedAt: Self.now,
                        openedBy: Self.a,
                        probeAt: Self.now + Self.second,
                        probes: 0
                    )
                ]
            )
        )
        let data = try JSONEncoder().encode(report)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(document.keys) == ["now", "now_ms", "workers", "sources"])
        #expect(document["now"] as? String == "2026-05-01T10:00:00.000Z")
        #expect(document["now_ms"] as? Int64 == Self.now / 1000)
        let sources = try #require(document["sources"] as? [[String: Any]])
        let row = try #require(sources.first)
        #expect(
            Set(row.keys) == [
                "id", "source", "key_id", "host", "limit", "rate", "factor", "blocked_until", "blocked_until_ms",
                "throttled_last_minute", "workers", "budget", "paused", "pause", "state",
            ]
        )
        #expect(row["state"] as? String == "paused")
        #expect(row["paused"] as? Bool == true)
        #expect(row["rate"] as? Double == 3.3)
        #expect(row["blocked_until"] is NSNull)
        let workers = try #require(row["workers"] as? [[String: Any]])
        let worker = try #require(workers.first)
        #expect(Set(worker.keys) == ["member", "rate", "share"])
        #expect(worker["share"] as? Double == 1)
        let budget = try #require(row["budget"] as? [String: Any])
        #expect(Set(budget.keys) == ["day", "budget", "spent", "left", "resets_at", "resets_at_ms"])
        #expect(budget["left"] as? Int == 1200)
        let pause = try #require(row["pause"] as? [String: Any])
        #expect(Set(pause.keys) == ["reason", "since", "since_ms", "by", "next_probe", "next_probe_ms", "probes"])
    }

    @Test func jsonTimesAgreeToTheMillisecond() throws {
        // 1795709978.928 s is not exact as a Double: formatted from one, it would read .927.
        let snapshot = Snapshot(
            now: 1_795_709_978_928_417,
            limits: [],
            usage: [],
            members: [],
            budgets: [],
            circuits: []
        )
        let data = try JSONEncoder().encode(SourcesReport(snapshot: snapshot))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(document["now"] as? String == "2026-11-26T16:19:38.928Z")
        #expect(document["now_ms"] as? Int64 == 1_795_709_978_928)
        #expect(document["sources"] as? [Any] != nil)
    }
}
