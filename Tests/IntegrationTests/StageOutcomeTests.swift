import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

/// Runs a `fetch` stage that emits `job.outcome` records to `records` when `outcomeStage` says so, and reports
/// each finished job to `finished` (so a test knows when every delivery, outcome records included, was
/// acknowledged).
private func withOutcomeStage<T>(
    outcomeStage: String? = "records",
    finished: Observed<[StageJobReport]>,
    handler: @escaping @Sendable (StageJob) async throws -> [StageOutput],
    _ body: (StageTopics) async throws -> T
) async throws -> T {
    try await withStage(
        configure: { configuration in
            configuration.outcomeStage = outcomeStage
            configuration.onJobFinished = { report in finished.update { $0.append(report) } }
            // One record per batch: the test broker's end offsets are exact only so (ENVIRONMENT.md), and
            // `readAll` reads up to them to show nothing more was produced.
            configuration.producer = { $0.batchMessages = 1 }
        },
        handler: handler,
        body
    )
}

/// Every message on a topic up to its end now: call it once what it should hold was acknowledged (written by
/// a producer with one record per batch).
private func readAll(from topic: String) async throws -> [KafkaConsumerMessage] {
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    let total = try await admin.endOffsets(topic: topic).values.reduce(0, +)
    return total == 0 ? [] : try await read(Int(total), from: topic)
}

/// The `job.outcome` records among `messages`, each checked with the store's reader, with its message.
private func outcomes(
    in messages: [KafkaConsumerMessage]
) throws -> [(message: KafkaConsumerMessage, outcome: JobOutcome)] {
    try messages.filter { PayloadKind.peek($0.value) == Record.Kind.jobOutcome.rawValue }.map { message in
        (message, try JobOutcome.decode(try Record.decode(message.value)))
    }
}

