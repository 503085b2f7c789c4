public import Logging
public import MarqueeCore
public import MarqueeKafka
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The runtime every worker shares: consumes a stage's main topic and retry tiers, runs a ``StageHandler`` on
/// each job with bounded concurrency, and routes each outcome (docs/design.md, "Retry tiers" and "Guarantees").
///
/// - Success: the outputs are produced (same root, this job as parent) and the input is committed only after
///   all of them were acknowledged.
/// - Transient failure: the job moves to the next retry tier with `attempt + 1` and a not-before time; after
///   the last tier, to the dead-letter topic.
/// - Permanent failure: the dead-letter topic at once. Poison (unreadable headers or payload): the dead-letter
///   topic with the original bytes and headers, plus the error headers.
///
/// With ``StageConfiguration/outcomeStage`` set, each finished job also emits a `job.outcome` record
/// (``JobOutcome``): with its hop, with its records, or once the jobs it spawned were all acknowledged.
///
/// A retry tier's job whose time has not come is handed back to the consumer (its partition pauses) and runs
/// when due; other partitions go on. On graceful shutdown the stage stops taking jobs, lets in-flight ones finish
/// within ``StageConfiguration/shutdownTimeout`` (what does not finish is left uncommitted, so it runs again
/// elsewhere), flushes, commits and leaves the group.
public final class Stage<Handler: StageHandler>: Service, Sendable {
    private let configuration: StageConfiguration
    private let handler: Handler
    private let logger: Logger
    private let gate: DependencyGate
    private let limiter: AsyncLimiter
    /// The consumer while ``run()`` runs, for ``status``.
    private let consumer = Mutex<KafkaConsumer?>(nil)
    /// The most bytes one produced message may take (the producer's `message.max.bytes`).
    private let messageLimit: Int

    /// Whether the stage can do its work: `false` from a dependency's failure until a job succeeds again (also
    /// while a paused stage tries again, so `/readyz` does not flap between attempts).
    public var isReady: Bool { self.gate.down == nil }

    /// Jobs running now.
    public var inFlight: Int { self.limiter.inUse }

    /// What the stage is doing now: for `/readyz` and the metrics read at scrape time.
    public var status: StageStatus {
        let consumer = self.consumer.withLock { $0 }
        let down = self.gate.down
        return StageStatus(
            isRunning: consumer != nil,
            assignedPartitions: consumer?.assignment.count ?? 0,
            pausedPartitions: consumer?.pausedPartitions.count ?? 0,
            inFlight: self.limiter.inUse,
            uncommitted: consumer?.uncommittedCount ?? 0,
            downDependency: down?.dependency,
            downReason: down?.reason,
            downSince: down?.since,
            credentialsRefused: down?.credentialsRefused ?? false,
            consumerStatistics: consumer?.statistics
        )
    }

    /// - Precondition: ``StageConfiguration/outcomeStage`` is not this stage (its outcomes would never end).
    public init(configuration: StageConfiguration, handler: Handler, logger: Logger) {
        precondition(
            configuration.outcomeStage != configuration.topics.stage,
            "stage '\(configuration.topics.stage)' cannot emit job outcomes to its own topic: each would be a job with an outcome"
        )
        self.configuration = configuration
        self.handler = handler
        var logger = logger
        logger[metadataKey: MarqueeLoggingKeys.stage] = "\(configuration.topics.stage)"
        self.logger = logger
        self.gate = DependencyGate(retry: configuration.dependencyRetry)
        self.limiter = AsyncLimiter(limit: configuration.concurrency)
        self.messageLimit = configuration.producerConfiguration.effectiveMaxMessageBytes
    }

