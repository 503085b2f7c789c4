/// Settings of a ``KafkaProducer``.
///
/// The defaults give the delivery guarantee Marquee is built on: the idempotent producer with `acks=all`, so a
/// message the broker acknowledged is stored by every in-sync replica, exactly once per send.
public struct KafkaProducerConfiguration: Sendable {
    /// Which acknowledgements the producer waits for.
    public struct Acknowledgements: Sendable, Hashable {
        let value: String
        /// Every in-sync replica (`acks=all`). Required by idempotence.
        public static let all = Acknowledgements(value: "all")
        /// The partition leader only (`acks=1`).
        public static let leader = Acknowledgements(value: "1")
    }

    /// Compression of produced batches.
    public struct Compression: Sendable, Hashable {
        let value: String
        public static let none = Compression(value: "none")
        public static let gzip = Compression(value: "gzip")
        public static let lz4 = Compression(value: "lz4")
        public static let zstd = Compression(value: "zstd")
    }

    /// The shared client settings.
    public var kafka: KafkaConfiguration

    /// Default: ``Acknowledgements-swift.struct/all``.
    public var acknowledgements: Acknowledgements = .all

    /// Whether the producer is idempotent (no duplicates or reordering on internal retries).
    ///
    /// Default: `true`.
    public var isIdempotent: Bool = true

    /// How long a message may wait for acknowledgement, retries included, before its send fails. This bounds
    /// how long `send` waits when the broker is down.
    ///
    /// Default: 30 seconds.
    public var deliveryTimeout: Duration = .seconds(30)

    /// How long the producer waits to fill a batch (`linger.ms`).
    ///
    /// Default: 5 ms.
    public var linger: Duration = .milliseconds(5)

    /// The most messages in one batch (`batch.num.messages`). The local stack's tests set 1 where they read
    /// end offsets (a quirk of the test broker, see ENVIRONMENT.md).
    ///
    /// Default: 10,000.
    public var batchMessages: Int = 10_000

    /// The most messages waiting in the local queue; beyond it a batch `send` waits for room.
    ///
    /// Default: 100,000.
    public var queueMessages: Int = 100_000

    /// Default: ``Compression-swift.struct/none``.
    public var compression: Compression = .none

    /// The most bytes one message may take, key and headers included (`message.max.bytes`). A larger message is
    /// refused before it is sent. Keep it at most the topics' `max.message.bytes` (Kafka's default 1,048,588),
    /// or the broker refuses what this producer accepted.
    ///
    /// Default: 1,000,000 (librdkafka's).
    public var maxMessageBytes: Int = 1_000_000

    /// ``maxMessageBytes``, or the `message.max.bytes` given among the additional properties (`-X`).
    public var effectiveMaxMessageBytes: Int {
        self.kafka.additionalProperties["message.max.bytes"].flatMap { Int($0) } ?? self.maxMessageBytes
    }

    /// How long ``KafkaProducer/close()`` waits for outstanding messages.
    ///
    /// Default: 30 seconds.
    public var flushTimeout: Duration = .seconds(30)

    public init(kafka: KafkaConfiguration) {
        self.kafka = kafka
    }

    var properties: [String: String] {
        var properties = self.kafka.properties
        properties["acks"] = self.acknowledgements.value
        properties["enable.idempotence"] = self.isIdempotent ? "true" : "false"
        properties["delivery.timeout.ms"] = String(self.deliveryTimeout.milliseconds)
        properties["linger.ms"] = String(self.linger.milliseconds)
        properties["batch.num.messages"] = String(self.batchMessages)
        properties["queue.buffering.max.messages"] = String(self.queueMessages)
        properties["compression.codec"] = self.compression.value
        properties["message.max.bytes"] = String(self.maxMessageBytes)
        properties.merge(self.kafka.additionalProperties) { _, raw in raw }
        return properties
    }
}
