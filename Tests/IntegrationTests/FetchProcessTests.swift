import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

import class Foundation.FileManager

#if canImport(Glibc)
import Glibc
#endif

/// The `marquee-fetch` executable itself: configuration from the environment, JSON logs, probes, a crawl, a dead
/// letter, SIGTERM — and its keys in none of what it writes.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct FetchProcessTests {
    @Test func theWorkerFetchesReportsAndStopsOnSIGTERMWithoutLeakingItsKeys() async throws {
        let keys = [
            "TMDB_API_KEY": "tmdb-SECRET-7d1c0e", "KOFIC_API_KEY": "kofic-SECRET-51aa",
            "KAKAO_REST_API_KEY": "kakao-SECRET-99f2",
        ]
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "5", "--movies", "100", "--tmdb-key", keys["TMDB_API_KEY"]!, "--kofic-key",
            keys["KOFIC_API_KEY"]!,
            "--kakao-key", keys["KAKAO_REST_API_KEY"]!,
        ])
        defer { emulator.terminate() }
        let (prefix, fetch, records) = try await pipelineTopics("mqp", fetchTiers: 3, recordsTiers: 0)

        let lines = Mutex<[String]>([])
        let (worker, base) = try await startFetchWorker(emulator: emulator, prefix: prefix, environment: keys) { line in
            lines.withLock { $0.append(line) }
        }

        // A list page: 20 movies, a record each and a localized record each. And a detail that does not exist.
        try await enqueue(.tmdbList(list: .popular, page: 1, language: "ko-KR", region: nil, follow: .none), to: fetch)
        try await enqueue(.tmdbMovie(id: 999_999_999, language: "ko-KR", follow: .none), to: fetch)
        let produced = try await read(40, from: records.main, including: isEntityRecord)
        #expect(Set(produced.map(\.keyString)).count == 40)
        let dead = try #require(try await read(1, from: fetch.dlq).first)
        #expect(dead.headers.string(Envelope.Header.errorKind) == "permanent")
        let reason = dead.headers.string(Envelope.Header.error) ?? ""
        #expect(reason.contains("could not be found"), "the upstream's own message: \(reason)")

        #expect(try await httpGet(base + "/readyz").0 == 200)
        let metrics = try await httpGet(base + "/metrics").1
        #expect(metrics.contains(#"marquee_stage_jobs_total{stage="fetch",kind="tmdb.list",outcome="succeeded"} 1"#))
        #expect(metrics.contains(#"marquee_stage_dlq_total{stage="fetch",kind="tmdb.movie",error_kind="permanent"} 1"#))

        worker.signal(SIGTERM)
        let clock = ContinuousClock()
        let stopAt = clock.now
        let status = await worker.waitForExit()
        #expect(status == 0, "a graceful stop exits 0")
        #expect(clock.now - stopAt < .seconds(15))

        // Keys appear nowhere the worker wrote: logs, dead-letter headers, metrics.
        let written =
            lines.withLock { $0 }.joined(separator: "\n") + metrics
            + dead.headers.map { "\($0.key)=\($0.stringValue ?? "")" }.joined(separator: "\n")
        #expect(!written.isEmpty)
        for key in keys.values { #expect(!written.contains(key), "the key \(key.prefix(5))… leaked") }
        #expect(
            lines.withLock { $0 }.allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") },
            "every log line is a JSON object"
        )
        // marquee-fetch runs on jemalloc (docs/fetch.md, "Memory allocator"), and says so when it starts.
        let startLine = lines.withLock { $0 }.first { $0.contains("\"fetch worker started\"") } ?? ""
        #expect(startLine.contains("\"marquee.allocator\":\"jemalloc 5."), "the start-up line: \(startLine)")
    }

    /// With `--validator-cache store`, validators outlive the worker: a restarted worker (or any other on the same
    /// store) revalidates what the first one fetched, answered 304, and emits nothing again.
    @Test func validatorsInTheStoreOutliveTheWorker() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "6", "--movies", "100", "--tmdb-key", "tmdb-key-1",
        ])
        defer { emulator.terminate() }
        let (prefix, fetch, records) = try await pipelineTopics("mqv", fetchTiers: 1, recordsTiers: 0)
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-validators")).db"
        defer { removeSQLiteFiles(path) }
        let environment = [
            "TMDB_API_KEY": "tmdb-key-1", "MARQUEE_VALIDATOR_CACHE": "store", "MARQUEE_STORE": "sqlite:\(path)",
            "MARQUEE_GROUP": TestEnvironment.uniqueName("fetch"),
        ]
        var outputs: [[String: Int]] = []
        for _ in 1...2 {
            let (worker, _) = try await startFetchWorker(emulator: emulator, prefix: prefix, environment: environment)
            let envelope = try await enqueue(
                .tmdbList(list: .popular, page: 1, language: "ko-KR", region: nil, follow: .none),
                to: fetch
            )
            let reported = try await read(1, from: records.main) { $0.keyString == "job.outcome:\(envelope.id)" }
            let outcome = try JobOutcome.decode(try Record.decode(reported[0].value))
            #expect(outcome.outcome == .done)
            outputs.append(outcome.outputs)
            worker.signal(SIGTERM)
            #expect(await worker.waitForExit() == 0)
        }
        #expect(outputs == [["records": 40], [:]], "the second worker revalidated and emitted nothing")
        let stats = try await emulator.stats()
        #expect(statistic(stats, "routeStatuses", "tmdb.list", "200") == 1)
        #expect(statistic(stats, "routeStatuses", "tmdb.list", "304") == 1)
    }
}

