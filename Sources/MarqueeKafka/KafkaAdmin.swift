internal import Crdkafka
public import Logging

/// Creates topics and reads offsets: what the CLI, the tests and lag monitoring need from the cluster.
///
/// Every call has a timeout (``KafkaAdminConfiguration/requestTimeout``) and fails with a clear
/// ``KafkaError`` instead of hanging when no broker answers. Calls block a thread of the shared blocking pool
/// (``BlockingExecutor``), never the cooperative pool.
public final class KafkaAdmin: Sendable {
    let client: RDKafkaClient
    let timeout: Duration

    /// - Throws: A ``KafkaError`` when the configuration is invalid.
    public init(
        configuration: KafkaConfiguration,
        requestTimeout: Duration = .seconds(10),
        logger: Logger
    ) throws(KafkaError) {
        try configuration.validate()
        var properties = configuration.properties
        properties.merge(configuration.additionalProperties) { _, raw in raw }
        self.client = try RDKafkaClient(
            kind: .producer,
            properties: properties,
            context: RDKafkaClientContext(logger: logger)
        )
        self.timeout = requestTimeout
    }

    /// A topic to create.
    public struct NewTopic: Sendable, Hashable {
        public var name: String
        public var partitions: Int
        public var replicationFactor: Int
        /// Topic configs, e.g. `retention.ms`.
        public var configs: [String: String]

        public init(name: String, partitions: Int, replicationFactor: Int = 1, configs: [String: String] = [:]) {
            self.name = name
            self.partitions = partitions
            self.replicationFactor = replicationFactor
            self.configs = configs
        }
    }

