import Logging
import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeStore
import MarqueeTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// What a test handler saw: each call's envelope, source topic and wall-clock time.
final class HandlerLog: Sendable {
    struct Call: Sendable {
        var envelope: Envelope
        var source: String
        var at: Int64
    }

    private let calls = Mutex<[Call]>([])
    /// One element per call, as it happens.
    let events: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (self.events, self.continuation) = AsyncStream.makeStream()
    }

    func record(_ job: StageJob) {
        self.calls.withLock {
            $0.append(Call(envelope: job.envelope, source: job.source, at: Int64(JobID.nowMilliseconds())))
        }
        self.continuation.yield()
    }

    var all: [Call] { self.calls.withLock { $0 } }
}

/// A handler made of a closure.
struct ClosureHandler: StageHandler {
    let body: @Sendable (StageJob) async throws -> [StageOutput]
    func handle(_ job: StageJob) async throws -> [StageOutput] { try await self.body(job) }
}

/// Runs a stage named `fetch` under a fresh topic prefix while `body` runs, then shuts it down gracefully.
/// (Topics are left in place: see `withTestTopic`.)
func withStage<T>(
    retry: RetryPolicy = RetryPolicy(
        delays: [.milliseconds(300), .milliseconds(600), .milliseconds(900)],
        jitter: 0.1
    ),
    concurrency: Int = 4,
    configure: (inout StageConfiguration) -> Void = { _ in },
    handler: @escaping @Sendable (StageJob) async throws -> [StageOutput],
    _ body: (StageTopics) async throws -> T
) async throws -> T {
    var configuration = testStageConfiguration(retry: retry)
    let prefix = configuration.topics.prefix
    configuration.concurrency = concurrency
    configuration.shutdownTimeout = .seconds(10)
    configure(&configuration)
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    let records = StageTopics(stage: "records", prefix: prefix, tiers: 0)
    _ = try await StageTopics.createAll([configuration.topics, records], partitions: 2, admin: admin)
    let stage = Stage(configuration: configuration, handler: ClosureHandler(body: handler), logger: .marqueeTest)
    return try await whileRunning([stage]) { try await body(configuration.topics) }
}

/// Waits until `stage` paused for the broker (its outputs not acknowledged) and returns its status then; a bounded
/// poll of the stage's status, which has no event of its own.
func pausedForTheBroker<Handler: StageHandler>(
    _ stage: Stage<Handler>,
    timeout: Duration = .seconds(60)
) async throws -> StageStatus {
    let deadline = ContinuousClock.now + timeout
    while stage.status.downDependency != "the broker" {
        try #require(ContinuousClock.now < deadline, "the stage did not pause for the broker: \(stage.status)")
        try await Task.sleep(for: .milliseconds(50))
    }
    return stage.status
}

/// Runs `services` in a service group while `body` runs, then shuts the group down gracefully (also when `body`
/// throws). A group stops its services in reverse order: put what the others need first.
func whileRunning<T>(_ services: [any Service], _ body: () async throws -> T) async throws -> T {
    let group = ServiceGroup(services: services, logger: .marqueeTest)
    let running = Task { try await group.run() }
    do {
        let result = try await body()
        await group.triggerGracefulShutdown()
        try await running.value
        return result
    } catch {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        throw error
    }
}

/// A stage (default `fetch`) under a fresh topic prefix and group, with the test broker's fast-join consumer settings.
func testStageConfiguration(stage: String = "fetch", retry: RetryPolicy = RetryPolicy()) -> StageConfiguration {
    var configuration = StageConfiguration(
        stage: stage,
        kafka: TestEnvironment.kafka,
        prefix: TestEnvironment.uniqueName("mq") + ".",
        retry: retry
    )
    configuration.groupID = TestEnvironment.uniqueName("stage")
    configuration.consumer = { consumer in
        consumer.sessionTimeout = .seconds(6)
        consumer.heartbeatInterval = .seconds(1)
        consumer.commitInterval = .milliseconds(200)
    }
    return configuration
}

