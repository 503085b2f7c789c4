import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

import struct Foundation.Data
import class Foundation.JSONSerialization

@testable import MarqueeStore

#if canImport(Glibc)
import Glibc
#endif

/// Signed-in TMDB accounts through the real fetch worker (`marquee-fetch` against `marquee-upstream`, the sessions
/// from `TMDB_SESSIONS`) and two indexers (`marquee-index`), one on SQLite and one on PostgreSQL.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct TMDBAccountCrawlTests {
    static let key = "marquee-emulator"

    /// What the emulator holds for a session, asked of the emulator itself: the account id and, per list, the
    /// movies and pages, and the first rated movie's id and rating.
    struct Expected {
        var accountID: Int
        var totals: [String: Int] = [:]
        var pages: [String: Int] = [:]
        var firstRated: (id: Int, rating: Double)?

        /// Reads page 1 of `list` (v3 or v4, the same shape): its total, its pages and the first rated movie.
        mutating func read(_ page: String, list: String) throws {
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(page.utf8)) as? [String: Any])
            self.totals[list] = try #require(answer["total_results"] as? Int)
            self.pages[list] = try #require(answer["total_pages"] as? Int)
            if list == "rated", let first = (answer["results"] as? [[String: Any]])?.first {
                let rating = try #require((first["account_rating"] as? [String: Any])?["value"] as? Double)
                self.firstRated = (try #require(first["id"] as? Int), rating)
            }
        }
    }

    static func expected(_ emulator: UpstreamEmulatorProcess, session: String) async throws -> Expected {
        let base = "\(emulator.tmdbBaseURL)/account"
        let (status, body) = try await httpGet("\(base)?api_key=\(Self.key)&session_id=\(session)")
        #expect(status == 200)
        let details = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        var expected = Expected(accountID: try #require(details["id"] as? Int))
        for list in ["rated", "favorite", "watchlist"] {
            let (_, page) = try await httpGet(
                "\(base)/\(expected.accountID)/\(list)/movies?api_key=\(Self.key)&session_id=\(session)&page=1"
            )
            try expected.read(page, list: list)
        }
        return expected
    }

    /// Two accounts, each with its own session: every rated movie (with its rating) lands in `account_ratings` and
    /// every favourite and watchlist entry in `account_lists` of both stores, per account; the lists were read
    /// page by page, once each.
    @Test func twoAccountsLandInBothStores() async throws {
        let sessions = ["default": "session-default-5f1c", "family": "session-family-a9d2"]
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "21", "--movies", "400"])
        defer { emulator.terminate() }
        _ = try await emulator.control(["tmdbSessions": Array(sessions.values)])
        var expected: [String: Expected] = [:]
        for (account, session) in sessions { expected[account] = try await Self.expected(emulator, session: session) }
        #expect(expected["default"]?.accountID != expected["family"]?.accountID)
        #expect(expected.values.allSatisfy { ($0.pages["rated"] ?? 0) >= 2 }, "the rated lists span pages")
        try await emulator.resetStats()

        try await BothStoresCrawl.run(
            emulator: emulator,
            stem: "mqa",
            environment: [
                "TMDB_API_KEY": Self.key,
                "TMDB_SESSIONS": sessions.map { "\($0.key)=\($0.value)" }.joined(separator: ","),
            ]
        ) { crawl in
            for account in sessions.keys { _ = try await enqueue(.tmdbAccount(account: account), to: crawl.fetch) }

            // Per account: its details, each list's movies and total, and one outcome per job (the details and every
            // page).
            let expectedRecords = expected.values.reduce(0) { $0 + Self.records($1) }
            for indexer in crawl.indexers {
                try await indexer.stored.wait("the accounts stored", timeout: .seconds(180)) { $0 >= expectedRecords }
            }

            for location in crawl.stores {
                let store = try Store.open(location, logger: .marqueeTest)
                for (account, want) in expected {
                    let rated = try #require(try await store.accountMovies(account: account, limit: 500))
                    #expect(rated.accountID == Int64(want.accountID))
                    #expect(rated.movies.count == want.totals["rated"], "\(location.connectionString) \(account)")
                    #expect(rated.refreshedAt != nil, "the refresh was stored whole")
                    #expect(rated.movies.allSatisfy { $0.rating != nil && $0.ratedAt != nil })
                    if let first = want.firstRated {
                        let stored = rated.movies.first { $0.movieID == Int64(first.id) }
                        #expect(stored?.rating == first.rating)
                    }
                    for list in [FetchJob.TMDBAccountList.favorite, .watchlist] {
                        let movies = try await store.accountMovies(account: account, list: list, limit: 500)
                        #expect(movies?.movies.count == want.totals[list.rawValue])
                    }
                }
                let accounts = try await store.engine.read("SELECT account FROM tmdb_accounts ORDER BY account", [])
                #expect(accounts == [[.text("default")], [.text("family")]])
                await store.close()
            }

            // What `marquee query ratings` shows of them, from either store.
            for location in crawl.stores {
                let family = try #require(expected["family"])
                let text = try await runMarquee([
                    "query", "ratings", "--account", "family", "--store", location.connectionString,
                ])
                #expect(text.status == 0, "\(text.standardError)")
                #expect(
                    text.standardOutput.hasPrefix(
                        "TMDB account family (\(family.accountID), marquee-\(family.accountID)): rated movies\n"
                    )
                )
                #expect(
                    text.standardOutput.hasSuffix("\(family.totals["rated"] ?? 0) movies\n"),
                    "\(text.standardOutput)"
                )
                let json = try await runMarquee([
                    "query", "ratings", "--account", "family", "--list", "watchlist", "--json", "--store",
                    location.connectionString,
                ])
                #expect(json.status == 0, "\(json.standardError)")
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
                )
                #expect(object["account_id"] as? Int == family.accountID)
                #expect(object["list"] as? String == "watchlist")
                #expect((object["movies"] as? [Any])?.count == family.totals["watchlist"])
                let nobody = try await runMarquee([
                    "query", "ratings", "--account", "nobody", "--store", location.connectionString,
                ])
                #expect(nobody.status == 0)
                #expect(nobody.standardError.contains("no TMDB account 'nobody'"))
            }

            let stats = try await emulator.stats()
            #expect(statistic(stats, "routes", "tmdb.account") == 2)
            let listPages = expected.values.reduce(0) { $0 + $1.pages.values.reduce(0, +) }
            #expect(statistic(stats, "routes", "tmdb.account.list") == listPages)
        }
    }

    /// The records one refresh of an account stores: its details, its lists' movies, each list's total (page 1)
    /// and one outcome per job.
    static func records(_ account: Expected) -> Int {
        1 + account.totals.values.reduce(0, +) + account.totals.count + 1 + account.pages.values.reduce(0, +)
    }

    /// The account `default` refreshed twice through the real workers, the second time signed in with another
    /// session (another TMDB account, other lists): once the second refresh is stored whole, both stores show its
    /// movies only, although the first refresh's rows are still stored.
    @Test func aLaterWholeRefreshLeavesOutWhatOnlyAnEarlierOneListed() async throws {
        let first = "session-first-71d0"
        let second = "session-second-0b3e"
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "23", "--movies", "400"])
        defer { emulator.terminate() }
        _ = try await emulator.control(["tmdbSessions": [first, second]])
        let before = try await Self.expected(emulator, session: first)
        let after = try await Self.expected(emulator, session: second)

        let (prefix, fetch, records) = try await pipelineTopics("mqarf", fetchTiers: 1, recordsTiers: 1)
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-account-refresh")).db"
        defer { removeSQLiteFiles(path) }
        let sqlite = try StoreLocation(parsing: "sqlite:\(path)")
        let postgres = try await freshPostgresDatabase()
        let indexers = [
            try await IndexWorker.start(topics: records, group: TestEnvironment.uniqueName("index"), store: sqlite),
            try await IndexWorker.start(topics: records, group: TestEnvironment.uniqueName("index"), store: postgres),
        ]
        var expectedRecords = 0
        // One consumer group: the second worker goes on where the first stopped, as a restarted worker does.
        let group = TestEnvironment.uniqueName("fetch")
        for (session, want) in [(first, before), (second, after)] {
            let (fetcher, _) = try await startFetchWorker(
                emulator: emulator,
                prefix: prefix,
                environment: [
                    "TMDB_API_KEY": Self.key, "TMDB_SESSION_ID": session, "MARQUEE_STORE": "sqlite:\(path)",
                    "MARQUEE_GROUP": group,
                ]
            )
            _ = try await enqueue(.tmdbAccount(account: "default"), to: fetch)
            expectedRecords += Self.records(want)
            let total = expectedRecords
            for indexer in indexers {
                try await indexer.stored.wait("the refresh stored", timeout: .seconds(180)) { $0 >= total }
            }
            fetcher.signal(SIGTERM)
            #expect(await fetcher.waitForExit() == 0)
        }

        for location in [sqlite, postgres] {
            let store = try Store.open(location, logger: .marqueeTest)
            let rated = try #require(try await store.accountMovies(account: "default", limit: 500))
            #expect(rated.accountID == Int64(after.accountID))
            #expect(rated.movies.count == after.totals["rated"], "\(location.connectionString)")
            let stored = try await store.engine.read("SELECT COUNT(*) FROM account_ratings", []).first?.first?.int
            #expect((stored ?? 0) > Int64(after.totals["rated"] ?? 0), "the first refresh's ratings are still stored")
            for list in [FetchJob.TMDBAccountList.favorite, .watchlist] {
                let movies = try #require(try await store.accountMovies(account: "default", list: list, limit: 500))
                #expect(movies.movies.count == after.totals[list.rawValue], "\(location.connectionString) \(list)")
            }
            await store.close()
        }
        for indexer in indexers { await indexer.stop() }
    }

    /// A revoked session (TMDB's 401 `status_code` 17) pauses that account's jobs for the pipeline, with the
    /// reason, without spending an attempt or dead-lettering them, while another account and the rest of TMDB go
    /// on; later jobs of the paused account are held without a call. No session appears in the worker's log lines,
    /// the hold reasons or its metrics.
    @Test func aRevokedSessionPausesThatAccountAloneAndLeaksNoSession() async throws {
        let valid = "session-valid-3e7a11"
        let revoked = "session-revoked-c0ffee42"
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "22", "--movies", "200"])
        defer { emulator.terminate() }
        _ = try await emulator.control(["tmdbSessions": [valid], "tmdbRevokedSessions": [revoked]])
        let want = try await Self.expected(emulator, session: valid)
        try await emulator.resetStats()

        let (prefix, fetch, records) = try await pipelineTopics("mqar", fetchTiers: 3, recordsTiers: 1)
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-account-revoked")).db"
        defer { removeSQLiteFiles(path) }
        let lines = Mutex<[String]>([])
        let (fetcher, metricsURL) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: [
                "TMDB_API_KEY": Self.key, "TMDB_SESSIONS": "default=\(valid),old=\(revoked)",
                "MARQUEE_STORE": "sqlite:\(path)",
                // No probe within the test: a held job stays held.
                "MARQUEE_SOURCE_PROBE_INTERVAL": "1h",
            ],
            onLine: { line in lines.withLock { $0.append(line) } }
        )
        try await withOutcomes(of: records.main) { outcomes in
            let revokedRoot = try await enqueue(.tmdbAccount(account: "old"), to: fetch)
            try await outcomes.wait("the revoked account held") { $0.holds[revokedRoot.id] != nil }
            // Later jobs of the paused account are held without a call; the other account and TMDB go on.
            let heldLater = try await enqueue(
                .tmdbAccountList(account: "old", accountID: 12_345_678, list: .rated, page: 1),
                to: fetch
            )
            let validRoot = try await enqueue(.tmdbAccount(account: "default"), to: fetch)
            let genres = try await enqueue(.tmdbGenres(language: "en-US"), to: fetch)
            let listPages = want.pages.values.reduce(0, +)
            try await outcomes.wait("the valid account read and the revoked one held") { log in
                log.done.contains(validRoot.id) && log.done.contains(genres.id) && log.holds[heldLater.id] != nil
                    && log.done.count == 2 + listPages
            }
            let log = outcomes.snapshot
            #expect(log.deadLettered.isEmpty, "\(log)")
            #expect(log.retried.isEmpty, "no attempt was spent: \(log)")
            #expect(!log.done.contains(revokedRoot.id))
            #expect(!log.holdReasons.isEmpty)
            for reason in log.holdReasons {
                #expect(reason.contains("TMDB account old is paused"), "\(reason)")
                #expect(reason.contains("Session denied."), "\(reason)")
                #expect(reason.contains("status_code 17"), "\(reason)")
                #expect(!reason.contains(revoked) && !reason.contains(valid), "\(reason)")
            }
        }
        let stats = try await emulator.stats()
        // The revoked session was tried once; the held list job never called.
        #expect(statistic(stats, "routes", "tmdb.account") == 2)
        #expect(statistic(stats, "routes", "tmdb.account.list") == want.pages.values.reduce(0, +))
        let (_, metrics) = try await httpGet(metricsURL + "/metrics")
        #expect(metrics.contains("tmdb.account.old"), "the paused account is named in the metrics")
        #expect(!metrics.contains(revoked) && !metrics.contains(valid))
        // `marquee sources` shows the account paused for the pipeline, with the reason, and no session.
        let sources = try await runMarquee(["sources", "--json", "--store", "sqlite:\(path)"])
        #expect(sources.status == 0, "\(sources.standardError)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(sources.standardOutput.utf8)) as? [String: Any]
        )
        let paused = (report["sources"] as? [[String: Any]] ?? []).filter { $0["paused"] as? Bool == true }
        #expect(paused.map { $0["source"] as? String } == ["tmdb.account.old"], "\(sources.standardOutput)")
        #expect(sources.standardOutput.contains("Session denied."))
        #expect(!sources.standardOutput.contains(revoked) && !sources.standardOutput.contains(valid))
        fetcher.signal(SIGTERM)
        #expect(await fetcher.waitForExit() == 0)
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains("TMDB account old paused for the pipeline") })
        #expect(!logged.contains { $0.contains(revoked) || $0.contains(valid) })
    }
}

