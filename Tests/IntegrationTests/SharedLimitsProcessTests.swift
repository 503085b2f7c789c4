import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

import struct Foundation.Data
import class Foundation.JSONSerialization
import class Foundation.NSNull

#if canImport(Glibc)
import Glibc
#endif

/// Several `marquee-fetch` processes of one consumer group hold the upstreams' limits together through the store
/// (docs/limits.md): one request rate for the pipeline, KOFIC's budget spent once across workers and restarts,
/// and a source paused for every worker when its key is refused or it is down, while the other sources go on.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct SharedLimitsProcessTests {
    static let tmdbKey = "tmdb-key-shared"
    static let koficKey = "kofic-key-shared"
    /// Partitions of each topic: six split evenly over three workers.
    static let partitions = 6

    enum SharedStore: String, CaseIterable, Sendable { case sqlite, postgres }

    static let tmdbRequests = #"marquee_source_requests_total{source="tmdb"}"#
    static let tmdbPaused = #"marquee_source_paused{source="tmdb"}"#

    /// Three workers against an upstream that allows 40 requests a second per key, configured with the same 40
    /// for the pipeline: the upstream never answers 429, no second holds more than 42 requests (the issue's 5 %),
    /// the pipeline still runs close to the limit, and the requests came from more than one worker.
    @Test(arguments: SharedStore.allCases)
    func threeWorkersHoldOneRateLimit(store: SharedStore) async throws {
        let limit = 40
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "21", "--movies", "500", "--rate-limit", "\(limit)", "--tmdb-key", Self.tmdbKey,
        ])
        defer { emulator.terminate() }
        let ids = try await movieIDs(emulator, count: 300)
        try await withSharedStore(store) { location in
            let (prefix, fetch, records) = try await limitsTopics("mqlr")
            let environment = [
                "TMDB_API_KEY": Self.tmdbKey, "MARQUEE_FETCH_RATE_LIMITS": "tmdb=\(limit)", "MARQUEE_STORE": location,
            ]
            try await withFetchWorkers(3, emulator: emulator, prefix: prefix, environment: environment) { workers in
                try await workers.waitUntilBalanced(partitions: fetch.consumed.count * Self.partitions)
                try await withOutcomes(of: records.main) { outcomes in
                    let jobs = try await enqueueAll(details(ids), to: fetch)
                    try await outcomes.wait("every detail is done", timeout: .seconds(90)) {
                        $0.done.isSuperset(of: jobs)
                    }
                    #expect(outcomes.snapshot.deadLettered.isEmpty, "\(outcomes.snapshot)")
                }
                let stats = try await emulator.stats()
                #expect(statistic(stats, "rateLimited", "tmdb") == 0, "the upstream's limit held: \(workers.notable())")
                let busiest = statistic(stats, "maxRequestsPerSecondByUpstream", "tmdb")
                #expect(
                    Double(busiest) <= 1.05 * Double(limit),
                    "the busiest second held \(busiest) requests (limit \(limit)): \(workers.notable())"
                )
                // The pipeline used the limit rather than keeping under it by idling.
                let rate = achievedRate(stats, "tmdb")
                #expect(rate >= 0.8 * Double(limit), "the pipeline ran at \(rate) requests a second")
                let requests = try await workers.metrics(Self.tmdbRequests)
                #expect(requests.count { $0 > 0 } >= 2, "requests per worker: \(requests)")
                #expect(requests.reduce(0, +) >= 300, "requests per worker: \(requests)")
            }
        }
    }

    /// A worker killed in the middle of a run takes at most its reserved slots with it: the two others take every
    /// later slot, so once its partitions were handed over the pipeline runs at the whole limit again, every job
    /// finishes, and the upstream still answers no 429.
    @Test func aKilledWorkersPartIsUsedByTheOthers() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "22", "--movies", "500", "--rate-limit", "20", "--tmdb-key", Self.tmdbKey,
        ])
        defer { emulator.terminate() }
        let ids = try await movieIDs(emulator, count: 400)
        try await withSharedStore(.sqlite) { location in
            let (prefix, fetch, records) = try await limitsTopics("mqlk")
            let environment = [
                "TMDB_API_KEY": Self.tmdbKey, "MARQUEE_FETCH_RATE_LIMITS": "tmdb=20", "MARQUEE_STORE": location,
                "MARQUEE_SESSION_TIMEOUT": "6s",
            ]
            let partitions = fetch.consumed.count * Self.partitions
            try await withFetchWorkers(3, emulator: emulator, prefix: prefix, environment: environment) { workers in
                try await workers.waitUntilBalanced(partitions: partitions)
                try await withOutcomes(of: records.main) { outcomes in
                    let jobs = try await enqueueAll(details(ids), to: fetch)
                    try await outcomes.wait("an eighth of the jobs is done", timeout: .seconds(60)) {
                        $0.done.count >= 50
                    }
                    let requests = try await workers.metrics(Self.tmdbRequests)
                    let victim = workers.running[
                        try #require(requests.firstIndex { $0 > 0 }, "a worker that is fetching")
                    ]
                    #expect(await workers.stop(victim, signal: SIGKILL) == SIGKILL)

                    // After the session timeout the group rebalances and the two others hold every partition; over
                    // the next four seconds (or up to the end, if shorter) they run at the whole limit. The
                    // emulator's count of detail requests, every half second.
                    try await workers.waitUntilBalanced(partitions: partitions)
                    let clock = ContinuousClock()
                    let balancedAt = clock.now
                    var samples: [(at: Duration, requests: Int)] = []
                    while !outcomes.snapshot.done.isSuperset(of: jobs), clock.now - balancedAt <= .seconds(4) {
                        let stats = try await emulator.stats()
                        samples.append((clock.now - balancedAt, statistic(stats, "routes", "tmdb.movie")))
                        try await Task.sleep(for: .milliseconds(500))  // a poll's interval, not synchronisation
                    }
                    let series = samples.map { "\(seconds($0.at))s: \($0.requests)" }.joined(separator: ", ")
                    let first = try #require(samples.first, "samples after the handover")
                    let last = try #require(samples.last)
                    let rate = Double(last.requests - first.requests) / seconds(last.at - first.at)
                    #expect(
                        samples.count >= 4 && rate >= 16,
                        "the two workers' rate after the handover: \(rate); \(series)"
                    )

                    try await outcomes.wait("every job is done after the kill", timeout: .seconds(120)) {
                        $0.done.isSuperset(of: jobs)
                    }
                    #expect(outcomes.snapshot.deadLettered.isEmpty, "\(outcomes.snapshot)")
                }
                let stats = try await emulator.stats()
                #expect(statistic(stats, "rateLimited", "tmdb") == 0, "no 429: \(workers.notable())")
            }
        }
    }

    /// Two workers share KOFIC's daily budget of 5 through the store: four jobs, a worker restarted, four more —
    /// the upstream sees exactly five calls, and the other three jobs are held (no attempt spent, nothing in the
    /// dead-letter topic), again each time they come back.
    @Test func theKOFICBudgetIsSpentOnceAcrossWorkersAndRestarts() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "23", "--kofic-key", Self.koficKey,
        ])
        defer { emulator.terminate() }
        try await withSharedStore(.sqlite) { location in
            let (prefix, fetch, records) = try await limitsTopics("mqlb")
            let environment = ["KOFIC_API_KEY": Self.koficKey, "KOFIC_DAILY_BUDGET": "5", "MARQUEE_STORE": location]
            try await withFetchWorkers(2, emulator: emulator, prefix: prefix, environment: environment) { workers in
                let partitions = fetch.consumed.count * Self.partitions
                try await workers.waitUntilBalanced(partitions: partitions)
                try await withOutcomes(of: records.main) { outcomes in
                    let before = try await enqueueAll(boxOffices(month: 1, days: 1...4), to: fetch)
                    try await outcomes.wait("the first four are done") { $0.done.isSuperset(of: before) }

                    let restarted = try #require(workers.running.first)
                    #expect(await workers.stop(restarted, signal: SIGTERM) == 0)
                    try await workers.start()
                    try await workers.waitUntilBalanced(partitions: partitions)

                    let after = try await enqueueAll(boxOffices(month: 1, days: 5...8), to: fetch)
                    // One more call is left; each of the other three is held, and held again when it comes back.
                    try await outcomes.wait("one done and three held twice") { log in
                        let held = after.filter { !log.done.contains($0) }
                        return log.done.intersection(after).count == 1 && held.count == 3
                            && held.allSatisfy { log.holds[$0, default: 0] >= 2 }
                    }
                    let log = outcomes.snapshot
                    #expect(log.done.count == 5)
                    #expect(log.deadLettered.isEmpty, "\(log)")
                    #expect(log.retried.isEmpty, "no attempt was spent: \(log)")
                    let reasons = log.holdReasons
                    #expect(!reasons.isEmpty, "\(log)")
                    #expect(
                        reasons.allSatisfy { $0.hasPrefix("held: ") && $0.contains("daily budget of 5") },
                        "\(reasons)"
                    )
                }
                let stats = try await emulator.stats()
                #expect(
                    statistic(stats, "routes", "kofic.daily") == 5,
                    "the upstream saw the budget: \(workers.notable())"
                )
                let heldSample = #"marquee_stage_jobs_total{stage="fetch",kind="kofic.boxoffice.daily",outcome="held"}"#
                let held = try await workers.metrics(heldSample)
                #expect(held.reduce(0, +) >= 3, "held jobs per worker: \(held)")
            }
        }
    }

    /// One worker's refused TMDB key pauses TMDB for all three within a few seconds; KOFIC jobs go on meanwhile.
    /// Once the upstream accepts the key, a probe resumes TMDB everywhere and every job completes, none dead-lettered
    /// and none with an attempt spent.
    ///
    /// Every TMDB job is enqueued on one partition, so one worker meets the refusal; the two others hear of it from
    /// the store before any TMDB job reaches them (held jobs come back after the 3 s probe interval, their
    /// heartbeat reads the store every second).
    @Test func aBadKeySeenByOneWorkerPausesTMDBEverywhere() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "24", "--movies", "100", "--tmdb-key", "right", "--kofic-key", Self.koficKey,
        ])
        defer { emulator.terminate() }
        let ids = try await movieIDs(emulator, key: "right", count: 20)
        try await withSharedStore(.sqlite) { location in
            let (prefix, fetch, records) = try await limitsTopics("mqlp")
            let environment = [
                "TMDB_API_KEY": "wrong", "KOFIC_API_KEY": Self.koficKey, "MARQUEE_STORE": location,
                "MARQUEE_SOURCE_PROBE_INTERVAL": "3s", "MARQUEE_RETRY_DELAYS": "1s,2s,4s",
            ]
            try await withFetchWorkers(3, emulator: emulator, prefix: prefix, environment: environment) { workers in
                try await workers.waitUntilBalanced(partitions: fetch.consumed.count * Self.partitions)
                try await withOutcomes(of: records.main) { outcomes in
                    let tmdb = try await enqueueAll(details(ids), to: fetch, partition: 0)
                    let kofic = try await enqueueAll(boxOffices(month: 2, days: 1...10), to: fetch)
                    try await outcomes.wait("a TMDB job is held") { log in tmdb.contains { log.holds[$0] != nil } }
                    try await poll("every worker reports TMDB paused", timeout: .seconds(5)) {
                        try await workers.metrics(Self.tmdbPaused).allSatisfy { $0 == 1 }
                    }
                    try await poll("the two other workers hear of it from the store", timeout: .seconds(5)) {
                        workers.running.count { workers.logged($0, "TMDB paused by another worker") } == 2
                    }
                    try await outcomes.wait("every KOFIC job is done while TMDB is paused") {
                        $0.done.isSuperset(of: kofic)
                    }
                    #expect(outcomes.snapshot.done.isDisjoint(with: tmdb), "no TMDB job ran with the refused key")

                    try await emulator.control(["tmdbKeys": ["right", "wrong"]])
                    try await outcomes.wait("every TMDB job is done") { $0.done.isSuperset(of: tmdb) }
                    let log = outcomes.snapshot
                    #expect(log.deadLettered.isEmpty, "\(log)")
                    #expect(log.retried.isEmpty, "no attempt was spent: \(log)")
                    #expect(
                        tmdb.allSatisfy { log.doneAttempt[$0] == 1 },
                        "every TMDB job succeeded on its first attempt: \(log)"
                    )
                    try await poll("every worker reports TMDB running again", timeout: .seconds(5)) {
                        try await workers.metrics(Self.tmdbPaused).allSatisfy { $0 == 0 }
                    }
                }
            }
        }
    }

    /// TMDB down for a while (every request answered 503): the worker that meets the failures pauses it for all
    /// three, KOFIC jobs finish meanwhile, no TMDB job reaches the dead-letter topic, and once the outage ends every
    /// TMDB job completes. As above, the TMDB jobs start on one worker's partition and the others learn from the
    /// store.
    @Test func aTMDBOutageHoldsItsJobsUntilItEnds() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "25", "--movies", "100", "--tmdb-key", Self.tmdbKey, "--kofic-key", Self.koficKey,
        ])
        defer { emulator.terminate() }
        let ids = try await movieIDs(emulator, count: 30)
        try await withSharedStore(.sqlite) { location in
            let (prefix, fetch, records) = try await limitsTopics("mqlo")
            let environment = [
                "TMDB_API_KEY": Self.tmdbKey, "KOFIC_API_KEY": Self.koficKey, "MARQUEE_STORE": location,
                "MARQUEE_SOURCE_PROBE_INTERVAL": "3s", "MARQUEE_RETRY_DELAYS": "1s,2s,4s",
            ]
            try await withFetchWorkers(3, emulator: emulator, prefix: prefix, environment: environment) { workers in
                try await workers.waitUntilBalanced(partitions: fetch.consumed.count * Self.partitions)
                try await emulator.control(["outage": ["upstream": "tmdb", "seconds": 60] as [String: Any]])
                try await withOutcomes(of: records.main) { outcomes in
                    let tmdb = try await enqueueAll(details(ids), to: fetch, partition: 0)
                    let kofic = try await enqueueAll(boxOffices(month: 3, days: 1...10), to: fetch)
                    try await poll("every worker reports TMDB paused", timeout: .seconds(30)) {
                        try await workers.metrics(Self.tmdbPaused).allSatisfy { $0 == 1 }
                    }
                    try await poll("the two other workers hear of it from the store", timeout: .seconds(5)) {
                        workers.running.count { workers.logged($0, "TMDB paused by another worker") } == 2
                    }
                    try await outcomes.wait("every KOFIC job is done during the outage") {
                        $0.done.isSuperset(of: kofic)
                    }
                    let during = outcomes.snapshot
                    #expect(during.done.isDisjoint(with: tmdb), "no TMDB job succeeded during the outage")
                    #expect(tmdb.contains { during.holds[$0] != nil }, "TMDB jobs are held: \(during)")

                    try await emulator.control(["outage": NSNull()])
                    try await outcomes.wait("every TMDB job is done after the outage") { $0.done.isSuperset(of: tmdb) }
                    #expect(outcomes.snapshot.deadLettered.isEmpty, "\(outcomes.snapshot): \(workers.notable())")
                }
                let stats = try await emulator.stats()
                #expect(statistic(stats, "outage", "tmdb") > 0, "the outage answered TMDB requests")
            }
        }
    }
}