    /// Creates topics; a topic that already exists is left as it is and counts as success.
    ///
    /// - Returns: The names of the topics this call created.
    /// - Throws: A ``KafkaError`` for the first topic the broker refused, or when no broker answered.
    @discardableResult
    public func createTopics(_ topics: [NewTopic]) async throws(KafkaError) -> [String] {
        guard !topics.isEmpty else { return [] }
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) -> [String] in
            var errorText = [CChar](repeating: 0, count: 512)
            var newTopics: [OpaquePointer?] = []
            defer { for topic in newTopics { rd_kafka_NewTopic_destroy(topic) } }
            for topic in topics {
                guard
                    let newTopic = rd_kafka_NewTopic_new(
                        topic.name,
                        Int32(topic.partitions),
                        Int32(topic.replicationFactor),
                        &errorText,
                        errorText.count
                    )
                else {
                    throw .configuration("topic '\(topic.name)': \(RDKafkaClient.string(errorText))")
                }
                newTopics.append(newTopic)
                for (key, value) in topic.configs.sorted(by: { $0.key < $1.key }) {
                    let code = RDKafkaCode(rd_kafka_NewTopic_set_config(newTopic, key, value))
                    if code != .noError {
                        throw .rdKafka(.configuration, code, context: "topic '\(topic.name)' config '\(key)'")
                    }
                }
            }
            let event = try client.adminRequest(timeout: timeout, expecting: RD_KAFKA_EVENT_CREATETOPICS_RESULT) {
                options,
                queue in
                newTopics.withUnsafeMutableBufferPointer {
                    rd_kafka_CreateTopics(client.handle, $0.baseAddress, $0.count, options, queue)
                }
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            let results = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count)
            var created: [String] = []
            for index in 0..<count {
                let result = results![index]
                let name = String(cString: rd_kafka_topic_result_name(result))
                let code = RDKafkaCode(rd_kafka_topic_result_error(result))
                switch code {
                case .noError: created.append(name)
                case .topicAlreadyExists: break
                default:
                    let text = rd_kafka_topic_result_error_string(result).map { String(cString: $0) } ?? code.message
                    throw KafkaError(
                        code: .admin,
                        reason: "could not create topic '\(name)': \(text)",
                        rdKafkaCode: code
                    )
                }
            }
            return created.sorted()
        }
    }

    /// Deletes topics. Topics that do not exist are ignored.
    public func deleteTopics(_ names: [String]) async throws(KafkaError) {
        guard !names.isEmpty else { return }
        let client = self.client
        let timeout = self.timeout
        try await Self.blocking { () throws(KafkaError) in
            var deletions: [OpaquePointer?] = names.map { rd_kafka_DeleteTopic_new($0) }
            defer { for deletion in deletions { rd_kafka_DeleteTopic_destroy(deletion) } }
            let event = try client.adminRequest(timeout: timeout, expecting: RD_KAFKA_EVENT_DELETETOPICS_RESULT) {
                options,
                queue in
                deletions.withUnsafeMutableBufferPointer {
                    rd_kafka_DeleteTopics(client.handle, $0.baseAddress, $0.count, options, queue)
                }
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            let results = rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event), &count)
            for index in 0..<count {
                let result = results![index]
                let code = RDKafkaCode(rd_kafka_topic_result_error(result))
                if code != .noError && code != .unknownTopicOrPartition {
                    let name = String(cString: rd_kafka_topic_result_name(result))
                    throw KafkaError(
                        code: .admin,
                        reason: "could not delete topic '\(name)': \(code.message)",
                        rdKafkaCode: code
                    )
                }
            }
        }
    }

    /// The topics of the cluster with their partitions.
    public func listTopics() async throws(KafkaError) -> [KafkaTopicMetadata] {
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) in
            try client.metadata(timeout: timeout).filter { !$0.name.hasPrefix("__") }
        }
    }

    /// The end offset (high watermark: the offset the next message will get) of each partition of a topic.
    ///
    /// - Throws: A ``KafkaError`` when the topic does not exist or no broker answered.
    public func endOffsets(topic: String) async throws(KafkaError) -> [KafkaTopicPartition: Int64] {
        try await self.watermarks(topic: topic).mapValues(\.end)
    }

    /// The first and end offsets of each partition of a topic (the first moves forward as retention deletes).
    ///
    /// - Throws: A ``KafkaError`` when the topic does not exist or no broker answered.
    public func watermarks(topic: String) async throws(KafkaError) -> [KafkaTopicPartition: KafkaWatermarks] {
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) in
            var offsets: [KafkaTopicPartition: KafkaWatermarks] = [:]
            for partition in try client.existingPartitions(of: topic, timeout: timeout) {
                var low: Int64 = 0
                var high: Int64 = 0
                let code = RDKafkaCode(
                    rd_kafka_query_watermark_offsets(
                        client.handle,
                        topic,
                        partition,
                        &low,
                        &high,
                        Int32(timeout.milliseconds)
                    )
                )
                guard code == .noError else {
                    throw .rdKafka(.admin, code, context: "could not read the end offset of \(topic)[\(partition)]")
                }
                offsets[KafkaTopicPartition(topic: topic, partition: partition)] = KafkaWatermarks(
                    start: low,
                    end: high
                )
            }
            return offsets
        }
    }

    /// The offsets a consumer group committed for the partitions of the given topics (`nil` where it committed
    /// none).
    public func committedOffsets(
        group: String,
        topics: [String]
    ) async throws(KafkaError) -> [KafkaTopicPartition: Int64?] {
        let client = self.client
        let timeout = self.timeout
        let partitions = try await Self.blocking { () throws(KafkaError) -> [KafkaTopicPartition] in
            var partitions: [KafkaTopicPartition] = []
            for topic in topics {
                partitions += try client.existingPartitions(of: topic, timeout: timeout).map {
                    KafkaTopicPartition(topic: topic, partition: $0)
                }
            }
            return partitions
        }
        return try await self.committedOffsets(group: group, partitions: partitions)
    }

    /// Lag of a consumer group per partition of the given topics: end offset minus committed offset (minus the
    /// partition's first retained offset when the group committed nothing).
    public func lag(group: String, topics: [String]) async throws(KafkaError) -> [KafkaPartitionLag] {
        let committed = try await self.committedOffsets(group: group, topics: topics)
        var rows: [KafkaPartitionLag] = []
        for topic in topics {
            for (partition, watermarks) in try await self.watermarks(topic: topic) {
                let (start, end) = (watermarks.start, watermarks.end)
                let committedOffset = committed[partition] ?? nil
                rows.append(
                    KafkaPartitionLag(
                        group: group,
                        partition: partition,
                        committedOffset: committedOffset,
                        endOffset: end,
                        lag: max(0, end - max(committedOffset ?? start, start))
                    )
                )
            }
        }
        return rows.sorted { $0.partition < $1.partition }
    }

    /// Runs blocking librdkafka work on the shared blocking pool (``BlockingExecutor``) and awaits the result.
    static func blocking<T: Sendable>(
        _ work: @escaping @Sendable () throws(KafkaError) -> T
    ) async throws(KafkaError) -> T {
        try await BlockingExecutor.run(work)
    }
}

