internal import Crdkafka
public import Logging
import MarqueeCore
public import ServiceLifecycle
import Synchronization

/// A member of a consumer group that hands out messages and commits only what was processed.
///
/// Messages arrive through ``messages`` (an `AsyncSequence`). Call ``markProcessed(_:)`` when a message's work is
/// durable; the consumer commits, per partition, the highest offset below which every message was processed, in
/// the background every ``KafkaConsumerConfiguration/commitInterval``, on ``commit()``, when a partition is revoked
/// and on close. A message handed out but never marked processed is delivered again after a restart or rebalance.
///
/// Iterating ``messages`` reads librdkafka's queue in batches without blocking and serves the group protocol
/// (rebalances) on the way; when the queue is empty the task suspends until librdkafka says something arrived.
///
/// As a `Service`, the consumer runs until graceful shutdown, then commits and leaves the group.
public final class KafkaConsumer: Service, Sendable {
    let client: RDKafkaClient
    private let core: ConsumerCore
    private let logger: Logger

    /// Creates the consumer, subscribes to the configured topics and starts polling.
    ///
    /// The first poll checks that a broker answers; if none does within
    /// ``KafkaConfiguration/connectTimeout``, ``messages`` throws ``KafkaError/Code-swift.struct/brokerUnreachable``.
    ///
    /// - Throws: A ``KafkaError`` when the configuration is invalid or the subscription is refused.
    public init(configuration: KafkaConsumerConfiguration, logger: Logger) throws(KafkaError) {
        try configuration.validate()
        var logger = logger
        logger[metadataKey: MarqueeKafkaLoggingKeys.group] = "\(configuration.groupID)"
        self.logger = logger
        let core = ConsumerCore(batchSize: configuration.readBatchSize, logger: logger)
        self.core = core
        let context = RDKafkaClientContext(logger: logger) { handle, code, partitions in
            core.rebalance(handle: handle, code: code, partitions: partitions)
        }
        self.client = try RDKafkaClient(kind: .consumer, properties: configuration.properties, context: context) {
            conf in
            rd_kafka_conf_set_rebalance_cb(conf) { handle, code, partitions, _ in
                guard let handle, let partitions, let context = RDKafkaClientContext.from(handle) else { return }
                context.rebalance?(handle, code, partitions)
            }
        }
        // Serve every event (errors, statistics, rebalances) from the consumer queue, read by `messages`.
        rd_kafka_poll_set_consumer(self.client.handle)
        core.attach(self.client)
        let list = RDKafkaTopicPartitionList(topics: configuration.topics)
        let code = RDKafkaCode(rd_kafka_subscribe(self.client.handle, list.pointer))
        guard code == .noError else {
            core.beginClose()
            throw .rdKafka(
                .consumer,
                code,
                context: "could not subscribe to \(configuration.topics.joined(separator: ", "))"
            )
        }
        core.probe(timeout: configuration.kafka.connectTimeout)
        // Ends with the consumer's close. Stops serving half-way through max.poll.interval.ms without an ask, so
        // a hung application still leaves the group.
        let maxIdle = configuration.maxPollInterval / 2
        Task { await core.serveGroupWhileBusy(interval: .milliseconds(250), maxIdle: maxIdle) }
    }

    deinit {
        if !self.core.closed.isFired {
            // The close sequence keeps the client alive until it has left the group.
            self.logger.warning("KafkaConsumer released without close(): leaving the group now")
            self.core.beginClose()
        }
    }

    /// The messages of the subscribed topics, in offset order per partition.
    ///
    /// Iterate it from one task. The sequence ends when the consumer is closed, and throws when the consumer
    /// failed (for example, no broker answered at start-up).
    public var messages: KafkaConsumerMessages { KafkaConsumerMessages(core: self.core) }

    /// The latest statistics JSON librdkafka emitted (see ``KafkaConfiguration/statisticsInterval``).
    public var statistics: String? { self.client.context.statistics.withLock { $0 } }

    /// librdkafka's statistics JSON each time it is emitted, for a metrics exporter (one reader; when it falls
    /// behind, only the newest is kept). Ends when the consumer is released.
    public var statisticsUpdates: AsyncStream<String> { self.client.context.statisticsUpdates }

    /// Assignments and revocations as they happen (one reader; the newest 64 are kept when nobody reads).
    /// Ends when the consumer closes.
    ///
    /// - Note: Rebalances are served while ``messages`` is being iterated.
    public var rebalances: AsyncStream<KafkaRebalanceEvent> { self.core.rebalances }

    /// The partitions currently assigned to this member.
    public var assignment: [KafkaTopicPartition] { self.core.assignment }

    /// Messages handed out whose offsets cannot be committed yet: in the application's hands, or processed
    /// behind one that is. What the partitions' next owner would read again (besides what was processed since the
    /// last commit).
    public var uncommittedCount: Int { self.core.uncommittedCount }

