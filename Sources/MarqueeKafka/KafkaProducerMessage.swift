/// A message to produce.
public struct KafkaProducerMessage: Sendable {
    public var topic: String
    /// The partition, or `nil` to let the partitioner choose from the key (the same key always lands on the
    /// same partition).
    public var partition: Int32?
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [KafkaHeader]

    public init(
        topic: String,
        partition: Int32? = nil,
        key: [UInt8]? = nil,
        value: [UInt8],
        headers: [KafkaHeader] = []
    ) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
    }

    public init(topic: String, key: String? = nil, value: String, headers: [KafkaHeader] = []) {
        self.init(topic: topic, key: key.map { Array($0.utf8) }, value: Array(value.utf8), headers: headers)
    }
}

/// Where the broker stored an acknowledged message.
public struct KafkaDeliveryReport: Hashable, Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
}
