import Logging
import MarqueeTestSupport
import Testing

@testable import MarqueeKafka

/// The producer on librdkafka's in-process mock cluster: no broker, no network stack.
@Suite(.timeLimit(.minutes(2))) struct KafkaProducerTests {
    @Test func deliveryReportsNameWhereEachMessageWasStored() async throws {
        let cluster = try KafkaMockCluster(logger: .marqueeTest)
        try cluster.createTopic("orders", partitions: 2)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(kafka: cluster.configuration),
            logger: .marqueeTest
        )
        let messages = (0..<10).map { index in
            var message = KafkaProducerMessage(topic: "orders", key: "k\(index)", value: "v\(index)")
            message.partition = Int32(index % 2)
            return message
        }
        let reports = try await producer.send(messages)
        await producer.close()

        #expect(reports.map(\.topic) == Array(repeating: "orders", count: 10))
        #expect(reports.map(\.partition) == (0..<10).map { Int32($0 % 2) })
        // Each partition's offsets count up from 0 in sending order.
        #expect(reports.filter { $0.partition == 0 }.map(\.offset) == [0, 1, 2, 3, 4])
        #expect(reports.filter { $0.partition == 1 }.map(\.offset) == [0, 1, 2, 3, 4])
    }

    @Test func aMessageForAPartitionThatDoesNotExistFailsAloneWithADeliveryError() async throws {
        let cluster = try KafkaMockCluster(logger: .marqueeTest)
        try cluster.createTopic("orders", partitions: 2)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(kafka: cluster.configuration),
            logger: .marqueeTest
        )
        var stray = KafkaProducerMessage(topic: "orders", value: "nowhere")
        stray.partition = 7
        var good = KafkaProducerMessage(topic: "orders", value: "somewhere")
        good.partition = 1
        let results = try await producer.sendCollectingResults([good, stray])
        await producer.close()

        #expect(try results[0].get() == KafkaDeliveryReport(topic: "orders", partition: 1, offset: 0))
        #expect(throws: KafkaError.self) { try results[1].get() }
        if case .failure(let error) = results[1] { #expect(error.code == .delivery) }
    }

    @Test func closingWhileASendWaitsForAnUnreachableBrokerFailsTheSendWithinTheFlushTimeout() async throws {
        let cluster = try KafkaMockCluster(logger: .marqueeTest)
        try cluster.createTopic("orders", partitions: 1)
        var configuration = KafkaProducerConfiguration(kafka: cluster.configuration)
        configuration.flushTimeout = .seconds(1)
        let producer = try KafkaProducer(configuration: configuration, logger: .marqueeTest)
        // Known partition leader first, so that the blocked send below is in librdkafka's queue.
        try await producer.send(KafkaProducerMessage(topic: "orders", value: "first"))
        cluster.setBroker(1, isUp: false)

        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await #expect(throws: KafkaError.self) {
                    try await producer.deliver([KafkaProducerMessage(topic: "orders", value: "stuck")])
                }
            }
            // The send is blocked once librdkafka holds its message.
            while producer.outstandingMessages == 0 { try await Task.sleep(for: .milliseconds(10)) }
            await producer.close()
            try await group.waitForAll()
        }
        // Tells the 1-second flush timeout from librdkafka's default delivery timeout (300 s), with room for a
        // loaded two-core machine running other suites alongside (11.5 s was seen in a full run).
        #expect(ContinuousClock.now - started < .seconds(30))
        await #expect(throws: KafkaError.self) {
            try await producer.send(KafkaProducerMessage(topic: "orders", value: "late"))
        }
    }

    /// librdkafka queues the broker's refusal before the producer turns on its queue-event callback; what was
    /// queued before must not hold back the delivery reports queued behind it.
    @Test func aSendToABrokerDownFromTheStartFailsAfterTheDeliveryTimeout() async throws {
        let cluster = try KafkaMockCluster(logger: .marqueeTest)
        try cluster.createTopic("orders", partitions: 1)
        cluster.setBroker(1, isUp: false)
        for _ in 0..<3 {
            var configuration = KafkaProducerConfiguration(kafka: cluster.configuration)
            configuration.deliveryTimeout = .seconds(1)
            let producer = try KafkaProducer(configuration: configuration, logger: .marqueeTest)
            let error = await #expect(throws: KafkaError.self) {
                try await producer.send(KafkaProducerMessage(topic: "orders", value: "lost"))
            }
            #expect(error?.code == .delivery)
            await producer.close()
        }
    }

    @Test func concurrentSendersAllGetTheirReportsAndCloseFlushesAfterTheLast() async throws {
        let cluster = try KafkaMockCluster(logger: .marqueeTest)
        try cluster.createTopic("orders", partitions: 4)
        var configuration = KafkaProducerConfiguration(kafka: cluster.configuration)
        // A small local queue: senders wait for room, served by the report passes.
        configuration.queueMessages = 100
        let producer = try KafkaProducer(configuration: configuration, logger: .marqueeTest)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for sender in 0..<8 {
                group.addTask {
                    let messages = (0..<500).map { KafkaProducerMessage(topic: "orders", value: "s\(sender)-\($0)") }
                    return try await producer.send(messages).count
                }
            }
            return try await group.reduce(0, +)
        }
        await producer.close()
        #expect(counts == 4000)
        #expect(producer.outstandingMessages == 0)
    }
}
