import Logging
import MarqueeKafka
import MarqueeTestSupport
import Testing

@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct KafkaAdminTests {
    @Test func createTopicsIsIdempotentAndListed() async throws {
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let name = TestEnvironment.uniqueName("admin")
        let created = try await admin.createTopics([.init(name: name, partitions: 3)])
        #expect(created == [name])
        let again = try await admin.createTopics([.init(name: name, partitions: 3)])
        #expect(again.isEmpty)
        let topic = try #require(try await admin.listTopics().first { $0.name == name })
        #expect(topic.partitions == [0, 1, 2])
    }

    @Test func aTopicCreatedWithASizeLimitReportsIt() async throws {
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let name = TestEnvironment.uniqueName("configs")
        try await admin.createTopics([.init(name: name, partitions: 1, configs: ["max.message.bytes": "1048588"])])
        let configs = try await admin.topicConfigs([name])
        #expect(configs[name]?["max.message.bytes"] == "1048588")
    }

    @Test func lagEqualsEndOffsetMinusCommittedOffset() async throws {
        try await withTestTopic(partitions: 3) { topic in
            let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
            let reports = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in
                try await producer.send((0..<60).map { KafkaProducerMessage(topic: topic, key: "k\($0)", value: "v\($0)") })
            }
            // Computed independently from the delivery reports.
            var endOffsets: [Int32: Int64] = [:]
            for report in reports { endOffsets[report.partition] = max(endOffsets[report.partition] ?? 0, report.offset + 1) }
            #expect(endOffsets.count == 3)

            // Process the first 4 messages of every partition, then commit.
            let group = TestEnvironment.uniqueName("lag")
            var committed: [Int32: Int64] = [:]
            try await withConsumer(TestEnvironment.consumer(group: group, topics: [topic])) { consumer in
                var handedOut = 0
                for try await message in consumer.messages {
                    handedOut += 1
                    if message.offset < 4 {
                        consumer.markProcessed(message)
                        committed[message.partition] = max(committed[message.partition] ?? 0, message.offset + 1)
                    }
                    if handedOut == reports.count { break }
                }
                try await consumer.commit()
            }

            let lag = try await admin.lag(group: group, topics: [topic])
            #expect(lag.count == 3)
            for row in lag {
                let end = try #require(endOffsets[row.partition.partition])
                #expect(row.endOffset == end)
                #expect(row.committedOffset == committed[row.partition.partition])
                #expect(row.lag == end - (committed[row.partition.partition] ?? 0))
            }
            #expect(lag.map(\.lag).reduce(0, +) == 60 - 12)

            // A group that never committed lags by everything.
            let fresh = try await admin.lag(group: TestEnvironment.uniqueName("never"), topics: [topic])
            #expect(fresh.allSatisfy { $0.committedOffset == nil && $0.lag == $0.endOffset })
        }
    }

    @Test func endOffsetsOfAMissingTopicFailClearly() async throws {
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let error = try await #require(throws: KafkaError.self) {
            _ = try await admin.endOffsets(topic: TestEnvironment.uniqueName("missing"))
        }
        #expect(error.reason.contains("does not exist"))
    }
}

extension KafkaAdminTests {
    /// Group requests go to the group's coordinator, found first. One that times out before its coordinator
    /// request is sent used to leave librdkafka 2.8 a freed reference to answer later, which aborted the process
    /// (librdkafka #4605; the fix is scripts/patches). Hundreds of such timeouts, then a normal request: the
    /// process lives and the client still works.
    @Test func groupRequestsTimingOutBeforeTheirCoordinatorAnswersLeaveTheProcessRunning() async throws {
        let hasty = try KafkaAdmin(configuration: TestEnvironment.kafka, requestTimeout: .milliseconds(1), logger: .marqueeTest)
        var timedOut = 0
        for round in 0..<300 {
            let group = TestEnvironment.uniqueName("hasty-\(round)")
            do {
                _ = try await hasty.describeGroups([group])
            } catch {
                timedOut += 1
            }
            do {
                _ = try await hasty.committedOffsets(group: group)
            } catch {
                timedOut += 1
            }
        }
        #expect(timedOut > 0, "a 1 ms timeout must catch some requests before their coordinator answered")
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let group = TestEnvironment.uniqueName("after-hasty")
        #expect(try await admin.describeGroups([group])[group] != nil)
    }
}
