/// One partition of one topic.
public struct KafkaTopicPartition: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }

    public var description: String { "\(self.topic)[\(self.partition)]" }
}

/// A topic as the cluster's metadata describes it.
public struct KafkaTopicMetadata: Hashable, Sendable {
    public var name: String
    /// Partition ids, ascending.
    public var partitions: [Int32]
    /// Set when the broker reported an error for this topic (for example, unknown topic).
    public var error: RDKafkaCode?
}

/// A message header. Kafka headers may repeat and may have no value.
public struct KafkaHeader: Hashable, Sendable {
    public var key: String
    public var value: [UInt8]?

    public init(key: String, value: [UInt8]?) {
        self.key = key
        self.value = value
    }

    public init(key: String, value: String) {
        self.init(key: key, value: Array(value.utf8))
    }

    /// The value as UTF-8 text, if it has one.
    public var stringValue: String? { self.value.map { String(decoding: $0, as: UTF8.self) } }
}

extension Array where Element == KafkaHeader {
    /// The value of the last header with this key, as text.
    public func string(_ key: String) -> String? {
        self.last { $0.key == key }?.stringValue
    }
}
