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
            // A group the coordinator does not know has committed nothing.
            let entries =
                try Self.listGroupOffsets(client: client, timeout: timeout, group: group, partitions: nil) ?? []
            var offsets: [KafkaTopicPartition: Int64] = [:]
            for entry in entries where entry.offset >= 0 && entry.error == .noError {
                offsets[entry.partition] = entry.offset
            }
            return offsets
        }
    }

    /// One ListConsumerGroupOffsets request: the entries the coordinator answered for `group` on `partitions`
    /// (every partition it committed on when `nil`), or `nil` when it does not know the group and no partition
    /// was named.
    static func listGroupOffsets(
        client: RDKafkaClient,
        timeout: Duration,
        group: String,
        partitions: [KafkaTopicPartition]?
    ) throws(KafkaError) -> [(partition: KafkaTopicPartition, offset: Int64, error: RDKafkaCode)]? {
        let list = partitions.map { RDKafkaTopicPartitionList($0.map { ($0, nil) }) }
        var request: OpaquePointer? = rd_kafka_ListConsumerGroupOffsets_new(group, list?.pointer)
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
            if code == .groupIDNotFound, partitions == nil { return nil }
            throw KafkaError(
                code: .admin,
                reason: "could not read offsets of group '\(group)': \(String(cString: rd_kafka_error_string(error)))",
                rdKafkaCode: code
            )
        }
        guard let answered = rd_kafka_group_result_partitions(result) else { return [] }
        return RDKafkaTopicPartitionList.entries(UnsafeMutablePointer(mutating: answered))
    }
}
