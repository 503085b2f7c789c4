import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Testing

import class Foundation.FileManager
import class Foundation.ProcessInfo
import struct Foundation.URL

@testable import MarqueeStore

#if canImport(Glibc)
import Glibc
#endif

/// The `marquee-index` executable against a real broker and real stores: crashes between the store commit and
/// the offset commit, PostgreSQL stopped mid-stream, invalid records.
@Suite(.serialized, .timeLimit(.minutes(4)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct IndexProcessTests {
    @Test func killMinus9BetweenTheStoreCommitAndTheOffsetCommitChangesNothingOnRedelivery() async throws {
        let location = try await freshPostgresDatabase()
        let topics = try await indexTopics()
        let records = (1...300).map { movieRecord(Int64($0), fetchedAt: 1_000) }
        try await produce(records, to: topics)

        // The first worker stores a batch, then kills itself before the stage may mark its offsets. Its batches
        // are always full: the 300 records wait in the topic, and a batch is not cut short by the 200 ms wait when
        // the first fetches bring fewer (they did on a loaded machine: a batch of 79).
        let group = TestEnvironment.uniqueName("index")
        let crashing = try await IndexWorker.start(
            topics: topics,
            group: group,
            store: location,
            environment: [
                "MARQUEE_INDEX_CRASH_AFTER_COMMITS": "1", "MARQUEE_INDEX_BATCH_SIZE": "100",
                "MARQUEE_INDEX_BATCH_WAIT_MS": "30000",
            ]
        )
        #expect(await crashing.process.waitForExit() == SIGKILL)

        let store = try Store.open(location, logger: .marqueeTest)
        let before = try await store.engine.read(
            "SELECT movie_id, xmin::text, fetched_at FROM movies ORDER BY movie_id",
            []
        )
        // The batch that triggered the kill, and perhaps the other writer's, committed; nothing else.
        #expect([100, 200].contains(before.count), "committed batches are in the store: \(before.count)")

        // The second worker gets the same records again (none of their offsets were committed).
        let worker = try await IndexWorker.start(topics: topics, group: group, store: location)
        // marquee-index runs on jemalloc (docs/fetch.md, "Memory allocator"), and says so when it starts.
        #expect(worker.allocator.hasPrefix("jemalloc 5."), "the start-up line's allocator: \(worker.allocator)")
        try await worker.stored.wait("every record handled again", timeout: .seconds(90)) { $0 >= 300 }
        let after = try await store.engine.read(
            "SELECT movie_id, xmin::text, fetched_at FROM movies ORDER BY movie_id",
            []
        )
        #expect(after.count == 300)
        // The redelivered rows were not rewritten: the same row versions (xmin), the same data.
        #expect(Array(after.filter { row in before.contains { $0[0] == row[0] } }) == before)
        #expect(try await store.engine.read("SELECT COUNT(*) FROM movie_genres", []) == [[.int(300)]])
        #expect(worker.written.snapshot == 300 - before.count, "only the records not stored before were written")
        await store.close()
        await worker.stop()
    }

    /// A concurrency below the batch size cannot fill a batch: each waits out its timer. The worker says so when it
    /// starts, and still stores everything; the default says nothing.
    @Test func aConcurrencyBelowTheBatchSizeIsWarnedAbout() async throws {
        let location = try await freshPostgresDatabase()
        let topics = try await indexTopics()
        let worker = try await IndexWorker.start(
            topics: topics,
            group: TestEnvironment.uniqueName("index"),
            store: location,
            environment: ["MARQUEE_CONCURRENCY": "10", "MARQUEE_INDEX_BATCH_SIZE": "50"]
        )
        let warning = worker.warnings.first { $0.contains("MARQUEE_CONCURRENCY") }
        #expect(
            warning?.contains("MARQUEE_CONCURRENCY 10 is below the batch size 50") == true,
            "the warnings: \(worker.warnings)"
        )
        try await produce((1...30).map { movieRecord(Int64($0), fetchedAt: 1_000) }, to: topics)
        try await worker.stored.wait("every record stored") { $0 >= 30 }
        await worker.stop()

        let defaults = try await IndexWorker.start(
            topics: topics,
            group: TestEnvironment.uniqueName("index"),
            store: location,
            environment: ["MARQUEE_INDEX_BATCH_SIZE": "50"]
        )
        #expect(!defaults.warnings.contains { $0.contains("MARQUEE_CONCURRENCY") }, "\(defaults.warnings)")
        await defaults.stop()
    }

    @Test func postgresStoppedMidStreamPausesTheStageAndLosesNothing() async throws {
        let (postgres, location, topics, worker) = try await indexerOnItsOwnPostgres(storeTimeout: 3, first: 200)

        try await postgres.stop()
        try await produce((201...600).map { movieRecord(Int64($0), fetchedAt: 1_000) }, to: topics)
        try await worker.paused.wait("the stage paused for the store") { $0 }
        let (status, body) = try await httpGet(worker.base + "/readyz")
        #expect(status == 503)
        #expect(body.contains("the store is down"), "\(body)")

        try await postgres.restart()
        try await worker.stored.wait("every record stored after the restart", timeout: .seconds(90)) { $0 >= 600 }
        #expect(try await httpGet(worker.base + "/readyz").0 == 200)
        let metrics = try await httpGet(worker.base + "/metrics").1
        #expect(
            !metrics.contains("marquee_stage_dlq_total{stage=\"records\""),
            "nothing was dead-lettered:\n\(metrics)"
        )
        let store = try Store.open(location, logger: .marqueeTest)
        #expect(try await store.engine.read("SELECT COUNT(*) FROM movies", []) == [[.int(600)]])
        await store.close()
        await worker.stop()
        await postgres.shutdown()
    }

    /// The fetch worker and the indexer as processes: a TMDB list with details lands in the store, and the
    /// lineage accounts for every job — the list's outcome names the detail jobs it spawned, each has its own.
    @Test func aCrawlLandsInTheStoreWithItsLineage() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "8", "--movies", "100", "--tmdb-key", "tmdb-key-8",
        ])
        defer { emulator.terminate() }
        let (prefix, fetch, records) = try await pipelineTopics("mqe", fetchTiers: 1, recordsTiers: 1)
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-crawl")).db"
        defer { removeSQLiteFiles(path) }
        let location = try StoreLocation(parsing: "sqlite:\(path)")
        let (fetcher, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: ["TMDB_API_KEY": "tmdb-key-8"]
        )
        let indexer = try await IndexWorker.start(
            topics: records,
            group: TestEnvironment.uniqueName("index"),
            store: location
        )

        let root = try await enqueue(
            .tmdbList(list: .popular, page: 1, language: "ko-KR", region: nil, follow: Follow(details: true)),
            to: fetch
        )
        // 1 list + 20 details report their outcomes; with them, how many records the indexer must store.
        let reports = try await read(21, from: records.main) { !isEntityRecord($0) }
        let outcomes = try reports.map { try JobOutcome.decode(try Record.decode($0.value)) }
        let expected = outcomes.reduce(outcomes.count) { $0 + ($1.outputs["records"] ?? 0) }
        try await indexer.stored.wait("every record stored", timeout: .seconds(90)) { $0 >= expected }

        let store = try Store.open(location, logger: .marqueeTest)
        #expect(try await store.engine.read("SELECT COUNT(*) FROM movies", []) == [[.int(20)]])
        #expect(try await store.engine.read("SELECT COUNT(*) FROM movie_details", []) == [[.int(20)]])
        #expect(try await store.engine.read("SELECT COUNT(*) FROM movie_translations", []) == [[.int(20)]])
        let lineage = try await store.engine.read(
            "SELECT job_id, parent_id, outcome, spawned FROM job_outcomes WHERE root_id = ? ORDER BY job_id",
            [.text(root.id.description)]
        )
        #expect(lineage.count == 21)
        #expect(lineage.allSatisfy { $0[2] == .text("done") })
        let list = try #require(lineage.first { $0[0] == .text(root.id.description) })
        let ids: [JSONValue] =
            if case .array(let ids) = try JSONValue.parse(Array((list[3].text ?? "").utf8)) { ids } else { [] }
        #expect(
            Set(ids.compactMap { if case .string(let id) = $0 { id } else { nil } })
                == Set(lineage.filter { $0[1] == .text(root.id.description) }.compactMap { $0[0].text })
        )
        #expect(ids.count == 20)
        // What was indexed is what `marquee query` reads.
        let title = try #require(
            try await store.engine.read("SELECT title FROM movie_translations LIMIT 1", []).first?.first?.text
        )
        #expect(try await store.movies(titleContaining: title, language: "ko-KR").contains { $0.title == title })
        await store.close()
        fetcher.signal(SIGTERM)
        #expect(await fetcher.waitForExit() == 0)
        await indexer.stop()
    }

    @Test func invalidRecordsAndPoisonGoToTheDLQWithTheirReasonAndTheRestIsStored() async throws {
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-index")).db"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let location = try StoreLocation(parsing: "sqlite:\(path)")
        let topics = try await indexTopics()
        let worker = try await IndexWorker.start(
            topics: topics,
            group: TestEnvironment.uniqueName("index"),
            store: location
        )

        var wrongType = movieRecord(2, fetchedAt: 1_000)
        wrongType.data["vote_count"] = .string("many")
        var wrongKey = movieRecord(3, fetchedAt: 1_000)
        wrongKey.key = "tmdb:movie:33"
        try await produce(
            [movieRecord(1, fetchedAt: 1_000), wrongType, wrongKey, movieRecord(4, fetchedAt: 1_000)],
            to: topics
        )
        _ = try await withProducer { producer in
            try await producer.send(
                KafkaProducerMessage(
                    topic: topics.main,
                    key: Array("junk".utf8),
                    value: Array("{not json".utf8),
                    headers: Envelope.root().kafkaHeaders
                )
            )
        }

        let dead = try await read(3, from: topics.dlq)
        let reasons = dead.map {
            ($0.headers.string(Envelope.Header.errorKind) ?? "", $0.headers.string(Envelope.Header.error) ?? "")
        }
        #expect(
            reasons.contains {
                $0.0 == "permanent" && $0.1.contains("'vote_count': expected an integer, got a string")
            },
            "\(reasons)"
        )
        #expect(
            reasons.contains { $0.0 == "permanent" && $0.1.contains("the key does not match its data") },
            "\(reasons)"
        )
        #expect(reasons.contains { $0.0 == "poison" }, "\(reasons)")
        try await worker.stored.wait("the valid records stored") { $0 >= 2 }
        let store = try Store.open(location, logger: .marqueeTest)
        #expect(
            try await store.engine.read("SELECT movie_id FROM movies ORDER BY movie_id", []) == [[.int(1)], [.int(4)]]
        )
        await store.close()
        await worker.stop()
    }
}