    /// The assigned partitions paused now (by ``pause(_:)`` or ``handBack(_:)``).
    public var pausedPartitions: [KafkaTopicPartition] { self.core.pausedPartitions }

    /// Records that a message's work is done, so its offset may be committed once every earlier message of its
    /// partition is done too. Messages of a partition that was revoked since are ignored.
    public func markProcessed(_ message: KafkaConsumerMessage) {
        self.core.markProcessed(message)
    }

    /// Commits the processed offsets now and waits for the broker's answer.
    ///
    /// - Throws: A ``KafkaError`` with code ``KafkaError/Code-swift.struct/commit`` when the broker refused it.
    public func commit() async throws(KafkaError) {
        await self.core.storeProcessedOffsets()
        let client = self.client
        // rd_kafka_commit with async=0 blocks until the broker answers: keep it off the cooperative pool.
        let code = await BlockingExecutor.run { RDKafkaCode(rd_kafka_commit(client.handle, nil, 0)) }
        guard code == .noError || code == .noOffset else {
            throw .rdKafka(.commit, code, context: "offset commit failed")
        }
    }

    /// Whether the message's partition is still assigned to this member as it was when the message was handed
    /// out. A message whose partition was revoked meanwhile is its next owner's to run (it starts from the
    /// committed offset, which is not past an unprocessed message).
    public func owns(_ message: KafkaConsumerMessage) -> Bool {
        self.core.owns(message)
    }

    /// Stops handing out messages of these partitions until ``resume(_:)``.
    ///
    /// Messages fetched but not yet handed out are dropped and fetched again on resume, so pausing loses nothing
    /// and does not hold other partitions back. Partitions not assigned to this member are ignored.
    public func pause(_ partitions: [KafkaTopicPartition]) {
        self.core.pause(partitions)
    }

    /// Gives a handed-out message back: pauses its partition and, on ``resume(_:)``, fetches again from this
    /// message on, so it is handed out once more. For a message that must not run yet (a retry whose time has
    /// not come). Nothing after it in the partition is handed out meanwhile.
    ///
    /// Works on a paused partition too (the restart point moves back to the earliest handed-back message).
    /// Ignored when the message's partition is no longer assigned to this member.
    public func handBack(_ message: KafkaConsumerMessage) {
        self.core.pause([message.topicPartition], handingBack: message)
    }

    /// Resumes partitions paused with ``pause(_:)``.
    public func resume(_ partitions: [KafkaTopicPartition]) {
        self.core.resume(partitions)
    }

    /// Ends ``messages`` (iterations return `nil`) while the consumer stays in the group, so work in flight
    /// can still be marked processed and committed before ``close()``. Messages read but not handed out are
    /// not committed: they are delivered again to whoever consumes the partition next.
    public func stopMessages() {
        self.core.stopMessages()
    }

    /// Ends ``messages``, commits what was processed and leaves the group.
    public func close() async {
        self.core.beginClose()
        await self.core.closed.wait()
    }

    /// ``close()``, waiting at most `timeout` for it. Leaving the group can take as long as the group's
    /// rebalance (a member rejoining after a network partition waits for the others); a process that stops does
    /// not wait for it: the close goes on on the blocking pool, and the partitions move to the others after the
    /// session timeout at the latest. Returns whether the close completed in time.
    @discardableResult
    public func close(within timeout: Duration) async -> Bool {
        self.core.beginClose()
        let core = self.core
        do {
            try await answer(within: timeout) { await core.closed.wait() }
            return true
        } catch {
            return false
        }
    }

    /// Runs until graceful shutdown, then closes. Ends early, with the error, when the consumer failed (for
    /// example, no broker answered at start-up).
    public func run() async throws {
        await withGracefulShutdownHandler {
            await self.core.closed.wait()
        } onGracefulShutdown: {
            self.core.beginClose()
        }
        if let error = self.core.failure { throw error }
    }
}

/// The messages of a ``KafkaConsumer``.
public struct KafkaConsumerMessages: AsyncSequence, Sendable {
    public typealias Element = KafkaConsumerMessage
    public typealias Failure = KafkaError

    let core: ConsumerCore

    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let core: ConsumerCore

        init(core: ConsumerCore) { self.core = core }

        // Inlinable so that the fast path (a buffered message) runs in the caller's context: a call through the
        // isolation parameter otherwise checks the executor on every message (a measurable share of a consume
        // loop's time).
        @inlinable
        public mutating func next() async throws(KafkaError) -> KafkaConsumerMessage? {
            if let message = self.core.nextBuffered() { return message }
            return try await self.core.next()
        }

        @inlinable
        public mutating func next(
            isolation actor: isolated (any Actor)?
        ) async throws(KafkaError) -> KafkaConsumerMessage? {
            if let message = self.core.nextBuffered() { return message }
            return try await self.core.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(core: self.core) }
}
