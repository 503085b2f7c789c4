import MarqueeCore
import MarqueeOperations
import MarqueeStore
import Testing

@Suite struct DrainProgressTests {
    @Test func drainedOnlyAfterSettleIdleSamplesInARow() {
        var progress = DrainProgress(settle: 3)
        #expect(progress.record(isIdle: true, isPastDeadline: false) == .wait)
        #expect(progress.record(isIdle: true, isPastDeadline: false) == .wait)
        #expect(progress.record(isIdle: false, isPastDeadline: false) == .wait)
        #expect(progress.idleInARow == 0)
        #expect(progress.record(isIdle: true, isPastDeadline: false) == .wait)
        #expect(progress.record(isIdle: true, isPastDeadline: false) == .wait)
        #expect(progress.record(isIdle: true, isPastDeadline: false) == .drained)
    }

    @Test func theDeadlineCountsOnlyWhenNotDrained() {
        var progress = DrainProgress(settle: 1)
        #expect(progress.record(isIdle: false, isPastDeadline: true) == .timedOut)
        #expect(progress.record(isIdle: true, isPastDeadline: true) == .drained)
    }
}

@Suite struct DrainSampleTests {
    static func sample(lags: [Int64], lineage: LineageProgress? = nil, roots: Bool = false) -> DrainSample {
        var counts = StoreCounts()
        counts.movies = 12
        counts.images = 3
        return DrainSample(
            stages: zip(["fetch", "images", "records"], lags).map {
                DrainSample.Stage(name: $0, lag: $1, deadLetters: $0 == "fetch" ? 1234 : 0)
            },
            counts: counts,
            lineage: lineage,
            followsRoots: roots
        )
    }

    static func lineage(expected: Int, finished: Int, retrying: Int = 0) -> LineageProgress {
        var lineage = LineageProgress()
        lineage.roots = 1
        lineage.expected = expected
        lineage.finished = finished
        lineage.retrying = retrying
        if lineage.countsSayComplete { lineage.unfinished = 0 }
        return lineage
    }

    @Test func idleMeansNoLagAndWithRootsEveryJobFinished() {
        #expect(Self.sample(lags: [0, 0, 0]).isIdle)
        #expect(!Self.sample(lags: [0, 2, 0]).isIdle)
        #expect(!Self.sample(lags: [0, 0, 0], roots: true).isIdle, "no lineage yet")
        #expect(!Self.sample(lags: [0, 0, 0], lineage: Self.lineage(expected: 5, finished: 4), roots: true).isIdle)
        #expect(Self.sample(lags: [0, 0, 0], lineage: Self.lineage(expected: 5, finished: 5), roots: true).isIdle)
        #expect(
            !Self.sample(lags: [0, 0, 0], lineage: Self.lineage(expected: 5, finished: 5, retrying: 1), roots: true)
                .isIdle
        )
        // The counts say every job finished, but one known job has no final outcome (a job no parent names counts
        // among the finished): not idle, and the summary names the job to look up.
        var hidden = Self.lineage(expected: 5, finished: 5)
        hidden.unfinished = 1
        hidden.firstUnfinished = JobID(rawValue: "01M8FQA0YS6815G0PGVTS8P01B")
        let sample = Self.sample(lags: [0, 0, 0], lineage: hidden, roots: true)
        #expect(!sample.isIdle)
        #expect(
            sample.pendingSummary
                == "1 job of the crawl has no final outcome (marquee job 01M8FQA0YS6815G0PGVTS8P01B)"
        )
    }

    @Test func whatIsPendingIsSaidInWords() {
        #expect(Self.sample(lags: [0, 0, 0]).pendingSummary == "idle, not yet settled")
        #expect(
            Self.sample(lags: [3, 0, 1], lineage: Self.lineage(expected: 9, finished: 4, retrying: 2), roots: true)
                .pendingSummary == "fetch lag 3, records lag 1, 4 of 9 jobs finished, 2 waiting for a retry"
        )
    }

    @Test func theProgressLinesAlignTheStages() {
        let lines = Self.sample(lags: [12_345, 0, 7], lineage: Self.lineage(expected: 9, finished: 4), roots: true)
            .lines(elapsed: .seconds(75))
        #expect(
            lines == [
                "fetch    lag    12,345   dead letters 1,234",
                "images   lag         0   dead letters 0",
                "records  lag         7   dead letters 0",
                "stored   12 movies, 0 box-office entries, 0 books, 3 images",
                "jobs     4 of 9 finished, 0 waiting for a retry, 0 dead-lettered",
                "elapsed  1:15",
            ]
        )
        var empty = Self.sample(lags: [0, 0, 0])
        empty.counts = nil
        #expect(empty.lines(elapsed: .zero)[3] == "stored   nothing yet (the indexer has not written its first batch)")
    }

    @Test func rootsAreOneIDPerLine() {
        #expect(DrainSample.roots(in: "01A\n\n  01B \r\n01C") == ["01A", "01B", "01C"].map(JobID.init(rawValue:)))
        #expect(DrainSample.roots(in: " \n").isEmpty)
    }
}

