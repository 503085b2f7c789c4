public import MarqueeKafka
import MarqueePipeline

/// A topic as `marquee topics list` shows it: its partitions with their first and end offsets, and the stage of
/// the pipeline it belongs to.
public struct TopicListing: Encodable, Sendable, Hashable {
    /// A partition and its offsets.
    public struct Partition: Encodable, Sendable, Hashable {
        /// The partition's number.
        public var partition: Int32
        /// The first offset retained.
        public var first: Int64
        /// The end offset (the next message's).
        public var end: Int64
    }

    /// The topic's name.
    public var name: String
    /// The pipeline stage the topic belongs to, if it is one of the pipeline's.
    public var stage: String?
    /// The partitions, in order.
    public var partitions: [Partition]
    /// The sum of the partitions' end offsets.
    public var end: Int64
    /// Messages retained now.
    public var messages: Int64

    /// The listing of a topic from its partitions' watermarks.
    public init(name: String, stage: String?, watermarks: [KafkaTopicPartition: KafkaWatermarks]) {
        self.name = name
        self.stage = stage
        self.partitions = watermarks.sorted { $0.key < $1.key }.map {
            Partition(partition: $0.key.partition, first: $0.value.start, end: $0.value.end)
        }
        self.end = self.partitions.map(\.end).reduce(0, +)
        self.messages = self.partitions.map { $0.end - $0.first }.reduce(0, +)
    }

    /// The cluster's topics, Kafka's internal ones (`__…`) left out: the pipeline's own first, marked with their
    /// stage, then the others, each part by name.
    ///
    /// - Parameter pipelineOnly: Only the pipeline's topics (main, retry tiers, dead letters of each stage).
    /// - Throws: A ``KafkaError`` when the broker refuses or does not answer.
    public static func read(
        admin: KafkaAdmin,
        layout: PipelineLayout,
        pipelineOnly: Bool
    ) async throws(KafkaError) -> [TopicListing] {
        let stageOf = Dictionary(layout.stages.flatMap { stage in stage.topics.all.map { ($0, stage.name) } }) {
            first,
            _ in first
        }
        let topics = try await admin.listTopics()
            .filter { !$0.name.hasPrefix("__") && (!pipelineOnly || stageOf[$0.name] != nil) }
            .sorted { (stageOf[$0.name] == nil ? 1 : 0, $0.name) < (stageOf[$1.name] == nil ? 1 : 0, $1.name) }
        var listed: [TopicListing] = []
        for topic in topics {
            let watermarks = try await admin.watermarks(topic: topic.name)
            listed.append(TopicListing(name: topic.name, stage: stageOf[topic.name], watermarks: watermarks))
        }
        return listed
    }

    /// A row per topic (TOPIC, STAGE, PARTITIONS, END, MESSAGES), or with `byPartition` a row per partition
    /// (TOPIC, STAGE, PARTITION, FIRST, END, MESSAGES).
    public static func table(_ topics: [TopicListing], byPartition: Bool) -> String {
        let headers =
            byPartition
            ? ["TOPIC", "STAGE", "PARTITION", "FIRST", "END", "MESSAGES"]
            : ["TOPIC", "STAGE", "PARTITIONS", "END", "MESSAGES"]
        var table = TextTable(
            headers.enumerated().map { index, header in
                TextTable.Column(header: header, alignment: index >= 2 ? .right : .left, maxWidth: index == 0 ? 80 : 40)
            }
        )
        for topic in topics {
            if byPartition {
                for partition in topic.partitions {
                    table.append([
                        topic.name, topic.stage ?? "", "\(partition.partition)", "\(partition.first)",
                        "\(partition.end)", "\(partition.end - partition.first)",
                    ])
                }
            } else {
                table.append([
                    topic.name, topic.stage ?? "", "\(topic.partitions.count)", "\(topic.end)", "\(topic.messages)",
                ])
            }
        }
        return table.render()
    }
}