/// A `marquee-index` child process; counts what it stores from its debug log lines.
struct IndexWorker {
    let process: ChildProcess
    /// `/readyz`, `/metrics` without the path.
    let base: String
    /// Records in committed batches.
    let stored: Observed<Int>
    /// Rows written (inserted or replaced) by committed batches.
    let written: Observed<Int>
    /// Whether the stage is paused for a down store now.
    let paused: Observed<Bool>
    /// The reason (`marquee.error`) of every pause so far.
    let downReasons: Observed<[String]>
    /// The allocator the start-up line names (`marquee.allocator`).
    let allocator: String
    /// The messages of the warnings logged before the start-up line.
    let warnings: [String]

    static func start(
        topics: StageTopics,
        group: String,
        store: StoreLocation,
        environment: [String: String] = [:],
        onError: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> IndexWorker {
        let stored = Observed(0)
        let written = Observed(0)
        let paused = Observed(false)
        let downReasons = Observed<[String]>([])
        let warnings = Observed<[String]>([])
        let started = AsyncStream<(base: String, allocator: String)>.makeStream()
        let process = try ChildProcess(
            "marquee-index",
            arguments: [],
            environment: [
                "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_TOPIC_PREFIX": topics.prefix,
                "MARQUEE_GROUP": group,
                "MARQUEE_METRICS_ADDRESS": "127.0.0.1:0", "MARQUEE_SESSION_TIMEOUT": "6s",
                "MARQUEE_RETRY_DELAYS": "200ms",
                "MARQUEE_SHUTDOWN_TIMEOUT": "5s", "MARQUEE_LOG_LEVEL": "debug", "MARQUEE_STORE": store.connectionString,
                "MARQUEE_INDEX_BATCH_WAIT_MS": "100",
            ].merging(environment) { $1 },
            readsStandardError: true
        ) { line in
            guard line.hasPrefix("{"), case .object(let entry)? = try? JSONValue.parse(Array(line.utf8)) else { return }
            func field(_ name: String) -> String? {
                if case .string(let value)? = entry[name] { return value }
                return nil
            }
            if field("level") == "warning", let message = field("msg") { warnings.update { $0.append(message) } }
            if field("level") == "error", let message = field("msg") { onError(message) }
            switch field("msg") {
            case "records worker started":
                if let url = field("marquee.metrics") {
                    started.continuation.yield(
                        (String(url.dropLast("/metrics".count)), field("marquee.allocator") ?? "")
                    )
                }
            case "batch stored":
                let records = Int(field("marquee.batch.records") ?? "") ?? 0
                let rows = Int(field("marquee.batch.rows_written") ?? "") ?? 0
                stored.update { $0 += records }
                written.update { $0 += rows }
            case let message? where message.contains(": pausing the stage"):
                paused.update { $0 = true }
                downReasons.update { $0.append(field("marquee.error") ?? "") }
            case let message? where message.contains("is back"):
                paused.update { $0 = false }
            default: break
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        let (base, allocator) = try #require(await iterator.next(), "marquee-index logs where its metrics are")
        return IndexWorker(
            process: process,
            base: base,
            stored: stored,
            written: written,
            paused: paused,
            downReasons: downReasons,
            allocator: allocator,
            warnings: warnings.snapshot
        )
    }

    func stop() async {
        self.process.signal(SIGTERM)
        #expect(await self.process.waitForExit() == 0)
    }
}

/// The records stage's topics under a unique prefix.
func indexTopics() async throws -> StageTopics {
    let topics = StageTopics(stage: "records", prefix: TestEnvironment.uniqueName("mqx") + ".", tiers: 1)
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    _ = try await StageTopics.createAll([topics], partitions: 2, admin: admin)
    return topics
}

func produce(_ records: [Record], to topics: StageTopics) async throws {
    _ = try await withProducer { producer in
        try await producer.send(
            records.map {
                KafkaProducerMessage(
                    topic: topics.main,
                    key: Array($0.dedupeKey.utf8),
                    value: $0.encoded(),
                    headers: Envelope.root().kafkaHeaders
                )
            }
        )
    }
}

/// A TMDB list-style movie record.
func movieRecord(_ id: Int64, fetchedAt: Int64) -> Record {
    Record(
        kind: .movie,
        key: "tmdb:movie:\(id)",
        fetchedAt: fetchedAt,
        data: [
            "movie_id": .integer(id), "original_title": .string("Movie \(id)"), "original_language": .string("ko"),
            "release_date": .string("2020-01-01"), "adult": .bool(false), "video": .bool(false),
            "popularity": .number(1.5),
            "vote_average": .number(7.5), "vote_count": .integer(10), "genre_ids": .array([.integer(18)]),
            "poster_path": .null, "backdrop_path": .null,
        ]
    )
}

/// A new database on the local stack's PostgreSQL (`MARQUEE_TEST_POSTGRES`).
func freshPostgresDatabase() async throws -> StoreLocation {
    let url =
        ProcessInfo.processInfo.environment["MARQUEE_TEST_POSTGRES"] ?? "postgres://marquee@127.0.0.1:15432/marquee"
    let name = TestEnvironment.uniqueName("marquee_test").replacingOccurrences(of: "-", with: "_")
    let admin = try Store.open(try StoreLocation(parsing: url), maximumConnections: 1, logger: .marqueeTest)
    _ = try await admin.engine.read("CREATE DATABASE \(name)", [])
    await admin.close()
    return try StoreLocation(parsing: String(url[..<url.lastIndex(of: "/")!]) + "/\(name)?sslmode=disable")
}
