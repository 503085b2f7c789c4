internal import Crdkafka

// MARK: - KafkaAdmin + consumer groups

extension KafkaAdmin {
    /// Describes consumer groups: their state and their members, as the group coordinator sees them.
    ///
    /// A group the broker does not know, or one without members, is described with no members (state
    /// ``KafkaConsumerGroupState/dead`` or ``KafkaConsumerGroupState/empty``): asking about a group that never
    /// existed is not an error. The test broker answers `Empty` for such a group, Apache Kafka `Dead`.
    ///
    /// - Parameter groups: Group ids; each is described once, whatever its repetitions.
    /// - Returns: A description per group id asked for.
    /// - Throws: A ``KafkaError`` when no broker answered within the request timeout, or the broker refused to
    ///   describe a group (for a reason other than not knowing it).
    public func describeGroups(_ groups: [String]) async throws(KafkaError) -> [String: KafkaConsumerGroupDescription] {
        let unique = Array(Set(groups)).sorted()
        guard !unique.isEmpty else { return [:] }
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) -> [String: KafkaConsumerGroupDescription] in
            // One buffer of NUL-terminated names; librdkafka copies them during the call.
            var names: [CChar] = []
            var starts: [Int] = []
            for group in unique {
                starts.append(names.count)
                names += group.utf8CString
            }
            let event = try client.adminRequest(
                timeout: timeout,
                expecting: RD_KAFKA_EVENT_DESCRIBECONSUMERGROUPS_RESULT
            ) { options, queue in
                names.withUnsafeBufferPointer { buffer in
                    guard let base = buffer.baseAddress else { return }
                    var pointers: [UnsafePointer<CChar>?] = starts.map { base + $0 }
                    pointers.withUnsafeMutableBufferPointer {
                        rd_kafka_DescribeConsumerGroups(client.handle, $0.baseAddress, $0.count, options, queue)
                    }
                }
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            let results = rd_kafka_DescribeConsumerGroups_result_groups(
                rd_kafka_event_DescribeConsumerGroups_result(event),
                &count
            )
            var descriptions: [String: KafkaConsumerGroupDescription] = [:]
            for index in 0..<count {
                guard let result = results?[index] else { continue }
                let group = String(cString: rd_kafka_ConsumerGroupDescription_group_id(result))
                if let error = rd_kafka_ConsumerGroupDescription_error(result) {
                    let code = RDKafkaCode(rd_kafka_error_code(error))
                    if code == .groupIDNotFound {
                        descriptions[group] = KafkaConsumerGroupDescription(group: group, state: .dead, members: [])
                        continue
                    }
                    throw KafkaError(
                        code: .admin,
                        reason: "could not describe group '\(group)': \(String(cString: rd_kafka_error_string(error)))",
                        rdKafkaCode: code
                    )
                }
                var members: [KafkaConsumerGroupMember] = []
                for memberIndex in 0..<rd_kafka_ConsumerGroupDescription_member_count(result) {
                    guard let member = rd_kafka_ConsumerGroupDescription_member(result, memberIndex) else { continue }
                    var assignment: [KafkaTopicPartition] = []
                    if let assigned = rd_kafka_MemberDescription_assignment(member),
                        let list = rd_kafka_MemberAssignment_partitions(assigned)
                    {
                        let entries = RDKafkaTopicPartitionList.entries(UnsafeMutablePointer(mutating: list))
                        assignment = entries.map(\.partition)
                    }
                    members.append(
                        KafkaConsumerGroupMember(
                            memberID: Self.text(rd_kafka_MemberDescription_consumer_id(member)),
                            clientID: Self.text(rd_kafka_MemberDescription_client_id(member)),
                            host: Self.text(rd_kafka_MemberDescription_host(member)),
                            assignment: assignment.sorted()
                        )
                    )
                }
                descriptions[group] = KafkaConsumerGroupDescription(
                    group: group,
                    state: KafkaConsumerGroupState(rd_kafka_ConsumerGroupDescription_state(result)),
                    members: members.sorted { $0.memberID < $1.memberID }
                )
            }
            for group in unique where descriptions[group] == nil {
                throw KafkaError(code: .admin, reason: "no description of group '\(group)' in the broker's answer")
            }
            return descriptions
        }
    }

    /// The consumer groups the cluster knows, with their state as the listing reports it.
    ///
    /// - Throws: A ``KafkaError`` when no broker answered within the request timeout.
    public func listGroups() async throws(KafkaError) -> [KafkaConsumerGroupListing] {
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) -> [KafkaConsumerGroupListing] in
            let event = try client.adminRequest(
                timeout: timeout,
                expecting: RD_KAFKA_EVENT_LISTCONSUMERGROUPS_RESULT
            ) { options, queue in
                rd_kafka_ListConsumerGroups(client.handle, options, queue)
            }
            defer { rd_kafka_event_destroy(event) }
            let result = rd_kafka_event_ListConsumerGroups_result(event)
            var errorCount = 0
            if let errors = rd_kafka_ListConsumerGroups_result_errors(result, &errorCount), errorCount > 0,
                let error = errors[0]
            {
                throw KafkaError(
                    code: .admin,
                    reason: "could not list the consumer groups: \(String(cString: rd_kafka_error_string(error)))",
                    rdKafkaCode: RDKafkaCode(rd_kafka_error_code(error))
                )
            }
            var count = 0
            let listings = rd_kafka_ListConsumerGroups_result_valid(result, &count)
            var groups: [KafkaConsumerGroupListing] = []
            for index in 0..<count {
                guard let listing = listings?[index] else { continue }
                groups.append(
                    KafkaConsumerGroupListing(
                        group: String(cString: rd_kafka_ConsumerGroupListing_group_id(listing)),
                        state: KafkaConsumerGroupState(rd_kafka_ConsumerGroupListing_state(listing)),
                        isSimple: rd_kafka_ConsumerGroupListing_is_simple_consumer_group(listing) != 0
                    )
                )
            }
            return groups.sorted { $0.group < $1.group }
        }
    }

    /// The offsets a consumer group committed on the given partitions (`nil` where it committed none).
    ///
    /// Unlike ``committedOffsets(group:topics:)`` this asks for exactly these partitions, with no metadata
    /// request per topic: what a sampler that already knows the partitions needs.
    ///
    /// - Throws: A ``KafkaError`` when no broker answered within the request timeout, or the broker refused.
    public func committedOffsets(
        group: String,
        partitions: [KafkaTopicPartition]
    ) async throws(KafkaError) -> [KafkaTopicPartition: Int64?] {
        guard !partitions.isEmpty else { return [:] }
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) -> [KafkaTopicPartition: Int64?] in
            let entries =
                try Self.listGroupOffsets(client: client, timeout: timeout, group: group, partitions: partitions) ?? []
            var offsets: [KafkaTopicPartition: Int64?] = [:]
            for partition in partitions { offsets[partition] = .some(nil) }
            for entry in entries {
                offsets[entry.partition] = entry.offset >= 0 ? entry.offset : nil
            }
            return offsets
        }
    }

    /// The first and end offsets of the given partitions, with no metadata request.
    ///
    /// - Throws: A ``KafkaError`` when no broker answered, or a partition does not exist.
    public func watermarks(
        partitions: [KafkaTopicPartition]
    ) async throws(KafkaError) -> [KafkaTopicPartition: KafkaWatermarks] {
        guard !partitions.isEmpty else { return [:] }
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) -> [KafkaTopicPartition: KafkaWatermarks] in
            var offsets: [KafkaTopicPartition: KafkaWatermarks] = [:]
            for partition in partitions {
                var low: Int64 = 0
                var high: Int64 = 0
                // Blocks this thread of the blocking pool for at most the timeout (two ListOffsets requests).
                let code = RDKafkaCode(
                    rd_kafka_query_watermark_offsets(
                        client.handle,
                        partition.topic,
                        partition.partition,
                        &low,
                        &high,
                        Int32(timeout.milliseconds)
                    )
                )
                guard code == .noError else {
                    if code.meansNoBrokerAnswered { throw .unanswered(within: timeout, client.context, code: code) }
                    throw .rdKafka(.admin, code, context: "could not read the end offset of \(partition)")
                }
                offsets[partition] = KafkaWatermarks(start: low, end: high)
            }
            return offsets
        }
    }

    private static func text(_ pointer: UnsafePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? ""
    }
}