// MARK: - Helpers

/// Fetch, records and images topics with ``SharedLimitsProcessTests/partitions`` partitions each (three retry tiers
/// for fetch) under a new prefix `<stem>-…`.
private func limitsTopics(_ stem: String) async throws -> (String, StageTopics, StageTopics) {
    let prefix = TestEnvironment.uniqueName(stem) + "."
    let fetch = StageTopics(stage: "fetch", prefix: prefix, tiers: 3)
    let records = StageTopics(stage: "records", prefix: prefix, tiers: 0)
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    _ = try await StageTopics.createAll(
        [fetch, records, StageTopics(stage: "images", prefix: prefix, tiers: 0)],
        partitions: SharedLimitsProcessTests.partitions,
        admin: admin
    )
    return (prefix, fetch, records)
}

/// Runs `body` with a fresh store's `MARQUEE_STORE` value: an SQLite file, or a throw-away PostgreSQL server.
private func withSharedStore<T>(
    _ kind: SharedLimitsProcessTests.SharedStore,
    _ body: (String) async throws -> T
) async throws -> T {
    switch kind {
    case .sqlite:
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-limits")).db"
        defer { removeSQLiteFiles(path) }
        return try await body("sqlite:\(path)")
    case .postgres:
        let server = try await PostgresServerProcess.start()
        do {
            let result = try await body(server.url)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }
}

/// `count` TMDB ids from the emulator's popular lists (read with `key`); then the emulator's rate-limit buckets and
/// counters are reset, so what the test measures is the workers' alone.
private func movieIDs(
    _ emulator: UpstreamEmulatorProcess,
    key: String = SharedLimitsProcessTests.tmdbKey,
    count: Int
) async throws -> [Int64] {
    var ids: [Int64] = []
    for page in 1...500 where ids.count < count {
        let (status, body) = try await httpGet("\(emulator.tmdbBaseURL)/movie/popular?api_key=\(key)&page=\(page)")
        try #require(status == 200, "list page \(page): \(status) \(body.prefix(200))")
        let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        let results = try #require(object?["results"] as? [[String: Any]], "list page \(page)")
        try #require(!results.isEmpty, "the catalogue has \(ids.count) movies, not \(count)")
        ids += results.compactMap { ($0["id"] as? Int).map(Int64.init) }
    }
    try await emulator.control(["resetRateLimits": true])
    try await emulator.resetStats()
    return Array(ids.prefix(count))
}

/// TMDB detail jobs of `ids`.
private func details(_ ids: [Int64]) -> [FetchJob] {
    ids.map { .tmdbMovie(id: $0, language: "en-US", follow: .none) }
}

/// KOFIC daily box-office jobs for `days` of a month of 2024.
private func boxOffices(month: Int, days: ClosedRange<Int>) -> [FetchJob] {
    func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return days.map { .koficDailyBoxOffice(date: "2024\(twoDigits(month))\(twoDigits($0))", follow: .none) }
}

/// Enqueues root jobs on the stage's main topic (on `partition`, or where their keys fall) through one producer;
/// returns their ids.
private func enqueueAll(_ jobs: [FetchJob], to topics: StageTopics, partition: Int32? = nil) async throws -> Set<JobID>
{
    let envelopes = jobs.map { _ in Envelope.root() }
    let messages = zip(jobs, envelopes).map { job, envelope in
        KafkaProducerMessage(
            topic: topics.main,
            partition: partition,
            key: Array(job.dedupeKey.utf8),
            value: job.encoded(),
            headers: envelope.kafkaHeaders
        )
    }
    _ = try await withProducer { producer in try await producer.send(messages) }
    return Set(envelopes.map(\.id))
}

/// An upstream's achieved request rate from the emulator's `timing`: `(requests - 1) / (last - first)`.
private func achievedRate(_ stats: [String: Any], _ upstream: String) -> Double {
    guard let timing = (stats["timing"] as? [String: Any])?[upstream] as? [String: Any],
        let requests = timing["requests"] as? Int, let first = timing["first"] as? Double,
        let last = timing["last"] as? Double,
        requests > 1, last > first
    else { return 0 }
    return Double(requests - 1) / (last - first)
}

/// A duration in seconds.
private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Polls a status every 200 ms until `condition` holds; after `timeout` records an issue and throws.
private func poll(_ what: String, timeout: Duration, until condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out after \(timeout) waiting until \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(200))  // the poll's interval, not synchronisation
    }
}

