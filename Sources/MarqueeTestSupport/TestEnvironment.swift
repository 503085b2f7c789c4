public import Logging
public import MarqueeKafka

import class Foundation.ProcessInfo
import struct Foundation.UUID

/// Where the tests find the local stack, and whether integration tests run.
public enum TestEnvironment {
    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// Integration tests run only when `MARQUEE_INTEGRATION=1` (set by `make test` and CI), so a plain
    /// `swift test` runs the unit tests alone.
    public static var isIntegrationEnabled: Bool { environment["MARQUEE_INTEGRATION"] == "1" }

    /// The broker the integration tests use: `KAFKA_HOST`/`KAFKA_PORT`, else `MARQUEE_BROKERS`, else the local
    /// stack's `127.0.0.1:19092`.
    public static var brokers: String {
        if let host = environment["KAFKA_HOST"] {
            return "\(host):\(environment["KAFKA_PORT"] ?? "19092")"
        }
        return environment["MARQUEE_BROKERS"] ?? "127.0.0.1:19092"
    }

    /// A configuration for the test broker.
    public static var kafka: KafkaConfiguration {
        var configuration = KafkaConfiguration(brokers: brokers)
        configuration.clientID = "marquee-tests"
        // MARQUEE_KAFKA_DEBUG=fetch,cgrp,… turns on librdkafka's debug contexts (logged at debug level).
        if let debug = environment["MARQUEE_KAFKA_DEBUG"] { configuration.additionalProperties["debug"] = debug }
        return configuration
    }

    /// A consumer configuration with the test broker's fast-join settings (ENVIRONMENT.md: join ≈ 3 s).
    public static func consumer(group: String, topics: [String]) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(kafka: kafka, groupID: group, topics: topics)
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .seconds(1)
        configuration.commitInterval = .milliseconds(200)
        return configuration
    }

    /// A producer configuration that writes one record per batch, so the test broker's end offsets are exact
    /// (its ListOffsets answer is wrong with batching, see ENVIRONMENT.md).
    public static var exactOffsetsProducer: KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(kafka: kafka)
        configuration.batchMessages = 1
        return configuration
    }

    /// A name no other test uses.
    public static func uniqueName(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }
}

extension Logger {
    /// The logger tests use: `info` and above, to standard error.
    public static let marqueeTest: Logger = {
        var logger = Logger(label: "marquee.test")
        logger.logLevel = ProcessInfo.processInfo.environment["MARQUEE_KAFKA_DEBUG"] == nil ? .info : .debug
        return logger
    }()
}

/// Runs `body` with a new topic of `partitions` partitions.
///
/// The topic is not deleted afterwards: with the test broker, deleting a topic that a live client still knows
/// makes the broker recreate it (under a new id) on that client's next metadata request, and librdkafka 2.8's
/// metadata cache can crash on the changed id (librdkafka #4964). Names are unique, and the broker keeps
/// everything in memory only, so stopping the stack clears them.
public func withTestTopic<T>(
    partitions: Int = 4,
    _ body: (String) async throws -> T
) async throws -> T {
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    let topic = TestEnvironment.uniqueName("marquee-test")
    try await admin.createTopics([.init(name: topic, partitions: partitions)])
    return try await body(topic)
}

/// Creates a producer, runs `body`, and closes the producer whatever happens.
public func withProducer<T>(
    _ configuration: KafkaProducerConfiguration = KafkaProducerConfiguration(kafka: TestEnvironment.kafka),
    _ body: (KafkaProducer) async throws -> T
) async throws -> T {
    let producer = try KafkaProducer(configuration: configuration, logger: .marqueeTest)
    do {
        let result = try await body(producer)
        await producer.close()
        return result
    } catch {
        await producer.close()
        throw error
    }
}

/// Creates a consumer, runs `body`, and closes the consumer whatever happens.
public func withConsumer<T>(
    _ configuration: KafkaConsumerConfiguration,
    _ body: (KafkaConsumer) async throws -> T
) async throws -> T {
    let consumer = try KafkaConsumer(configuration: configuration, logger: .marqueeTest)
    do {
        let result = try await body(consumer)
        await consumer.close()
        return result
    } catch {
        await consumer.close()
        throw error
    }
}
