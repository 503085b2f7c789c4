public import MarqueeKafka

// MARK: - OffsetResetPlan + reading what it needs from the cluster

extension OffsetResetPlan {
    /// Plans `mode` for `group`, reading from the cluster what the plan needs: the other group's offsets
    /// (`--from-group`), the topics' partitions (with `selections`), the watermarks, and the offsets for a time.
    ///
    /// Without `selections`, the plan covers every partition `group` committed on, or with `.fromGroup`, every
    /// partition the other group committed on.
    ///
    /// - Parameters:
    ///   - group: The group to reset.
    ///   - mode: Where to move its offsets.
    ///   - selections: The topics and partitions named (`--topic`).
    ///   - committed: The group's committed offsets.
    ///   - admin: Asks the cluster.
    /// - Throws: An ``OperationsError`` when the selection gives nothing to reset or names what the cluster
    ///   lacks; a ``KafkaError`` when the broker refuses or does not answer.
    public static func reading(
        group: String,
        mode: OffsetResetMode,
        selections: [TopicSelection],
        committed: [KafkaTopicPartition: Int64],
        admin: KafkaAdmin
    ) async throws -> OffsetResetPlan {
        var source: [KafkaTopicPartition: Int64] = [:]
        if case .fromGroup(let other) = mode { source = try await admin.committedOffsets(group: other) }
        var topics: [String: [Int32]] = [:]
        if !selections.isEmpty {
            for topic in try await admin.listTopics() { topics[topic.name] = topic.partitions }
        }
        // Copying another group's offsets covers, by default, what that group committed on.
        let partitions: [KafkaTopicPartition]
        if case .fromGroup(let other) = mode {
            partitions = try Self.partitions(selecting: selections, topics: topics, committed: source, group: other)
        } else {
            partitions = try Self.partitions(selecting: selections, topics: topics, committed: committed, group: group)
        }
        let watermarks = try await admin.watermarks(partitions: partitions)
        var forTime: [KafkaTopicPartition: Int64?] = [:]
        if case .dateTime(let milliseconds) = mode {
            forTime = try await admin.offsets(atOrAfter: milliseconds, partitions: partitions)
        }
        return try OffsetResetPlan(
            group: group,
            mode: mode,
            partitions: partitions,
            committed: committed,
            watermarks: watermarks,
            offsetsForTime: forTime,
            sourceOffsets: source
        )
    }
}