    /// Runs until graceful shutdown (or until the consumer fails, which is thrown).
    public func run() async throws {
        let consumer = try KafkaConsumer(configuration: self.configuration.consumerConfiguration, logger: self.logger)
        let producers: StageProducer
        do {
            let (configuration, logger) = (self.configuration.producerConfiguration, self.logger)
            producers = try StageProducer { () throws(KafkaError) in
                try KafkaProducer(configuration: configuration, logger: logger)
            }
        } catch {
            await consumer.close()
            throw error
        }
        let limiter = self.limiter
        self.consumer.withLock { $0 = consumer }
        defer { self.consumer.withLock { $0 = nil } }
        // Jobs run in tasks of their own, outside the group below: one that does not end when cancelled is left
        // behind (uncommitted) instead of holding the stage open (``finishJobs(_:)``).
        let jobs = StageJobs(onFailure: { consumer.stopMessages() })  // wakes the read loop, which then ends
        var failure: (any Error)?
        do {
            // The group holds the retry tiers' timers, the check of the topics' size limits, and the follower of
            // the rebalances.
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await self.checkTopicLimits() }
                group.addTask { await self.cancelJobsOfRevokedPartitions(consumer: consumer, jobs: jobs) }
                var readFailure: (any Error)?
                do {
                    // On graceful shutdown the messages end; the consumer stays in the group to commit what finishes.
                    try await withGracefulShutdownHandler {
                        for try await message in consumer.messages {
                            if jobs.hasFailed { break }  // a job that could not produce stopped the stage
                            guard
                                let envelope = self.admit(
                                    message,
                                    consumer: consumer,
                                    producers: producers,
                                    group: &group,
                                    jobs: jobs
                                )
                            else {
                                continue
                            }
                            // Closed on shutdown: the message stays uncommitted and runs again elsewhere.
                            guard await limiter.acquire() else { break }
                            // Its partition went to another member while this one waited for a free place (the
                            // consumer serves rebalances meanwhile): the new owner runs it.
                            guard consumer.owns(message) else {
                                limiter.release()
                                continue
                            }
                            let context = JobContext(
                                jobID: envelope.id,
                                kind: PayloadKind.peek(message.value),
                                traceparent: envelope.traceparent,
                                phase: "handling"
                            )
                            jobs.start(context, isOwned: { consumer.owns(message) }) {
                                defer { limiter.release() }
                                let producer = producers.current
                                try await self.brokerDownPauses(
                                    message,
                                    consumer: consumer,
                                    producer: producer,
                                    producers: producers
                                ) {
                                    try await self.process(
                                        message,
                                        envelope: envelope,
                                        context: context,
                                        consumer: consumer,
                                        producer: producer
                                    )
                                }
                            }
                        }
                    } onGracefulShutdown: {
                        limiter.close()  // a read loop waiting for a free place stops waiting
                        consumer.stopMessages()
                    }
                } catch {
                    readFailure = error
                }
                await self.finishJobs(jobs)
                group.cancelAll()  // retry timers
                if let readFailure { throw readFailure }
            }
        } catch is CancellationError {
        } catch {
            failure = error
        }
        failure = jobs.failure ?? failure
        if !(await consumer.close(within: self.configuration.closeTimeout)) {
            self.logger.warning(
                "the consumer did not leave the group within \(self.configuration.closeTimeout) (a rebalance in progress): stopping without waiting; its partitions move to the other members within the session timeout"
            )
        }
        await producers.close()
        if let failure {
            self.logger.critical("stage stopped: \(failure)")
            throw failure
        }
    }

    /// Follows the consumer's rebalances: after each revocation, cancels the jobs of the partitions that went
    /// away. With the eager protocol every revocation takes all of a member's partitions, so every job in flight
    /// then is run again by the next owner, possibly this member under its new assignment; a member cut off from
    /// the group loses its partitions after the session timeout the same way.
    private func cancelJobsOfRevokedPartitions(consumer: KafkaConsumer, jobs: StageJobs) async {
        for await event in consumer.rebalances {
            guard case .revoked(let partitions) = event else { continue }
            let cancelled = jobs.cancelDisowned()
            if cancelled > 0 {
                self.logger.info(
                    "\(Self.jobs(cancelled)) cancelled: their partitions were revoked, and their new owners run them again",
                    metadata: [MarqueeLoggingKeys.topic: "\(partitions.map(\.description).joined(separator: ", "))"]
                )
            }
        }
    }

    /// Warns about each topic under the stage's prefix that takes smaller messages than this stage's producer
    /// (`max.message.bytes` below `message.max.bytes`): what the broker would refuse is said at start, not at the
    /// first large message. A broker that does not report topic configs is trusted.
    private func checkTopicLimits() async {
        let prefix = self.configuration.topics.prefix
        do {
            let admin = try KafkaAdmin(
                configuration: self.configuration.kafka,
                requestTimeout: .seconds(5),
                logger: self.logger
            )
            let topics = try await admin.listTopics().map(\.name).filter { $0.hasPrefix(prefix) }.sorted()
            let configs = try await admin.topicConfigs(topics)
            for topic in topics {
                guard let text = configs[topic]?["max.message.bytes"], let limit = Int(text), limit < self.messageLimit
                else { continue }
                self.logger.warning(
                    "topic '\(topic)' takes messages up to \(limit) bytes (max.message.bytes), less than this worker's --max-message-bytes \(self.messageLimit): a larger output fails its job, a larger dead letter is cut to fit (docs/stage.md, \"Messages too large\")"
                )
            }
        } catch {
            self.logger.debug("could not read the topics' size limits: \(error)")
        }
    }

    /// Reads a message's envelope and checks that it may run now. Returns `nil` when it was dealt with here
    /// (poison, or handed back until its time).
    private func admit(
        _ message: KafkaConsumerMessage,
        consumer: KafkaConsumer,
        producers: StageProducer,
        group: inout ThrowingDiscardingTaskGroup<any Error>,
        jobs: StageJobs
    ) -> Envelope? {
        let envelope: Envelope
        do {
            envelope = try Envelope(headers: message.headers.map { ($0.key, $0.stringValue) })
        } catch {
            jobs.start(JobContext(jobID: nil, kind: PayloadKind.peek(message.value), phase: "dead-lettering poison")) {
                let producer = producers.current
                try await self.brokerDownPauses(message, consumer: consumer, producer: producer, producers: producers) {
                    try await self.deadLetterPoison(
                        message,
                        envelope: nil,
                        reason: error.description,
                        consumer: consumer,
                        producer: producer
                    )
                }
            }
            return nil
        }
        if self.configuration.topics.tier(of: message.topic) != nil, let notBefore = envelope.notBefore {
            let wait = notBefore - Self.nowMilliseconds()
            if wait > 0 {
                // Not yet: give it back (its partition pauses, nothing after it runs) and resume when due.
                consumer.handBack(message)
                let partition = message.topicPartition
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(wait))
                    consumer.resume([partition])
                }
                return nil
            }
        }
        return envelope
    }

    private func process(
        _ message: KafkaConsumerMessage,
        envelope: Envelope,
        context: JobContext,
        consumer: KafkaConsumer,
        producer: KafkaProducer
    ) async throws {
        let job = StageJob(
            envelope: envelope,
            key: message.key,
            payload: message.value,
            source: message.source,
            context: context,
            stageLogger: self.logger
        )
        // Built only when something is logged about the job (the success path logs nothing above debug).
        var logger: Logger { job.logger }
        let started = context.started
        let result: Result<[StageOutput], any Error>
        do {
            result = .success(try await self.handler.handle(job))
        } catch {
            result = .failure(error)
        }
        // Its partition was revoked (or lost) while it ran, and the job was cancelled then: its new owner runs it
        // again from the committed offset. Whatever this run produced now (outputs, a retry hop, a dead letter)
        // would repeat that run's work, so it produces nothing.
        guard consumer.owns(message) else {
            if self.logger.logLevel <= .debug {
                logger.debug("job left to the partition's new owner: its partition was revoked while it ran")
            }
            return
        }
        /// Sends the job to a retry tier or the dead-letter topic, as `error` says.
        func routeFailure(_ error: StageError) async throws {
            context.enter("routing the failure")
            try await self.route(
                message,
                envelope: envelope,
                error: error,
                consumer: consumer,
                producer: producer,
                logger: logger,
                started: started
            )
        }
        let outputs: [StageOutput]
        switch result {
        case .success(let produced):
            outputs = produced
        case .failure(let error as StageError) where error.hold != nil:
            context.enter("holding the job")
            if try await self.hold(
                message,
                envelope: envelope,
                error: error,
                consumer: consumer,
                producer: producer,
                logger: logger,
                started: started
            ) {
                return
            }
            await self.dependencyDown(message, error: error, consumer: consumer, logger: logger)
            return
        case .failure(let error as StageError) where error.dependency != nil:
            context.enter("handing back: a dependency is down")
            await self.dependencyDown(message, error: error, consumer: consumer, logger: logger)
            return
        case .failure(let error as StageError):
            try await routeFailure(error)
            return
        case .failure(is CancellationError):
            logger.warning("job cancelled at shutdown; handed back uncommitted")
            return
        case .failure(let error as any RetriableError):
            // A module's error says itself whether a retry can help.
            let reason = error.description
            try await routeFailure(error.isRetriable ? .transient(reason) : .permanent(reason))
            return
        case .failure(let error):
            try await routeFailure(.transient(String(describing: error)))
            return
        }
        context.enter("delivering outputs")
        let outcomeStage = self.configuration.outcomeStage
        var messages: [KafkaProducerMessage] = []
        messages.reserveCapacity(outputs.count + 1)
        // Each output's child envelope is made once: the ids sent are the ids the outcome lists as spawned. The ids
        // derive from this job's id, the output's stage and key, and its place among the outputs to that stage, so a
        // redelivered job re-sends the same ids even when a run sends a different number of outputs to another stage
        // (a genre record a worker sent a moment ago is left out, …).
        // `counts` holds how many outputs went to each stage so far: each output's place, and the outcome's figures.
        var counts: [String: Int] = [:]
        var spawned: [JobID] = []
        if outcomeStage != nil { spawned.reserveCapacity(outputs.count) }
        let children = envelope.children
        // Outputs come grouped by stage (records, then image jobs, then follow-ups): each topic name is made once
        // per run of equal stages.
        var topicStage: String?
        var topic = ""
        for output in outputs {
            if topicStage != output.stage {
                topicStage = output.stage
                topic = self.configuration.topics.topic(ofStage: output.stage)
            }
            let place = counts[output.stage, default: 0]
            counts[output.stage] = place + 1
            var child = children.child(output: place, stage: output.stage, key: output.key)
            if let refresh = output.refresh { child.refresh = refresh }
            messages.append(
                KafkaProducerMessage(
                    topic: topic,
                    key: Array(output.key.utf8),
                    value: output.payload,
                    headers: child.kafkaHeaders
                )
            )
            if let outcomeStage, output.stage != outcomeStage { spawned.append(child.id) }
        }
        let kind = context.kind
        let outcome = self.outcomeMessage(
            .done,
            of: message,
            envelope: envelope,
            kind: kind,
            outputs: counts,
            spawned: spawned
        )
        // An output too large for its topic can never be produced: the job fails permanently, the stage goes on.
        if let tooLarge = messages.first(where: { MessageSize.of($0) > self.messageLimit })
            ?? outcome.flatMap({ MessageSize.of($0) > self.messageLimit ? $0 : nil })
        {
            let size = MessageSize.of(tooLarge)
            let reason =
                "an output for '\(tooLarge.topic)' is \(MessageSize.text(size)), over the \(MessageSize.text(self.messageLimit)) limit of a message (--max-message-bytes)"
            try await routeFailure(.permanent(reason))
            return
        }
        // The outcome names the jobs this one spawned, and the lineage waits for each of them (`marquee drain`):
        // it is sent only once they are all on their topics. Sent with them, it could be acknowledged while a
        // spawned job was lost (a broker outage, a kill -9), and a rerun that spawns other jobs (its request
        // answered 304) would never send that one. Without spawned jobs it goes with the records.
        var last: [KafkaProducerMessage] = []
        if let outcome {
            if spawned.isEmpty { messages.append(outcome) } else { last.append(outcome) }
        }
        // A failure to produce is not the job's fault: it stops the stage (the job stays uncommitted). Except an
        // output the broker refuses as too large for its topic (`max.message.bytes` below this producer's limit).
        var refused = try await Self.deliver(messages, producer: producer)
        if refused == nil, !last.isEmpty { refused = try await Self.deliver(last, producer: producer) }
        if let refused {
            let reason =
                "the broker refused an output as too large for its topic (the topic's max.message.bytes is below --max-message-bytes): \(refused.reason)"
            try await routeFailure(.permanent(reason))
            return
        }
        context.enter("after delivery")
        await context.runAfterDelivery()
        consumer.markProcessed(message)
        self.configuration.onJobFinished?(
            StageJobReport(
                kind: kind,
                outcome: .succeeded(outputs: outputs.count),
                duration: .now - started,
                jobID: envelope.id
            )
        )
        if let dependency = self.gate.succeeded() {
            logger.notice("\(dependency) is back: the stage is ready")
        }
        if self.logger.logLevel <= .debug {
            logger.debug("job done", metadata: [MarqueeLoggingKeys.outputs: "\(outputs.count)"])
        }
    }

    private func route(
        _ message: KafkaConsumerMessage,
        envelope: Envelope,
        error: StageError,
        consumer: KafkaConsumer,
        producer: KafkaProducer,
        logger: Logger,
        started: ContinuousClock.Instant
    ) async throws {
        if error.kind == .poison {
            try await self.deadLetterPoison(
                message,
                envelope: envelope,
                reason: error.reason,
                consumer: consumer,
                producer: producer
            )
            return
        }
        var error = error
        var next = envelope
        next.origin = envelope.origin ?? message.source
        next.notBefore = nil
        let topics = self.configuration.topics
        let kind = PayloadKind.peek(message.value)
        if error.kind == .transient,
            case .retry(let tier, let notBefore) = self.configuration.retry.decide(
                currentTier: topics.tier(of: message.topic) ?? 0,
                minimumWait: error.minimumWait,
                nowMilliseconds: Self.nowMilliseconds()
            )
        {
            let errorText = String(error.reason.prefix(JobOutcome.maxErrorLength))
            next.error = errorText
            next.errorKind = error.kind
            next.attempt = envelope.attempt + 1
            next.notBefore = notBefore
            let hop = KafkaProducerMessage(
                topic: topics.retry(tier),
                key: message.key,
                value: message.value,
                headers: next.kafkaHeaders
            )
            if MessageSize.of(hop) <= self.messageLimit {
                logger.info(
                    "job failed, retrying",
                    metadata: [MarqueeLoggingKeys.error: "\(errorText)", MarqueeLoggingKeys.topic: "\(hop.topic)"]
                )
                var messages = [hop]
                if let record = self.outcomeMessage(
                    .retried(tier: tier, error: errorText),
                    of: message,
                    envelope: envelope,
                    kind: kind
                ) {
                    messages.append(record)
                }
                try await producer.deliver(messages)
                consumer.markProcessed(message)
                self.configuration.onJobFinished?(
                    StageJobReport(
                        kind: kind,
                        outcome: .retried(tier: tier),
                        duration: .now - started,
                        jobID: envelope.id
                    )
                )
                return
            }
            // A job too large to be produced again cannot wait in a retry tier: it ends here.
            error = .permanent("\(error.reason); too large to retry (\(MessageSize.text(message.value.count)))")
            next.attempt = envelope.attempt
            next.notBefore = nil
        }
        let errorText = String(error.reason.prefix(JobOutcome.maxErrorLength))
        next.error = errorText
        next.errorKind = error.kind
        logger.warning(
            "job dead-lettered",
            metadata: [
                MarqueeLoggingKeys.error: "\(errorText)", MarqueeLoggingKeys.errorKind: "\(error.kind.rawValue)",
            ]
        )
        let letter = KafkaProducerMessage(
            topic: topics.dlq,
            key: message.key,
            value: message.value,
            headers: next.kafkaHeaders
        )
        let record = self.outcomeMessage(
            .deadLettered(error.kind, error: errorText),
            of: message,
            envelope: envelope,
            kind: kind
        )
        try await self.deliverLetter(letter, of: message, outcome: record, consumer: consumer, producer: producer)
        self.configuration.onJobFinished?(
            StageJobReport(kind: kind, outcome: .deadLettered(error.kind), duration: .now - started, jobID: envelope.id)
        )
    }

    /// Produces a dead letter, then its job's outcome, and commits: the outcome goes out only once its letter is
    /// stored, so no outcome names a letter that does not exist; the commit at once keeps a restart from writing
    /// the letter again. A letter too large for the producer's limit (or refused by the broker as too large for
    /// the topic) keeps what fits, with the original's size and SHA-256, and the whole original where
    /// ``StageConfiguration/keepOversized`` keeps it.
    private func deliverLetter(
        _ letter: KafkaProducerMessage,
        of message: KafkaConsumerMessage,
        outcome: KafkaProducerMessage?,
        consumer: KafkaConsumer,
        producer: KafkaProducer
    ) async throws {
        var location: String?
        var sent = letter
        if MessageSize.of(letter) > self.messageLimit {
            location = await self.keepOversized(message)
            sent = MessageSize.shrink(letter, limit: self.messageLimit, location: location)
        }
        if try await Self.deliver([sent], producer: producer) != nil {
            // The topic takes less than this producer's limit: keep the least that identifies the original.
            if location == nil { location = await self.keepOversized(message) }
            sent = MessageSize.shrink(letter, limit: min(self.messageLimit, Self.smallLetterBytes), location: location)
            try await producer.deliver([sent])
        }
        if let outcome { try await producer.deliver([outcome]) }
        consumer.markProcessed(message)
        do {
            try await consumer.commit()
        } catch {
            self.logger.warning("could not commit after a dead letter: \(error)")
        }
    }

    /// Delivers `messages`; returns the error when the broker (or the producer) refused one as too large, and
    /// throws any other failure.
    private static func deliver(_ messages: [KafkaProducerMessage], producer: KafkaProducer) async throws -> KafkaError?
    {
        do {
            try await producer.deliver(messages)
            return nil
        } catch {
            guard error.rdKafkaCode == .messageSizeTooLarge else { throw error }
            return error
        }
    }

    /// The size a letter is cut to when the broker refused it as too large for the DLQ topic.
    static var smallLetterBytes: Int { 64 * 1024 }

    /// Keeps the whole original of an oversized letter (``StageConfiguration/keepOversized``); its location, or
    /// `nil` when none is configured or keeping failed.
    private func keepOversized(_ message: KafkaConsumerMessage) async -> String? {
        guard let keep = self.configuration.keepOversized else { return nil }
        do {
            return try await keep("dlq/\(message.topic)/\(message.partition)/\(message.offset)", message.value)
        } catch {
            self.logger.warning(
                "could not keep the original of an oversized dead letter; the letter keeps what fits",
                metadata: [MarqueeLoggingKeys.source: "\(message.source)", MarqueeLoggingKeys.error: "\(error)"]
            )
            return nil
        }
    }

    /// Parks a job that cannot run now (``StageError/held(_:wait:)``) in a retry tier until its wait has passed,
    /// with its attempt unchanged: the job runs again then, and a hold never dead-letters it. Returns `false`
    /// when the stage has no retry tiers (the caller then pauses the stage instead).
    private func hold(
        _ message: KafkaConsumerMessage,
        envelope: Envelope,
        error: StageError,
        consumer: KafkaConsumer,
        producer: KafkaProducer,
        logger: Logger,
        started: ContinuousClock.Instant
    ) async throws -> Bool {
        guard let wait = error.hold,
            let (tier, notBefore) = self.configuration.retry.hold(wait: wait, nowMilliseconds: Self.nowMilliseconds())
        else { return false }
        let errorText = String(("held: " + error.reason).prefix(JobOutcome.maxErrorLength))
        var next = envelope
        next.origin = envelope.origin ?? message.source
        next.error = errorText
        next.errorKind = .transient
        next.notBefore = notBefore
        let target = self.configuration.topics.retry(tier)
        let kind = PayloadKind.peek(message.value)
        let hop = KafkaProducerMessage(
            topic: target,
            key: message.key,
            value: message.value,
            headers: next.kafkaHeaders
        )
        guard MessageSize.of(hop) <= self.messageLimit else {
            let reason = "\(error.reason); too large to hold (\(MessageSize.text(message.value.count)))"
            try await self.route(
                message,
                envelope: envelope,
                error: .permanent(reason),
                consumer: consumer,
                producer: producer,
                logger: logger,
                started: started
            )
            return true
        }
        var messages = [hop]
        if let record = self.outcomeMessage(
            .retried(tier: tier, error: errorText),
            of: message,
            envelope: envelope,
            kind: kind
        ) {
            messages.append(record)
        }
        try await producer.deliver(messages)
        consumer.markProcessed(message)
        self.configuration.onJobFinished?(
            StageJobReport(kind: kind, outcome: .held(tier: tier), duration: .now - started, jobID: envelope.id)
        )
        if self.logger.logLevel <= .debug {
            logger.debug(
                "job held",
                metadata: [MarqueeLoggingKeys.error: "\(error.reason)", MarqueeLoggingKeys.topic: "\(target)"]
            )
        }
        return true
    }

    /// Runs a job's work; when the broker does not take what the job sends (its outputs, a retry hop, a dead
    /// letter: an outage longer than the delivery timeout, every broker down, a full queue), the broker is a
    /// dependency that is down like any other: the job is handed back uncommitted and the stage pauses, instead of
    /// the failure stopping the stage and the worker with it. What the job sent before the failure may be sent
    /// again when it runs again (at least once, as after a kill). A producer the failure left unusable (fenced,
    /// fatal) is replaced by a new one first, which the job uses when it runs again.
    private func brokerDownPauses(
        _ message: KafkaConsumerMessage,
        consumer: KafkaConsumer,
        producer: KafkaProducer,
        producers: StageProducer,
        _ work: () async throws -> Void
    ) async throws {
        do {
            try await work()
        } catch let error as KafkaError where error.isRetriable || error.leavesProducerUnusable {
            if error.leavesProducerUnusable, try producers.replace(producer) {
                self.logger.warning(
                    "the producer is unusable: replaced by a new one",
                    metadata: [MarqueeLoggingKeys.error: "\(error.reason)"]
                )
            }
            // Cancelled meanwhile: its partition was revoked or lost (a consumer cut off from the broker loses its
            // partitions after the session timeout), or the worker stops. The job stays uncommitted and the
            // partition's owner runs it again; pausing here would pause for a job that is no longer this one's.
            guard !Task.isCancelled else {
                self.logger.info(
                    "job left uncommitted: cancelled while the broker had not acknowledged what it sent",
                    metadata: [MarqueeLoggingKeys.error: "\(error.reason)"]
                )
                return
            }
            await self.dependencyDown(
                message,
                error: .dependencyDown("the broker", error.reason),
                consumer: consumer,
                logger: self.logger
            )
        }
    }

    /// A dependency every job needs is down: give the job back, pause every partition (the stage is not ready),
    /// and after a backoff resume them so the job runs again; if the dependency is still down, the next failure
    /// pauses again with a longer backoff. Nothing goes to the retry tiers or the DLQ meanwhile.
    private func dependencyDown(
        _ message: KafkaConsumerMessage,
        error: StageError,
        consumer: KafkaConsumer,
        logger: Logger
    ) async {
        consumer.handBack(message)
        guard
            let backoff = self.gate.down(
                error.dependency ?? "a dependency",
                reason: error.reason,
                minimumWait: error.minimumWait,
                credentialsRefused: error.credentialsRefused,
                now: Self.nowMilliseconds()
            )
        else {
            return  // another job already paused the stage
        }
        consumer.pause(consumer.assignment)
        let state = error.credentialsRefused ? "refuses this worker's credentials" : "is down"
        let message: Logger.Message =
            "\(error.dependency ?? "a dependency") \(state): pausing the stage, trying again in \(backoff)"
        if error.credentialsRefused {
            logger.error(message, metadata: [MarqueeLoggingKeys.error: "\(error.reason)"])
        } else {
            logger.warning(message, metadata: [MarqueeLoggingKeys.error: "\(error.reason)"])
        }
        do {
            try await Task.sleep(for: backoff)
        } catch {
            // Cancelled: at shutdown (nothing reads any more), or because this job's partition was revoked. The
            // pause is the stage's, not the job's, so it ends either way: left down, the gate would keep every
            // later failure from pausing and resuming, and the partitions those failures hand back would stay
            // paused for good.
        }
        self.gate.retrying()
        consumer.resume(consumer.assignment)
    }

    /// Parks an unreadable message in the DLQ byte for byte: its original headers, then the error headers.
    ///
    /// - Parameters:
    ///   - envelope: The message's envelope when its headers could be read (the payload was the poison): its
    ///     outcome is emitted with the dead letter. `nil` when the headers are no envelope: there is no job id to
    ///     report, so no outcome is emitted (the DLQ holds the message).
    private func deadLetterPoison(
        _ message: KafkaConsumerMessage,
        envelope: Envelope?,
        reason: String,
        consumer: KafkaConsumer,
        producer: KafkaProducer
    ) async throws {
        let errorText = String(reason.prefix(JobOutcome.maxErrorLength))
        let kind = PayloadKind.peek(message.value)
        var headers = message.headers
        headers.append(
            KafkaHeader(
                key: Envelope.Header.origin,
                value: message.headers.string(Envelope.Header.origin) ?? message.source
            )
        )
        headers.append(KafkaHeader(key: Envelope.Header.error, value: errorText))
        headers.append(KafkaHeader(key: Envelope.Header.errorKind, value: Envelope.ErrorKind.poison.rawValue))
        let letter = KafkaProducerMessage(
            topic: self.configuration.topics.dlq,
            key: message.key,
            value: message.value,
            headers: headers
        )
        let record = envelope.flatMap {
            self.outcomeMessage(.deadLettered(.poison, error: errorText), of: message, envelope: $0, kind: kind)
        }
        try await self.deliverLetter(letter, of: message, outcome: record, consumer: consumer, producer: producer)
        self.configuration.onJobFinished?(
            StageJobReport(kind: kind, outcome: .deadLettered(.poison), duration: .zero, jobID: envelope?.id)
        )
        let logger = envelope.map { self.logger.job($0, source: message.source, kind: kind) } ?? self.logger
        logger.warning(
            "poison message dead-lettered",
            metadata: [MarqueeLoggingKeys.source: "\(message.source)", MarqueeLoggingKeys.error: "\(reason)"]
        )
    }

    /// The `job.outcome` message of a finished job (``StageConfiguration/outcomeStage``), or `nil` when the stage
    /// emits none: keyed `job.outcome:<job id>`, with a child envelope of the job as headers.
    private func outcomeMessage(
        _ outcome: JobOutcome.Outcome,
        of message: KafkaConsumerMessage,
        envelope: Envelope,
        kind: String,
        outputs: [String: Int] = [:],
        spawned: [JobID] = []
    ) -> KafkaProducerMessage? {
        guard let outcomeStage = self.configuration.outcomeStage else { return nil }
        let record = JobOutcome(
            envelope: envelope,
            stage: self.configuration.topics.stage,
            kind: kind,
            outcome: outcome,
            outputs: outputs,
            spawned: spawned,
            source: message.source,
            finishedAt: Self.nowMilliseconds()
        )
        return KafkaProducerMessage(
            topic: self.configuration.topics.topic(ofStage: outcomeStage),
            key: Array(record.recordKey.utf8),
            value: record.encodedRecord(),
            headers: envelope.child().kafkaHeaders
        )
    }

    /// Waits for in-flight jobs, at most the shutdown timeout (none after a job failed to produce); cancels what is
    /// left, and leaves behind what does not end within the cancellation grace. Each job not done in time is
    /// logged with its phase: a job left behind waited on something that ignores cancellation.
    private func finishJobs(_ jobs: StageJobs) async {
        let timeout = self.configuration.shutdownTimeout
        let grace = self.configuration.cancellationGrace
        if jobs.failure == nil {
            // The stage's own task cancelled (not a graceful shutdown): the jobs are cancelled at once.
            let idle = await withTaskCancellationHandler {
                await jobs.waitUntilIdle(timeout: timeout)
            } onCancel: {
                jobs.cancelAll()
            }
            if idle { return }
        }
        let running = jobs.snapshot()
        if jobs.failure == nil, !running.isEmpty {
            self.logger.warning(
                "\(Self.jobs(running.count)) still running after \(timeout): cancelling them (uncommitted, they run again)"
            )
            self.logJobs(running, level: .warning, "job cancelled at shutdown")
        }
        jobs.cancelAll()
        guard await !jobs.waitUntilIdle(timeout: grace) else { return }
        let stuck = jobs.snapshot()
        self.logger.error(
            "\(Self.jobs(stuck.count)) did not end within \(grace) of being cancelled: leaving them behind uncommitted (they run again on the member that reads their partition next)"
        )
        self.logJobs(stuck, level: .error, "job left behind: it waits on something that ignores cancellation")
    }

    /// One line per job (at most 20, then a count), each naming the job, its phase and how long it has been in it.
    private func logJobs(_ jobs: [JobContext], level: Logger.Level, _ message: Logger.Message) {
        let now = ContinuousClock.now
        for job in jobs.prefix(20) {
            let phase = job.currentPhase(at: now)
            var metadata: Logger.Metadata = [
                MarqueeLoggingKeys.jobID: "\(job.jobID.map { "\($0)" } ?? "none")",
                MarqueeLoggingKeys.kind: "\(job.kind)",
                MarqueeLoggingKeys.phase: "\(phase.name)",
                MarqueeLoggingKeys.phaseDuration: "\(phase.duration)",
                MarqueeLoggingKeys.jobDuration: "\(now - job.started)",
            ]
            if let traceID = job.traceparent.flatMap({ TraceContext.traceID(of: $0) }) {
                metadata[MarqueeLoggingKeys.traceID] = "\(traceID)"
            }
            self.logger.log(level: level, message, metadata: metadata)
        }
        if jobs.count > 20 {
            self.logger.log(level: level, "… and \(jobs.count - 20) more")
        }
    }

    /// "1 job", "2 jobs".
    private static func jobs(_ count: Int) -> String { count == 1 ? "1 job" : "\(count) jobs" }

    static func nowMilliseconds() -> Int64 { Int64(JobID.nowMilliseconds()) }
}

