internal import Crdkafka

// MARK: - KafkaAdmin + every committed offset of a group

extension KafkaAdmin {
    /// Every offset a consumer group committed, on whichever topics: what `kafka-consumer-groups --describe`
    /// and a reset without `--topic` start from.
    ///
    /// - Returns: The committed offset per partition; partitions where the group committed nothing are absent.
    /// - Throws: A ``KafkaError`` when no broker answered within the request timeout, or the broker refused.
    public func committedOffsets(group: String) async throws(KafkaError) -> [KafkaTopicPartition: Int64] {
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) -> [KafkaTopicPartition: Int64] in
            // No partition list: the coordinator answers with every partition the group committed on.
            var request: OpaquePointer? = rd_kafka_ListConsumerGroupOffsets_new(group, nil)
            defer { rd_kafka_ListConsumerGroupOffsets_destroy(request) }
            let event = try client.adminRequest(
                timeout: timeout,
                expecting: RD_KAFKA_EVENT_LISTCONSUMERGROUPOFFSETS_RESULT
            ) { options, queue in
                rd_kafka_ListConsumerGroupOffsets(client.handle, &request, 1, options, queue)
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            let groups = rd_kafka_ListConsumerGroupOffsets_result_groups(
                rd_kafka_event_ListConsumerGroupOffsets_result(event),
                &count
            )
            guard count == 1, let result = groups?[0] else {
                throw KafkaError(code: .admin, reason: "no answer for group '\(group)'")
            }
            if let error = rd_kafka_group_result_error(result) {
                let code = RDKafkaCode(rd_kafka_error_code(error))
                // A group the coordinator does not know has committed nothing.
                if code == .groupIDNotFound { return [:] }
                throw KafkaError(
                    code: .admin,
                    reason:
                        "could not read offsets of group '\(group)': \(String(cString: rd_kafka_error_string(error)))",
                    rdKafkaCode: code
                )
            }
            var offsets: [KafkaTopicPartition: Int64] = [:]
            if let answered = rd_kafka_group_result_partitions(result) {
                for entry in RDKafkaTopicPartitionList.entries(UnsafeMutablePointer(mutating: answered))
                where entry.offset >= 0 && entry.error == .noError {
                    offsets[entry.partition] = entry.offset
                }
            }
            return offsets
        }
    }
}