/// Enqueues a root job on the stage's main topic.
@discardableResult
func enqueue(_ job: FetchJob, to topics: StageTopics, times: Int = 1) async throws -> Envelope {
    let envelope = Envelope.root()
    let message = KafkaProducerMessage(
        topic: topics.main,
        key: Array(job.dedupeKey.utf8),
        value: job.encoded(),
        headers: envelope.kafkaHeaders
    )
    _ = try await withProducer { producer in try await producer.send(Array(repeating: message, count: times)) }
    return envelope
}

/// Reads `count` messages from a topic in a fresh group (only those `including` accepts).
func read(
    _ count: Int,
    from topic: String,
    including: (KafkaConsumerMessage) -> Bool = { _ in true }
) async throws -> [KafkaConsumerMessage] {
    try await withConsumer(TestEnvironment.consumer(group: TestEnvironment.uniqueName("read"), topics: [topic])) {
        consumer in
        var messages: [KafkaConsumerMessage] = []
        for try await message in consumer.messages where including(message) {
            messages.append(message)
            if messages.count == count { break }
        }
        return messages
    }
}

/// Whether a records-topic message is an entity record, not a worker's `job.outcome` (lineage).
func isEntityRecord(_ message: KafkaConsumerMessage) -> Bool {
    PayloadKind.peek(message.value) != Record.Kind.jobOutcome.rawValue
}

func envelope(of message: KafkaConsumerMessage) throws -> Envelope {
    try Envelope(headers: message.headers.map { ($0.key, $0.stringValue) })
}

