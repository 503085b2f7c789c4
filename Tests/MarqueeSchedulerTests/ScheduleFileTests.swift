import MarqueeCore
import MarqueeScheduler
import Testing

@Suite struct ScheduleFileTests {
    static let example = """
        zone: Asia/Seoul
        schedules:
          - name: tmdb-lists
            every: 1h
            jobs:
              - kind: tmdb.list
                list: [popular, now_playing]
                page: 1..5
                language: [ko-KR, en-US]
                region: NO
          - name: kofic-daily
            at: "10:00"
            jobs:
              - kind: kofic.boxoffice.daily
                date: ${yesterday}
                follow: {details: true}
          - name: kofic-weekly
            weekday: monday
            at: "10:30"
            catch_up: all
            jobs:
              - {kind: kofic.boxoffice.weekly, date: "${week-1w}", week: [0, 1]}
        """

    func parse(_ yaml: String, now: Int64 = utc(2024, 6, 1, 0)) throws(SchedulerError) -> ScheduleFile {
        try ScheduleFile.parse(yaml: yaml, file: "schedule.yaml", now: now)
    }

    /// The error a file gives, as the operator sees it.
    func failure(_ yaml: String) -> String {
        do {
            _ = try self.parse(yaml)
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test func theExampleExpandsIntoJobsTheFetchStageAccepts() throws {
        let file = try self.parse(Self.example)
        #expect(file.schedules.map(\.name) == ["tmdb-lists", "kofic-daily", "kofic-weekly"])
        let lists = file.schedules[0]
        #expect(lists.jobCount == 20)
        let jobs = try lists.jobs(for: instant("Asia/Seoul", 2024, 6, 1, 10))
        #expect(jobs.count == 20)
        #expect(jobs.first == .tmdbList(list: .popular, page: 1, language: "ko-KR", region: "NO", follow: .none))
        #expect(jobs[1] == .tmdbList(list: .popular, page: 1, language: "en-US", region: "NO", follow: .none))
        #expect(jobs.last == .tmdbList(list: .nowPlaying, page: 5, language: "en-US", region: "NO", follow: .none))
        #expect(Set(jobs.map(\.dedupeKey)).count == 20)

        // Yesterday in Seoul: the 10:00 KST window of June 1st is 01:00 UTC, still June 1st in Seoul.
        let daily = file.schedules[1]
        #expect(daily.timing == .daily(times: [LocalTime(hour: 10, minute: 0)!]))
        #expect(
            try daily.jobs(for: utc(2024, 6, 1, 1)) == [
                .koficDailyBoxOffice(date: "20240531", follow: Follow(details: true))
            ]
        )

        // Last week's Monday, for the week and the weekend lists.
        let weekly = file.schedules[2]
        #expect(weekly.catchUp == .all(limit: Schedule.maximumCatchUp))
        #expect(
            try weekly.jobs(for: instant("Asia/Seoul", 2024, 6, 3, 10, 30)) == [
                .koficWeeklyBoxOffice(date: "20240527", week: .week, follow: .none),
                .koficWeeklyBoxOffice(date: "20240527", week: .weekend, follow: .none),
            ]
        )
    }

    @Test func jobIDsAreTheSameForTheSameWindowAndIndexOnly() throws {
        let schedule = try self.parse(Self.example).schedules[0]
        let window = instant("Asia/Seoul", 2024, 6, 1, 10)
        #expect(schedule.jobID(window: window, index: 3) == schedule.jobID(window: window, index: 3))
        #expect(schedule.jobID(window: window, index: 3) != schedule.jobID(window: window, index: 4))
        #expect(schedule.jobID(window: window, index: 3) != schedule.jobID(window: window + 3_600_000, index: 3))
        let id = schedule.jobID(window: window, index: 0).rawValue
        #expect(id.count == 26)
        // A ULID whose time is the window's: ids sort by window.
        #expect(id.prefix(10) == JobID.make(milliseconds: UInt64(window)).rawValue.prefix(10))
    }

