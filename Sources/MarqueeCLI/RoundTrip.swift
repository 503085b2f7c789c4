import ArgumentParser
import MarqueeKafka

import struct Foundation.UUID

/// Sends messages through the broker and reads them back: proof the stack works end to end.
struct RoundTrip: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roundtrip",
        abstract: "Produce messages with keys and headers, consume them back in a new group, and check each one.",
        discussion: """
            A smoke test of the broker and the Kafka layer: exits 0 when every message came back intact.

            Examples:
              marquee roundtrip
              marquee roundtrip --count 100000 --brokers kafka:9092
            """
    )

    @OptionGroup var kafka: KafkaOptions

    @Option(help: "How many messages.")
    var count = 1000

    @Option(help: "The topic to use (created with 4 partitions if missing).")
    var topic = "marquee.roundtrip"

    func validate() throws {
        guard (1...10_000_000).contains(self.count) else { throw ValidationError("--count must be from 1 to 10000000") }
    }

    func run() async throws {
        try await reportingKafkaErrors { try await self.roundTrip() }
    }

    private func roundTrip() async throws {
        let clock = ContinuousClock()
        let admin = try self.kafka.makeAdmin()
        try await admin.createTopics([.init(name: self.topic, partitions: 4)])

        let run = UUID().uuidString.lowercased()
        let messages = (0..<self.count).map { index in
            KafkaProducerMessage(
                topic: self.topic,
                key: "\(run):\(index)",
                value: "{\"run\":\"\(run)\",\"n\":\(index)}",
                headers: [KafkaHeader(key: "marquee-id", value: "\(run)-\(index)")]
            )
        }
        var producerConfiguration = KafkaProducerConfiguration(kafka: self.kafka.configuration)
        producerConfiguration.deliveryTimeout = .seconds(max(self.kafka.timeout, 5))
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: self.kafka.logger)
        let produceStart = clock.now
        let reports: [KafkaDeliveryReport]
        do {
            reports = try await producer.send(messages)
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
        let produced = clock.now - produceStart
        print("produced \(reports.count) messages to \(self.topic) in \(produced.formatted)")

        // A new group starts at the earliest offset; only this run's messages count.
        var consumerConfiguration = KafkaConsumerConfiguration(
            kafka: self.kafka.configuration,
            groupID: "marquee-roundtrip-\(run)",
            topics: [self.topic]
        )
        consumerConfiguration.sessionTimeout = .seconds(6)
        consumerConfiguration.heartbeatInterval = .seconds(1)
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: self.kafka.logger)
        let consumeStart = clock.now
        var seen = Set<Int>()
        var corrupt = 0
        do {
            for try await message in consumer.messages {
                consumer.markProcessed(message)
                guard message.valueString.contains(run) else { continue }
                guard let key = message.keyString, key.hasPrefix(run + ":"),
                    let index = Int(key.dropFirst(run.count + 1)),
                    message.headers.string("marquee-id") == "\(run)-\(index)",
                    message.valueString == "{\"run\":\"\(run)\",\"n\":\(index)}"
                else {
                    corrupt += 1
                    continue
                }
                seen.insert(index)
                if seen.count == self.count { break }
            }
            try await consumer.commit()
        } catch {
            await consumer.close()
            throw error
        }
        await consumer.close()
        let consumed = clock.now - consumeStart
        print("consumed \(seen.count) messages back in \(consumed.formatted) (group join included)")
        guard seen.count == self.count, corrupt == 0 else {
            print("round trip FAILED: \(self.count - seen.count) missing, \(corrupt) corrupt")
            throw ExitCode.failure
        }
        print("round trip OK: every message arrived intact with its key and headers")
    }
}

extension Duration {
    var formatted: String {
        let milliseconds = Double(self.components.seconds) * 1000 + Double(self.components.attoseconds) / 1e15
        return milliseconds < 1000 ? "\(Int(milliseconds)) ms" : "\((milliseconds / 100).rounded() / 10) s"
    }
}
