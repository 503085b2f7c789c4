import MarqueeCore
import MarqueeHTTP
import MarqueeImageStore
@_spi(Testing) import MarqueeImaging
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

@testable import MarqueeStore

#if canImport(Glibc)
import Glibc
#endif

/// A dependency that is down, for however long and in whatever way, pauses the stage: nothing reaches a retry
/// tier or a dead-letter topic, the worker keeps running, and it resumes once the dependency is back
/// (docs/stage.md, "A dependency down for everyone").
@Suite(.timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct DependencyOutageTests {
    /// PostgreSQL stopped for longer than postgres-nio's pool takes to trip its circuit breaker (60 s of failed
    /// connections: its requests then fail with `connectionCreationCircuitBreakerTripped`, which the store once
    /// took for an ordinary failure) and longer than every retry tier: the indexer stays paused throughout.
    @Test func theStoreDownPastThePoolsCircuitBreakerAndEveryRetryTierDeadLettersNothing() async throws {
        let (postgres, location, topics, worker) = try await indexerOnItsOwnPostgres(storeTimeout: 3, first: 100)

        try await postgres.stop()
        try await produce((101...300).map { movieRecord(Int64($0), fetchedAt: 1_000) }, to: topics)
        try await worker.paused.wait("the stage paused for the store") { $0 }
        // The pool's breaker trips after a minute of failed connections; the stage keeps pausing past it.
        try await worker.downReasons.wait("the pool's circuit breaker tripped", timeout: .seconds(150)) {
            $0.contains { $0.contains("circuit breaker tripped") }
        }
        let (status, body) = try await httpGet(worker.base + "/readyz")
        #expect(status == 503)
        #expect(body.contains("the store is down since 20"), "what is down and since when: \(body)")
        let metrics = try await httpGet(worker.base + "/metrics").1
        let down = metrics.split(separator: "\n").first { $0.hasPrefix("marquee_stage_dependency_down_seconds{") }
        #expect((down?.split(separator: " ").last.flatMap { Double($0) } ?? 0) >= 60, "\(down ?? "no gauge")")

        try await postgres.restart()
        let back = ContinuousClock.now
        try await worker.stored.wait("every record stored after the restart", timeout: .seconds(90)) { $0 >= 300 }
        #expect(ContinuousClock.now - back < .seconds(30), "resumed within the pause's bounded backoff")
        #expect(try await httpGet(worker.base + "/readyz").0 == 200)
        try await expectNothingRetriedOrDeadLettered(topics)
        let store = try Store.open(location, logger: .marqueeTest)
        #expect(try await store.engine.read("SELECT COUNT(*) FROM movies", []) == [[.int(300)]])
        await store.close()
        await worker.stop()
        await postgres.shutdown()
    }

    /// PostgreSQL frozen (its connections stay open and nothing answers: a hung server, a network that drops
    /// packets without a reset) for longer than every retry tier: each write ends at the store's deadline, the
    /// indexer pauses throughout, and once the server thaws every record is stored.
    @Test func aFrozenStorePausesTheIndexerUntilItThawsAndDeadLettersNothing() async throws {
        let (postgres, _, topics, worker) = try await indexerOnItsOwnPostgres(storeTimeout: 2, first: 50)

        postgres.freeze()
        try await produce((51...150).map { movieRecord(Int64($0), fetchedAt: 1_000) }, to: topics)
        // Three pauses, each after a write that waited out the 2 s deadline: far past the 200 ms retry tier.
        try await worker.downReasons.wait("three pauses for the frozen store", timeout: .seconds(90)) {
            $0.filter { $0.contains("did not answer") }.count >= 3
        }
        #expect(try await httpGet(worker.base + "/readyz").1.contains("the store is down since 20"))
        postgres.thaw()
        try await worker.stored.wait("every record stored after the thaw", timeout: .seconds(90)) { $0 >= 150 }
        try await expectNothingRetriedOrDeadLettered(topics)
        await worker.stop()
        await postgres.shutdown()
    }

    /// A login PostgreSQL refuses (here a database that does not exist, FATAL 3D000; a rotated password is
    /// 28P01) pauses like an outage, loudly: an error line and a `/readyz` reason naming the setting to fix, and
    /// `marquee_stage_credentials_refused` at 1 for an alert. Once fixed, the stage resumes by itself.
    @Test func aRefusedLoginPausesLoudlyNamesTheSettingAndResumesOnceFixed() async throws {
        let postgres = try await PostgresServerProcess.start()
        let database = "later_" + String(TestEnvironment.uniqueName("db").map { $0 == "-" ? "_" : $0 })
        let location = try StoreLocation(
            parsing: "postgres://\(PostgresServerProcess.user)@127.0.0.1:\(postgres.port)/\(database)"
        )
        let topics = try await indexTopics()
        let errors = Mutex<[String]>([])
        let worker = try await IndexWorker.start(
            topics: topics,
            group: TestEnvironment.uniqueName("index"),
            store: location,
            environment: ["MARQUEE_INDEX_BATCH_SIZE": "20", "MARQUEE_STORE_TIMEOUT": "3"],
            onError: { line in errors.withLock { $0.append(line) } }
        )
        try await produce((1...40).map { movieRecord(Int64($0), fetchedAt: 1_000) }, to: topics)
        try await worker.paused.wait("the stage paused for the refused login") { $0 }
        let logged = errors.withLock { $0 }.first { $0.contains("refuses this worker's credentials") }
        #expect(logged != nil, "an error line: \(errors.withLock { $0 })")
        let (status, body) = try await httpGet(worker.base + "/readyz")
        #expect(status == 503)
        #expect(body.contains("the store refuses this worker's credentials since 20"), "\(body)")
        #expect(body.contains("3D000") && body.contains("MARQUEE_STORE"), "\(body)")
        let metrics = try await httpGet(worker.base + "/metrics").1
        #expect(metrics.contains(#"marquee_stage_credentials_refused{stage="records"} 1"#), "\(metrics)")

        // The operator fixes it (here: the database the location names now exists).
        _ = try await postgres.psql("CREATE DATABASE \(database)")
        try await worker.stored.wait("every record stored once the login works", timeout: .seconds(60)) { $0 >= 40 }
        #expect(try await httpGet(worker.base + "/readyz").0 == 200)
        let after = try await httpGet(worker.base + "/metrics").1
        #expect(after.contains(#"marquee_stage_credentials_refused{stage="records"} 0"#), "\(after)")
        #expect(after.contains(#"marquee_stage_dependency_down_seconds{stage="records"} 0"#), "\(after)")
        try await expectNothingRetriedOrDeadLettered(topics)
        await worker.stop()
        await postgres.shutdown()
    }

    /// The broker frozen while a fetch job runs, for longer than the producer's delivery timeout: the job's
    /// outputs are not acknowledged, which used to stop the stage and the worker (exit 1). Now the job is handed
    /// back uncommitted and the stage pauses; once the broker is back the job runs again and its records arrive.
    @Test func theBrokerFrozenPastTheDeliveryTimeoutPausesTheFetchWorkerWhichKeepsRunning() async throws {
        let (broker, prefix, environment) = try await topicsOnItsOwnBroker(
            "mqbo",
            ["MARQUEE_RETRY_DELAYS": "200ms,400ms,800ms", "MARQUEE_KAFKA_PROPERTIES": nil]
        )
        defer { broker.stop() }
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--movies", "100", "--latency-ms", "3000"])
        defer { emulator.terminate() }
        let downs = Mutex<[String]>([])
        let lines = Mutex<[String]>([])
        let (worker, base) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: [
                "MARQUEE_BROKERS": broker.address, "TMDB_API_KEY": "marquee-emulator",
                "KOFIC_API_KEY": "marquee-emulator", "KAKAO_REST_API_KEY": "marquee-emulator",
                // The broker's acknowledgement is given up on after 4 s (librdkafka's delivery timeout; a
                // request in flight after 2 s), before the consumer's session ends (30 s): the job still owns its
                // partition when its delivery fails. (Past the session the partition is lost and the job, cancelled
                // then, is left uncommitted for the next owner: that way ended the worker too, once.)
                "MARQUEE_KAFKA_PROPERTIES": "delivery.timeout.ms=4000,request.timeout.ms=2000",
                "MARQUEE_SESSION_TIMEOUT": "30s",
            ]
        ) { line in
            if line.contains("the broker is down: pausing the stage") { downs.withLock { $0.append(line) } }
            if !line.contains("\"debug\"") { lines.withLock { $0.append(line) } }
        }
        defer { worker.signal(SIGKILL) }
        let enqueued = try await runBuiltExecutable(
            "marquee",
            ["enqueue", "tmdb-list", "popular", "--pages", "1-2"],
            environment: environment
        )
        try #require(enqueued.status == 0, "\(enqueued.standardError)")
        // Both jobs are in the worker's hands (their requests arrived; the answers take 3 s): freeze the broker.
        let deadline = ContinuousClock.now + .seconds(60)
        while ((try await emulator.stats()["routes"] as? [String: Any])?["tmdb.list"] as? Int ?? 0) < 2 {
            try #require(ContinuousClock.now < deadline, "the worker never called the emulator")
            try await Task.sleep(for: .milliseconds(50))
        }
        broker.freeze()
        // Past the delivery timeout the stage pauses for the broker. The outage then lasts 15 s more (three
        // delivery timeouts), the worker running throughout.
        let frozen = ContinuousClock.now
        var pausedAt: ContinuousClock.Instant?
        while pausedAt.map({ ContinuousClock.now - $0 < .seconds(15) }) ?? true {
            try #require(
                ContinuousClock.now - frozen < .seconds(90),
                "the stage never paused for the broker: \(lines.withLock { $0.suffix(10) })"
            )
            try #require(
                worker.exitStatus == nil,
                "the worker exited while the broker was down: \(lines.withLock { $0.suffix(5) })"
            )
            if pausedAt == nil, !downs.withLock({ $0.isEmpty }) { pausedAt = .now }
            try await Task.sleep(for: .milliseconds(200))  // polls the worker's state while the outage lasts
        }
        broker.thaw()

        // The jobs run again, and succeed.
        let admin = try KafkaAdmin(configuration: KafkaConfiguration(brokers: broker.address), logger: .marqueeTest)
        let recovered = ContinuousClock.now
        let succeeded = #"marquee_stage_jobs_total{stage="fetch",kind="tmdb.list",outcome="succeeded"} 2"#
        while !(try await httpGet(base + "/metrics").1.contains(succeeded)) {
            try #require(
                ContinuousClock.now - recovered < .seconds(90),
                "the jobs did not succeed after the outage: \(lines.withLock { $0.suffix(5) })"
            )
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(worker.exitStatus == nil, "the worker kept running")
        for topic in ["\(prefix)fetch.retry.1", "\(prefix)fetch.dlq"] {
            let held = try await admin.watermarks(topic: topic).values.map { $0.end - $0.start }.reduce(0, +)
            #expect(held == 0, "\(topic) holds \(held) messages")
        }
        var ready = try await httpGet(base + "/readyz").0
        let settle = ContinuousClock.now
        while ready != 200, ContinuousClock.now - settle < .seconds(30) {
            try await Task.sleep(for: .milliseconds(200))
            ready = try await httpGet(base + "/readyz").0
        }
        #expect(ready == 200)
    }
}