@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct StageTests {
    static let job = FetchJob.tmdbMovie(id: 550, language: "ko-KR", follow: .none)

    @Test func aJobFailingTwiceSucceedsOnItsThirdAttemptThroughTiersOneAndTwo() async throws {
        let log = HandlerLog()
        try await withStage(handler: { job in
            log.record(job)
            guard job.envelope.attempt >= 3 else {
                throw StageError.transient("HTTP 503 (attempt \(job.envelope.attempt))")
            }
            return [StageOutput(stage: "records", key: "tmdb:movie:550", payload: Array(#"{"ok":true}"#.utf8))]
        }) { topics in
            let root = try await enqueue(Self.job, to: topics)
            let output = try #require(try await read(1, from: topics.topic(ofStage: "records")).first)

            let calls = log.all
            #expect(calls.map(\.envelope.attempt) == [1, 2, 3])
            #expect(
                calls.map { $0.source.split(separator: "/").first.map(String.init) } == [
                    topics.main, topics.retry(1), topics.retry(2),
                ]
            )
            for call in calls.dropFirst() {
                let notBefore = try #require(call.envelope.notBefore)
                #expect(call.at >= notBefore, "a retry never runs before its time")
                #expect(call.envelope.errorKind == .transient)
                #expect(call.envelope.origin == calls[0].source, "origin: where it first failed")
                #expect(call.envelope.id == root.id && call.envelope.root == root.id)
            }
            #expect(calls[1].envelope.error == "HTTP 503 (attempt 1)")
            #expect(calls[2].envelope.error == "HTTP 503 (attempt 2)")

            let produced = try envelope(of: output)
            #expect(produced.root == root.id)
            #expect(produced.parent == root.id)
            #expect(produced.attempt == 1)
            #expect(output.keyString == "tmdb:movie:550")

            // The hops themselves carry the headers.
            let hop = try #require(try await read(1, from: topics.retry(1)).first)
            let hopEnvelope = try envelope(of: hop)
            #expect(hopEnvelope.attempt == 2 && hopEnvelope.errorKind == .transient && hopEnvelope.notBefore != nil)
            #expect(hop.value == Self.job.encoded(), "the payload is never rewritten")
        }
    }

    /// `whenDelivered` actions run once the job's outputs are acknowledged and before its offset is committed;
    /// those of an attempt that failed never run.
    @Test func afterDeliveryActionsRunBetweenTheDeliveryAndTheCommitAndOnlyForTheAttemptThatSucceeded() async throws {
        struct Run: Sendable {
            var attempt: Int
            var recordsAcknowledged: Int64
            var retryTopicCommitted: Int64
        }
        let runs = Observed<[Run]>([])
        let finished = Observed<Int>(0)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let stage = Mutex<(group: String, topics: StageTopics)?>(nil)
        try await withStage(
            configure: { configuration in
                stage.withLock { $0 = (configuration.groupID, configuration.topics) }
                // One record per batch: the test broker's end offsets are exact only so (ENVIRONMENT.md).
                configuration.producer = { $0.batchMessages = 1 }
                configuration.onJobFinished = { _ in finished.update { $0 += 1 } }
            },
            handler: { job in
                let attempt = job.envelope.attempt
                let (group, topics) = try #require(stage.withLock { $0 })
                job.whenDelivered {
                    let records = topics.topic(ofStage: "records")
                    let acknowledged = (try? await admin.endOffsets(topic: records).values.reduce(0, +)) ?? -1
                    let committed =
                        (try? await admin.committedOffsets(group: group, topics: [topics.retry(1)]))
                        .map { $0.values.reduce(0) { $0 + ($1 ?? 0) } } ?? -1
                    runs.update {
                        $0.append(
                            Run(attempt: attempt, recordsAcknowledged: acknowledged, retryTopicCommitted: committed)
                        )
                    }
                }
                guard attempt >= 2 else { throw StageError.transient("HTTP 503") }
                return (1...3).map {
                    StageOutput(stage: "records", key: "tmdb:movie:\($0)", payload: Array(#"{"ok":true}"#.utf8))
                }
            }
        ) { topics in
            try await enqueue(Self.job, to: topics)
            try await finished.wait("the failed attempt and the one that succeeded") { $0 == 2 }
            let seen = runs.snapshot
            #expect(seen.map(\.attempt) == [2], "the failed first attempt's action never ran")
            #expect(seen.first?.recordsAcknowledged == 3, "all three outputs were acknowledged when it ran")
            #expect(seen.first?.retryTopicCommitted == 0, "the job's offset was not yet committed when it ran")
        }
    }

    @Test func afterTheLastTierAJobLandsInTheDeadLetterTopic() async throws {
        let log = HandlerLog()
        try await withStage(handler: { job in
            log.record(job)
            throw StageError.transient("connection reset")
        }) { topics in
            let root = try await enqueue(Self.job, to: topics)
            let dead = try #require(try await read(1, from: topics.dlq).first)
            let deadEnvelope = try envelope(of: dead)
            #expect(log.all.map(\.envelope.attempt) == [1, 2, 3, 4])
            #expect(deadEnvelope.id == root.id)
            #expect(deadEnvelope.attempt == 4)
            #expect(deadEnvelope.errorKind == .transient)
            #expect(deadEnvelope.error == "connection reset")
            #expect(deadEnvelope.origin == log.all[0].source)
            #expect(dead.value == Self.job.encoded())
        }
    }

    @Test func permanentErrorsGoStraightToTheDeadLetterTopic() async throws {
        let log = HandlerLog()
        try await withStage(handler: { job in
            log.record(job)
            throw StageError.permanent("HTTP 404: movie 550 does not exist")
        }) { topics in
            try await enqueue(Self.job, to: topics)
            let dead = try #require(try await read(1, from: topics.dlq).first)
            let deadEnvelope = try envelope(of: dead)
            #expect(log.all.count == 1)
            #expect(deadEnvelope.attempt == 1)
            #expect(deadEnvelope.errorKind == .permanent)
            #expect(deadEnvelope.error == "HTTP 404: movie 550 does not exist")
        }
    }

    /// A module's own error is routed by what it says of itself: a refused payload (not retriable) straight to
    /// the DLQ as permanent, a store conflict (retriable) through the retry tiers.
    @Test func aModulesErrorIsRoutedByWhetherARetryCanHelp() async throws {
        let log = HandlerLog()
        try await withStage(handler: { job in
            log.record(job)
            if job.envelope.attempt == 1 { throw StoreError(.conflict, "could not serialize access") }
            throw PayloadError(.invalidField, field: "page", "expected an integer from 1 to 500, got -3")
        }) { topics in
            try await enqueue(Self.job, to: topics)
            let dead = try #require(try await read(1, from: topics.dlq).first)
            let deadEnvelope = try envelope(of: dead)
            #expect(log.all.map(\.envelope.attempt) == [1, 2], "the conflict was retried once, the refusal never")
            #expect(log.all.last?.envelope.errorKind == .transient)
            #expect(deadEnvelope.errorKind == .permanent)
            #expect(deadEnvelope.error == "field 'page': expected an integer from 1 to 500, got -3")
        }
    }

    @Test func aDownDependencyPausesTheStageAndNothingReachesTheRetryTiersOrTheDLQ() async throws {
        let log = HandlerLog()
        let isUp = Mutex(false)
        try await withStage(
            configure: { $0.dependencyRetry = .milliseconds(100) ... .milliseconds(400) },
            handler: { job in
                log.record(job)
                guard isUp.withLock({ $0 }) else { throw StageError.dependencyDown("the store", "connection refused") }
                return [
                    StageOutput(
                        stage: "records",
                        key: job.envelope.id.rawValue,
                        payload: Array(job.envelope.id.rawValue.utf8)
                    )
                ]
            }
        ) { topics in
            var ids = Set<String>()
            for index in 1...20 {
                ids.insert(
                    try await enqueue(.tmdbMovie(id: Int64(index), language: "en-US", follow: .none), to: topics).id
                        .rawValue
                )
            }
            // Refused several times: the stage paused, resumed, and paused again.
            var events = log.events.makeAsyncIterator()
            for _ in 0..<6 { _ = await events.next() }
            isUp.withLock { $0 = true }

            let outputs = Set(try await read(readingUntilUnique: 20, from: topics.topic(ofStage: "records")))
            #expect(outputs == ids, "all processed once the dependency was back")
            #expect(log.all.allSatisfy { $0.envelope.attempt == 1 }, "no job moved to a retry tier")
            let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
            for topic in [topics.dlq] + (1...topics.tiers).map(topics.retry) {
                let ends = try await admin.endOffsets(topic: topic)
                #expect(ends.values.allSatisfy { $0 == 0 }, "\(topic) stayed empty")
            }
        }
    }

    @Test func poisonReachesTheDeadLetterTopicByteForByte() async throws {
        try await withStage(handler: { job in
            do throws(PayloadError) {
                _ = try FetchJob.decode(job.payload)
            } catch {
                throw StageError.poison(error)
            }
            return []
        }) { topics in
            let notJSON: [UInt8] = Array("{\"v\":1,\"kind\":".utf8)
            let notUTF8: [UInt8] = [0x7B, 0xFF, 0xFE, 0x00, 0x7D]
            let envelope = Envelope.root()
            let extra = KafkaHeader(key: "x-custom", value: [0x00, 0x01, 0xFF])
            _ = try await withProducer { producer in
                try await producer.send([
                    KafkaProducerMessage(
                        topic: topics.main,
                        partition: 0,
                        key: [1, 2],
                        value: notJSON,
                        headers: envelope.kafkaHeaders + [extra]
                    ),
                    KafkaProducerMessage(
                        topic: topics.main,
                        partition: 0,
                        key: nil,
                        value: notUTF8,
                        headers: envelope.kafkaHeaders
                    ),
                    // No envelope at all: unreadable before the handler runs.
                    KafkaProducerMessage(
                        topic: topics.main,
                        partition: 0,
                        key: nil,
                        value: Self.job.encoded(),
                        headers: [extra]
                    ),
                ])
            }
            // The three were handled concurrently: match the dead letters by content, not by position.
            let dead = try await read(3, from: topics.dlq)
            #expect(Set(dead.map(\.value)) == [notJSON, notUTF8, Self.job.encoded()])
            let first = try #require(dead.first { $0.value == notJSON })
            let second = try #require(dead.first { $0.value == notUTF8 })
            let third = try #require(dead.first { $0.value == Self.job.encoded() })
            #expect(first.key == [1, 2])
            #expect(
                Array(first.headers.prefix(envelope.kafkaHeaders.count + 1)) == envelope.kafkaHeaders + [extra],
                "original headers kept"
            )
            #expect(Array(third.headers.prefix(1)) == [extra])
            for message in dead {
                #expect(message.headers.string(Envelope.Header.errorKind) == "poison")
                #expect(message.headers.string(Envelope.Header.origin)?.hasPrefix(topics.main + "/0/") == true)
            }
            #expect(first.headers.string(Envelope.Header.error) == "the payload is not JSON")
            #expect(second.headers.string(Envelope.Header.error) == "the payload is not UTF-8")
            #expect(third.headers.string(Envelope.Header.error)?.contains("marquee-id") == true)
        }
    }
}

@Suite(.timeLimit(.minutes(2)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct StageTopicsTests {
    @Test func everyStageTopicIsCreatedOnceWithItsPartitions() async throws {
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let prefix = TestEnvironment.uniqueName("topics") + "."
        let stages = ["fetch", "images", "records"].map { StageTopics(stage: $0, prefix: prefix, tiers: 3) }
        let created = try await StageTopics.createAll(stages, partitions: 3, admin: admin)
        #expect(created.count == 15)
        #expect(Set(created).contains("\(prefix)images.retry.2"))
        #expect(Set(created).contains("\(prefix)records.dlq"))
        #expect(try await StageTopics.createAll(stages, partitions: 3, admin: admin).isEmpty, "idempotent")
        let listed = try await admin.listTopics().filter { $0.name.hasPrefix(prefix) }
        #expect(listed.count == 15)
        #expect(listed.allSatisfy { $0.partitions.count == 3 })
    }
}

@Suite(.timeLimit(.minutes(2)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct StageFailureTests {
    /// An output the broker does not take in time is not the job's fault, nor a reason to stop: the broker is a
    /// dependency that is down, so the stage pauses (not ready, saying so) and keeps running, the job stays
    /// uncommitted and runs again after the pause (docs/stage.md, "A dependency down for everyone").
    @Test func aFailureToProducePausesTheStageAndLeavesTheJobUncommitted() async throws {
        var configuration = testStageConfiguration()
        let prefix = configuration.topics.prefix
        // The producer reaches no broker (the consumer does): the delivery times out.
        configuration.producer = { producer in
            producer.kafka.bootstrapServers = ["127.0.0.1:9"]
            producer.deliveryTimeout = .seconds(2)
        }
        configuration.shutdownTimeout = .seconds(5)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll(
            [configuration.topics, StageTopics(stage: "records", prefix: prefix, tiers: 0)],
            partitions: 1,
            admin: admin
        )
        try await enqueue(.tmdbGenres(language: "en-US"), to: configuration.topics)
        let afterDelivery = Mutex(0)
        let runs = Observed(0)
        let stage = Stage(
            configuration: configuration,
            handler: ClosureHandler { job in
                runs.update { $0 += 1 }
                job.whenDelivered { afterDelivery.withLock { $0 += 1 } }
                return [StageOutput(stage: "records", key: "k", payload: Array("{}".utf8))]
            },
            logger: .marqueeTest
        )
        try await whileRunning([stage]) {
            // The job runs again after each pause: a second run means the first failed and the stage went on.
            try await runs.wait("the job run again after the pause", timeout: .seconds(60)) { $0 >= 2 }
            let status = stage.status
            #expect(status.isRunning, "the stage keeps running")
            #expect(status.downDependency == "the broker", "\(status)")
            #expect(status.notReadyReason?.hasPrefix("the broker is down since ") == true, "\(status)")
            #expect(!status.credentialsRefused)
        }
        #expect(afterDelivery.withLock { $0 } == 0, "what waits for the delivery did not run")
        let committed = try await admin.committedOffsets(
            group: configuration.groupID,
            topics: [configuration.topics.main]
        )
        #expect(committed.values.allSatisfy { ($0 ?? 0) == 0 }, "the job was not committed: \(committed)")
    }
}