/// The `job.outcome` records of a run: which jobs were done (and at which attempt), held, retried or dead-lettered.
struct OutcomeLog: Sendable, CustomStringConvertible {
    var done: Set<JobID> = []
    /// The attempt each done job succeeded at.
    var doneAttempt: [JobID: Int] = [:]
    /// How often each job was held (a `retried` outcome whose error starts with `held:`).
    var holds: [JobID: Int] = [:]
    /// The distinct hold errors.
    var holdReasons: Set<String> = []
    /// Jobs retried for a failure of their own (not held), with the error.
    var retried: [JobID: String] = [:]
    /// Dead-lettered jobs, with the error.
    var deadLettered: [JobID: String] = [:]
    /// The jobs the done ones queued.
    var spawned: Set<JobID> = []

    mutating func add(_ outcome: JobOutcome) {
        switch outcome.outcome {
        case .done:
            self.done.insert(outcome.jobID)
            self.doneAttempt[outcome.jobID] = outcome.attempt
            self.spawned.formUnion(outcome.spawned)
        case .retried(_, let error) where error.hasPrefix("held:"):
            self.holds[outcome.jobID, default: 0] += 1
            self.holdReasons.insert(error)
        case .retried(_, let error):
            self.retried[outcome.jobID] = error
        case .deadLettered(_, let error):
            self.deadLettered[outcome.jobID] = error
        }
    }