extension DependencyOutageTests {
    /// The image store unreachable (an S3 endpoint nobody listens on), then up: the image worker pauses and
    /// stores every image once it is there. Then a worker whose keys S3 refuses (403) pauses loudly, naming the
    /// settings to fix, and the images wait for a worker with the right keys. Nothing is retried or
    /// dead-lettered throughout.
    @Test func theImageStoreUnreachableOrRefusingTheKeysPausesAndNothingIsDeadLettered() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "4", "--movies", "10"])
        defer { emulator.terminate() }
        let poster = try SyntheticImage.render(
            .init(width: 300, height: 450, pattern: .random(seed: 5), encoding: .jpeg(quality: 85))
        )
        for index in 0..<3 { try await emulator.putFile("p\(index).jpg", poster, contentType: "image/jpeg") }
        let (prefix, images, records) = try await imageProcessTopics("mqis")
        let port = try MotoServerProcess.freePort()
        let location = "s3://marquee-images/posters?endpoint=http://127.0.0.1:\(port)&region=us-east-1"
        func startWorker(keys: (String, String)) async throws -> (ChildProcess, String, Observed<[String]>) {
            let lines = Observed<[String]>([])
            let started = AsyncStream<String>.makeStream()
            let worker = try ChildProcess(
                "marquee-images",
                arguments: [],
                environment: imageWorkerEnvironment(prefix: prefix, folder: "/nonexistent").merging([
                    "MARQUEE_GROUP": "\(prefix)images", "MARQUEE_RETRY_DELAYS": "200ms",
                    "MARQUEE_ALLOW_PRIVATE_ADDRESSES": "1", "MARQUEE_IMAGE_HOSTS": "127.0.0.1",
                    "MARQUEE_IMAGE_STORE": location, "AWS_ACCESS_KEY_ID": keys.0, "AWS_SECRET_ACCESS_KEY": keys.1,
                ]) { $1 },
                readsStandardError: true
            ) { line in
                lines.update { $0.append(String(line)) }
                if line.contains("\"images worker started\""),
                    let url = line.split(separator: "\"").first(where: { $0.hasSuffix("/metrics") })
                {
                    started.continuation.yield(String(url.dropLast("/metrics".count)))
                }
            }
            var iterator = started.stream.makeAsyncIterator()
            return (worker, try #require(await iterator.next(), "the worker starts"), lines)
        }
        func waitForPause(_ lines: Observed<[String]>, saying text: String) async throws {
            try await lines.wait("a pause saying '\(text)'") { $0.contains { $0.contains(text) } }
        }

        // Nobody listens on the endpoint yet.
        let (first, base, lines) = try await startWorker(keys: ("any", "any"))
        for index in 0..<3 {
            try await enqueue(
                ImageJob(url: emulator.fileURL("p\(index).jpg"), owner: "test:p\(index)", role: .poster),
                to: images
            )
        }
        try await waitForPause(lines, saying: "the image store is down: pausing the stage")
        let (status, body) = try await httpGet(base + "/readyz")
        #expect(status == 503 && body.contains("the image store is down since 20"), "\(status) \(body)")

        // S3 comes up there (no authentication yet), with its bucket: every image is stored.
        let moto = try await MotoServerProcess.start(port: port)
        defer { moto.terminate() }
        let fetcher = try HTTPFetcher(configuration: HTTPFetcherConfiguration(), logger: .marqueeTest)
        let store = try #require(
            try ImageStores.make(
                location: location,
                environment: ["AWS_ACCESS_KEY_ID": "any", "AWS_SECRET_ACCESS_KEY": "any"],
                fetcher: fetcher,
                logger: .marqueeTest
            ) as? S3ImageStore
        )
        try await store.createBucket()
        await fetcher.shutdown()
        // At least once: a job whose store call failed at the cut may have been stored twice.
        try await readKeys(["test:p0:poster", "test:p1:poster", "test:p2:poster"], from: records.main)

        first.signal(SIGTERM)
        #expect(await first.waitForExit() == 0)

        // S3 now checks signatures: a worker with keys it does not know is refused (403) and pauses, loudly.
        let keys = try await moto.createUser("marquee-images")
        try await moto.enableAuthentication()
        let (refused, refusedBase, refusedLines) = try await startWorker(keys: ("AKIAWRONGWRONGWRONG", "wrong"))
        try await emulator.putFile("p3.jpg", poster, contentType: "image/jpeg")
        try await enqueue(ImageJob(url: emulator.fileURL("p3.jpg"), owner: "test:p3", role: .poster), to: images)
        try await waitForPause(refusedLines, saying: "the image store refuses this worker's credentials")
        let readiness = try await httpGet(refusedBase + "/readyz").1
        #expect(readiness.contains("AWS_ACCESS_KEY_ID"), "\(readiness)")
        let metrics = try await httpGet(refusedBase + "/metrics").1
        #expect(metrics.contains(#"marquee_stage_credentials_refused{stage="images"} 1"#), "\(metrics)")
        refused.signal(SIGTERM)
        #expect(await refused.waitForExit() == 0)

        // The right keys: the image that waited is stored.
        let (fixed, _, _) = try await startWorker(keys: (keys.accessKeyID, keys.secretAccessKey))
        try await readKeys(["test:p3:poster"], from: records.main)
        fixed.signal(SIGTERM)
        #expect(await fixed.waitForExit() == 0)
        try await expectNothingRetriedOrDeadLettered(images)
    }
}

