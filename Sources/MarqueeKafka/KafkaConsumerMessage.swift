/// A message handed out by a ``KafkaConsumer``.
///
/// Mark it processed with ``KafkaConsumer/markProcessed(_:)`` once everything it caused is durable; only then
/// can its offset be committed.
public struct KafkaConsumerMessage: Sendable {
    /// The assignment of the partition that handed this message out; a message from an earlier assignment
    /// cannot move the commit position of a later one. It also names the topic and partition, so a message
    /// carries one reference for them instead of a string of its own.
    let partitionState: ConsumerStateMachine.PartitionState
    public var topic: String { self.partitionState.topicPartition.topic }
    public var partition: Int32 { self.partitionState.topicPartition.partition }
    public let offset: Int64
    public let key: [UInt8]?
    public let value: [UInt8]
    public let headers: [KafkaHeader]
    /// The record's timestamp in milliseconds since the epoch (create or log-append time), if it has one.
    public let timestamp: Int64?

    public var topicPartition: KafkaTopicPartition { self.partitionState.topicPartition }

    /// The value as UTF-8 text.
    public var valueString: String { String(decoding: self.value, as: UTF8.self) }
    /// The key as UTF-8 text, if there is one.
    public var keyString: String? { self.key.map { String(decoding: $0, as: UTF8.self) } }
}

/// A change of the partitions assigned to a ``KafkaConsumer``.
public enum KafkaRebalanceEvent: Hashable, Sendable {
    /// These partitions were assigned; their messages follow from the group's committed offsets.
    case assigned([KafkaTopicPartition])
    /// These partitions were taken away, after their processed offsets were stored for commit.
    case revoked([KafkaTopicPartition])
}