    var description: String {
        "done: \(self.done.count), held: \(self.holds.count) jobs \(self.holds.values.reduce(0, +)) times, "
            + "retried: \(Array(self.retried.values.prefix(3))), dead-lettered: \(Array(self.deadLettered.values.prefix(3))), "
            + "hold reasons: \(Array(self.holdReasons.prefix(3)))"
    }
}

/// Reads the `job.outcome` records of `topic` into a log while `body` runs.
func withOutcomes<T>(of topic: String, _ body: (Observed<OutcomeLog>) async throws -> T) async throws -> T {
    let log = Observed(OutcomeLog())
    let consumer = try KafkaConsumer(
        configuration: TestEnvironment.consumer(group: TestEnvironment.uniqueName("outcomes"), topics: [topic]),
        logger: .marqueeTest
    )
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            for try await message in consumer.messages
            where PayloadKind.peek(message.value) == Record.Kind.jobOutcome.rawValue {
                let outcome = try JobOutcome.decode(try Record.decode(message.value))
                log.update { $0.add(outcome) }
            }
        }
        do {
            let result = try await body(log)
            consumer.stopMessages()
            try await group.waitForAll()
            await consumer.close()
            return result
        } catch {
            consumer.stopMessages()
            try? await group.waitForAll()
            await consumer.close()
            throw error
        }
    }
}

