import MarqueeCore
import MarqueeOperations
import Testing

@Suite struct EnqueueJobsTests {
    static let details = Follow(details: true)

    @Test func flagsReadAsPagesAndLanguages() {
        #expect(EnqueueJobs.pages("3") == 3...3)
        #expect(EnqueueJobs.pages("1-5") == 1...5)
        for bad in ["0", "5-1", "1-", "-3", "1-2-3", "x", ""] {
            #expect(EnqueueJobs.pages(bad) == nil, "\(bad)")
        }
        #expect(EnqueueJobs.languages(" ko-KR, en-US ,,") == ["ko-KR", "en-US"])
    }

    @Test func listsMakeAJobPerPageAndLanguage() throws {
        let jobs = try EnqueueJobs.tmdbList(
            "popular",
            pages: 1...2,
            languages: ["ko-KR", "en-US"],
            region: "KR",
            follow: Self.details
        )
        #expect(
            jobs == [
                .tmdbList(list: .popular, page: 1, language: "ko-KR", region: "KR", follow: Self.details),
                .tmdbList(list: .popular, page: 2, language: "ko-KR", region: "KR", follow: Self.details),
                .tmdbList(list: .popular, page: 1, language: "en-US", region: "KR", follow: Self.details),
                .tmdbList(list: .popular, page: 2, language: "en-US", region: "KR", follow: Self.details),
            ]
        )
        #expect(
            throws: OperationsError(
                .enqueue,
                "'trending' is not a TMDB list: popular, now_playing, top_rated or upcoming"
            )
        ) {
            try EnqueueJobs.tmdbList("trending", pages: 1...1, languages: ["ko-KR"], region: nil, follow: .none)
        }
    }

    @Test func aSearchOfNPagesIsPageOneFollowingTheRestAndARangeIsAJobPerPage() throws {
        let following = try EnqueueJobs.tmdbSearch("기생충", pages: 3...3, languages: ["ko-KR"], year: 2019, follow: .none)
        #expect(
            following == [.tmdbSearch(query: "기생충", page: 1, language: "ko-KR", year: 2019, follow: Follow(pages: 3))]
        )
        let range = try EnqueueJobs.tmdbSearch("up", pages: 2...3, languages: ["en"], year: nil, follow: Self.details)
        var one = Self.details
        one.pages = 1
        #expect(
            range == [
                .tmdbSearch(query: "up", page: 2, language: "en", year: nil, follow: one),
                .tmdbSearch(query: "up", page: 3, language: "en", year: nil, follow: one),
            ]
        )
    }

    @Test func idsAreRequiredAndEachMakesAJob() throws {
        #expect(throws: OperationsError(.enqueue, "name at least one movie id")) {
            try EnqueueJobs.tmdbMovies([], languages: ["ko-KR"], follow: .none)
        }
        #expect(throws: OperationsError(.enqueue, "name at least one movie id")) {
            try EnqueueJobs.tmdbReviews([], pages: 2, languages: ["en-US"])
        }
        #expect(throws: OperationsError(.enqueue, "name at least one movie code")) {
            try EnqueueJobs.koficMovies([], follow: .none)
        }
        #expect(throws: OperationsError(.enqueue, "name at least one work id")) {
            try EnqueueJobs.openLibraryWorks([], follow: .none)
        }
        #expect(
            try EnqueueJobs.tmdbReviews([278], pages: 3, languages: ["en-US"])
                == [.tmdbReviews(id: 278, page: 1, language: "en-US", follow: Follow(pages: 3))]
        )
        #expect(try EnqueueJobs.tmdbGenres(languages: ["ko", "en"]).count == 2)
        #expect(
            try EnqueueJobs.openLibrarySearch("swift", pages: 2, limit: 50, follow: .none)
                == [.openLibrarySearch(query: "swift", page: 1, limit: 50, follow: Follow(pages: 2))]
        )
        #expect(try EnqueueJobs.kakaoPoster("기생충 2019", movieCode: "20183782").count == 1)
    }

    @Test func boxOfficeJobsCoverEachDayOrWeekOfTheRange() throws {
        let daily = try EnqueueJobs.koficDaily(from: "2024-02-28", to: "2024-03-01", follow: .none)
        #expect(
            daily == ["20240228", "20240229", "20240301"].map { .koficDailyBoxOffice(date: $0, follow: .none) }
        )
        let weekly = try EnqueueJobs.koficWeekly(from: "2024-01-01", to: "2024-01-20", period: "weekend", follow: .none)
        #expect(
            weekly
                == ["20240101", "20240108", "20240115"].map {
                    .koficWeeklyBoxOffice(date: $0, week: .weekend, follow: .none)
                }
        )
        #expect(throws: OperationsError(.enqueue, "--period must be week, weekend or weekdays, not 'month'")) {
            try EnqueueJobs.koficWeekly(from: "2024-01-01", to: nil, period: "month", follow: .none)
        }
        #expect(throws: OperationsError(.enqueue, "--to is before --from")) {
            try EnqueueJobs.koficDaily(from: "2024-01-02", to: "2024-01-01", follow: .none)
        }
        #expect(throws: OperationsError(.enqueue, "--from and --to must be days as YYYY-MM-DD")) {
            try EnqueueJobs.koficDaily(from: "2023-02-29", to: nil, follow: .none)
        }
        #expect(throws: OperationsError(.enqueue, "at most ten years of days at once")) {
            try EnqueueJobs.koficDaily(from: "2000-01-01", to: "2011-01-01", follow: .none)
        }
    }

    @Test func changeFeedRangesAreSplitIntoWindowsOfFourteenDays() throws {
        let follow = Follow(reviews: true, images: true)
        let one = try EnqueueJobs.tmdbChanges(
            from: "2026-11-26",
            to: nil,
            languages: ["en-US", "ko-KR"],
            follow: follow
        )
        #expect(
            one == [
                .tmdbChanges(
                    startDate: "2026-11-26",
                    endDate: "2026-11-26",
                    page: 1,
                    languages: ["en-US", "ko-KR"],
                    follow: follow
                )
            ]
        )
        let windows = try EnqueueJobs.tmdbChanges(
            from: "2026-01-01",
            to: "2026-02-01",
            languages: ["en"],
            follow: .none
        )
        let spans = windows.compactMap { job -> String? in
            guard case .tmdbChanges(let start, let end, 1, ["en"], .none) = job else { return nil }
            return "\(start)…\(end)"
        }
        #expect(spans == ["2026-01-01…2026-01-14", "2026-01-15…2026-01-28", "2026-01-29…2026-02-01"])
        #expect(throws: OperationsError(.enqueue, "--to is before --from")) {
            try EnqueueJobs.tmdbChanges(from: "2026-01-02", to: "2026-01-01", languages: ["en"], follow: .none)
        }
        #expect(throws: OperationsError(.enqueue, "--from and --to must be days as YYYY-MM-DD")) {
            try EnqueueJobs.tmdbChanges(from: "yesterday", to: nil, languages: ["en"], follow: .none)
        }
        // The job's own checks name the flag's value.
        #expect(throws: OperationsError.self) {
            try EnqueueJobs.tmdbChanges(from: "2026-01-01", to: nil, languages: [], follow: .none)
        }
        #expect(throws: OperationsError.self) {
            try EnqueueJobs.tmdbChanges(from: "2026-01-01", to: nil, languages: ["en", "en"], follow: .none)
        }
    }

    @Test func aJobTheWorkerWouldRefuseIsRefusedHere() {
        #expect(throws: OperationsError.self) {
            try EnqueueJobs.tmdbMovies([-1], languages: ["ko-KR"], follow: .none)
        }
        #expect(throws: OperationsError.self) {
            try EnqueueJobs.tmdbList(
                "popular",
                pages: 1...1,
                languages: ["ko-KR"],
                region: nil,
                follow: Follow(pages: 0)
            )
        }
    }

    @Test func theSummaryCountsJobsByKind() throws {
        let jobs =
            try EnqueueJobs.tmdbGenres(languages: ["ko", "en"])
            + EnqueueJobs.kakaoPoster("기생충", movieCode: nil)
        #expect(
            EnqueueJobs.summary(jobs, verb: "sent to marquee.fetch") == """
                3 jobs sent to marquee.fetch:
                  kakao.poster  1
                  tmdb.genres  2
                """
        )
        #expect(EnqueueJobs.summary(Array(jobs.prefix(1)), verb: "x") == "1 job x:\n  tmdb.genres  1")
    }
}

