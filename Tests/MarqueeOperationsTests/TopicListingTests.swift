import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import Testing

@Suite struct TopicListingTests {
    static let fetch = TopicListing(
        name: "marquee.fetch",
        stage: "fetch",
        watermarks: [
            KafkaTopicPartition(topic: "marquee.fetch", partition: 1): .init(start: 5, end: 12),
            KafkaTopicPartition(topic: "marquee.fetch", partition: 0): .init(start: 0, end: 3),
        ]
    )
    static let other = TopicListing(name: "orders", stage: nil, watermarks: [:])

    @Test func aTopicSumsItsPartitions() {
        #expect(Self.fetch.partitions.map(\.partition) == [0, 1])
        #expect(Self.fetch.end == 15)
        #expect(Self.fetch.messages == 10)
    }

    @Test func theTableIsByTopicOrByPartition() {
        #expect(
            TopicListing.table([Self.fetch, Self.other], byPartition: false) == """
                TOPIC          STAGE  PARTITIONS  END  MESSAGES
                marquee.fetch  fetch           2   15        10
                orders                         0    0         0
                """
        )
        #expect(
            TopicListing.table([Self.fetch, Self.other], byPartition: true) == """
                TOPIC          STAGE  PARTITION  FIRST  END  MESSAGES
                marquee.fetch  fetch          0      0    3         3
                marquee.fetch  fetch          1      5   12         7
                """
        )
    }

    @Test func creatingTopicsTakesTheStageTopicsUnlessNamedAndSaysWhichExisted() throws {
        let layout = try PipelineLayout(settings: ["MARQUEE_TOPIC_PARTITIONS": "4"])
        let all = layout.newTopics(names: [], partitions: nil, replicationFactor: nil)
        #expect(all.map(\.name) == layout.stages.flatMap(\.topics.all))
        #expect(all.map(\.name).contains("marquee.images.dlq"))
        #expect(all.allSatisfy { $0.partitions == 4 && $0.replicationFactor == 1 && !$0.configs.isEmpty })
        let named = layout.newTopics(names: ["a", "b"], partitions: 1, replicationFactor: 3)
        #expect(named.map(\.name) == ["a", "b"])
        #expect(named.allSatisfy { $0.partitions == 1 && $0.replicationFactor == 3 })
        #expect(PipelineLayout.creationReport(named, created: ["b"]) == "a: exists\nb: created")
    }
}
