import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeScheduler
import MarqueeTestSupport
import Synchronization
import Testing

import struct Foundation.Data
import class Foundation.FileManager

#if canImport(Glibc)
import Glibc
#endif

/// The `marquee-producer` executable against the real broker: every window of a 2-second schedule enqueued
/// exactly once across a graceful restart, a `kill -9` restart, and two replicas one of which is frozen
/// (SIGSTOP) while leading and comes back (SIGCONT) believing it still leads.
@Suite(.serialized, .timeLimit(.minutes(4)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ProducerProcessTests {
    static let schedule = """
        schedules:
          - name: tick
            every: 2s
            catch_up: all
            jobs:
              - kind: tmdb.list
                list: popular
                page: 1..3
                language: ko-KR
        """

    @Test func eachWindowIsEnqueuedOnceAcrossARestartAndAKill() async throws {
        let run = try await ProducerRun.start(schedule: Self.schedule)
        defer { run.finish() }

        // A graceful stop in the middle of the stream…
        let first = try run.startProducer("first")
        try await run.fetched.wait("three windows from the first producer") { $0.windows.count >= 3 }
        first.signal(SIGTERM)
        #expect(await first.waitForExit() == 0)

        // …a restart, then a kill -9…
        let second = try run.startProducer("second")
        try await run.log.wait("the second producer leading and firing three windows") {
            $0.fired["second", default: 0] >= 3
        }
        second.signal(SIGKILL)
        #expect(await second.waitForExit() == SIGKILL)

        // …and another restart, which catches up what was missed meanwhile.
        let third = try run.startProducer("third")
        try await run.log.wait("the third producer firing three windows") { $0.fired["third", default: 0] >= 3 }
        try await run.waitUntilNoWindowIsMissing()
        third.signal(SIGTERM)
        #expect(await third.waitForExit() == 0)

        try await run.expectEveryWindowOnce(minimumWindows: 9)
    }

    /// The two crashes a claim can be left unconfirmed by, made exact with the producer's test fault: before the
    /// jobs were sent (the takeover sends them once) and after they were acknowledged (the takeover sends them
    /// again, with the same ids: the one duplicate the design allows).
    @Test func aWindowClaimedButNotConfirmedIsTakenOverWithTheSameIDs() async throws {
        let run = try await ProducerRun.start(schedule: Self.schedule)
        defer { run.finish() }
        let first = try run.startProducer("first", environment: ["MARQUEE_PRODUCER_CRASH_AT": "claimed:2"])
        #expect(await first.waitForExit() == SIGKILL)
        let second = try run.startProducer("second", environment: ["MARQUEE_PRODUCER_CRASH_AT": "sent:2"])
        #expect(await second.waitForExit() == SIGKILL)
        let crashes = run.log.snapshot.crashes
        let unsent = try #require(crashes.first { $0.value == "first" }?.key, "\(crashes)")
        let sent = try #require(crashes.first { $0.value == "second" }?.key, "\(crashes)")

        let third = try run.startProducer("third")
        try await run.log.wait("both windows taken over, and two more fired") { log in
            log.resent.isSuperset(of: [unsent, sent]) && log.fired["third", default: 0] >= 4
        }
        try await run.waitUntilNoWindowIsMissing()
        third.signal(SIGTERM)
        #expect(await third.waitForExit() == 0)

        try await run.expectEveryWindowOnce(minimumWindows: 6)
        #expect(run.log.snapshot.resent == [unsent, sent])
        let fetched = run.fetched.snapshot
        #expect(fetched.windows[unsent]?.count == 3 && fetched.windows[sent]?.count == 3)
        for id in fetched.windows[unsent] ?? [] {
            #expect(fetched.counts[id] == 1, "never sent before the crash: once")
        }
        for id in fetched.windows[sent] ?? [] {
            #expect(fetched.counts[id] == 2, "acknowledged before the crash, resent: twice")
        }
        // In the state topic: each crashed window has the crashed claim, a takeover superseding it, and a `done`.
        let ledger = try await run.stateLedger()
        for window in [unsent, sent] {
            let start = try #require(windowMilliseconds(window))
            let state = try #require(ledger.state(schedule: "tick", window: start))
            let crashed = try #require(state.claims.first)
            #expect(state.claims.contains { $0.supersedes == crashed.offset } && state.isSettled, "\(window): \(state)")
        }
    }

    @Test func twoReplicasEnqueueEachWindowOnceThroughAFrozenLeader() async throws {
        let run = try await ProducerRun.start(schedule: Self.schedule)
        defer { run.finish() }
        let replicas = try ["a", "b"].map { try run.startProducer($0) }
        // Both in the group: one leads, the other stands by.
        try await run.log.wait("one leader and one standby") {
            $0.leaders.count == 1 && $0.standbys.count == 1 && $0.leaders != $0.standbys
        }
        try await run.fetched.wait("three windows") { $0.windows.count >= 3 }
        let leaderName = try #require(run.log.snapshot.leaders.first)
        let (leader, standby) = leaderName == "a" ? (replicas[0], replicas[1]) : (replicas[1], replicas[0])
        let standbyName = leaderName == "a" ? "b" : "a"

        // Both ready; the gauges say who leads and what was enqueued.
        try await run.log.wait("the leader firing a window") { $0.fired[leaderName, default: 0] >= 1 }
        for name in [leaderName, standbyName] {
            let base = try #require(run.log.snapshot.metrics[name], "\(name) announced its metrics address")
            #expect(try await httpGet(base + "/healthz").0 == 200)
            let (status, body) = try await httpGet(base + "/readyz")
            #expect(status == 200 && body.hasPrefix("ready"), "\(name): \(status) \(body)")
            let metrics = try await httpGet(base + "/metrics").1
            #expect(metricValue(metrics, "marquee_producer_leader") == (name == leaderName ? 1 : 0), "\(metrics)")
            if name == leaderName {
                #expect(
                    (metricValue(metrics, #"marquee_producer_windows_total{schedule="tick",outcome="fired"}"#) ?? 0)
                        >= 1,
                    "\(metrics)"
                )
                #expect(
                    (metricValue(metrics, #"marquee_producer_jobs_total{schedule="tick"}"#) ?? 0) >= 3,
                    "\(metrics)"
                )
            }
        }

        // The leader freezes: the group hands its place to the standby, which catches up the missed windows.
        let ended = run.log.snapshot.endedTerms[leaderName, default: 0]
        leader.signal(SIGSTOP)
        try await run.log.wait("the standby leading and firing three windows", timeout: .seconds(90)) {
            $0.leaders.contains(standbyName) && $0.fired[standbyName, default: 0] >= 3
        }
        // The old leader wakes up believing it still leads, until the group tells it otherwise; whatever it
        // claims meanwhile comes after the new leader's claims and sends nothing. Then it rejoins the group.
        let seen = run.fetched.snapshot.windows.count
        leader.signal(SIGCONT)
        try await run.log.wait("the old leader learning it lost the lead") {
            $0.endedTerms[leaderName, default: 0] > ended
        }
        try await run.fetched.wait("three more windows") { $0.windows.count >= seen + 3 }
        // A window the old leader claimed first just before it learned it lost the lead is sent by the new
        // leader once the claim timed out (8 s): a gap until then.
        try await run.waitUntilNoWindowIsMissing()

        for replica in [leader, standby] { replica.signal(SIGTERM) }
        #expect(await standby.waitForExit() == 0)
        // The frozen one exits 0, or 1 when a send it had started timed out while it was frozen (a broker
        // failure stops the process; its window was taken over and sent again with the same ids).
        let status = await leader.waitForExit()
        #expect(
            status == 0 || (status == 1 && run.log.snapshot.failures[leaderName] != nil),
            "exit \(status): \(run.log.snapshot)"
        )
        #expect(run.log.snapshot.failures[standbyName] == nil, "\(run.log.snapshot)")
        try await run.expectEveryWindowOnce(minimumWindows: 6)
    }
}

/// What the producers' logs said.
struct ProducerLog: Sendable, CustomStringConvertible {
    /// Windows each producer confirmed (fired or resent), by name.
    var fired: [String: Int] = [:]
    /// Windows sent again by a takeover (a duplicate of their jobs is allowed: same ids).
    var resent: Set<String> = []
    /// Every window a producer confirmed.
    var confirmed: Set<String> = []
    /// Producers leading now.
    var leaders: Set<String> = []
    /// Producers standing by now.
    var standbys: Set<String> = []
    /// How many times each producer's leadership ended.
    var endedTerms: [String: Int] = [:]
    /// Claims that came second (their owners sent nothing).
    var lost = 0
    /// Why a producer stopped with an error, by name.
    var failures: [String: String] = [:]
    /// Windows whose producer killed itself on purpose (the test fault), and which producer.
    var crashes: [String: String] = [:]
    /// Each producer's `/metrics`, `/healthz` and `/readyz` base URL.
    var metrics: [String: String] = [:]

    var description: String {
        "fired \(self.fired), resent \(self.resent.sorted()), leaders \(self.leaders.sorted()), standbys \(self.standbys.sorted()), "
            + "ended terms \(self.endedTerms), lost claims \(self.lost), failures \(self.failures)"
    }
}

/// What the fetch topic holds: occurrences of each job id, the ids of each window (by the window header).
struct FetchedJobs: Sendable, CustomStringConvertible {
    var counts: [String: Int] = [:]
    var windows: [String: Set<String>] = [:]
    var total = 0
    /// Messages by their `marquee-refresh` (`none` without one).
    var refreshes: [String: Int] = [:]
    /// The `start_date` of each `tmdb.changes` job read, in the order read.
    var changeDays: [String] = []

    var description: String {
        "\(self.total) messages, \(self.windows.count) windows, \(self.counts.count) distinct ids, missing \(self.missing)"
    }

    /// Windows absent between the first and the last present (2 s apart).
    var missing: [Int64] {
        let windows = Set(self.windows.keys.compactMap(windowMilliseconds))
        guard let first = windows.min(), let last = windows.max() else { return [] }
        return stride(from: first, through: last, by: 2000).filter { !windows.contains($0) }
    }
}

/// `2024-05-30T01:00:02Z` → epoch milliseconds.
func windowMilliseconds(_ text: String) -> Int64? {
    let parts = text.dropLast().split(separator: "T")
    guard text.hasSuffix("Z"), parts.count == 2 else { return nil }
    let date = parts[0].split(separator: "-").compactMap { Int($0) }
    let time = parts[1].split(separator: ":").compactMap { Int($0) }
    guard date.count == 3, time.count == 3, let day = LocalDate(year: date[0], month: date[1], day: date[2]) else {
        return nil
    }
    return day.dayNumber * 86_400_000 + Int64(time[0] * 3600 + time[1] * 60 + time[2]) * 1000
}

/// A `marquee-producer` child process that remembers whether the test saw it exit.
final class ProducerProcess: Sendable {
    private let child: ChildProcess
    private let exited = Mutex(false)

    init(_ child: ChildProcess) { self.child = child }

    var hasExited: Bool { self.exited.withLock { $0 } }

    func signal(_ signal: Int32) { self.child.signal(signal) }

    /// The exit status (or the signal that ended it). One caller at a time (``ChildProcess`` keeps one waiter).
    func waitForExit() async -> Int32 {
        let status = await self.child.waitForExit()
        self.exited.withLock { $0 = true }
        return status
    }
}

/// One test's topics, schedule file, producers and a reader of the fetch topic.
final class ProducerRun: Sendable {
    let prefix: String
    let path: String
    let schedule: Schedule
    let log = Observed(ProducerLog())
    let fetched = Observed(FetchedJobs())
    private let consumer: KafkaConsumer
    private let reader: Task<Void, Never>
    /// The producers started: ``finish()`` kills what a failed test left running.
    private let children = Mutex<[ProducerProcess]>([])

    private init(prefix: String, path: String, schedule: Schedule, consumer: KafkaConsumer) {
        self.prefix = prefix
        self.path = path
        self.schedule = schedule
        self.consumer = consumer
        let fetched = self.fetched
        self.reader = Task {
            do {
                for try await message in consumer.messages {
                    let headers = message.headers.map { ($0.key, $0.stringValue) }
                    guard let envelope = try? Envelope(headers: headers),
                        let window = message.headers.first(where: { $0.key == "marquee-window" })?.stringValue
                    else { continue }
                    let changes: String? =
                        if case .tmdbChanges(let start, _, _, _, _)? = try? FetchJob.decode(message.value) {
                            start
                        } else {
                            nil
                        }
                    let id = envelope.id.rawValue
                    fetched.update { jobs in
                        jobs.total += 1
                        jobs.refreshes[envelope.refresh?.rawValue ?? "none", default: 0] += 1
                        jobs.counts[id, default: 0] += 1
                        jobs.windows[window, default: []].insert(id)
                        if let changes { jobs.changeDays.append(changes) }
                    }
                }
            } catch {
                Issue.record("reading the fetch topic failed: \(error)")
            }
        }
    }

    static func start(schedule text: String, now: Int64 = 0) async throws -> ProducerRun {
        let prefix = TestEnvironment.uniqueName("mqp") + "."
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let fetch = StageTopics(stage: "fetch", prefix: prefix, tiers: 0)
        try await admin.createTopics([.init(name: fetch.main, partitions: 2)])
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-schedule")).yaml"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        let schedule = try ScheduleFile.parse(yaml: text, file: path, now: now).schedules[0]
        let consumer = try KafkaConsumer(
            configuration: TestEnvironment.consumer(group: TestEnvironment.uniqueName("read"), topics: [fetch.main]),
            logger: .marqueeTest
        )
        return ProducerRun(prefix: prefix, path: path, schedule: schedule, consumer: consumer)
    }

    /// Starts a `marquee-producer` whose log lines feed ``log`` under `name`.
    func startProducer(_ name: String, environment: [String: String] = [:]) throws -> ProducerProcess {
        let log = self.log
        let child = try ChildProcess(
            "marquee-producer",
            arguments: ["--schedule", self.path],
            environment: [
                "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_TOPIC_PREFIX": self.prefix,
                "MARQUEE_METRICS_ADDRESS": "127.0.0.1:0", "MARQUEE_SESSION_TIMEOUT": "6s",
                "MARQUEE_PRODUCER_CLAIM_TIMEOUT": "8s", "MARQUEE_LOG_LEVEL": "info",
            ].merging(environment) { $1 },
            readsStandardError: true
        ) { line in
            guard line.hasPrefix("{"), case .object(let entry)? = try? JSONValue.parse(Array(line.utf8)),
                case .string(let message)? = entry["msg"]
            else { return }
            let window: String? = if case .string(let window)? = entry["marquee.window"] { window } else { nil }
            let metrics: String? =
                if case .string(let url)? = entry["marquee.metrics"] { String(url.dropLast("/metrics".count)) } else {
                    nil
                }
            log.update { log in
                switch message {
                case "producer started": log.metrics[name] = metrics
                case "leading: window state read":
                    log.leaders.insert(name)
                    log.standbys.remove(name)
                case "no longer the leader":
                    log.leaders.remove(name)
                    log.endedTerms[name, default: 0] += 1
                case "standing by: another replica leads": log.standbys.insert(name)
                case "window fired", "window resent":
                    log.fired[name, default: 0] += 1
                    if let window {
                        log.confirmed.insert(window)
                        if message == "window resent" { log.resent.insert(window) }
                    }
                case "another replica claimed the window first": log.lost += 1
                case let message where message.hasPrefix("the producer stops: "): log.failures[name] = message
                case let message where message.hasPrefix("test fault: "): if let window { log.crashes[window] = name }
                default: break
                }
            }
        }
        let producer = ProducerProcess(child)
        self.children.withLock { $0.append(producer) }
        return producer
    }

    /// Waits until the fetch topic holds every confirmed window, then checks: the windows from the first to the
    /// last are all there, 2 s apart; each holds exactly its three deterministic ids; each id appears once (twice
    /// at most in a window that was taken over and sent again).
    func expectEveryWindowOnce(minimumWindows: Int) async throws {
        let confirmed = self.log.snapshot.confirmed
        try await self.fetched.wait("every confirmed window in the fetch topic") {
            confirmed.isSubset(of: Set($0.windows.keys))
        }
        let fetched = self.fetched.snapshot
        let log = self.log.snapshot
        let windows = try fetched.windows.keys.map { text in
            try #require(windowMilliseconds(text), "window header \(text)")
        }.sorted()
        #expect(windows.count >= minimumWindows, "\(fetched); \(log)")
        // A window missing between the first and the last must be one its producer claimed and left unconfirmed
        // when it stopped (under load, a claim read back too late is left to a takeover): the next leader sends
        // it. Anything else is a window lost.
        let missing = fetched.missing
        if !missing.isEmpty {
            let ledger = try await self.stateLedger()
            for window in missing {
                let state = ledger.state(schedule: self.schedule.name, window: window)
                #expect(
                    state.map { !$0.claims.isEmpty && !$0.isSettled } == true,
                    "window \(window) is missing and not left claimed for a takeover: \(String(describing: state)); \(log)"
                )
            }
        }
        for (text, ids) in fetched.windows {
            let window = try #require(windowMilliseconds(text))
            let expected = Set((0..<3).map { self.schedule.jobID(window: window, index: $0).rawValue })
            #expect(ids == expected, "window \(text): ids \(ids.sorted()) are not its deterministic ids")
            for id in ids {
                let count = fetched.counts[id, default: 0]
                if log.resent.contains(text) {
                    #expect((1...2).contains(count), "window \(text) (resent): id \(id) appears \(count) times")
                } else {
                    #expect(count == 1, "window \(text): id \(id) appears \(count) times; \(log)")
                }
            }
        }
        #expect(fetched.total >= windows.count * 3)
    }

    /// The state topic as a leader reads it: every record up to a probe of the test's own.
    func stateLedger() async throws -> WindowLedger {
        let topic = "\(self.prefix)producer.windows"
        let probe = WindowMarker(phase: .probe, schedule: "", window: 0, owner: "test", at: 0)
        let written = try await withProducer { producer in
            try await producer.send(
                KafkaProducerMessage(topic: topic, key: Array(probe.key.utf8), value: probe.encoded(), headers: [])
            )
        }
        return try await withConsumer(
            TestEnvironment.consumer(group: TestEnvironment.uniqueName("state"), topics: [topic])
        ) { consumer in
            var ledger = WindowLedger()
            for try await message in consumer.messages {
                if let marker = WindowMarker.decode(message.value) {
                    ledger.apply(marker, offset: message.offset)
                } else {
                    ledger.advance(to: message.offset)
                }
                if message.offset >= written.offset { break }
            }
            return ledger
        }
    }

    /// Waits until the fetch topic has every window between its first and its last: a window left claimed by
    /// a producer that stopped (or lost the lead) before sending is sent by the leader once its claim timed out.
    func waitUntilNoWindowIsMissing() async throws {
        try await self.fetched.wait("no window missing between the first and the last") { $0.missing.isEmpty }
    }

    func finish() {
        // A test that failed half-way leaves producers running (one perhaps frozen): stop them.
        for producer in self.children.withLock({ $0 }) where !producer.hasExited {
            producer.signal(SIGCONT)
            producer.signal(SIGKILL)
        }
        try? FileManager.default.removeItem(atPath: self.path)
        let consumer = self.consumer
        let reader = self.reader
        Task {
            await consumer.close()
            await reader.value
        }
    }
}