/// The state of a consumer group, as its coordinator reports it.
public enum KafkaConsumerGroupState: String, Sendable, Hashable, CustomStringConvertible {
    case unknown = "Unknown"
    case preparingRebalance = "PreparingRebalance"
    case completingRebalance = "CompletingRebalance"
    case stable = "Stable"
    /// The group has no members and no committed offsets left (or the broker does not know it).
    case dead = "Dead"
    /// The group has no members; its committed offsets remain.
    case empty = "Empty"

    init(_ state: rd_kafka_consumer_group_state_t) {
        switch state {
        case RD_KAFKA_CONSUMER_GROUP_STATE_PREPARING_REBALANCE: self = .preparingRebalance
        case RD_KAFKA_CONSUMER_GROUP_STATE_COMPLETING_REBALANCE: self = .completingRebalance
        case RD_KAFKA_CONSUMER_GROUP_STATE_STABLE: self = .stable
        case RD_KAFKA_CONSUMER_GROUP_STATE_DEAD: self = .dead
        case RD_KAFKA_CONSUMER_GROUP_STATE_EMPTY: self = .empty
        default: self = .unknown
        }
    }

    public var description: String { self.rawValue }
}

/// A consumer group: its state and members.
public struct KafkaConsumerGroupDescription: Sendable, Hashable {
    /// The group id.
    public var group: String
    /// The coordinator's state of the group.
    public var state: KafkaConsumerGroupState
    /// The members now (empty for a group without any, or one the broker does not know).
    public var members: [KafkaConsumerGroupMember]

