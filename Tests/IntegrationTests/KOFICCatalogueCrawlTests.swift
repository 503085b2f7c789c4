import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import class Foundation.JSONSerialization

@testable import MarqueeStore

#if canImport(Glibc)
import Glibc
#endif

/// A `kofic.movies` crawl through the real fetch worker (`marquee-fetch` against `marquee-upstream`) and two
/// indexers (`marquee-index`), one on SQLite and one on PostgreSQL.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct KOFICCatalogueCrawlTests {
    /// The whole of the emulator's KOFIC catalogue, 5 movies a page, with each movie's info: every listed movie
    /// lands in `kofic_catalogue` and, through its info, in `kofic_movies` of both stores; the crawl called the
    /// list once per page and the info once per movie, and each call took one from the KOFIC key's daily budget.
    @Test func aCatalogueCrawlWithDetailsLandsInBothStoresWithinTheBudget() async throws {
        let key = "kofic-key-12"
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "12", "--movies", "100", "--kofic-key", key,
        ])
        defer { emulator.terminate() }
        // How long the list is, asked of the emulator itself.
        let (status, body) = try await httpGet(
            "\(emulator.koficBaseURL)/movie/searchMovieList.json?key=\(key)&itemPerPage=1"
        )
        #expect(status == 200)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        let total = try #require((answer["movieListResult"] as? [String: Any])?["totCnt"] as? Int)
        let perPage = 5
        let pages = (total + perPage - 1) / perPage
        #expect(pages >= 3, "the catalogue spans several pages (\(total) movies)")
        try await emulator.resetStats()

        try await BothStoresCrawl.run(
            emulator: emulator,
            stem: "mqk",
            environment: ["KOFIC_API_KEY": key, "MARQUEE_FETCH_RATE_LIMITS": "kofic=50"]
        ) { crawl in
            _ = try await enqueue(
                .koficMovies(
                    query: .init(perPage: Int64(perPage)),
                    page: 1,
                    follow: Follow(details: true)
                ),
                to: crawl.fetch
            )
            // Each store gets a catalogue entry and an info record per movie, and one outcome per job.
            let expected = total * 2 + pages + total
            for indexer in crawl.indexers {
                try await indexer.stored.wait("the crawl stored", timeout: .seconds(180)) { $0 >= expected }
            }

            for location in crawl.stores {
                let store = try Store.open(location, logger: .marqueeTest)
                #expect(
                    try await store.engine.read("SELECT COUNT(*) FROM kofic_catalogue", []) == [[.int(Int64(total))]]
                )
                #expect(try await store.engine.read("SELECT COUNT(*) FROM kofic_movies", []) == [[.int(Int64(total))]])
                // The list and the info agree on each movie.
                let disagreeing = try await store.engine.read(
                    """
                    SELECT c.movie_cd FROM kofic_catalogue c JOIN kofic_movies m ON m.movie_cd = c.movie_cd
                     WHERE c.title <> m.title OR c.production_year <> m.production_year OR c.open_date <> m.open_date
                    """,
                    []
                )
                #expect(disagreeing.isEmpty, "\(location.connectionString): \(disagreeing.prefix(3))")
                #expect(try await store.counts().koficCatalogue == total)
                await store.close()
            }

            let stats = try await emulator.stats()
            #expect(statistic(stats, "routes", "kofic.movieList") == pages)
            #expect(statistic(stats, "routes", "kofic.movieInfo") == total)
            // Every page and every info call counted against the key's budget of the day, shared in the store.
            let limits = try Store.open(crawl.sqlite, logger: .marqueeTest)
            let spent = try await limits.engine.read("SELECT SUM(spent) FROM coord_budgets", [])
            #expect(spent == [[.int(Int64(pages + total))]])
            await limits.close()
        }
    }

    /// A crawl with details against a daily budget of 4 calls: page 1 and three more calls are made, and every
    /// other job the crawl queued is held (no attempt spent, none dead-lettered), waiting for the next day.
    @Test func aCrawlThatOutrunsTheDailyBudgetHoldsTheRestAndLosesNothing() async throws {
        let key = "kofic-key-13"
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "12", "--movies", "100", "--kofic-key", key,
        ])
        defer { emulator.terminate() }
        let (prefix, fetch, records) = try await pipelineTopics("mqkb", fetchTiers: 3, recordsTiers: 1)
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-kofic-budget")).db"
        defer { removeSQLiteFiles(path) }
        let sqlite = try StoreLocation(parsing: "sqlite:\(path)")
        let (fetcher, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: [
                "KOFIC_API_KEY": key, "MARQUEE_STORE": sqlite.connectionString, "KOFIC_DAILY_BUDGET": "4",
                "MARQUEE_FETCH_RATE_LIMITS": "kofic=50",
            ]
        )
        try await withOutcomes(of: records.main) { outcomes in
            let root = try await enqueue(
                .koficMovies(query: .init(perPage: 5), page: 1, follow: Follow(details: true)),
                to: fetch
            )
            // Four jobs done; every other job the crawl queued (pages, infos) has been held.
            try await outcomes.wait("four calls done and the rest held") { log in
                log.done.count == 4
                    && log.spawned.union([root.id]).subtracting(log.done).allSatisfy { log.holds[$0] != nil }
            }
            let log = outcomes.snapshot
            #expect(log.done.contains(root.id), "page 1 is the first call")
            // Page 1 alone queued the further pages and its five movies' infos.
            #expect(log.spawned.count >= 2 + 5, "\(log)")
            #expect(Set(log.holds.keys) == log.spawned.union([root.id]).subtracting(log.done), "\(log)")
            #expect(log.deadLettered.isEmpty, "\(log)")
            #expect(log.retried.isEmpty, "no attempt was spent: \(log)")
            #expect(log.holdReasons.allSatisfy { $0.hasPrefix("held: ") && $0.contains("daily budget of 4") }, "\(log)")
        }
        let stats = try await emulator.stats()
        #expect(statistic(stats, "routes", "kofic.movieList") + statistic(stats, "routes", "kofic.movieInfo") == 4)
        let limits = try Store.open(sqlite, logger: .marqueeTest)
        #expect(try await limits.engine.read("SELECT SUM(spent) FROM coord_budgets", []) == [[.int(4)]])
        await limits.close()
        fetcher.signal(SIGTERM)
        #expect(await fetcher.waitForExit() == 0)
    }
}
