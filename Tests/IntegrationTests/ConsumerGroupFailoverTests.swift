import Logging
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
                name: "first", group: group, topic: topic, brokers: TestEnvironment.brokers, observer: observer
            )
            let second = try GroupMemberProcess(
                name: "second", group: group, topic: topic, brokers: TestEnvironment.brokers, observer: observer
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
                    try await producer.send(ids.map { KafkaProducerMessage(topic: topic, key: "k\($0)", value: "\($0)") })
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
                #expect(split.partitions["first"].map { $0.isDisjoint(with: split.partitions["second"] ?? []) } ?? false)

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
