internal import Crdkafka

// MARK: - KafkaAdmin + committing a group's offsets

extension KafkaAdmin {
    /// Sets the committed offsets of a consumer group without joining it (Kafka's AlterConsumerGroupOffsets, as
    /// `kafka-consumer-groups --reset-offsets` does): what operator tools use to remember a position, such as the
    /// dead letters already dealt with.
    ///
    /// The broker accepts it only while the group has no active member consuming those topics; a group that
    /// only operator tools use never has one.
    ///
    /// - Parameters:
    ///   - group: The consumer group.
    ///   - offsets: The offset to commit per partition: the next offset the group would read.
    /// - Throws: A ``KafkaError`` for the first partition the broker refused, or when no broker answered.
    public func commitOffsets(group: String, _ offsets: [KafkaTopicPartition: Int64]) async throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        let client = self.client
        let timeout = self.timeout
        try await Self.blocking { () throws(KafkaError) in
            let list = RDKafkaTopicPartitionList(offsets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            var request: OpaquePointer? = rd_kafka_AlterConsumerGroupOffsets_new(group, list.pointer)
            defer { rd_kafka_AlterConsumerGroupOffsets_destroy(request) }
            let event = try client.adminRequest(
                timeout: timeout,
                expecting: RD_KAFKA_EVENT_ALTERCONSUMERGROUPOFFSETS_RESULT
            ) { options, queue in
                rd_kafka_AlterConsumerGroupOffsets(client.handle, &request, 1, options, queue)
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            let groups = rd_kafka_AlterConsumerGroupOffsets_result_groups(
                rd_kafka_event_AlterConsumerGroupOffsets_result(event),
                &count
            )
            guard count == 1, let result = groups?[0] else {
                throw KafkaError(code: .admin, reason: "no answer for group '\(group)'")
            }
            if let error = rd_kafka_group_result_error(result) {
                let text = String(cString: rd_kafka_error_string(error))
                throw KafkaError(
                    code: .commit,
                    reason: "could not commit offsets of group '\(group)': \(text)",
                    rdKafkaCode: RDKafkaCode(rd_kafka_error_code(error))
                )
            }
            if let partitions = rd_kafka_group_result_partitions(result) {
                for entry in RDKafkaTopicPartitionList.entries(UnsafeMutablePointer(mutating: partitions))
                where entry.error != .noError {
                    let what = "the offset of group '\(group)' on \(entry.partition)"
                    throw KafkaError(
                        code: .commit,
                        reason: "could not commit \(what): \(entry.error.message)",
                        rdKafkaCode: entry.error
                    )
                }
            }
        }
    }
}