/// Runs `count` `marquee-fetch` processes of one new consumer group (``startFetchWorker``) while `body` runs, then
/// stops those still running (SIGTERM; SIGKILL after 20 s), also when `body` throws.
private func withFetchWorkers<T>(
    _ count: Int,
    emulator: UpstreamEmulatorProcess,
    prefix: String,
    environment: [String: String],
    _ body: (FetchWorkers) async throws -> T
) async throws -> T {
    let workers = FetchWorkers(
        emulator: emulator,
        prefix: prefix,
        environment: environment.merging(["MARQUEE_GROUP": TestEnvironment.uniqueName("fetch")]) { $1 }
    )
    do {
        for _ in 0..<count { try await workers.start() }
        let result = try await body(workers)
        await workers.stopAll()
        return result
    } catch {
        await workers.stopAll()
        throw error
    }
}

/// `marquee-fetch` processes of one group, each with its probes' base URL and the lines it logged.
final class FetchWorkers: Sendable {
    private struct Member: Sendable {
        let process: ChildProcess
        let base: String
        var isRunning = true
    }

    private let emulator: UpstreamEmulatorProcess
    private let prefix: String
    private let environment: [String: String]
    private let members = Mutex<[Member]>([])
    private let lines = Mutex<[(worker: Int, line: String)]>([])

