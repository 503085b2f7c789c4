import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct StageRebalanceTests {
    /// A member whose partitions are revoked while its jobs run cancels them, and what they return afterwards is
    /// not produced: the partitions' new owners run the jobs again from the committed offset, so each job's
    /// output is written once, not once per run.
    @Test func jobsOfRevokedPartitionsAreCancelledAndProduceNothing() async throws {
        var configuration = testStageConfiguration()
        configuration.concurrency = 4
        configuration.shutdownTimeout = .seconds(10)
        // One record per batch: the test broker's end offsets are right only then.
        configuration.producer = { $0.batchMessages = 1 }
        let prefix = configuration.topics.prefix
        let records = StageTopics(stage: "records", prefix: prefix, tiers: 0)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll([configuration.topics, records], partitions: 2, admin: admin)

        let log = HandlerLog()
        let gate = OneShotSignal()
        let (cancellations, cancelled) = AsyncStream.makeStream(of: Void.self)
        let firstRuns = Mutex(0)
        let handler = ClosureHandler { job in
            log.record(job)
            // The first four runs (the first member's) wait until the test opens the gate, and say when they are
            // cancelled meanwhile; they then return their output as if nothing happened.
            if firstRuns.withLock({ runs in
                defer { runs += 1 }
                return runs < 4
            }) {
                await withTaskCancellationHandler {
                    await gate.wait()
                } onCancel: {
                    cancelled.yield()
                }
            }
            return [
                StageOutput(
                    stage: "records",
                    key: job.envelope.id.rawValue,
                    payload: Array(job.envelope.id.rawValue.utf8)
                )
            ]
        }
        let first = Stage(configuration: configuration, handler: handler, logger: .marqueeTest)
        let second = Stage(configuration: configuration, handler: handler, logger: .marqueeTest)

        try await whileRunning([first]) {
            var ids = Set<String>()
            for index in 1...4 {
                ids.insert(
                    try await enqueue(
                        .tmdbMovie(id: Int64(index), language: "en-US", follow: .none),
                        to: configuration.topics
                    ).id.rawValue
                )
            }
            var calls = log.events.makeAsyncIterator()
            for _ in 0..<4 { _ = await calls.next() }
            // All four in flight on the first member; a second member joins and the group rebalances.
            try await whileRunning([second]) {
                try await answer(within: .seconds(60)) {
                    var iterator = cancellations.makeAsyncIterator()
                    for _ in 0..<4 { _ = await iterator.next() }
                }
                gate.fire()
                let outputs = try await read(readingUntilUnique: 4, from: records.main)
                #expect(Set(outputs) == ids, "every job ran again under the new assignment")
            }
        }
        // Both members stopped gracefully: every run that was going to produce has.
        let ends = try await admin.endOffsets(topic: records.main)
        #expect(ends.values.reduce(0, +) == 4, "one output per job; the revoked runs produced nothing: \(ends)")
        #expect(log.all.count >= 8, "each job ran a second time after the revocation")
    }

    /// A job waiting out the stage's pause for a down dependency is cancelled when its partition is revoked; the
    /// pause still ends. Left down, it kept every later failure from pausing and resuming the stage, and the
    /// partitions those failures handed back stayed paused for good (found by the multi-host fault run: an
    /// indexer cut off during a store outage held two partitions paused until the next rebalance).
    @Test func aPauseCutShortByARevocationStillEnds() async throws {
        var configuration = testStageConfiguration()
        configuration.concurrency = 1  // one job at a time: the one waiting out the pause is the one in flight
        configuration.shutdownTimeout = .seconds(10)
        configuration.dependencyRetry = .seconds(10) ... .seconds(10)
        let prefix = configuration.topics.prefix
        let records = StageTopics(stage: "records", prefix: prefix, tiers: 0)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll([configuration.topics, records], partitions: 2, admin: admin)

        let isUp = Mutex(false)
        let (firstCalls, firstCall) = AsyncStream.makeStream(of: Void.self)
        let (laterCalls, laterCall) = AsyncStream.makeStream(of: Void.self)
        let secondStarted = Mutex(false)
        func handler(first: Bool) -> ClosureHandler {
            ClosureHandler { job in
                if first { (secondStarted.withLock { $0 } ? laterCall : firstCall).yield() }
                guard isUp.withLock({ $0 }) else { throw StageError.dependencyDown("the store", "connection refused") }
                return [
                    StageOutput(
                        stage: "records",
                        key: job.envelope.id.rawValue,
                        payload: Array(job.envelope.id.rawValue.utf8)
                    )
                ]
            }
        }
        let first = Stage(configuration: configuration, handler: handler(first: true), logger: .marqueeTest)
        let second = Stage(configuration: configuration, handler: handler(first: false), logger: .marqueeTest)
        try await whileRunning([first]) {
            var ids = Set<String>()
            for index in 1...8 {
                ids.insert(
                    try await enqueue(
                        .tmdbMovie(id: Int64(index), language: "en-US", follow: .none),
                        to: configuration.topics
                    ).id.rawValue
                )
            }
            // The first member's first failure pauses the stage for 10 s; the second member joins meanwhile, and the
            // revocation cancels the job waiting out the pause.
            var iterator = firstCalls.makeAsyncIterator()
            _ = await iterator.next()
            secondStarted.withLock { $0 = true }
            try await whileRunning([second]) {
                // The first member fails again under its new assignment, and hands that job back.
                try await answer(within: .seconds(60)) {
                    var later = laterCalls.makeAsyncIterator()
                    _ = await later.next()
                }
                isUp.withLock { $0 = true }
                let outputs = try await answer(within: .seconds(60)) {
                    try await read(readingUntilUnique: 8, from: records.main)
                }
                #expect(Set(outputs) == ids, "every job ran once the dependency was back")
            }
        }
    }
}