extension DependencyOutageTests {
    /// An SQLite store another process holds locked for writing (a second indexer's long transaction, a backup, an
    /// `sqlite3` shell left in a transaction): the indexer's writes fail busy after SQLite's 10 s busy timeout,
    /// and it pauses for the store instead of sending records to the retry tiers; once the lock is gone it
    /// stores them all.
    @Test func anSQLiteStoreLockedByAnotherWriterPausesTheIndexerAndDeadLettersNothing() async throws {
        let path = "/tmp/\(TestEnvironment.uniqueName("busy")).db"
        defer { removeSQLiteFiles(path) }
        let location = try StoreLocation(parsing: "sqlite:\(path)")
        let topics = try await indexTopics()
        let worker = try await IndexWorker.start(
            topics: topics,
            group: TestEnvironment.uniqueName("index"),
            store: location,
            environment: ["MARQUEE_INDEX_BATCH_SIZE": "20"]
        )
        try await produce((1...20).map { movieRecord(Int64($0), fetchedAt: 1_000) }, to: topics)
        try await worker.stored.wait("the first records stored") { $0 >= 20 }

        // Another writer takes the database's write lock (BEGIN IMMEDIATE) and keeps it.
        let other = try Store.open(location, logger: .marqueeTest)
        let released = Observed(false)
        let holding = Observed(false)
        let writer = Task {
            try await other.engine.transaction { session in
                try await session.execute("UPDATE movies SET fetched_at = fetched_at WHERE movie_id = 1", [])
                holding.update { $0 = true }
                try await released.wait("the lock released", timeout: .seconds(240)) { $0 }
            }
        }
        try await holding.wait("the other writer holds the lock") { $0 }
        try await produce((21...60).map { movieRecord(Int64($0), fetchedAt: 1_000) }, to: topics)
        try await worker.downReasons.wait("the indexer paused for the locked store", timeout: .seconds(60)) {
            $0.contains { $0.contains("locked") || $0.contains("busy") }
        }
        #expect(try await httpGet(worker.base + "/readyz").1.contains("the store is down since 20"))
        released.update { $0 = true }
        try await writer.value
        await other.close()

        try await worker.stored.wait("every record stored once the lock is gone", timeout: .seconds(60)) { $0 >= 60 }
        try await expectNothingRetriedOrDeadLettered(topics)
        await worker.stop()
    }