    init(emulator: UpstreamEmulatorProcess, prefix: String, environment: [String: String]) {
        self.emulator = emulator
        self.prefix = prefix
        self.environment = environment
    }

    /// Starts one more worker; returns its index.
    @discardableResult
    func start() async throws -> Int {
        let index = self.members.withLock { $0.count }
        let (process, base) = try await startFetchWorker(
            emulator: self.emulator,
            prefix: self.prefix,
            environment: self.environment
        ) { [self] line in
            self.lines.withLock { $0.append((index, line)) }
        }
        self.members.withLock { $0.append(Member(process: process, base: base)) }
        return index
    }

    /// The indices of the workers not stopped.
    var running: [Int] { self.members.withLock { members in members.indices.filter { members[$0].isRunning } } }

    /// One sample of a worker's `/metrics` (0 when absent).
    func metric(_ index: Int, _ sample: String) async throws -> Double {
        let base = self.members.withLock { $0[index].base }
        let (status, body) = try await httpGet(base + "/metrics")
        try #require(status == 200, "worker \(index)'s /metrics answered \(status)")
        return metricValue(body, sample) ?? 0
    }

    /// One sample of every running worker's `/metrics`, in the order of ``running``.
    func metrics(_ sample: String) async throws -> [Double] {
        var values: [Double] = []
        for index in self.running { values.append(try await self.metric(index, sample)) }
        return values
    }

