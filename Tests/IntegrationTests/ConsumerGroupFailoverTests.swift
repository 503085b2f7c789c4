import Logging
import MarqueeCore
import MarqueeKafka
import MarqueeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ConsumerGroupFailoverTests {
    /// Two member processes split the partitions; one is killed with SIGKILL mid-stream; the other takes over
    /// its partitions and every message is processed at least once.
    @Test func survivorTakesOverAfterKillMinus9AndNothingIsLost() async throws {
        try await withTestTopic(partitions: 4) { topic in
            let group = TestEnvironment.uniqueName("failover")
            let observer = GroupObserver()
            let first = try GroupMemberProcess(
                name: "first",
                group: group,
                topic: topic,
                brokers: TestEnvironment.brokers,
                observer: observer
            )
            let second = try GroupMemberProcess(
                name: "second",
                group: group,
                topic: topic,
                brokers: TestEnvironment.brokers,
                observer: observer
            )
            var killed = false
            defer {
                if !killed { first.signal(SIGKILL) }
                second.signal(SIGKILL)
            }

            let total = 10_000
            var produced = 0
            try await withProducer { producer in
                func produce(_ count: Int) async throws {
                    let ids = produced..<min(produced + count, total)
                    try await producer.send(
                        ids.map { KafkaProducerMessage(topic: topic, key: "k\($0)", value: "\($0)") }
                    )
                    produced = ids.upperBound
                }
                // Produce in small waves, each processed before the next, until both members are consuming:
                // then the partitions are split between them.
                while true {
                    try await produce(100)
                    let target = produced
                    try await observer.wait("wave up to \(target) processed") { $0.allProcessed.count >= target }
                    let snapshot = observer.snapshot
                    if (snapshot.lines["first"] ?? 0) > 0 && (snapshot.lines["second"] ?? 0) > 0 { break }
                    if produced >= total / 2 { break }
                }
                let split = observer.snapshot
                #expect((split.lines["first"] ?? 0) > 0, "both members consume: the partitions are split")
                #expect((split.lines["second"] ?? 0) > 0, "both members consume: the partitions are split")
                #expect(
                    split.partitions["first"].map { $0.isDisjoint(with: split.partitions["second"] ?? []) } ?? false
                )

                first.signal(SIGKILL)
                killed = true
                let status = await first.waitForExit()
                #expect(status == SIGKILL)
                let firstPartitions = observer.snapshot.partitions["first"] ?? []

                try await produce(total - produced)
                try await observer.wait("all \(total) messages processed", timeout: .seconds(90)) {
                    $0.allProcessed.count == total
                }
                let final = observer.snapshot
                #expect(final.allProcessed == Set(0..<total), "none missing")
                #expect(firstPartitions.isSubset(of: final.partitions["second"] ?? []), "the survivor took over")
            }
            second.signal(SIGTERM)
            let status = await second.waitForExit()
            #expect(status == 0, "graceful shutdown on SIGTERM")
        }
    }
}

