internal import Crdkafka

// MARK: - KafkaAdmin + offsets for a time

extension KafkaAdmin {
    /// The first offset of each partition whose message timestamp is at or after a time: Kafka's ListOffsets by
    /// timestamp, what `kafka-consumer-groups --reset-offsets --to-datetime` asks.
    ///
    /// A partition with no message at or after the time gets `nil` (Kafka answers offset -1); a reset then goes to
    /// the partition's end offset.
    ///
    /// The test broker (tansu 0.6) answers this request, but by its own clock: measured with one record per batch,
    /// it finds the first record that *arrived* at or after the time, not the first whose timestamp is (records
    /// produced with 2023 timestamps were all found at offset 0 for any 2023 time; a time between a record's
    /// timestamp and its arrival gave that record's offset), and a time after the last record gives 0 instead of
    /// -1. Apache Kafka answers by the records' timestamps, as described above.
    ///
    /// - Parameters:
    ///   - milliseconds: The time, in milliseconds since 1970-01-01T00:00:00Z.
    ///   - partitions: The partitions to ask about; each is asked once, whatever its repetitions.
    /// - Returns: The offset per partition asked about, or `nil` where no message is that recent.
    /// - Throws: A ``KafkaError`` when no broker answered within the request timeout, or the broker refused for a
    ///   partition (an unknown one, for instance).
    public func offsets(
        atOrAfter milliseconds: Int64,
        partitions: [KafkaTopicPartition]
    ) async throws(KafkaError) -> [KafkaTopicPartition: Int64?] {
        let unique = Array(Set(partitions)).sorted()
        guard !unique.isEmpty else { return [:] }
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) -> [KafkaTopicPartition: Int64?] in
            // On input each entry's offset is the time asked about; librdkafka writes the answer over it.
            let list = RDKafkaTopicPartitionList(unique.map { ($0, milliseconds) })
            // Blocks this thread of the blocking pool for at most the timeout (a metadata lookup, then ListOffsets per leader).
            let code = RDKafkaCode(
                rd_kafka_offsets_for_times(client.handle, list.pointer, Int32(timeout.milliseconds))
            )
            guard code == .noError else {
                if code.meansNoBrokerAnswered { throw .unanswered(within: timeout, client.context, code: code) }
                throw .rdKafka(.admin, code, context: "could not look up offsets for a time")
            }
            var offsets: [KafkaTopicPartition: Int64?] = [:]
            for entry in RDKafkaTopicPartitionList.entries(list.pointer) {
                guard entry.error == .noError else {
                    throw .rdKafka(
                        .admin,
                        entry.error,
                        context: "could not look up an offset for a time on \(entry.partition)"
                    )
                }
                offsets[entry.partition] = entry.offset >= 0 ? entry.offset : nil
            }
            return offsets
        }
    }
}
