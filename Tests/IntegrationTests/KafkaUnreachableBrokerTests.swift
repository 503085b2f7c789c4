import Logging
import MarqueeKafka
import MarqueeTestSupport
import Testing

/// Nothing listens on 127.0.0.1:1: every client must fail with a clear error inside its timeout, never hang.
@Suite(.timeLimit(.minutes(1)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct KafkaUnreachableBrokerTests {
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
        #expect(clock.now - start < .seconds(8))
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
        #expect(clock.now - start < .seconds(6))
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
        #expect(clock.now - start < .seconds(6))
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