    /// A replay of 1,000 dead letters whose broker freezes for longer than the delivery timeout once a third of
    /// them went out: the replay waits the outage out, sends again what the broker did not acknowledge, says so,
    /// and ends with every letter replayed (at least once, each copy the letter's job byte for byte).
    @Test func aReplayCutOffFromTheBrokerHalfwayReplaysEveryLetter() async throws {
        let (broker, prefix, environment) = try await topicsOnItsOwnBroker(
            "mqrp",
            ["MARQUEE_KAFKA_PROPERTIES": "batch.num.messages=1"]
        )
        defer { broker.stop() }
        let fetch = StageTopics(stage: "fetch", prefix: prefix, tiers: 3)
        let kafka = KafkaConfiguration(brokers: broker.address)
        var exact = KafkaProducerConfiguration(kafka: kafka)
        exact.batchMessages = 1
        var letters: [String: [UInt8]] = [:]  // job id → payload
        try await withProducer(exact) { producer in
            try await producer.deliver(
                (1...1000).map { number in
                    let job = FetchJob.tmdbMovie(id: Int64(number), language: "en-US", follow: .none)
                    let root = JobID.make()
                    let envelope = Envelope(
                        id: root,
                        root: root,
                        parent: nil,
                        attempt: 4,
                        origin: "\(fetch.main)/0/\(number)",
                        error: "HTTP 503 Service Unavailable",
                        errorKind: .transient
                    )
                    letters[root.rawValue] = job.encoded()
                    return KafkaProducerMessage(
                        topic: fetch.dlq,
                        key: Array(job.dedupeKey.utf8),
                        value: job.encoded(),
                        headers: envelope.kafkaHeaders
                    )
                }
            )
        }

        let replay = Task {
            try await runBuiltExecutable(
                "marquee",
                ["dlq", "replay", "--all", "--rate", "100"],
                environment: environment
            )
        }
        // A third of the replays are on the main topic: the broker freezes for 40 s (the delivery timeout is 30 s).
        let admin = try KafkaAdmin(configuration: kafka, logger: .marqueeTest)
        let deadline = ContinuousClock.now + .seconds(60)
        while try await admin.watermarks(topic: fetch.main).values.map(\.end).reduce(0, +) < 330 {
            try #require(ContinuousClock.now < deadline, "the replay never got going")
            try await Task.sleep(for: .milliseconds(50))
        }
        broker.freeze()
        try await Task.sleep(for: .seconds(40))  // the outage itself
        broker.thaw()
        let run = try await replay.value
        #expect(run.status == 0, "every letter replayed: \(run.standardError.suffix(2000))")
        #expect(
            run.standardError.contains("the broker did not acknowledge"),
            "it said so: \(run.standardError.suffix(2000))"
        )
        #expect(run.standardError.contains("sending them again"), "\(run.standardError.suffix(2000))")