@Suite struct DrainDisplayTests {
    @Test func aTerminalRedrawsInPlace() {
        var display = DrainDisplay(isTerminal: true)
        let sample = DrainSampleTests.sample(lags: [1, 0, 0])
        let first = display.frame(sample, elapsed: .seconds(1))
        #expect(first?.hasPrefix("\u{1B}[2Kfetch    lag") == true)
        #expect(first?.split(separator: "\n").count == 5)
        let second = display.frame(sample, elapsed: .seconds(2))
        #expect(second?.hasPrefix("\u{1B}[5F\u{1B}[2Kfetch") == true)
        display.finish()
        #expect(display.frame(sample, elapsed: .seconds(3))?.hasPrefix("\u{1B}[2K") == true)
    }

    @Test func elsewhereOneLineEveryFiveSeconds() {
        var display = DrainDisplay(isTerminal: false)
        let sample = DrainSampleTests.sample(lags: [1, 0, 0])
        let start = ContinuousClock.now
        #expect(
            display.frame(sample, elapsed: .seconds(1), now: start)
                == "fetch lag 1 dead letters 1,234 | images lag 0 dead letters 0 | records lag 0 dead letters 0 | "
                + "stored 12 movies, 0 box-office entries, 0 books, 3 images | elapsed 0:01\n"
        )
        #expect(display.frame(sample, elapsed: .seconds(2), now: start + .seconds(4)) == nil)
        #expect(display.frame(sample, elapsed: .seconds(6), now: start + .seconds(5)) != nil)
    }
}

@Suite struct DrainSummaryTests {
    @Test func theSummarySaysWhatIsStoredTheDeadLettersAndWhereToLook() throws {
        var counts = StoreCounts()
        counts.movies = 1200
        var lineage = LineageProgress()
        lineage.finished = 40
        lineage.deadLettered = 2
        #expect(
            DrainSummary.stored(elapsed: .seconds(102), counts: counts, lineage: lineage) == """

                Drained after 1:42.

                STORED   ROWS
                movies  1,200

                Jobs of this crawl: 40 finished, 2 of them dead-lettered.
                """
        )
        #expect(DrainSummary.stored(elapsed: .seconds(1), counts: nil, lineage: nil) == "\nDrained after 0:01.\n")

        let store = try StoreLocation(parsing: "sqlite:/tmp/other.db")
        #expect(
            DrainSummary.whereToLook(store: store, imageStore: "file://./var/images", topTitle: "서울의 봄") == """

                The catalogue is in sqlite:/tmp/other.db; the images in file://./var/images.
                Try:
                  marquee query counts --store 'sqlite:/tmp/other.db'
                  marquee query box-office --store 'sqlite:/tmp/other.db'
                  marquee query movies "서울의 봄" --store 'sqlite:/tmp/other.db'
                """
        )
        let standard = try StoreLocation(parsing: StoreLocation.defaultValue)
        #expect(
            DrainSummary.whereToLook(store: standard, imageStore: "x", topTitle: nil)
                .hasSuffix("\n  marquee query counts\n  marquee query box-office\n  marquee query movies 기생충")
        )
    }

    @Test func deadLettersAreCountedByReasonMostFirst() {
        var reasons = DrainSummary.DeadLetterReasons()
        #expect(reasons.text == "\nNo dead letters.")
        reasons.add(DeadLetterFilterTests.letter(offset: 1, error: "HTTP 404"))
        reasons.add(DeadLetterFilterTests.letter(offset: 2, error: "HTTP 404"))
        reasons.add(DeadLetterFilterTests.letter(stage: "images", offset: 3, errorKind: .transient, error: "timeout"))
        #expect(reasons.total == 3)
        #expect(
            reasons.text == """

                3 dead letters (marquee dlq list shows them; marquee dlq replay sends them again):
                COUNT  STAGE  KIND  ERROR KIND  REASON
                    2  fetch  tmdb.movie  permanent  HTTP 404
                    1  images  tmdb.movie  transient  timeout
                """
        )
    }
}