@Suite struct DayRangeTests {
    @Test func daysAreRealAndFollowOneAnother() throws {
        #expect(LocalDate(parsing: "2024-02-30") == nil)
        #expect(LocalDate(parsing: "10000-01-01") == nil)
        #expect(LocalDate(parsing: "0000-01-01") == nil)
        let day = try #require(LocalDate(parsing: "2023-12-31"))
        #expect(day.adding(days: 1).compact == "20240101")
        #expect(try #require(LocalDate(parsing: "2024-2-28")).adding(days: 1).compact == "20240229")
        #expect(try #require(LocalDate(parsing: "0099-01-01")).compact == "00990101")
        #expect(try LocalDate.range(from: "2024-01-01", to: nil, step: 7).map(\.compact) == ["20240101"])
        #expect(try LocalDate.range(from: "2024-02-27", to: "2024-03-01", step: 1).map(\.compact).count == 4)
    }

    @Test func utcInstantsAreWrittenToTheSecondOrTheMillisecond() {
        #expect(UTCInstant(milliseconds: 0).iso8601 == "1970-01-01T00:00:00Z")
        #expect(UTCInstant(milliseconds: -1).iso8601 == "1969-12-31T23:59:59.999Z")
        #expect(UTCInstant(milliseconds: 1_709_164_800_123).iso8601 == "2024-02-29T00:00:00.123Z")
        #expect(LocalDate(dayNumber: 19_782).description == "2024-02-29")
        #expect(UTCInstant(milliseconds: 1_764_226_862_000).time == "07:01:02")
    }
}

