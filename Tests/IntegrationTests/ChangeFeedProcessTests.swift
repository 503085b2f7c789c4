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
        // Each refresh yields a localized record (message key `movie.localized:<record key>`), besides its movie and
        // genre records.
        let produced = try await read(2 * ids.count, from: records.main) {
            $0.keyString?.hasPrefix("movie.localized:") == true
        }
        let expected = Set(
            ids.flatMap { id in ["movie.localized:tmdb:movie:\(id):en-US", "movie.localized:tmdb:movie:\(id):ko-KR"] }
        )
        #expect(Set(produced.compactMap(\.keyString)) == expected)
        let stats = try await emulator.stats()
        #expect(statistic(stats, "routeStatuses", "tmdb.changes", "200") == 2)  // ours and the worker's
        #expect(statistic(stats, "routeStatuses", "tmdb.movie", "200") == 2 * ids.count)
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0)
    }
}