@Suite struct DrainNoticesTests {
    /// The fetch stage read in group `marquee.fetch`, with no member and `lag`, while `consumers` consume.
    static func sample(
        lag: Int64,
        members: Int? = 0,
        consumers: [String] = ["marquee-fetch"],
        lineage: LineageProgress? = nil,
        note: String? = nil
    ) -> DrainSample {
        DrainSample(
            stages: [
                DrainSample.Stage(
                    name: "fetch",
                    lag: lag,
                    deadLetters: 0,
                    group: "marquee.fetch",
                    members: members,
                    otherConsumers: consumers,
                    endBelowCommitNote: note
                ),
                DrainSample.Stage(name: "records", lag: 0, deadLetters: 0, group: "marquee.records", members: 1),
            ],
            counts: StoreCounts(),
            lineage: lineage,
            followsRoots: lineage != nil
        )
    }

    @Test func aGroupWithoutMembersWhoseLagStaysWhileAnotherConsumesIsNamedOnceAfterThePatience() {
        var notices = DrainNotices(patience: .seconds(10))
        let start = ContinuousClock.now
        #expect(notices.record(Self.sample(lag: 314), now: start).isEmpty)
        #expect(notices.record(Self.sample(lag: 314), now: start + .seconds(9)).isEmpty, "not yet past the patience")
        let lines = notices.record(Self.sample(lag: 314), now: start + .seconds(10))
        #expect(
            lines == [
                "marquee: fetch: group marquee.fetch has no member and lag 314 while marquee-fetch consumes its "
                    + "topics; MARQUEE_GROUP_FETCH picks the group read here (MARQUEE_GROUP_FETCH=marquee-fetch)"
            ]
        )
        #expect(notices.unread.map(\.group) == ["marquee.fetch"])
        #expect(notices.record(Self.sample(lag: 314), now: start + .seconds(20)).isEmpty, "said once")
        #expect(notices.unread.count == 1, "still the state, for the timeout's message")
    }

    @Test func lagThatMovesOrAGroupWithMembersIsNobodysNotice() {
        var notices = DrainNotices(patience: .seconds(10))
        let start = ContinuousClock.now
        // The lag moves (the workers are still joining and producing): the patience starts again each time.
        for (second, lag) in [(0, 10), (8, 20), (16, 30), (24, 40)] {
            #expect(notices.record(Self.sample(lag: Int64(lag)), now: start + .seconds(second)).isEmpty)
        }
        // A member joined.
        #expect(notices.record(Self.sample(lag: 40, members: 1), now: start + .seconds(40)).isEmpty)
        // Members unknown (the broker did not describe the group): nothing is claimed.
        #expect(notices.record(Self.sample(lag: 40, members: nil), now: start + .seconds(41)).isEmpty)
        #expect(notices.record(Self.sample(lag: 40, members: nil), now: start + .seconds(60)).isEmpty)
        // No other consumer and no lineage: a stopped stage, which the progress line already shows.
        #expect(notices.record(Self.sample(lag: 40, consumers: []), now: start + .seconds(61)).isEmpty)
        #expect(notices.record(Self.sample(lag: 40, consumers: []), now: start + .seconds(80)).isEmpty)
        #expect(notices.unread.isEmpty)
    }

    @Test func aFinishedCrawlNamesTheGroupEvenWithoutAnotherConsumerFound() {
        var lineage = LineageProgress()
        lineage.roots = 1
        lineage.expected = 3
        lineage.finished = 3
        lineage.unfinished = 0
        var notices = DrainNotices(patience: .seconds(10))
        let start = ContinuousClock.now
        _ = notices.record(Self.sample(lag: 7, consumers: [], lineage: lineage), now: start)
        let lines = notices.record(Self.sample(lag: 7, consumers: [], lineage: lineage), now: start + .seconds(10))
        #expect(
            lines == [
                "marquee: fetch: group marquee.fetch has no member and lag 7 although every job of the crawl "
                    + "finished; MARQUEE_GROUP_FETCH picks the group read here"
            ]
        )
    }

    @Test func aGroupThatRecoversAndLosesItsMembersAgainIsNamedAgain() {
        var notices = DrainNotices(patience: .seconds(1))
        let start = ContinuousClock.now
        _ = notices.record(Self.sample(lag: 5), now: start)
        #expect(notices.record(Self.sample(lag: 5), now: start + .seconds(1)).count == 1)
        #expect(notices.record(Self.sample(lag: 0, members: 1), now: start + .seconds(2)).isEmpty)
        _ = notices.record(Self.sample(lag: 6), now: start + .seconds(3))
        #expect(notices.record(Self.sample(lag: 6), now: start + .seconds(4)).count == 1)
    }

    @Test func anEndBelowTheCommitIsExplainedOncePerStage() {
        var notices = DrainNotices()
        let start = ContinuousClock.now
        let note = "1 partition counted as lag 0 because …"
        #expect(
            notices.record(Self.sample(lag: 0, members: 1, note: note), now: start) == ["note: fetch: \(note)"]
        )
        #expect(notices.record(Self.sample(lag: 0, members: 1, note: note), now: start + .seconds(1)).isEmpty)
    }
}
