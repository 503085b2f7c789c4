// Throughput of the Kafka layer (MarqueeKafka), for `make bench-kafka` (scripts/bench-kafka.sh), which runs it
// side by side with librdkafka's own rdkafka_performance against the same broker.
//
//   KafkaBenchmark produce --topic T [--count 500000] [--size 200]
//   KafkaBenchmark consume --topic T [--count 500000] [--group G]
//   KafkaBenchmark create-topics [--partitions 4] T...
//   KafkaBenchmark delete-topics T...
//
// produce and consume print one machine-readable line on standard output:
//   msgs_per_sec=… elapsed_ms=… messages=… bytes=…
// Timing follows rdkafka_performance: produce runs from the first send to the last acknowledgement (the client
// is created before the clock starts, the messages are built before the client); consume runs from the first
// message received to the Nth (the group join is not timed).
import ArgumentParser
import Logging
import MarqueeKafka

import class Foundation.ProcessInfo

@main
struct KafkaBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "KafkaBenchmark",
        abstract: "Measure the Kafka layer's produce and consume throughput.",
        subcommands: [Produce.self, Consume.self, CreateTopics.self, DeleteTopics.self]
    )
}

// MARK: - Options

struct CommonOptions: ParsableArguments {
    @Option(help: "Bootstrap brokers, comma-separated host:port (default: $MARQUEE_BROKERS, else 127.0.0.1:19092).")
    var brokers: String = ProcessInfo.processInfo.environment["MARQUEE_BROKERS"] ?? "127.0.0.1:19092"

    @Option(
        name: .customShort("X"),
        help: ArgumentHelp(
            "A librdkafka property, key=value (repeatable); overrides the layer's settings.",
            valueName: "key=value"
        )
    )
    var properties: [String] = []