        // Every letter is on the main topic at least once, each copy the letter's payload.
        let ends = try await admin.watermarks(topic: fetch.main)
        let reader = try KafkaReader(configuration: kafka, logger: .marqueeTest)
        let records = try await reader.read(
            ends.mapValues { $0.start..<$0.end },
            timeout: .seconds(30)
        )
        var replayed: [String: Int] = [:]
        for record in records {
            let id = try #require(record.headers.string(Envelope.Header.id))
            #expect(record.value == letters[id], "the replay of \(id) is its letter's payload")
            #expect(record.headers.string(Envelope.Header.replayedFrom)?.hasPrefix(fetch.dlq) == true)
            replayed[id, default: 0] += 1
        }
        #expect(Set(replayed.keys) == Set(letters.keys), "\(letters.count - replayed.count) letters not replayed")
    }
}

/// A broker of the test's own (to freeze) with every stage's topics under a new prefix `<stem>-…`, 2 partitions
/// each; returns it, the prefix and the environment that points the executables at them (plus `more`). The caller
/// stops the broker.
func topicsOnItsOwnBroker(
    _ stem: String,
    _ more: [String: String?]
) async throws -> (BrokerProcess, String, [String: String?]) {
    let broker = try await BrokerProcess.start()
    let prefix = TestEnvironment.uniqueName(stem) + "."
    let environment: [String: String?] = [
        "MARQUEE_BROKERS": broker.address, "MARQUEE_TOPIC_PREFIX": prefix, "MARQUEE_TOPIC_PARTITIONS": "2",
        "MARQUEE_CONFIG": nil,
    ].merging(more) { $1 }
    let created = try await runBuiltExecutable("marquee", ["topics", "create"], environment: environment)
    if created.status != 0 { broker.stop() }
    try #require(created.status == 0, "marquee topics create: \(created.standardError)")
    return (broker, prefix, environment)
}

