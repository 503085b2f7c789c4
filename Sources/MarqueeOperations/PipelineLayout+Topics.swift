public import MarqueeKafka
import MarqueePipeline

// MARK: - PipelineLayout + the topics `marquee topics create` makes

extension PipelineLayout {
    /// The topics to create: `names`, or every stage's main topic, retry tiers and dead-letter topic when `names`
    /// is empty; each with `partitions` and `replicationFactor` (default: the layout's) and the stage topics'
    /// configs.
    public func newTopics(names: [String], partitions: Int?, replicationFactor: Int?) -> [KafkaAdmin.NewTopic] {
        (names.isEmpty ? self.stages.flatMap(\.topics.all) : names).map {
            KafkaAdmin.NewTopic(
                name: $0,
                partitions: partitions ?? self.partitions,
                replicationFactor: replicationFactor ?? self.replicationFactor,
                configs: StageTopics.topicConfigs
            )
        }
    }

    /// `marquee.fetch: created` or `marquee.fetch: exists`: a line per topic asked for, in order.
    public static func creationReport(_ topics: [KafkaAdmin.NewTopic], created: [String]) -> String {
        let created = Set(created)
        return topics.map { "\($0.name): \(created.contains($0.name) ? "created" : "exists")" }.joined(separator: "\n")
    }
}