    @Option(help: "The least severe log level shown: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "warning"

    func validate() throws {
        for property in self.properties where !property.contains("=") {
            throw ValidationError("-X expects key=value, not '\(property)'")
        }
        guard Logger.Level(rawValue: self.logLevel) != nil else {
            throw ValidationError("unknown --log-level '\(self.logLevel)'")
        }
    }

    var kafka: KafkaConfiguration {
        var kafka = KafkaConfiguration(brokers: self.brokers)
        kafka.clientID = "marquee-bench"
        for property in self.properties {
            let parts = property.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            kafka.additionalProperties[String(parts[0])] = String(parts[1])
        }
        return kafka
    }

    var logger: Logger {
        var logger = Logger(label: "kafka-benchmark")
        logger.logLevel = Logger.Level(rawValue: self.logLevel) ?? .warning
        return logger
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body`; a ``KafkaError`` becomes a one-line failure naming `what`.
func reporting<T>(_ what: String, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as KafkaError {
        throw BenchmarkError("\(what): \(error.reason)")
    }
}

/// The result line the script parses.
func report(messages: Int, bytes: Int, elapsed: Duration) {
    let (seconds, attoseconds) = elapsed.components
    let elapsedSeconds = Double(seconds) + Double(attoseconds) / 1e18
    let rate = elapsedSeconds > 0 ? Double(messages) / elapsedSeconds : 0
    print(
        "msgs_per_sec=\(Int(rate.rounded())) elapsed_ms=\(Int((elapsedSeconds * 1000).rounded())) "
            + "messages=\(messages) bytes=\(bytes)"
    )
}

// MARK: - produce

struct Produce: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send --count messages with one deliver call and wait for every acknowledgement.",
        discussion: "Producer settings are the layer's defaults: acks=all, idempotent, linger 5 ms, batches of up to "
            + "10,000 messages, a local queue of 100,000 messages, no compression, no key (sticky partitioner)."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "The topic to produce to.")
    var topic: String

    @Option(help: "How many messages.")
    var count = 500_000

    @Option(help: "Value size in bytes.")
    var size = 200

    func validate() throws {
        guard self.count > 0 else { throw ValidationError("--count must be positive") }
        guard self.size >= 0 else { throw ValidationError("--size must not be negative") }
    }

    func run() async throws {
        // rdkafka_performance's payload pattern, repeated to the size.
        let pattern = Array("librdkafka_performance testing!".utf8)
        let value = (0..<self.size).map { pattern[$0 % pattern.count] }
        let messages = [KafkaProducerMessage](
            repeating: KafkaProducerMessage(topic: self.topic, value: value),
            count: self.count
        )
        let configuration = KafkaProducerConfiguration(kafka: self.common.kafka)
        let producer = try await reporting("could not create the producer") {
            try KafkaProducer(configuration: configuration, logger: self.common.logger)
        }

        // `deliver` is what a stage calls before it commits its input: every message acknowledged, no reports.
        let start = ContinuousClock.now
        let outcome: Result<Void, KafkaError>
        do {
            outcome = .success(try await producer.deliver(messages))
        } catch {
            outcome = .failure(error)
        }
        let elapsed = start.duration(to: .now)
        await producer.close()

        try await reporting("produce to '\(self.topic)' failed") { try outcome.get() }
        report(messages: self.count, bytes: self.count * self.size, elapsed: elapsed)
    }
}

// MARK: - consume

struct Consume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read --count messages in a fresh consumer group and mark each one processed.",
        discussion: "The group starts at the earliest offset; session timeout 6 s, heartbeat 1 s (the test broker "
            + "joins in about half the session timeout). Other settings are the layer's defaults."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "The topic to consume; it must hold at least --count messages.")
    var topic: String

    @Option(help: "How many messages.")
    var count = 500_000

    @Option(help: "The consumer group (default: a new one).")
    var group: String?

    @Option(help: "Seconds to wait for all messages, group join included.")
    var timeout = 120

    @Option(help: "The consumer's readBatchSize (default: the layer's, 1,024).")
    var readBatchSize: Int?

    func validate() throws {
        guard self.count > 0 else { throw ValidationError("--count must be positive") }
        guard self.timeout > 0 else { throw ValidationError("--timeout must be positive") }
        if let size = self.readBatchSize, !(1...1024).contains(size) {
            throw ValidationError("--read-batch-size must be from 1 to 1024")
        }
    }

    func run() async throws {
        let group =
            self.group
            ?? "marquee-bench-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
        var configuration = KafkaConsumerConfiguration(kafka: self.common.kafka, groupID: group, topics: [self.topic])
        configuration.offsetReset = .earliest
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .seconds(1)
        if let size = self.readBatchSize { configuration.readBatchSize = size }
        let consumer = try await reporting("could not create the consumer") {
            try KafkaConsumer(configuration: configuration, logger: self.common.logger)
        }
        // Ends the message sequence (by closing the consumer) if the topic holds fewer messages than asked for.
        let watchdog = Task { [timeout = self.timeout] in
            try await Task.sleep(for: .seconds(timeout))
            await consumer.close()
        }

        var received = 0
        var bytes = 0
        var start: ContinuousClock.Instant?
        var end: ContinuousClock.Instant?
        var failure: KafkaError?
        let count = self.count  // not through the option's property wrapper on every message
        do {
            for try await message in consumer.messages {
                if received == 0 { start = .now }  // not an optional's copy and test per message
                bytes += message.value.count
                consumer.markProcessed(message)
                received += 1
                if received == count {
                    end = .now
                    break
                }
            }
        } catch {
            failure = error
        }
        watchdog.cancel()
        await consumer.close()

        if let failure { throw BenchmarkError("consume from '\(self.topic)' failed: \(failure.reason)") }
        guard let start, let end else {
            throw BenchmarkError(
                "received \(received) of \(self.count) messages from '\(self.topic)' within \(self.timeout)s"
            )
        }
        report(messages: received, bytes: bytes, elapsed: start.duration(to: end))
    }
}

// MARK: - topics

struct CreateTopics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create topics; existing ones are left as they are.")

    @OptionGroup var common: CommonOptions

    @Option(help: "Partitions per topic.")
    var partitions = 4

    @Argument(help: "Topic names.")
    var names: [String]

    func run() async throws {
        try await reporting("could not create \(self.names.joined(separator: ", "))") {
            let admin = try KafkaAdmin(configuration: self.common.kafka, logger: self.common.logger)
            try await admin.createTopics(self.names.map { .init(name: $0, partitions: self.partitions) })
        }
    }
}

struct DeleteTopics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete topics; missing ones are ignored.")

    @OptionGroup var common: CommonOptions

    @Argument(help: "Topic names.")
    var names: [String]

    func run() async throws {
        try await reporting("could not delete \(self.names.joined(separator: ", "))") {
            let admin = try KafkaAdmin(configuration: self.common.kafka, logger: self.common.logger)
            try await admin.deleteTopics(self.names)
        }
    }
}
