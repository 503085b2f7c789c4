import Logging
import MarqueeTestSupport
import Testing

@testable import MarqueeKafka

/// The consumer on librdkafka's in-process mock cluster: no broker, no network stack.
@Suite(.timeLimit(.minutes(2))) struct KafkaConsumerTests {
    private static func consumerConfiguration(
        _ cluster: KafkaMockCluster,
        group: String,
        topic: String
    ) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(kafka: cluster.configuration, groupID: group, topics: [topic])
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .seconds(1)
        return configuration
    }

    private static func produce(_ values: [String], to topic: String, on cluster: KafkaMockCluster) async throws {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(kafka: cluster.configuration),
            logger: .marqueeTest
        )
        try await producer.deliver(values.map { KafkaProducerMessage(topic: topic, value: $0) })
        await producer.close()
    }

    /// Reads `count` messages, marking each processed.
    private static func read(_ count: Int, from consumer: KafkaConsumer) async throws -> [KafkaConsumerMessage] {
        var messages: [KafkaConsumerMessage] = []
        for try await message in consumer.messages {
            consumer.markProcessed(message)
            messages.append(message)
            if messages.count == count { break }
        }
        return messages
    }

    @Test func consumesWhatWasProducedAndTheNextMemberStartsAfterTheCommit() async throws {
        let cluster = try KafkaMockCluster(logger: .marqueeTest)
        try cluster.createTopic("jobs", partitions: 2)
        let first = (0..<20).map { "job-\($0)" }
        try await Self.produce(first, to: "jobs", on: cluster)

        let consumer = try KafkaConsumer(
            configuration: Self.consumerConfiguration(cluster, group: "workers", topic: "jobs"),
            logger: .marqueeTest
        )
        let read = try await Self.read(20, from: consumer)
        #expect(Set(read.map(\.valueString)) == Set(first))
        // Offset order within each partition.
        for partition in Set(read.map(\.partition)) {
            let offsets = read.filter { $0.partition == partition }.map(\.offset)
            #expect(offsets == offsets.sorted())
        }
        try await consumer.commit()
        #expect(consumer.uncommittedCount == 0)
        await consumer.close()

        let second = (20..<25).map { "job-\($0)" }
        try await Self.produce(second, to: "jobs", on: cluster)
        let next = try KafkaConsumer(
            configuration: Self.consumerConfiguration(cluster, group: "workers", topic: "jobs"),
            logger: .marqueeTest
        )
        let rest = try await Self.read(5, from: next)
        await next.close()
        #expect(Set(rest.map(\.valueString)) == Set(second))
    }

    @Test func twoMembersOfOneGroupSplitThePartitions() async throws {
        let cluster = try KafkaMockCluster(logger: .marqueeTest)
        try cluster.createTopic("jobs", partitions: 4)
        let all = (0..<4).map { KafkaTopicPartition(topic: "jobs", partition: $0) }
        let configuration = Self.consumerConfiguration(cluster, group: "pair", topic: "jobs")
        let a = try KafkaConsumer(configuration: configuration, logger: .marqueeTest)
        let b = try KafkaConsumer(configuration: configuration, logger: .marqueeTest)

        try await withThrowingTaskGroup(of: Void.self) { group in
            // Rebalances are served by the reads.
            for consumer in [a, b] {
                group.addTask { for try await message in consumer.messages { consumer.markProcessed(message) } }
            }
            // The group settles when both hold partitions, none twice, all of them between them.
            let deadline = ContinuousClock.now + .seconds(60)
            var (aAssigned, bAssigned) = (Set(a.assignment), Set(b.assignment))
            while aAssigned.isEmpty || bAssigned.isEmpty || !aAssigned.isDisjoint(with: bAssigned)
                || aAssigned.union(bAssigned) != Set(all)
            {
                try #require(ContinuousClock.now < deadline, "the group did not settle: \(aAssigned) / \(bAssigned)")
                try await Task.sleep(for: .milliseconds(50))
                (aAssigned, bAssigned) = (Set(a.assignment), Set(b.assignment))
            }
            #expect(aAssigned.count + bAssigned.count == 4)
            a.stopMessages()
            b.stopMessages()
            try await group.waitForAll()
        }
        await a.close()
        await b.close()
    }

    @Test func closingEndsAnIterationSuspendedOnAnEmptyTopic() async throws {
        let cluster = try KafkaMockCluster(logger: .marqueeTest)
        try cluster.createTopic("quiet", partitions: 1)
        let consumer = try KafkaConsumer(
            configuration: Self.consumerConfiguration(cluster, group: "idle", topic: "quiet"),
            logger: .marqueeTest
        )
        var events = consumer.rebalances.makeAsyncIterator()
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                var count = 0
                for try await _ in consumer.messages { count += 1 }
                return count
            }
            // Joined the group, so the iteration is suspended on the empty queue now or soon.
            #expect(await events.next() == .assigned([KafkaTopicPartition(topic: "quiet", partition: 0)]))
            await consumer.close()
            let count = try await group.next()
            #expect(count == 0)
        }
        #expect(consumer.assignment.isEmpty)
    }

    @Test func pausedPartitionsHandOutNothingUntilResumedAndLoseNothing() async throws {
        let cluster = try KafkaMockCluster(logger: .marqueeTest)
        try cluster.createTopic("jobs", partitions: 1)
        try await Self.produce((0..<10).map { "job-\($0)" }, to: "jobs", on: cluster)
        let consumer = try KafkaConsumer(
            configuration: Self.consumerConfiguration(cluster, group: "pauser", topic: "jobs"),
            logger: .marqueeTest
        )
        let partition = KafkaTopicPartition(topic: "jobs", partition: 0)
        let head = try await Self.read(3, from: consumer)
        #expect(head.map(\.offset) == [0, 1, 2])
        consumer.pause([partition])
        #expect(consumer.pausedPartitions == [partition])
        consumer.resume([partition])
        let rest = try await Self.read(7, from: consumer)
        #expect(rest.map(\.offset) == Array(3..<10))
        try await consumer.commit()
        await consumer.close()
    }
}
