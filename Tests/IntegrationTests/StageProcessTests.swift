import Logging
import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Stage processes killed and stopped: every input is processed at least once.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct StageProcessTests {
    /// Creates the `fetch` and `records` topics under a fresh prefix and enqueues `count` root jobs.
    func prepare(count: Int) async throws -> (prefix: String, ids: Set<String>) {
        let prefix = TestEnvironment.uniqueName("mq") + "."
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll(
            [
                StageTopics(stage: "fetch", prefix: prefix, tiers: 1),
                StageTopics(stage: "records", prefix: prefix, tiers: 0),
            ],
            partitions: 4,
            admin: admin
        )
        let envelopes = (0..<count).map { _ in Envelope.root() }
        _ = try await withProducer { producer in
            try await producer.send(
                envelopes.enumerated().map { index, envelope in
                    let job = FetchJob.tmdbMovie(id: Int64(index + 1), language: "en-US", follow: .none)
                    return KafkaProducerMessage(
                        topic: "\(prefix)fetch",
                        key: Array(job.dedupeKey.utf8),
                        value: job.encoded(),
                        headers: envelope.kafkaHeaders
                    )
                }
            )
        }
        return (prefix, Set(envelopes.map(\.id.rawValue)))
    }

    func worker(
        prefix: String,
        group: String,
        workMilliseconds: Int,
        started: AsyncStream<Void>.Continuation? = nil
    ) throws -> ChildProcess {
        try self.worker(prefix: prefix, group: group, work: String(workMilliseconds), started: started)
    }

    /// `work`: milliseconds each job takes, or `deaf` (jobs wait on something that ignores cancellation).
    func worker(
        prefix: String,
        group: String,
        work: String,
        started: AsyncStream<Void>.Continuation? = nil,
        lines: Observed<[String]>? = nil
    ) throws -> ChildProcess {
        try ChildProcess("StageWorker", arguments: [TestEnvironment.brokers, prefix, group, work]) { line in
            if line == "processing" { started?.yield() }
            lines?.update { $0.append(String(line)) }
        }
    }

    /// A fast worker joins the group: every input reaches the records topic (nothing lost), and it stops on SIGTERM.
    func expectANewMemberFinishes(_ ids: Set<String>, prefix: String, group: String) async throws {
        let worker = try self.worker(prefix: prefix, group: group, workMilliseconds: 1)
        defer { worker.signal(SIGKILL) }
        let seen = Set(try await read(readingUntilUnique: ids.count, from: "\(prefix)records"))
        #expect(seen == ids, "nothing lost: \(ids.subtracting(seen).count) missing")
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0)
    }

    @Test func killMinus9MidBatchLosesNothing() async throws {
        let (prefix, ids) = try await self.prepare(count: 3000)
        let group = TestEnvironment.uniqueName("stage")
        let first = try self.worker(prefix: prefix, group: group, workMilliseconds: 20)
        var second: ChildProcess?
        defer {
            first.signal(SIGKILL)
            second?.signal(SIGKILL)
        }
        var seen = Set<String>()
        try await withConsumer(
            TestEnvironment.consumer(group: TestEnvironment.uniqueName("outputs"), topics: ["\(prefix)records"])
        ) {
            outputs in
            for try await output in outputs.messages {
                seen.insert(output.valueString)
                if seen.count == 300 && second == nil {
                    // Mid-batch: some jobs are in flight, some outputs produced but not yet committed.
                    first.signal(SIGKILL)
                    #expect(await first.waitForExit() == SIGKILL)
                    second = try self.worker(prefix: prefix, group: group, workMilliseconds: 1)
                }
                if seen.count == ids.count { break }
            }
        }
        #expect(seen == ids, "every input produced its output: \(ids.subtracting(seen).count) missing")
        second?.signal(SIGTERM)
        #expect(await second?.waitForExit() == 0)
    }

    @Test func sigtermDuringInFlightWorkExitsInTimeAndLosesNothing() async throws {
        let (prefix, ids) = try await self.prepare(count: 120)
        let group = TestEnvironment.uniqueName("stage")
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let first = try self.worker(prefix: prefix, group: group, workMilliseconds: 400, started: startedContinuation)
        defer { first.signal(SIGKILL) }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()  // jobs are in flight

        let clock = ContinuousClock()
        let stopAt = clock.now
        first.signal(SIGTERM)
        #expect(await first.waitForExit() == 0, "a graceful exit")
        #expect(clock.now - stopAt < .seconds(12), "within the 5 s shutdown timeout plus leaving the group")

        try await self.expectANewMemberFinishes(ids, prefix: prefix, group: group)
    }

    /// A member frozen past the session timeout loses its partitions; thawed, it rejoins the group. A SIGTERM
    /// sent then is honoured within the shutdown timeout and the bounded wait for leaving the group, whatever the
    /// rebalance is doing; and nothing is lost.
    @Test func sigtermWhileRejoiningAfterAFreezeIsHonouredInTime() async throws {
        let (prefix, ids) = try await self.prepare(count: 300)
        let group = TestEnvironment.uniqueName("stage")
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let first = try self.worker(prefix: prefix, group: group, workMilliseconds: 100, started: startedContinuation)
        defer {
            first.signal(SIGCONT)
            first.signal(SIGKILL)
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()  // jobs are in flight
        first.signal(SIGSTOP)
        // The second member gets partitions (and starts a job) only once the rebalance it asked for is over: the
        // frozen member's session has expired and it is out of the group.
        let (secondStarted, secondContinuation) = AsyncStream<Void>.makeStream()
        let second = try self.worker(prefix: prefix, group: group, workMilliseconds: 100, started: secondContinuation)
        defer { second.signal(SIGKILL) }
        var secondIterator = secondStarted.makeAsyncIterator()
        _ = await secondIterator.next()
        // Thawed, the first finds itself out of the group and rejoins; it is told to stop meanwhile.
        first.signal(SIGCONT)
        first.signal(SIGTERM)
        let clock = ContinuousClock()
        let stopAt = clock.now
        let status = await first.waitForExit(killingAfter: .seconds(60))
        let took = clock.now - stopAt
        #expect(status == 0, "a graceful exit, not the watchdog's")
        // 5 s for in-flight jobs, 2 s of cancellation grace, 10 s at most for leaving the group, the flush.
        #expect(took < .seconds(25), "stopped after \(took)")
        let seen = Set(try await read(readingUntilUnique: ids.count, from: "\(prefix)records"))
        #expect(seen == ids, "nothing lost: \(ids.subtracting(seen).count) missing")
        second.signal(SIGTERM)
        #expect(await second.waitForExit() == 0)
    }

    /// A job that waits on something deaf to cancellation cannot hold the worker open: past the shutdown timeout
    /// it is cancelled, past the cancellation grace it is left behind, uncommitted and named in the log with its
    /// phase; the next member runs it.
    @Test func aJobThatIgnoresCancellationIsLeftBehindNamedAndRunsAgainElsewhere() async throws {
        let (prefix, ids) = try await self.prepare(count: 40)
        let group = TestEnvironment.uniqueName("stage")
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let log = Observed<[String]>([])
        let deaf = try self.worker(prefix: prefix, group: group, work: "deaf", started: startedContinuation, lines: log)
        defer { deaf.signal(SIGKILL) }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()  // jobs are waiting

        let clock = ContinuousClock()
        let stopAt = clock.now
        deaf.signal(SIGTERM)
        // Without the bound the worker never exits: the kill after 60 s makes that a failure, not a hang.
        let status = await deaf.waitForExit(killingAfter: .seconds(60))
        #expect(status == 0, "a graceful exit, with jobs left behind")
        #expect(clock.now - stopAt < .seconds(20), "the 5 s shutdown timeout, the 2 s grace, and leaving the group")
        let lines = log.snapshot
        let leftBehind = lines.filter { $0.contains("job left behind") }
        #expect(
            !leftBehind.isEmpty && leftBehind.count <= 8,
            "each job in flight (at most 8) is named: \(lines.suffix(12))"
        )
        #expect(
            leftBehind.allSatisfy {
                $0.contains("marquee.job.phase=waiting on a deaf dependency") && $0.contains("marquee.job.id=")
            }
        )
        #expect(lines.contains { $0.contains("did not end within 2.0 seconds of being cancelled") })
        #expect(!lines.contains { $0.contains("stage stopped") }, "leaving jobs behind is no failure of the stage")

        try await self.expectANewMemberFinishes(ids, prefix: prefix, group: group)
    }
}

/// Reads values from a topic in a fresh group until `count` distinct ones were seen.
func read(readingUntilUnique count: Int, from topic: String) async throws -> [String] {
    try await withConsumer(TestEnvironment.consumer(group: TestEnvironment.uniqueName("read"), topics: [topic])) {
        consumer in
        var seen = Set<String>()
        for try await message in consumer.messages {
            seen.insert(message.valueString)
            if seen.count == count { break }
        }
        return Array(seen)
    }
}