extension Envelope {
    /// The envelope as Kafka headers (each value kept as its text: no byte array per header).
    public var kafkaHeaders: [KafkaHeader] {
        var headers: [KafkaHeader] = []
        headers.reserveCapacity(self.headerCount)
        self.forEachHeader { headers.append(KafkaHeader(key: $0, value: $1)) }
        return headers
    }
}

extension KafkaConsumerMessage {
    /// `topic/partition/offset`.
    public var source: String { "\(self.topic)/\(self.partition)/\(self.offset)" }
}

/// Log metadata keys of the stage runtime.
public enum MarqueeLoggingKeys {
    public static let stage = "marquee.stage"
    public static let jobID = "marquee.job.id"
    public static let attempt = "marquee.job.attempt"
    public static let kind = "marquee.job.kind"
    public static let source = "marquee.source"
    public static let topic = "marquee.topic"
    public static let error = "marquee.error"
    public static let errorKind = "marquee.error.kind"
    public static let outputs = "marquee.outputs"
    /// What a job was doing (``StageJob/enter(_:)``), in the shutdown's lines about jobs not done in time.
    public static let phase = "marquee.job.phase"
    /// How long the job had been in that phase.
    public static let phaseDuration = "marquee.job.phase_duration"
    /// How long the job had been running.
    public static let jobDuration = "marquee.job.duration"
    /// The trace id of the job's `traceparent` (``Envelope/traceID``). Named as OpenTelemetry's log data model
    /// names it, so log pipelines correlate the lines of a job with its trace without a mapping.
    public static let traceID = "trace_id"
}