    /// A description, e.g. for tests of code that reads one.
    public init(group: String, state: KafkaConsumerGroupState, members: [KafkaConsumerGroupMember]) {
        self.group = group
        self.state = state
        self.members = members
    }
}

/// One member of a consumer group.
public struct KafkaConsumerGroupMember: Sendable, Hashable {
    /// The id the coordinator gave the member.
    public var memberID: String
    /// The member's `client.id`.
    public var clientID: String
    /// The address the member connected from.
    public var host: String
    /// The partitions assigned to it (empty when the broker does not report assignments).
    public var assignment: [KafkaTopicPartition]

    /// A member, e.g. for tests of code that reads one.
    public init(memberID: String, clientID: String, host: String, assignment: [KafkaTopicPartition]) {
        self.memberID = memberID
        self.clientID = clientID
        self.host = host
        self.assignment = assignment
    }
}

/// A consumer group as ``KafkaAdmin/listGroups()`` reports it; its JSON form is `{"group", "state", "simple"}`.
public struct KafkaConsumerGroupListing: Sendable, Hashable, Encodable {
    /// The group id.
    public var group: String
    /// The state the listing reports.
    public var state: KafkaConsumerGroupState
    /// Whether the group only stores offsets (no group membership protocol).
    public var isSimple: Bool

    /// A listing, e.g. for tests of code that reads one.
    public init(group: String, state: KafkaConsumerGroupState, isSimple: Bool) {
        self.group = group
        self.state = state
        self.isSimple = isSimple
    }

    private enum Keys: String, CodingKey {
        case group, state
        case isSimple = "simple"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(self.group, forKey: .group)
        try container.encode(self.state.rawValue, forKey: .state)
        try container.encode(self.isSimple, forKey: .isSimple)
    }
}