@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct StageOutcomeTests {
    static let list = FetchJob.tmdbList(
        list: .popular,
        page: 1,
        language: "ko-KR",
        region: nil,
        follow: Follow(details: true)
    )

    @Test func aSucceededJobReportsItsOutputsAndTheJobsItSpawnedWhichReportTheirOwn() async throws {
        let log = HandlerLog()
        let finished = Observed<[StageJobReport]>([])
        try await withOutcomeStage(
            finished: finished,
            handler: { job in
                log.record(job)
                guard case .tmdbList = try FetchJob.decode(job.payload) else { return [] }  // the spawned details
                return [Int64(1), 2].map { id in
                    let detail = FetchJob.tmdbMovie(id: id, language: "ko-KR", follow: .none)
                    return StageOutput(stage: "fetch", key: detail.dedupeKey, payload: detail.encoded())
                }
                    + (1...3).map { id in
                        StageOutput(
                            stage: "records",
                            key: "tmdb:movie:\(id)",
                            payload: Array(#"{"v":1,"kind":"movie"}"#.utf8)
                        )
                    }
            }
        ) { topics in
            let root = try await enqueue(Self.list, to: topics)
            try await finished.wait("the list and its two details finished") { $0.count == 3 }

            // The spawned ids are the ids the details were sent with.
            let details = try await readAll(from: topics.main).filter { try envelope(of: $0).parent == root.id }
            let detailIDs = try details.map { try envelope(of: $0).id }
            #expect(details.count == 2)

            let messages = try await readAll(from: topics.topic(ofStage: "records"))
            let found = try outcomes(in: messages)
            #expect(messages.count == 3 + 3, "three records and one outcome per job, nothing else")
            #expect(found.count == 3)

            let (rootMessage, rootOutcome) = try #require(found.first { $0.outcome.jobID == root.id })
            #expect(rootOutcome.rootID == root.id)
            #expect(rootOutcome.parentID == nil)
            #expect(rootOutcome.stage == "fetch")
            #expect(rootOutcome.kind == "tmdb.list")
            #expect(rootOutcome.attempt == 1)
            #expect(rootOutcome.outcome == .done)
            #expect(rootOutcome.outputs == ["fetch": 2, "records": 3])
            #expect(Set(rootOutcome.spawned) == Set(detailIDs) && rootOutcome.spawned.count == 2)
            let rootCall = try #require(log.all.first { $0.envelope.id == root.id })
            #expect(rootOutcome.source == rootCall.source)
            #expect(rootMessage.keyString == "job.outcome:\(root.id)")
            // Headers: a child envelope of the job, like any output (and not one of the spawned jobs).
            let headers = try envelope(of: rootMessage)
            #expect(headers.root == root.id && headers.parent == root.id && headers.attempt == 1)
            #expect(!rootOutcome.spawned.contains(headers.id))
            // The records themselves are not jobs: their ids are not among the spawned.
            let recordIDs = try messages.filter { PayloadKind.peek($0.value) == "movie" }.map {
                try envelope(of: $0).id
            }
            #expect(recordIDs.count == 3 && Set(recordIDs).isDisjoint(with: rootOutcome.spawned))

            // Lineage closes: each spawned job has its own outcome, naming the list as its parent.
            for id in rootOutcome.spawned {
                let child = try #require(found.first { $0.outcome.jobID == id }?.outcome, "outcome of \(id)")
                #expect(child.rootID == root.id && child.parentID == root.id)
                #expect(child.kind == "tmdb.movie" && child.outcome == .done)
                #expect(child.outputs.isEmpty && child.spawned.isEmpty)
                #expect(child.source.hasPrefix(topics.main + "/"))
            }
        }
    }

    @Test func aJobHandledTwiceSpawnsTheSameJobsBothTimes() async throws {
        // At-least-once: a job redelivered after a crash before its commit runs again. The same message twice
        // stands for that; its outputs must carry the same ids both times, so the lineage counts them once. The
        // second run sends fewer records before them (a worker leaves out a genre it sent a moment ago): the
        // spawned jobs keep their ids all the same.
        let finished = Observed<[StageJobReport]>([])
        let runs = Mutex(0)
        try await withOutcomeStage(
            finished: finished,
            handler: { job in
                guard case .tmdbList = try FetchJob.decode(job.payload) else { return [] }
                let run = runs.withLock {
                    $0 += 1
                    return $0
                }
                let genres = (0..<(run == 1 ? 3 : 1)).map { id in
                    StageOutput(stage: "records", key: "genre:\(id)", payload: Array(#"{"v":1,"kind":"genre"}"#.utf8))
                }
                return genres
                    + [Int64(1), 2].map { id in
                        let detail = FetchJob.tmdbMovie(id: id, language: "ko-KR", follow: .none)
                        return StageOutput(stage: "fetch", key: detail.dedupeKey, payload: detail.encoded())
                    }
            }
        ) { topics in
            let root = try await enqueue(Self.list, to: topics, times: 2)
            // Two runs of the list, then its two details twice each.
            try await finished.wait("the list twice and its details") { $0.count == 6 }
            let details = try await readAll(from: topics.main).filter { try envelope(of: $0).parent == root.id }
            let ids = try details.map { try envelope(of: $0).id }
            #expect(ids.count == 4)
            #expect(Set(ids).count == 2, "each detail has one id, whichever run of the list sent it")
            let listOutcomes = try outcomes(in: try await readAll(from: topics.topic(ofStage: "records")))
                .filter { $0.outcome.jobID == root.id }
            #expect(listOutcomes.count == 2)
            #expect(listOutcomes.map { Set($0.outcome.spawned) } == [Set(ids), Set(ids)])
        }
    }

    @Test func aPermanentFailureReportsTheDeadLetterWithTheHeadersErrorText() async throws {
        let finished = Observed<[StageJobReport]>([])
        try await withOutcomeStage(
            finished: finished,
            handler: { _ in
                throw StageError.permanent("HTTP 404: movie 550 does not exist")
            }
        ) { topics in
            let root = try await enqueue(StageTests.job, to: topics)
            try await finished.wait("the job finished") { $0.count == 1 }
            let dead = try #require(try await read(1, from: topics.dlq).first)
            let found = try outcomes(in: try await readAll(from: topics.topic(ofStage: "records")))
            let outcome = try #require(found.first?.outcome)
            #expect(found.count == 1)
            #expect(outcome.jobID == root.id && outcome.rootID == root.id && outcome.parentID == nil)
            #expect(outcome.kind == "tmdb.movie" && outcome.attempt == 1)
            #expect(outcome.outcome == .deadLettered(.permanent, error: "HTTP 404: movie 550 does not exist"))
            #expect(outcome.outcome.error == dead.headers.string(Envelope.Header.error))
            #expect(outcome.outcome.tier == nil)
            #expect(outcome.outputs.isEmpty && outcome.spawned.isEmpty)
            #expect(outcome.source.hasPrefix(topics.main + "/"))
        }
    }

    /// One job fails at every attempt and ends in the DLQ; the other fails until it runs from the last tier.
    @Test func eachRetryReportsItsTierUntilTheDeadLetterOrTheLastTiersSuccess() async throws {
        let log = HandlerLog()
        let finished = Observed<[StageJobReport]>([])
        let failing = FetchJob.tmdbMovie(id: 1, language: "en-US", follow: .none)
        let lastTier = FetchJob.tmdbMovie(id: 2, language: "en-US", follow: .none)
        try await withOutcomeStage(
            finished: finished,
            handler: { job in
                log.record(job)
                if job.payload == lastTier.encoded(), job.envelope.attempt == 4 { return [] }
                throw StageError.transient("connection reset (attempt \(job.envelope.attempt))")
            }
        ) { topics in
            let failed = try await enqueue(failing, to: topics)
            let recovered = try await enqueue(lastTier, to: topics)
            try await finished.wait("both jobs ran four times") { $0.count == 8 }
            let dead = try #require(try await read(1, from: topics.dlq).first)
            let found = try outcomes(in: try await readAll(from: topics.topic(ofStage: "records"))).map(\.outcome)
            #expect(found.count == 8)

            for job in [failed, recovered] {
                let reports = found.filter { $0.jobID == job.id }.sorted { $0.attempt < $1.attempt }
                let calls = log.all.filter { $0.envelope.id == job.id }.sorted {
                    $0.envelope.attempt < $1.envelope.attempt
                }
                #expect(reports.map(\.attempt) == [1, 2, 3, 4])
                #expect(calls.count == 4)
                guard reports.count == 4, calls.count == 4 else { continue }
                for (index, report) in reports.enumerated() {
                    #expect(report.rootID == job.id && report.parentID == nil && report.kind == "tmdb.movie")
                    #expect(report.source == calls[index].source, "where that attempt was read")
                }
                #expect(reports[0].source.hasPrefix(topics.main + "/"))
                #expect(reports[3].source.hasPrefix(topics.retry(3) + "/"))
                for tier in 1...3 {
                    let error = "connection reset (attempt \(tier))"
                    #expect(reports[tier - 1].outcome == .retried(tier: tier, error: error))
                    #expect(reports[tier - 1].outcome.errorKind == .transient)
                    // The same text the hop carried in its `marquee-error` header.
                    #expect(calls[tier].envelope.error == error)
                }
            }
            let last = try #require(found.first { $0.jobID == failed.id && $0.attempt == 4 })
            #expect(last.outcome == .deadLettered(.transient, error: "connection reset (attempt 4)"))
            #expect(last.outcome.error == dead.headers.string(Envelope.Header.error))
            #expect(try envelope(of: dead).id == failed.id)
            let done = try #require(found.first { $0.jobID == recovered.id && $0.attempt == 4 })
            #expect(done.outcome == .done && done.outputs.isEmpty)
        }
    }

    /// A payload the handler cannot read is reported when its headers are an envelope; a message without an
    /// envelope has no job id to report and emits nothing.
    @Test func poisonIsReportedOnlyWhenItsEnvelopeCanBeRead() async throws {
        let finished = Observed<[StageJobReport]>([])
        try await withOutcomeStage(
            finished: finished,
            handler: { job in
                do throws(PayloadError) {
                    _ = try FetchJob.decode(job.payload)
                } catch {
                    throw StageError.poison(error)
                }
                return []
            }
        ) { topics in
            let notJSON: [UInt8] = Array(#"{"v":1,"kind":"tmdb.movie","#.utf8)
            let readable = Envelope.root().child()
            _ = try await withProducer { producer in
                try await producer.send([
                    KafkaProducerMessage(
                        topic: topics.main,
                        partition: 0,
                        key: [1],
                        value: notJSON,
                        headers: readable.kafkaHeaders
                    ),
                    KafkaProducerMessage(
                        topic: topics.main,
                        partition: 0,
                        key: [2],
                        value: StageTests.job.encoded(),
                        headers: []
                    ),
                ])
            }
            try await finished.wait("both were dead-lettered") { $0.count == 2 }
            let dead = try await read(2, from: topics.dlq)
            let parked = try #require(dead.first { $0.value == notJSON })
            let messages = try await readAll(from: topics.topic(ofStage: "records"))
            let found = try outcomes(in: messages)
            #expect(messages.count == 1, "one outcome: the message without an envelope emits none")
            let outcome = try #require(found.first?.outcome)
            #expect(
                outcome.jobID == readable.id && outcome.rootID == readable.root && outcome.parentID == readable.parent
            )
            #expect(outcome.kind == "tmdb.movie", "the kind is peeked from the damaged payload")
            #expect(outcome.attempt == 1)
            #expect(outcome.outcome == .deadLettered(.poison, error: "the payload is not JSON"))
            #expect(outcome.outcome.error == parked.headers.string(Envelope.Header.error))
            #expect(outcome.source == parked.headers.string(Envelope.Header.origin))
        }
    }

    /// A job's outcome names the jobs it spawned, and the lineage waits for each of them: the outcome is sent only
    /// once every spawned job is on its topic. Here the stage's producer cannot reach the images topic (it ignores
    /// it in the broker's metadata, as if it did not exist), so the image job cannot be sent: the stage pauses for
    /// the broker with the job uncommitted, and no outcome names a job that is on no topic.
    @Test func anOutcomeIsSentOnlyOnceTheJobsItSpawnedAreOnTheirTopics() async throws {
        var configuration = testStageConfiguration()
        let topics = configuration.topics
        let images = topics.topic(ofStage: "images")
        configuration.outcomeStage = "records"
        configuration.producer = { producer in
            producer.batchMessages = 1
            // A regular expression; the dots in the name match themselves among others.
            producer.kafka.additionalProperties["topic.blacklist"] = "^\(images)$"
            producer.kafka.additionalProperties["topic.metadata.propagation.max.ms"] = "1000"
            producer.kafka.additionalProperties["message.timeout.ms"] = "3000"
        }
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let records = StageTopics(stage: "records", prefix: topics.prefix, tiers: 0)
        _ = try await StageTopics.createAll([topics, records], partitions: 2, admin: admin)
        let detail = FetchJob.tmdbMovie(id: 7, language: "ko-KR", follow: .none)
        let stage = Stage(
            configuration: configuration,
            handler: ClosureHandler(body: { job in
                guard case .tmdbList = try FetchJob.decode(job.payload) else { return [] }
                return [
                    StageOutput(stage: "fetch", key: detail.dedupeKey, payload: detail.encoded()),
                    StageOutput(stage: "images", key: "poster", payload: Array(#"{"v":1,"kind":"image"}"#.utf8)),
                ]
            }),
            logger: .marqueeTest
        )
        let root = try await enqueue(Self.list, to: topics)
        try await whileRunning([stage]) {
            let paused = try await pausedForTheBroker(stage)
            #expect(paused.downReason?.contains(images) == true, "the reason names the topic: \(paused)")
        }
        let found = try outcomes(in: try await readAll(from: records.main)).map(\.outcome)
        #expect(found.filter { $0.jobID == root.id }.isEmpty, "no outcome of the list: \(found)")
    }

    @Test func withoutAnOutcomeStageNothingIsEmitted() async throws {
        let finished = Observed<[StageJobReport]>([])
        try await withOutcomeStage(
            outcomeStage: nil,
            finished: finished,
            handler: { _ in
                [StageOutput(stage: "records", key: "k", payload: Array(#"{"v":1,"kind":"genre"}"#.utf8))]
            }
        ) { topics in
            try await enqueue(StageTests.job, to: topics)
            try await finished.wait("the job finished") { $0.count == 1 }
            let messages = try await readAll(from: topics.topic(ofStage: "records"))
            #expect(messages.map { PayloadKind.peek($0.value) } == ["genre"])
        }
    }
}