@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ConsumerRebalanceTests {
    /// The first member processes everything but never commits on its own (the background commit is an hour
    /// away). When a second member joins, the revocation commits what was processed: the newcomer starts after
    /// it, not from the beginning.
    @Test func revokedPartitionsCommitWhatWasProcessed() async throws {
        try await withTestTopic(partitions: 2) { topic in
            _ = try await withProducer { producer in
                try await producer.send(
                    (0..<20).map {
                        KafkaProducerMessage(topic: topic, partition: Int32($0 % 2), value: Array("old-\($0)".utf8))
                    }
                )
            }
            let group = TestEnvironment.uniqueName("revoke")
            var configuration = TestEnvironment.consumer(group: group, topics: [topic])
            configuration.commitInterval = .seconds(3600)
            let first = try KafkaConsumer(configuration: configuration, logger: .marqueeTest)
            var firstEvents = first.rebalances.makeAsyncIterator()
            var firstReceived: [String] = []
            for try await message in first.messages {
                first.markProcessed(message)
                firstReceived.append(message.valueString)
                if firstReceived.count == 20 { break }
            }
            #expect(
                await firstEvents.next() == .assigned([0, 1].map { KafkaTopicPartition(topic: topic, partition: $0) })
            )
            // From here the first member keeps reading (and so serves its rebalances) until closed.
            let firstReader = Task {
                var received: [String] = []
                for try await message in first.messages {
                    first.markProcessed(message)
                    received.append(message.valueString)
                }
                return received
            }

            // The second member joins once the first has processed all twenty.
            let second = try KafkaConsumer(configuration: configuration, logger: .marqueeTest)
            let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
            let secondReader = Task {
                var received: [KafkaConsumerMessage] = []
                for try await message in second.messages {
                    second.markProcessed(message)
                    received.append(message)
                    if message.valueString.hasPrefix("new-") { break }
                }
                return received
            }
            var secondEvents = second.rebalances.makeAsyncIterator()
            var secondPartitions: [KafkaTopicPartition] = []
            while secondPartitions.isEmpty, let event = await secondEvents.next() {
                if case .assigned(let partitions) = event { secondPartitions = partitions }
            }
            #expect(await firstEvents.next().map { if case .revoked = $0 { true } else { false } } == true)
            let committed = try await admin.committedOffsets(group: group, topics: [topic])
            #expect(
                committed.values.allSatisfy { $0 == 10 },
                "the revocation committed all that was processed: \(committed)"
            )

            // New messages in every partition: the second member's first message is a new one.
            _ = try await withProducer { producer in
                try await producer.send(
                    (0..<2).map {
                        KafkaProducerMessage(topic: topic, partition: Int32($0), value: Array("new-\($0)".utf8))
                    }
                )
            }
            let secondReceived = try await secondReader.value
            #expect(
                secondReceived.map(\.valueString).allSatisfy { $0.hasPrefix("new-") },
                "nothing processed is delivered again"
            )
            #expect(secondReceived.allSatisfy { secondPartitions.contains($0.topicPartition) && $0.offset == 10 })
            await second.close()
            await first.close()
            firstReceived += try await firstReader.value
            #expect(firstReceived.filter { $0.hasPrefix("old-") }.count == 20, "the old messages were read once")
        }
    }

    /// A member busy with the messages it has (every job in flight, asking for no more) still gives up its
    /// partitions when another member joins: the newcomer gets its share without waiting for the busy member to
    /// ask for a message.
    @Test func aBusyMemberStillServesTheRebalanceANewMemberStarts() async throws {
        try await withTestTopic(partitions: 2) { topic in
            _ = try await withProducer { producer in
                try await producer.send(
                    (0..<20).map {
                        KafkaProducerMessage(topic: topic, partition: Int32($0 % 2), value: Array("m\($0)".utf8))
                    }
                )
            }
            let configuration = TestEnvironment.consumer(group: TestEnvironment.uniqueName("busy"), topics: [topic])
            let first = try KafkaConsumer(configuration: configuration, logger: .marqueeTest)
            var firstEvents = first.rebalances.makeAsyncIterator()
            // One message taken, then no more asked for: the application is busy.
            var iterator = first.messages.makeAsyncIterator()
            let held = try #require(try await iterator.next())
            #expect(await firstEvents.next().map { if case .assigned = $0 { true } else { false } } == true)

            let second = try KafkaConsumer(configuration: configuration, logger: .marqueeTest)
            let secondReader = Task {
                for try await message in second.messages { second.markProcessed(message) }
            }
            let secondPartitions = try await answer(within: .seconds(60)) {
                var partitions: [KafkaTopicPartition] = []
                for await event in second.rebalances {
                    if case .assigned(let assigned) = event { partitions = assigned }
                    if !partitions.isEmpty { break }
                }
                return partitions
            }
            #expect(secondPartitions.count == 1, "the newcomer got one of the two partitions")
            #expect(await firstEvents.next().map { if case .revoked = $0 { true } else { false } } == true)
            first.markProcessed(held)
            secondReader.cancel()
            await second.close()
            await first.close()
        }
    }
}