extension Logger {
    /// This logger with the metadata every line about one job carries: its id, attempt, source and kind, and its
    /// trace id when its envelope has a `traceparent`.
    func job(_ envelope: Envelope, source: String, kind: String) -> Logger {
        var logger = self
        logger[metadataKey: MarqueeLoggingKeys.jobID] = "\(envelope.id)"
        logger[metadataKey: MarqueeLoggingKeys.attempt] = "\(envelope.attempt)"
        logger[metadataKey: MarqueeLoggingKeys.source] = "\(source)"
        logger[metadataKey: MarqueeLoggingKeys.kind] = "\(kind)"
        if let traceID = envelope.traceID { logger[metadataKey: MarqueeLoggingKeys.traceID] = "\(traceID)" }
        return logger
    }
}

/// Whether a dependency every job needs is down, and how long to wait before trying again.
final class DependencyGate: Sendable {
    private struct State {
        var isDown = false
        var dependency: String?
        var reason: String?
        /// The first failure (epoch ms) since the last success.
        var since: Int64?
        var credentialsRefused = false
        var backoff: Duration
        /// A pause happened since the last success: the stage is not ready, and the next success logs "is back".
        var wasDown = false
    }

    private let retry: ClosedRange<Duration>
    private let state: Mutex<State>

    init(retry: ClosedRange<Duration>) {
        self.retry = retry
        self.state = Mutex(State(backoff: retry.lowerBound))
    }