/// Starts `marquee-fetch` against the emulator with the test topics; returns it and its probes' base URL once it
/// logged that it started. `onLine` sees every line it writes to standard error.
func startFetchWorker(
    emulator: UpstreamEmulatorProcess,
    prefix: String,
    environment: [String: String],
    onLine: @escaping @Sendable (String) -> Void = { _ in }
) async throws -> (ChildProcess, String) {
    let started = AsyncStream<String>.makeStream()
    let settings = [
        "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_TOPIC_PREFIX": prefix,
        "MARQUEE_GROUP": TestEnvironment.uniqueName("fetch"), "MARQUEE_METRICS_ADDRESS": "127.0.0.1:0",
        "MARQUEE_SESSION_TIMEOUT": "6s", "MARQUEE_RETRY_DELAYS": "200ms,400ms,800ms", "MARQUEE_SHUTDOWN_TIMEOUT": "5s",
        "MARQUEE_ALLOW_PRIVATE_ADDRESSES": "1", "MARQUEE_IMAGE_HOSTS": "127.0.0.1",
        "TMDB_BASE_URL": emulator.tmdbBaseURL, "TMDB_IMAGE_BASE_URL": emulator.tmdbImageBaseURL,
        "KOFIC_BASE_URL": emulator.koficBaseURL, "KAKAO_BASE_URL": emulator.kakaoBaseURL,
        "OPENLIBRARY_BASE_URL": emulator.openLibraryBaseURL,
        "OPENLIBRARY_COVERS_BASE_URL": emulator.openLibraryCoversBaseURL,
    ].merging(environment) { $1 }
    let worker = try ChildProcess("marquee-fetch", arguments: [], environment: settings, readsStandardError: true) {
        line in
        onLine(String(line))
        // {"…","msg":"fetch worker started",…,"marquee.metrics":"http://127.0.0.1:PORT/metrics"}
        if line.contains("\"fetch worker started\""),
            let url = line.split(separator: "\"").first(where: { $0.hasPrefix("http://") && $0.hasSuffix("/metrics") })
        {
            started.continuation.yield(String(url))
        }
    }
    var startedLines = started.stream.makeAsyncIterator()
    let metricsURL = try #require(await startedLines.next(), "the worker logs where its metrics are")
    return (worker, String(metricsURL.dropLast("/metrics".count)))
}

/// Fetch, records and images topics (2 partitions each) under a new prefix `<stem>-…`.
func pipelineTopics(
    _ stem: String,
    fetchTiers: Int,
    recordsTiers: Int
) async throws -> (String, StageTopics, StageTopics) {
    let prefix = TestEnvironment.uniqueName(stem) + "."
    let fetch = StageTopics(stage: "fetch", prefix: prefix, tiers: fetchTiers)
    let records = StageTopics(stage: "records", prefix: prefix, tiers: recordsTiers)
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    _ = try await StageTopics.createAll(
        [fetch, records, StageTopics(stage: "images", prefix: prefix, tiers: 0)],
        partitions: 2,
        admin: admin
    )
    return (prefix, fetch, records)
}

/// Deletes an SQLite file with its WAL and shared-memory files.
func removeSQLiteFiles(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}