    /// Sends `signal` to a worker and returns its exit status (SIGKILL after 20 s).
    func stop(_ index: Int, signal: Int32) async -> Int32 {
        let process = self.members.withLock { members in
            members[index].isRunning = false
            return members[index].process
        }
        process.signal(signal)
        return await process.waitForExit(killingAfter: .seconds(20))
    }

    func stopAll() async {
        let processes = self.members.withLock { members in
            defer { for index in members.indices { members[index].isRunning = false } }
            return members.filter(\.isRunning).map(\.process)
        }
        for process in processes { process.signal(SIGTERM) }
        for process in processes { _ = await process.waitForExit(killingAfter: .seconds(20)) }
    }

    /// Waits until every running worker has partitions and together they have all `partitions` (a settled group).
    func waitUntilBalanced(partitions: Int) async throws {
        try await poll("the workers share all \(partitions) partitions", timeout: .seconds(60)) {
            let assigned = try await self.metrics(#"marquee_stage_assigned_partitions{stage="fetch"}"#)
            return assigned.allSatisfy { $0 > 0 } && Int(assigned.reduce(0, +)) == partitions
        }
    }

    /// Whether a worker logged a line containing `text`.
    func logged(_ index: Int, _ text: String) -> Bool {
        self.lines.withLock { lines in lines.contains { $0.worker == index && $0.line.contains(text) } }
    }

    /// The workers' log lines at notice level and above (the last 40), for a failure's evidence.
    func notable() -> String {
        let lines = self.lines.withLock { $0 }.filter {
            !$0.line.contains(#""level":"info""#) && !$0.line.contains(#""level":"debug""#)
        }
        return "\n" + lines.suffix(40).map { "[\($0.worker)] \($0.line)" }.joined(separator: "\n")
    }
}
