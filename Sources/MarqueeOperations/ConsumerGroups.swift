public import MarqueeKafka

/// A consumer group as `marquee groups list` shows it: the broker's listing as it is.
public typealias GroupListing = KafkaConsumerGroupListing

extension GroupListing {
    /// The broker's listings, each group once, in name order.
    public static func listings(_ groups: [KafkaConsumerGroupListing]) -> [GroupListing] {
        var seen: Set<String> = []
        return groups.sorted { $0.group < $1.group }.filter { seen.insert($0.group).inserted }
    }
}

/// One consumer group in the manner of `kafka-consumer-groups --describe`: its state, its members with what
/// each is assigned, and per partition the committed offset, the end offset, the lag and the member that owns
/// it.
///
/// Built from what the broker answered (``init(description:committed:endOffsets:)``), with no broker of its
/// own. Its JSON form uses snake_case keys and `null` for what is unknown; docs/groups.md lists them.
public struct GroupReport: Sendable, Hashable, Encodable {
    /// One member of the group.
    public struct Member: Sendable, Hashable, Encodable {
        /// The id the coordinator gave the member.
        public var memberID: String
        /// The member's `client.id`.
        public var clientID: String
        /// The address the member connected from.
        public var host: String
        /// The partitions assigned to it, in order.
        public var assignment: [KafkaTopicPartition]

        private enum Keys: String, CodingKey {
            case memberID = "member_id"
            case clientID = "client_id"
            case host, assignment
        }

        /// `{"member_id", "client_id", "host", "assignment": [{"topic", "partition"}]}`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(self.memberID, forKey: .memberID)
            try container.encode(self.clientID, forKey: .clientID)
            try container.encode(self.host, forKey: .host)
            try container.encode(self.assignment.map(JSONPartition.init), forKey: .assignment)
        }
    }

    /// One partition the group committed on or has assigned.
    public struct Partition: Sendable, Hashable, Encodable {
        /// The partition.
        public var partition: KafkaTopicPartition
        /// The group's committed offset, or `nil` where it committed none.
        public var committed: Int64?
        /// The partition's end offset (high watermark), or `nil` when the broker gave none (a topic deleted
        /// since the group committed on it).
        public var end: Int64?
        /// The member the partition is assigned to, if any.
        public var owner: Member?

        /// Messages not yet committed: end offset minus committed offset, `nil` when either is unknown (as
        /// `kafka-consumer-groups` shows `-`), and 0 where the end reads below the commit
        /// (``isEndBelowCommit``), so that the total never falls below what waits.
        public var lag: Int64? {
            guard let committed, let end else { return nil }
            return max(0, end - committed)
        }

        /// Whether the broker reported an end offset below the committed offset (the test broker does after
        /// batched produce): the lag counts as 0 and the text says why.
        public var isEndBelowCommit: Bool {
            guard let committed, let end else { return false }
            return end < committed
        }

        private enum Keys: String, CodingKey {
            case topic, partition
            case committed = "committed_offset"
            case end = "end_offset"
            case lag
            case memberID = "member_id"
            case clientID = "client_id"
            case host
        }

        /// `topic`, `partition`, `committed_offset`, `end_offset`, `lag` and the owner's `member_id`, `client_id`
        /// and `host` (`null` where unknown).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(self.partition.topic, forKey: .topic)
            try container.encode(self.partition.partition, forKey: .partition)
            try container.encode(self.committed, forKey: .committed)
            try container.encode(self.end, forKey: .end)
            try container.encode(self.lag, forKey: .lag)
            try container.encode(self.owner?.memberID, forKey: .memberID)
            try container.encode(self.owner?.clientID, forKey: .clientID)
            try container.encode(self.owner?.host, forKey: .host)
        }
    }

    /// The group id.
    public var group: String
    /// The coordinator's state of the group.
    public var state: KafkaConsumerGroupState
    /// The members, in member id order.
    public var members: [Member]
    /// Every partition the group committed on or a member has assigned, in topic and partition order.
    public var partitions: [Partition]

    /// The report of a group from the broker's answers.
    ///
    /// - Parameters:
    ///   - description: The group's state and members.
    ///   - committed: The group's committed offsets (see ``KafkaAdmin/committedOffsets(group:)``).
    ///   - endOffsets: The end offset of each partition of ``partitions(of:committed:)``; a partition missing
    ///     here is shown without one.
    public init(
        description: KafkaConsumerGroupDescription,
        committed: [KafkaTopicPartition: Int64],
        endOffsets: [KafkaTopicPartition: Int64]
    ) {
        self.group = description.group
        self.state = description.state
        self.members = description.members
            .map {
                Member(memberID: $0.memberID, clientID: $0.clientID, host: $0.host, assignment: $0.assignment.sorted())
            }
            .sorted { $0.memberID < $1.memberID }
        var owners: [KafkaTopicPartition: Member] = [:]
        for member in self.members {
            for partition in member.assignment where owners[partition] == nil { owners[partition] = member }
        }
        self.partitions = Self.partitions(of: description, committed: committed).map { partition in
            Partition(
                partition: partition,
                committed: committed[partition],
                end: endOffsets[partition],
                owner: owners[partition]
            )
        }
    }

    /// The partitions a report covers: those the group committed on and those assigned to its members.
    public static func partitions(
        of description: KafkaConsumerGroupDescription,
        committed: [KafkaTopicPartition: Int64]
    ) -> [KafkaTopicPartition] {
        Set(committed.keys).union(description.members.flatMap(\.assignment)).sorted()
    }

    /// The lag summed over the partitions where it is known.
    public var totalLag: Int64 { self.partitions.compactMap(\.lag).reduce(0, +) }

    /// Whether the broker knows nothing of the group: no members, no committed offsets, and state `Dead` (Apache
    /// Kafka) or `Empty` (the test broker, which answers that for any group).
    public var isUnknown: Bool {
        self.members.isEmpty && self.partitions.isEmpty && [.dead, .empty, .unknown].contains(self.state)
    }

    private enum Keys: String, CodingKey {
        case group, state, members, partitions
        case totalLag = "total_lag"
    }

    /// `group`, `state`, `members`, `partitions` and `total_lag`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(self.group, forKey: .group)
        try container.encode(self.state.rawValue, forKey: .state)
        try container.encode(self.members, forKey: .members)
        try container.encode(self.partitions, forKey: .partitions)
        try container.encode(self.totalLag, forKey: .totalLag)
    }
}

/// `{"topic": …, "partition": …}`.
private struct JSONPartition: Encodable {
    let partition: KafkaTopicPartition

    init(_ partition: KafkaTopicPartition) { self.partition = partition }

    private enum Keys: String, CodingKey { case topic, partition }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(self.partition.topic, forKey: .topic)
        try container.encode(self.partition.partition, forKey: .partition)
    }
}