    var isDown: Bool { self.state.withLock { $0.isDown } }

    /// The dependency that is down, why, since when (epoch ms) and whether it refused the credentials: from its
    /// failure until a job succeeds again (while the stage is paused, and while it tries again after the pause).
    var down: (dependency: String, reason: String, since: Int64?, credentialsRefused: Bool)? {
        self.state.withLock { state in
            guard state.wasDown else { return nil }
            return (state.dependency ?? "a dependency", state.reason ?? "", state.since, state.credentialsRefused)
        }
    }

    /// Marks the dependency down at `now` (epoch ms). Returns how long to pause, or `nil` when the stage is
    /// already paused.
    func down(
        _ dependency: String,
        reason: String,
        minimumWait: Duration?,
        credentialsRefused: Bool = false,
        now: Int64
    ) -> Duration? {
        self.state.withLock { state in
            guard !state.isDown else { return nil }
            if !state.wasDown { state.since = now }
            state.isDown = true
            state.wasDown = true
            state.dependency = dependency
            state.reason = reason
            state.credentialsRefused = credentialsRefused
            let wait = max(state.backoff, minimumWait ?? .zero)
            state.backoff = min(state.backoff * 2, self.retry.upperBound)
            return wait
        }
    }

    /// The pause is over: jobs run again (and tell whether the dependency is back).
    func retrying() {
        self.state.withLock { $0.isDown = false }
    }

    /// A job succeeded. Returns the dependency's name when this ends a period of it being down.
    func succeeded() -> String? {
        self.state.withLock { state in
            state.backoff = self.retry.lowerBound
            guard state.wasDown, !state.isDown else { return nil }
            state.wasDown = false
            state.since = nil
            state.credentialsRefused = false
            return state.dependency
        }
    }
}