    @Test func errorsNameTheLineAndTheField() {
        #expect(self.failure("schedules: [").hasPrefix("schedule.yaml:2:1: not YAML"))
        #expect(
            self.failure(
                "schedules:\n  - name: a\n    every: 1h\n    zone: Asia/Nowhere\n    jobs: [{kind: tmdb.genres}]\n"
            )
                == "schedule.yaml:4:11: schedule 'a': field 'zone': 'Asia/Nowhere' is not an IANA time zone such as Asia/Seoul or America/New_York"
        )
        #expect(
            self.failure(
                "schedules:\n  - name: a\n    at: \"10:00\"\n    jobs:\n      - kind: kofic.boxoffice.daily\n        date: ${today-1}\n"
            )
            .hasPrefix("schedule.yaml:6:15: schedule 'a', job 1: field 'date': '${today-1}' is not a date placeholder")
        )
        #expect(
            self.failure(
                "schedules:\n  - name: a\n    at: \"10:00\"\n    jobs:\n      - kind: kofic.boxoffice.daily\n        date: 2024-01-01\n"
            )
            .hasPrefix("schedule.yaml:6:15: schedule 'a', job 1: field 'date': ")
        )
        #expect(
            self.failure(
                "schedules:\n  - name: a\n    every: 1h\n    jobs:\n      - kind: tmdb.list\n        list: popular\n        page: 0\n"
            )
            .hasPrefix("schedule.yaml:7:15: schedule 'a', job 1: field 'page': expected an integer from 1 to 500")
        )
        #expect(
            self.failure("schedules:\n  - name: a\n    every: 1h\n    jobs:\n      - kind: tmdb.lists\n")
                .hasPrefix("schedule.yaml:5:15: schedule 'a', job 1: field 'kind': unknown kind 'tmdb.lists'")
        )
        #expect(
            self.failure("schedules:\n  - name: a\n    every: 1h\n    at: \"10:00\"\n    jobs: [{kind: tmdb.genres}]\n")
                .hasPrefix("schedule.yaml:4:9: schedule 'a': 'every' and 'at' cannot be combined")
        )
        #expect(
            self.failure("schedules:\n  - name: a\n    every: 90m30\n    jobs: [{kind: tmdb.genres}]\n")
                .hasPrefix("schedule.yaml:3:12: schedule 'a': field 'every': expected a period from 1s to 24h")
        )
        #expect(
            self.failure("schedules:\n  - name: a\n    evry: 1h\n    jobs: [{kind: tmdb.genres}]\n")
                .hasPrefix("schedule.yaml:3:5: schedule 1: unknown key 'evry' in a schedule")
        )
        #expect(
            self.failure(
                "schedules:\n  - {name: a, every: 1h, jobs: [{kind: tmdb.genres}]}\n  - {name: a, every: 2h, jobs: [{kind: tmdb.genres}]}\n"
            )
            .hasPrefix("schedule.yaml:3:5: schedule 'a': two schedules are named 'a'")
        )
        #expect(
            self.failure("schedules:\n  - name: a\n    at: \"25:00\"\n    jobs: [{kind: tmdb.genres}]\n")
                .hasPrefix("schedule.yaml:3:9: schedule 'a': field 'at': expected a time of day")
        )
        #expect(
            self.failure(
                "schedules:\n  - name: a\n    at: \"10:00\"\n    weekday: funday\n    jobs: [{kind: tmdb.genres}]\n"
            )
            .hasPrefix("schedule.yaml:4:14: schedule 'a': field 'weekday': expected monday")
        )
        #expect(self.failure("").hasPrefix("schedule.yaml: the file is empty"))
    }

    @Test func plainScalarsFollowJSONTypesAndQuotedOnesAreText() throws {
        let file = try self.parse(
            """
            schedules:
              - name: search
                every: 6h
                zone: America/New_York
                jobs:
                  - {kind: tmdb.search, query: "2001", year: 1968, language: en-US, follow: {pages: 3, details: true}}
            """
        )
        #expect(
            try file.schedules[0].jobs(for: utc(2024, 6, 1, 0))
                == [
                    .tmdbSearch(
                        query: "2001",
                        page: 1,
                        language: "en-US",
                        year: 1968,
                        follow: Follow(pages: 3, details: true)
                    )
                ]
        )
        // `yes` is text, not YAML 1.1's true: the fetch stage's decoding refuses it, at load time.
        #expect(
            self.failure(
                "schedules:\n  - name: a\n    every: 1h\n    jobs:\n      - kind: tmdb.genres\n        follow: {details: yes}\n"
            )
            .contains("field 'follow")
        )
    }
}