/// The offset range a partition holds.
public struct KafkaWatermarks: Hashable, Sendable {
    /// The first offset still retained.
    public var start: Int64
    /// The offset the next message will get (high watermark).
    public var end: Int64

    /// A range, e.g. for tests of code that reads one.
    public init(start: Int64, end: Int64) {
        self.start = start
        self.end = end
    }
}

/// The lag of one consumer group on one partition.
public struct KafkaPartitionLag: Hashable, Sendable {
    public var group: String
    public var partition: KafkaTopicPartition
    /// The group's committed offset, or `nil` if it never committed on this partition.
    public var committedOffset: Int64?
    /// The partition's end offset (high watermark).
    public var endOffset: Int64
    /// Messages not yet committed by the group.
    public var lag: Int64
}

extension RDKafkaClient {
    /// The partition ids of a topic that exists; blocking.
    ///
    /// - Throws: A ``KafkaError`` when the topic does not exist or no broker answered.
    func existingPartitions(of topic: String, timeout: Duration) throws(KafkaError) -> [Int32] {
        guard let metadata = try self.metadata(timeout: timeout).first(where: { $0.name == topic }),
            metadata.error == nil, !metadata.partitions.isEmpty
        else {
            throw KafkaError(
                code: .admin,
                reason: "topic '\(topic)' does not exist",
                rdKafkaCode: .unknownTopicOrPartition
            )
        }
        return metadata.partitions
    }

    /// Sends one admin request and waits for its result event; blocking.
    ///
    /// - Returns: The result event; the caller destroys it.
    func adminRequest(
        timeout: Duration,
        expecting type: Int32,
        _ send: (OpaquePointer?, OpaquePointer?) -> Void
    ) throws(KafkaError) -> OpaquePointer {
        guard let queue = rd_kafka_queue_new(self.handle) else { fatalError("rd_kafka_queue_new returned NULL") }
        defer { rd_kafka_queue_destroy(queue) }
        let options = rd_kafka_AdminOptions_new(self.handle, RD_KAFKA_ADMIN_OP_ANY)
        defer { rd_kafka_AdminOptions_destroy(options) }
        var errorText = [CChar](repeating: 0, count: 512)
        _ = rd_kafka_AdminOptions_set_request_timeout(options, Int32(timeout.milliseconds), &errorText, errorText.count)
        send(options, queue)
        // The request times out on its own; the extra second lets its timeout event arrive first.
        guard let event = rd_kafka_queue_poll(queue, Int32(timeout.milliseconds) + 1000) else {
            throw KafkaError.unanswered(within: timeout, self.context)
        }
        let code = RDKafkaCode(rd_kafka_event_error(event))
        guard code == .noError, rd_kafka_event_type(event) == type else {
            let text = rd_kafka_event_error_string(event).map { String(cString: $0) } ?? code.message
            rd_kafka_event_destroy(event)
            if code.meansNoBrokerAnswered { throw .unanswered(within: timeout, self.context, code: code) }
            throw KafkaError(code: .admin, reason: text, rdKafkaCode: code)
        }
        return event
    }
}
