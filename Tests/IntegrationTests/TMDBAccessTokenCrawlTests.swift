import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

import struct Foundation.Data
import class Foundation.JSONSerialization
import class Foundation.NSNull

@testable import MarqueeStore

#if canImport(Glibc)
import Glibc
#endif

/// Accounts signed in by TMDB v4 user access tokens, through the real fetch worker (`marquee-fetch` against
/// `marquee-upstream`'s v4 routes) beside an account signed in by a session, into both stores.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct TMDBAccessTokenCrawlTests {
    static let key = TMDBAccountCrawlTests.key

    /// A token in TMDB's shape for `objectID`, with a signature naming `tag` (to find it if it leaks).
    static func token(_ objectID: String, tag: String) -> String {
        TMDBAccessToken.make(
            subject: objectID,
            claims: [
                "aud": .string("0123456789abcdef0123456789abcdef"), "jti": .string(tag),
                "scopes": .array([.string("api_read"), .string("api_write")]), "version": .integer(1),
            ],
            signature: Array("signature-\(tag)-0000000000000000".utf8)
        )
    }

    /// What the emulator holds for a token's account, asked of its v4 routes: per list, the movies and pages.
    static func expected(
        _ emulator: UpstreamEmulatorProcess,
        token: String,
        objectID: String
    ) async throws -> TMDBAccountCrawlTests.Expected {
        let base = emulator.baseURL + "/tmdb/4/account/\(objectID)/movie"
        var expected = TMDBAccountCrawlTests.Expected(accountID: 0)
        for (list, path) in [("rated", "rated"), ("favorite", "favorites"), ("watchlist", "watchlist")] {
            let (status, page) = try await httpGet(
                "\(base)/\(path)?page=1",
                headers: ["Authorization: Bearer \(token)"]
            )
            #expect(status == 200, "\(path): \(page)")
            try expected.read(page, list: list)
        }
        return expected
    }

    /// A token account (`kids`, `TMDB_ACCESS_TOKENS`) and a session account (`default`, `TMDB_SESSION_ID`) in one
    /// crawl: the token's account is read from v4 with the token alone, every rated movie (with its rating) and
    /// list entry lands in both stores under its label and object id, and `marquee query ratings` shows it.
    @Test func aTokenAccountLandsInBothStoresBesideASessionAccount() async throws {
        let session = "session-default-41b7"
        let objectID = "64b0c1d2e3f4a5b6c7d8e9f0"
        let token = Self.token(objectID, tag: "kids")
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "24", "--movies", "400"])
        defer { emulator.terminate() }
        _ = try await emulator.control(["tmdbSessions": [session], "tmdbAccessTokens": [token]])
        let sessionWant = try await TMDBAccountCrawlTests.expected(emulator, session: session)
        let tokenWant = try await Self.expected(emulator, token: token, objectID: objectID)
        #expect((tokenWant.pages["rated"] ?? 0) >= 2, "the rated list spans pages")
        try await emulator.resetStats()

        try await BothStoresCrawl.run(
            emulator: emulator,
            stem: "mqv4",
            environment: [
                "TMDB_API_KEY": Self.key, "TMDB_SESSION_ID": session, "TMDB_ACCESS_TOKENS": "kids=\(token)",
            ]
        ) { crawl in
            _ = try await enqueue(.tmdbAccount(account: "default"), to: crawl.fetch)
            _ = try await enqueue(.tmdbAccount(account: "kids"), to: crawl.fetch)
            let expectedRecords = TMDBAccountCrawlTests.records(sessionWant) + TMDBAccountCrawlTests.records(tokenWant)
            for indexer in crawl.indexers {
                try await indexer.stored.wait("the accounts stored", timeout: .seconds(180)) { $0 >= expectedRecords }
            }

            for location in crawl.stores {
                let store = try Store.open(location, logger: .marqueeTest)
                let rated = try #require(try await store.accountMovies(account: "kids", limit: 500))
                #expect(rated.accountObjectID == objectID)
                #expect(rated.accountID == nil)
                #expect(rated.movies.count == tokenWant.totals["rated"], "\(location.connectionString)")
                #expect(rated.refreshedAt != nil, "the refresh was stored whole")
                if let first = tokenWant.firstRated {
                    #expect(rated.movies.first { $0.movieID == Int64(first.id) }?.rating == first.rating)
                }
                for list in [FetchJob.TMDBAccountList.favorite, .watchlist] {
                    let movies = try await store.accountMovies(account: "kids", list: list, limit: 500)
                    #expect(movies?.movies.count == tokenWant.totals[list.rawValue], "\(list)")
                }
                let other = try #require(try await store.accountMovies(account: "default", limit: 500))
                #expect(other.accountID == Int64(sessionWant.accountID))
                #expect(other.accountObjectID == nil)
                #expect(other.movies.count == sessionWant.totals["rated"])
                let ids = try await store.engine.read(
                    "SELECT DISTINCT account_id, account_object_id FROM account_lists WHERE account = 'kids'",
                    []
                )
                #expect(ids == [[.null, .text(objectID)]])
                await store.close()
            }

            let text = try await runMarquee([
                "query", "ratings", "--account", "kids", "--store", crawl.stores[1].connectionString,
            ])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(text.standardOutput.hasPrefix("TMDB account kids (v4 \(objectID)): rated movies\n"))
            let json = try await runMarquee([
                "query", "ratings", "--account", "kids", "--json", "--store", crawl.stores[0].connectionString,
            ])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
            )
            #expect(object["account_object_id"] as? String == objectID)
            #expect(object["account_id"] is NSNull)

            let stats = try await emulator.stats()
            #expect(statistic(stats, "routes", "tmdb.account") == 1)
            #expect(statistic(stats, "routes", "tmdb.v4.account.lists") == 1)
            #expect(statistic(stats, "routes", "tmdb.v4.account.list") == tokenWant.pages.values.reduce(0, +))
        }
    }

    /// A revoked token (v4's 401) pauses its account alone, with the reason and where to set a new token, without
    /// spending an attempt; another token account goes on. No token appears in the log lines, the hold reasons,
    /// the metrics or `marquee sources`.
    @Test func aRevokedTokenPausesThatAccountAloneAndLeaksNoToken() async throws {
        let valid = Self.token("aaaa0000bbbb1111cccc2222", tag: "valid")
        let revoked = Self.token("dddd3333eeee4444ffff5555", tag: "revoked")
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "25", "--movies", "200"])
        defer { emulator.terminate() }
        _ = try await emulator.control(["tmdbAccessTokens": [valid], "tmdbRevokedAccessTokens": [revoked]])
        let want = try await Self.expected(emulator, token: valid, objectID: "aaaa0000bbbb1111cccc2222")
        try await emulator.resetStats()

        let (prefix, fetch, records) = try await pipelineTopics("mqv4r", fetchTiers: 3, recordsTiers: 1)
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-token-revoked")).db"
        defer { removeSQLiteFiles(path) }
        let lines = Mutex<[String]>([])
        let (fetcher, metricsURL) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: [
                "TMDB_API_KEY": Self.key, "TMDB_ACCESS_TOKENS": "kids=\(valid),old=\(revoked)",
                "MARQUEE_STORE": "sqlite:\(path)", "MARQUEE_SOURCE_PROBE_INTERVAL": "1h",
            ],
            onLine: { line in lines.withLock { $0.append(line) } }
        )
        try await withOutcomes(of: records.main) { outcomes in
            let revokedRoot = try await enqueue(.tmdbAccount(account: "old"), to: fetch)
            try await outcomes.wait("the revoked account held") { $0.holds[revokedRoot.id] != nil }
            let validRoot = try await enqueue(.tmdbAccount(account: "kids"), to: fetch)
            let listPages = want.pages.values.reduce(0, +)
            try await outcomes.wait("the valid account read") { log in
                log.done.contains(validRoot.id) && log.done.count == 1 + listPages
            }
            let log = outcomes.snapshot
            #expect(log.deadLettered.isEmpty, "\(log)")
            #expect(log.retried.isEmpty, "no attempt was spent: \(log)")
            #expect(!log.holdReasons.isEmpty)
            for reason in log.holdReasons {
                #expect(reason.contains("TMDB account old is paused"), "\(reason)")
                #expect(reason.contains("the access token was refused"), "\(reason)")
                #expect(reason.contains("TMDB_ACCESS_TOKENS"), "\(reason)")
                #expect(!reason.contains(revoked) && !reason.contains(valid), "\(reason)")
            }
        }
        let stats = try await emulator.stats()
        #expect(statistic(stats, "routes", "tmdb.v4.account.lists") == 2)
        #expect(statistic(stats, "routes", "tmdb.v4.account.list") == want.pages.values.reduce(0, +))
        let (_, metrics) = try await httpGet(metricsURL + "/metrics")
        #expect(metrics.contains("tmdb.account.old"))
        #expect(!metrics.contains(revoked) && !metrics.contains(valid))
        let sources = try await runMarquee(["sources", "--json", "--store", "sqlite:\(path)"])
        #expect(sources.status == 0, "\(sources.standardError)")
        #expect(sources.standardOutput.contains("the access token was refused"))
        #expect(!sources.standardOutput.contains(revoked) && !sources.standardOutput.contains(valid))
        fetcher.signal(SIGTERM)
        #expect(await fetcher.waitForExit() == 0)
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains("TMDB account old paused for the pipeline") })
        #expect(!logged.contains { $0.contains(revoked) || $0.contains(valid) })
    }
}
