import Logging
import MarqueeKafka
import MarqueeTestSupport
import Testing

/// Nothing listens on 127.0.0.1:1: every client must fail with a clear error inside its timeout, never hang.
///
/// The time bounds tell the configured 2-second timeouts from librdkafka's own defaults (60 s for requests and
/// sockets, 300 s for delivery) with room for a loaded two-core machine, where the suites running alongside
/// delay these clients' threads by seconds (6.8 s was seen in a full run): they are not performance checks.
@Suite(.timeLimit(.minutes(1)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct KafkaUnreachableBrokerTests {
    static let bound = Duration.seconds(20)

    let unreachable: KafkaConfiguration = {
        var configuration = KafkaConfiguration(brokers: "127.0.0.1:1")
        configuration.connectTimeout = .seconds(2)
        return configuration
    }()

    @Test func sendFailsAfterTheDeliveryTimeout() async throws {
        var configuration = KafkaProducerConfiguration(kafka: self.unreachable)
        configuration.deliveryTimeout = .seconds(2)
        configuration.flushTimeout = .seconds(1)
        let clock = ContinuousClock()
        let start = clock.now
        let error = try await #require(throws: KafkaError.self) {
            _ = try await withProducer(configuration) { producer in
                try await producer.send(KafkaProducerMessage(topic: "t", value: "v"))
            }
        }
        #expect(clock.now - start < Self.bound)
        #expect(error.code == .delivery)
        #expect(error.isRetriable)
        #expect(error.reason.contains("did not acknowledge"))
        #expect(error.reason.contains("127.0.0.1:1"), "names the broker it tried: \(error.reason)")
    }

    @Test func adminFailsWithinItsRequestTimeout() async throws {
        let admin = try KafkaAdmin(configuration: self.unreachable, requestTimeout: .seconds(2), logger: .marqueeTest)
        let clock = ContinuousClock()
        let start = clock.now
        let error = try await #require(throws: KafkaError.self) { _ = try await admin.listTopics() }
        #expect(clock.now - start < Self.bound)
        #expect(error.code == .brokerUnreachable)
        #expect(error.reason.contains("no broker answered"))
    }

    @Test func consumerFailsWithinItsConnectTimeout() async throws {
        let configuration = KafkaConsumerConfiguration(kafka: self.unreachable, groupID: "g", topics: ["t"])
        let clock = ContinuousClock()
        let start = clock.now
        let error = try await #require(throws: KafkaError.self) {
            try await withConsumer(configuration) { consumer in
                for try await _ in consumer.messages {}
            }
        }
        #expect(clock.now - start < Self.bound)
        #expect(error.code == .brokerUnreachable)
    }

    @Test func unresolvableHostFailsWithItsName() async throws {
        var kafka = KafkaConfiguration(brokers: "no-such-broker.invalid:9092")
        kafka.connectTimeout = .seconds(2)
        let admin = try KafkaAdmin(configuration: kafka, requestTimeout: .seconds(2), logger: .marqueeTest)
        let error = try await #require(throws: KafkaError.self) { _ = try await admin.listTopics() }
        #expect(error.code == .brokerUnreachable)
        #expect(error.reason.contains("no-such-broker.invalid"), "says which address failed: \(error.reason)")
    }
}
