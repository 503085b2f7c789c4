/// Settings of a ``KafkaConsumer``.
///
/// The consumer never commits an offset on its own: it commits only what the application marked processed
/// (``KafkaConsumer/markProcessed(_:)``), up to the highest contiguous processed offset per partition.
public struct KafkaConsumerConfiguration: Sendable {
    /// Where a group without a committed offset starts reading a partition.
    public struct OffsetReset: Sendable, Hashable {
        let value: String
        /// The oldest message still on the broker.
        public static let earliest = OffsetReset(value: "earliest")
        /// Only messages produced after the consumer joined.
        public static let latest = OffsetReset(value: "latest")
    }

    /// The shared client settings.
    public var kafka: KafkaConfiguration

    /// The consumer group.
    public var groupID: String

    /// The topics to subscribe to.
    public var topics: [String]

    /// Default: ``OffsetReset-swift.struct/earliest``.
    public var offsetReset: OffsetReset = .earliest

    /// How long the group waits for a silent member before it rebalances its partitions away.
    ///
    /// Default: 45 seconds (the test broker joins in about half of this; tests use 6 seconds).
    public var sessionTimeout: Duration = .seconds(45)

    /// Default: 3 seconds.
    public var heartbeatInterval: Duration = .seconds(3)

    /// The longest the application may take between two reads before the group considers it dead.
    ///
    /// Default: 5 minutes.
    public var maxPollInterval: Duration = .seconds(300)

    /// How often processed offsets are committed in the background; ``KafkaConsumer/commit()`` commits at once.
    ///
    /// Default: 1 second.
    public var commitInterval: Duration = .seconds(1)

    /// The most messages one read takes from librdkafka (and holds until the application has taken them).
    /// Reads happen only when the application asks for a message, so this is also the most messages read ahead
    /// of it; librdkafka's own prefetch (`queued.min.messages`, `queued.max.messages.kbytes`) bounds the rest.
    ///
    /// - Important: Group events (rebalances) are served by those reads, and by a read of the consumer's own
    ///   every 250 ms while the application takes no message (busy with those it has). An application that takes
    ///   none for longer than ``maxPollInterval`` (plus half of it) is removed from the group, as with any Kafka
    ///   client.
    ///
    /// Default: 1,024 (also the maximum).
    public var readBatchSize: Int = 1024

    public init(kafka: KafkaConfiguration, groupID: String, topics: [String]) {
        self.kafka = kafka
        self.groupID = groupID
        self.topics = topics
    }

    /// - Throws: A ``KafkaError`` naming the bad value.
    public func validate() throws(KafkaError) {
        try self.kafka.validate()
        if self.groupID.isEmpty { throw .configuration("the consumer group id is empty") }
        if self.topics.isEmpty { throw .configuration("no topic to subscribe to") }
        if !(1...1024).contains(self.readBatchSize) { throw .configuration("readBatchSize must be from 1 to 1024") }
        if self.heartbeatInterval >= self.sessionTimeout {
            throw .configuration("heartbeatInterval must be shorter than sessionTimeout")
        }
    }

    var properties: [String: String] {
        var properties = self.kafka.properties
        properties["group.id"] = self.groupID
        properties["auto.offset.reset"] = self.offsetReset.value
        properties["session.timeout.ms"] = String(self.sessionTimeout.milliseconds)
        properties["heartbeat.interval.ms"] = String(self.heartbeatInterval.milliseconds)
        properties["max.poll.interval.ms"] = String(self.maxPollInterval.milliseconds)
        // librdkafka commits in the background, but only offsets this layer stored: those of processed messages.
        properties["enable.auto.commit"] = "true"
        properties["enable.auto.offset.store"] = "false"
        properties["auto.commit.interval.ms"] = String(max(self.commitInterval.milliseconds, 1))
        properties["enable.partition.eof"] = "false"
        // When the prefetch queue is full, look again after 10 ms rather than librdkafka's default 1 s, so a
        // consumer that catches up does not run dry.
        properties["fetch.queue.backoff.ms"] = "10"
        properties.merge(self.kafka.additionalProperties) { _, raw in raw }
        return properties
    }
}
