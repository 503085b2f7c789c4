import Logging
import MarqueeKafka
import MarqueeTestSupport
import Testing

@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct KafkaReaderTests {
    @Test func readsExactlyTheRequestedOffsetsWithKeysHeadersAndTimestamps() async throws {
        try await withTestTopic(partitions: 2) { topic in
            let reports = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in
                try await producer.send(
                    (0..<20).map {
                        KafkaProducerMessage(
                            topic: topic,
                            partition: Int32($0 % 2),
                            key: Array("k\($0)".utf8),
                            value: Array("v\($0)".utf8),
                            headers: [KafkaHeader(key: "n", value: "\($0)")]
                        )
                    }
                )
            }
            #expect(reports.count == 20)
            let reader = try KafkaReader(configuration: TestEnvironment.kafka, logger: .marqueeTest)
            let zero = KafkaTopicPartition(topic: topic, partition: 0)
            let one = KafkaTopicPartition(topic: topic, partition: 1)

            let records = try await reader.read([zero: 2..<5, one: 0..<1])
            #expect(records.map(\.partition) == [zero, zero, zero, one])
            #expect(records.map(\.offset) == [2, 3, 4, 0])
            // Partition 0 holds the even messages in order: offset 2 is message 4.
            #expect(records.map(\.valueString) == ["v4", "v6", "v8", "v1"])
            #expect(records.map(\.keyString) == ["k4", "k6", "k8", "k1"])
            #expect(records.map { $0.headers.string("n") } == ["4", "6", "8", "1"])
            #expect(records.allSatisfy { ($0.timestamp ?? 0) > 1_700_000_000_000 })

            // Past the end: what there is; a limit: the first records; an empty range: nothing.
            #expect(try await reader.read([one: 8..<100]).map(\.offset) == [8, 9])
            #expect(try await reader.read([zero: 0..<10, one: 0..<10], limit: 3).count == 3)
            #expect(try await reader.read([zero: 4..<4]).isEmpty)
        }
    }

    @Test func aMissingTopicFailsWithinTheTimeout() async throws {
        let reader = try KafkaReader(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let missing = KafkaTopicPartition(topic: TestEnvironment.uniqueName("missing"), partition: 0)
        await #expect(throws: KafkaError.self) {
            _ = try await reader.read([missing: 0..<1], timeout: .seconds(3))
        }
    }
}