@Suite struct FetchJobLinesTests {
    @Test func everyLineIsAJobOrAProblemWithItsNumber() {
        let lines = FetchJobLines(
            parsing: Array(
                """
                {"v":1,"kind":"tmdb.genres","language":"ko"}

                  {"v":1,"kind":"tmdb.genres","language":"en"}\r
                {"v":1,"kind":"nope"}
                not json
                """.utf8
            )
        )
        #expect(lines.jobs == [.tmdbGenres(language: "ko"), .tmdbGenres(language: "en")])
        #expect(lines.problems.count == 2)
        #expect(lines.problems[0].hasPrefix("line 4: "))
        #expect(lines.problems[1].hasPrefix("line 5: "))
        #expect(lines.refusal == "2 bad lines: nothing was sent")
    }

    @Test func onlyAHundredProblemsAreListedAndNoJobsIsARefusal() {
        let many = FetchJobLines(parsing: Array(String(repeating: "x\n", count: 150).utf8))
        #expect(many.report.count == 101)
        #expect(many.report.last == "… and 50 more bad lines")
        #expect(many.refusal == "150 bad lines: nothing was sent")
        #expect(FetchJobLines(parsing: Array(" \n\t\n".utf8)).refusal == "no jobs in the input: nothing was sent")
        let one = FetchJobLines(parsing: Array(#"{"v":1,"kind":"tmdb.genres","language":"ko"}"#.utf8))
        #expect(one.refusal == nil && one.report.isEmpty)
    }
}

@Suite struct EnqueueProgressTests {
    @Test func smallInputsShowNothing() {
        var progress = EnqueueProgress(total: 4999, isTerminal: true)
        #expect(progress.update(1000) == nil)
        #expect(progress.finish == nil)
    }

    @Test func aTerminalGetsABarElsewhereALineAtEachTenth() {
        var bar = EnqueueProgress(total: 10_000, isTerminal: true)
        #expect(bar.update(5000) == "\r[###############               ] 5000/10000")
        #expect(bar.finish == "\n")
        var lines = EnqueueProgress(total: 10_000, isTerminal: false)
        #expect(lines.update(500) == nil)
        #expect(lines.update(1000) == "sent 1000/10000\n")
        #expect(lines.update(1500) == nil)
        #expect(lines.update(3000) == "sent 3000/10000\n")
        #expect(lines.finish == nil)
    }
}
