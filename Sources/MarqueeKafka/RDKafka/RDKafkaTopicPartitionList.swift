internal import Crdkafka

/// Owns an `rd_kafka_topic_partition_list_t`, destroyed with this value.
final class RDKafkaTopicPartitionList {
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    init(capacity: Int = 1) {
        self.pointer = rd_kafka_topic_partition_list_new(Int32(max(capacity, 1)))
    }

    /// A subscription list: topics with the partition `RD_KAFKA_PARTITION_UA`.
    convenience init(topics: [String]) {
        self.init(capacity: topics.count)
        for topic in topics { rd_kafka_topic_partition_list_add(self.pointer, topic, RD_KAFKA_PARTITION_UA) }
    }

    /// A list of partitions, each with an optional offset.
    convenience init(_ partitions: [(KafkaTopicPartition, Int64?)]) {
        self.init(capacity: partitions.count)
        for (partition, offset) in partitions {
            let entry = rd_kafka_topic_partition_list_add(self.pointer, partition.topic, partition.partition)
            if let offset { entry?.pointee.offset = offset }
        }
    }

    deinit { rd_kafka_topic_partition_list_destroy(self.pointer) }

    /// The entries of a list librdkafka owns (a callback's argument) or this one.
    static func entries(
        _ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    ) -> [(partition: KafkaTopicPartition, offset: Int64, error: RDKafkaCode)] {
        (0..<Int(list.pointee.cnt)).map { index in
            let element = list.pointee.elems[index]
            return (
                KafkaTopicPartition(topic: String(cString: element.topic), partition: element.partition),
                element.offset,
                RDKafkaCode(element.err)
            )
        }
    }
}