/// `marquee enqueue tmdb-account`, as the process builds the jobs (`--dry-run`): labels only, never a session.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct TMDBAccountCLITests {
    @Test func oneJobPerLabelAndTheDefaultAccountWithoutOne() async throws {
        let run = try await runMarquee(["enqueue", "tmdb-account", "default", "family", "--dry-run"])
        #expect(run.status == 0, "\(run.standardError)")
        let jobs = try run.standardOutput.split(separator: "\n").map { try FetchJob.decode(Array($0.utf8)) }
        #expect(jobs == [.tmdbAccount(account: "default"), .tmdbAccount(account: "family")])
        let bare = try await runMarquee(["enqueue", "tmdb-account", "--dry-run"])
        #expect(
            try bare.standardOutput.split(separator: "\n").map { try FetchJob.decode(Array($0.utf8)) } == [
                .tmdbAccount(account: "default")
            ]
        )
    }

    @Test func aLabelThatIsNoLabelIsAUsageError() async throws {
        let run = try await runMarquee(["enqueue", "tmdb-account", "Family Account", "--dry-run"])
        #expect(run.status == 64)
        #expect(run.standardError.contains("account"), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
        let query = try await runMarquee(["query", "ratings", "--account", "Bad Label"])
        #expect(query.status == 64)
    }
}
