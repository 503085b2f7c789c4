import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A `tmdb.changes` job through the real `marquee-fetch` against the emulator's change feed: every changed movie
/// of the day is refreshed in every language of the job, and nothing else is.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ChangeFeedProcessTests {
    @Test func aDayOfChangesRefreshesEachChangedMovieInEachLanguage() async throws {
        let key = "tmdb-key-changes"
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "9", "--movies", "400", "--tmdb-key", key,
        ])
        defer { emulator.terminate() }
        let day = "2026-11-26"
        _ = try await emulator.control(["today": "2026-11-27"])
        // What the feed says changed that day (the adult titles are not refreshed).
        let (status, body) = try await httpGet(
            emulator.tmdbBaseURL + "/movie/changes?api_key=\(key)&start_date=\(day)&end_date=\(day)"
        )
        #expect(status == 200)
        let feed = try JSONValue.parse(Array(body.utf8))
        guard case .object(let object) = feed, case .array(let results)? = object["results"] else {
            Issue.record("no results in \(body.prefix(200))")
            return
        }
        let ids: [Int64] = results.compactMap { item in
            guard case .object(let item) = item, case .integer(let id)? = item["id"], item["adult"] != .bool(true)
            else {
                return nil
            }
            return id
        }
        #expect(ids.count >= 2, "a day changes about 2 % of 400 movies")

        let (prefix, fetch, records) = try await pipelineTopics("mqc", fetchTiers: 1, recordsTiers: 0)
        let (worker, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: ["TMDB_API_KEY": key]
        )
        _ = try await enqueue(
            .tmdbChanges(startDate: day, endDate: day, page: 1, languages: ["en-US", "ko-KR"], follow: .none),
            to: fetch
        )
        // Each refresh yields a movie and a localized record.
        let produced = try await read(4 * ids.count, from: records.main, including: isEntityRecord)
        let localized = Set(produced.compactMap(\.keyString).filter { $0.hasSuffix(":en-US") || $0.hasSuffix(":ko-KR") })
        let expected = Set(ids.flatMap { id in ["tmdb:movie:\(id):en-US", "tmdb:movie:\(id):ko-KR"] })
        #expect(localized == expected)
        let stats = try await emulator.stats()
        #expect(statistic(stats, "routeStatuses", "tmdb.changes", "200") == 2)  // ours and the worker's
        #expect(statistic(stats, "routeStatuses", "tmdb.movie", "200") == 2 * ids.count)
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0)
    }
}