/// A PostgreSQL server of the test's own, the records stage's topics and a `marquee-index` on them (batches of 50,
/// the store's deadline `storeTimeout` seconds) that has stored the movies `1...first`: a store to take down.
func indexerOnItsOwnPostgres(
    storeTimeout: Int,
    first: Int
) async throws -> (PostgresServerProcess, StoreLocation, StageTopics, IndexWorker) {
    let postgres = try await PostgresServerProcess.start()
    let location = try StoreLocation(parsing: postgres.url)
    let topics = try await indexTopics()
    let worker = try await IndexWorker.start(
        topics: topics,
        group: TestEnvironment.uniqueName("index"),
        store: location,
        environment: ["MARQUEE_INDEX_BATCH_SIZE": "50", "MARQUEE_STORE_TIMEOUT": "\(storeTimeout)"]
    )
    try await produce((1...first).map { movieRecord(Int64($0), fetchedAt: 1_000) }, to: topics)
    try await worker.stored.wait("the first records stored") { $0 >= first }
    return (postgres, location, topics, worker)
}

/// Reads a records topic in a fresh group until every key of `keys` was seen.
private func readKeys(_ keys: Set<String>, from topic: String) async throws {
    try await withConsumer(TestEnvironment.consumer(group: TestEnvironment.uniqueName("read"), topics: [topic])) {
        consumer in
        var missing = keys
        for try await message in consumer.messages where isEntityRecord(message) {
            missing.remove(try Record.decode(message.value).key)
            if missing.isEmpty { break }
        }
    }
}

/// Nothing of the stage went to its retry tiers or its dead-letter topic.
private func expectNothingRetriedOrDeadLettered(_ topics: StageTopics) async throws {
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    for topic in topics.all where topic != topics.main {
        let marks = (try? await admin.watermarks(topic: topic)) ?? [:]
        let held = marks.values.map { $0.end - $0.start }.reduce(0, +)
        #expect(held == 0, "\(topic) holds \(held) messages")
    }
}
