import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Testing

import struct Foundation.UUID

@testable import MarqueeStore

#if canImport(Glibc)
import Glibc
#endif

/// TMDB's change feed through the real fetch worker (`marquee-fetch` against `marquee-upstream`) and two indexers
/// (`marquee-index`), one on SQLite and one on PostgreSQL: each store records why and when each movie was last
/// refreshed.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ChangeFeedIndexTests {
    /// Movies fetched by hand one day (reason `request`), then the next day's feed, sent as the scheduler sends
    /// it: the movies it lists changed, so their details answer 200 and both stores record the refresh as
    /// `change`, later than the first; the movies it does not list, asked for again, answer 304, download nothing
    /// and keep their first refresh.
    @Test func theChangeFeedRefreshesChangedMoviesAndLeavesTheOthersCheap() async throws {
        let key = "tmdb-key-refresh"
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "9", "--movies", "400", "--tmdb-key", key,
        ])
        defer { emulator.terminate() }
        let (before, day) = ("2026-11-25", "2026-11-26")
        _ = try await emulator.control(["today": day])
        let changed = try await Self.changedIDs(emulator, key: key, day: day)
        // Movies of the day before that did not change again: their details stay as they were.
        let unchanged = Set(try await Self.changedIDs(emulator, key: key, day: before).subtracting(changed).prefix(3))
        #expect(changed.count >= 2, "a day changes about 2 % of 400 movies")
        #expect(unchanged.count >= 2)
        _ = try await emulator.control(["today": before])

        // The fetch worker keeps its validators in the SQLite store: its second request for a movie is conditional.
        try await BothStoresCrawl.run(emulator: emulator, stem: "mqr", environment: ["TMDB_API_KEY": key]) { crawl in
            try await withOutcomes(of: crawl.records.main) { outcomes in
                // Day one: every movie by hand (a root without a reason: a detail is a `request`).
                var sent: Set<JobID> = []
                for id in changed.union(unchanged).sorted() {
                    sent.insert(
                        try await enqueue(.tmdbMovie(id: id, language: "en-US", follow: .none), to: crawl.fetch).id
                    )
                }
                let roots = sent
                try await outcomes.wait("the first details fetched") { roots.isSubset(of: $0.done) }
                try await Self.waitUntilIndexed(crawl.records.main, by: crawl.indexers)
                var first: [Int64: MovieRefresh] = [:]
                for location in crawl.stores {
                    let refreshes = try await Self.refreshes(location, of: changed.union(unchanged))
                    #expect(refreshes.values.allSatisfy { $0.reason == "request" }, "\(location): \(refreshes)")
                    #expect(refreshes.count == changed.count + unchanged.count)
                    first = refreshes
                }

                // Day two: the feed of the day, then the unchanged movies asked for again.
                _ = try await emulator.control(["today": day])
                try await emulator.resetStats()
                // Sent as the scheduler sends it: its details are refreshed for the change all the same.
                let feed = Envelope.root(refresh: .schedule)
                let changes = FetchJob.tmdbChanges(
                    startDate: day,
                    endDate: day,
                    page: 1,
                    languages: ["en-US"],
                    follow: .none
                )
                _ = try await withProducer { producer in
                    try await producer.send(
                        KafkaProducerMessage(
                            topic: crawl.fetch.main,
                            key: Array(changes.dedupeKey.utf8),
                            value: changes.encoded(),
                            headers: feed.kafkaHeaders
                        )
                    )
                }
                try await outcomes.wait("the feed and its refreshes done") { log in
                    log.done.contains(feed.id) && log.spawned.isSubset(of: log.done)
                }
                sent = []
                for id in unchanged.sorted() {
                    sent.insert(
                        try await enqueue(.tmdbMovie(id: id, language: "en-US", follow: .none), to: crawl.fetch).id
                    )
                }
                let again = sent
                try await outcomes.wait("the unchanged movies asked again") { again.isSubset(of: $0.done) }
                try await Self.waitUntilIndexed(crawl.records.main, by: crawl.indexers)

                for location in crawl.stores {
                    let refreshes = try await Self.refreshes(location, of: changed.union(unchanged))
                    for id in changed {
                        let refresh = try #require(refreshes[id], "\(location): movie \(id)")
                        #expect(refresh.reason == "change", "\(location): movie \(id)")
                        #expect(refresh.refreshedAtMilliseconds > first[id]?.refreshedAtMilliseconds ?? .max)
                    }
                    for id in unchanged {
                        // A 304 writes nothing: the first refresh stands, at its time.
                        #expect(refreshes[id] == first[id], "\(location): movie \(id)")
                    }
                }
                let stats = try await emulator.stats()
                #expect(statistic(stats, "routeStatuses", "tmdb.changes", "200") == 1)
                #expect(statistic(stats, "routeStatuses", "tmdb.movie", "200") == changed.count)
                #expect(statistic(stats, "routeStatuses", "tmdb.movie", "304") == unchanged.count)
            }
        }
    }

    /// The ids the emulator's feed lists for `day` (adult titles left out: the fetch stage does not refresh them).
    static func changedIDs(_ emulator: UpstreamEmulatorProcess, key: String, day: String) async throws -> Set<Int64> {
        let (status, body) = try await httpGet(
            emulator.tmdbBaseURL + "/movie/changes?api_key=\(key)&start_date=\(day)&end_date=\(day)"
        )
        #expect(status == 200)
        guard case .object(let object) = try JSONValue.parse(Array(body.utf8)),
            case .array(let results)? = object["results"]
        else {
            Issue.record("no results in \(body.prefix(200))")
            return []
        }
        return Set(
            results.compactMap { item in
                guard case .object(let item) = item, case .integer(let id)? = item["id"], item["adult"] != .bool(true)
                else { return nil }
                return id
            }
        )
    }

    /// The stored refresh of each of `ids` that has one.
    static func refreshes(_ location: StoreLocation, of ids: Set<Int64>) async throws -> [Int64: MovieRefresh] {
        let store = try Store.open(location, logger: .marqueeTest)
        var refreshes: [Int64: MovieRefresh] = [:]
        for id in ids {
            refreshes[id] = try await store.movie(id: id)?.refresh
        }
        await store.close()
        return refreshes
    }

    /// Waits until every indexer stored every record of `topic` (2 partitions) so far: a fence record on each
    /// partition, read back after everything before it, says how many there are.
    static func waitUntilIndexed(_ topic: String, by indexers: [IndexWorker]) async throws {
        let fence = UUID().uuidString
        let fences = (0..<2).map { partition in
            let record = Record(
                kind: .genre,
                key: "tmdb:genre:\(990_000 + partition):fence",
                fetchedAt: Int64(JobID.nowMilliseconds()),
                data: JSONObject([
                    "genre_id": .integer(Int64(990_000 + partition)), "language": .string("fence"),
                    "name": .string(fence),
                ])
            )
            var message = KafkaProducerMessage(
                topic: topic,
                key: Array(record.dedupeKey.utf8),
                value: record.encoded(),
                headers: Envelope.root().kafkaHeaders
            )
            message.partition = Int32(partition)
            return message
        }
        _ = try await withProducer { producer in try await producer.send(fences) }
        let count = try await withConsumer(
            TestEnvironment.consumer(group: TestEnvironment.uniqueName("count"), topics: [topic])
        ) { consumer in
            var count = 0
            var seen: Set<Int32> = []
            for try await message in consumer.messages {
                count += 1
                if String(decoding: message.value, as: UTF8.self).contains(fence) { seen.insert(message.partition) }
                if seen.count == 2 { break }
            }
            return count
        }
        for indexer in indexers {
            try await indexer.stored.wait("every record of \(topic) stored (\(count))", timeout: .seconds(120)) {
                $0 >= count
            }
        }
    }
}
