import Logging
import Testing

@testable import MarqueeKafka

@Suite struct KafkaConfigurationTests {
    @Test(arguments: ["", "localhost", "host:0", "host:99999", ":9092", "host:port", "a:1,b"])
    func badBrokerAddressesAreRejectedWithTheAddress(brokers: String) throws {
        let error = try #require(throws: KafkaError.self) { try KafkaConfiguration(brokers: brokers).validate() }
        #expect(error.code == .configuration)
        #expect(error.reason.contains("broker"))
    }

    @Test func goodBrokerAddressesPass() throws {
        try KafkaConfiguration(brokers: "127.0.0.1:19092, kafka-1.example:9092,SSL://broker:9093").validate()
    }

    @Test func producerDefaultsAreIdempotentWithAcksAll() {
        let properties = KafkaProducerConfiguration(kafka: KafkaConfiguration(brokers: "h:1")).properties
        #expect(properties["acks"] == "all")
        #expect(properties["enable.idempotence"] == "true")
    }

    @Test func consumerStoresOnlyProcessedOffsets() {
        let properties = KafkaConsumerConfiguration(
            kafka: KafkaConfiguration(brokers: "h:1"),
            groupID: "g",
            topics: ["t"]
        )
        .properties
        #expect(properties["enable.auto.offset.store"] == "false")
        #expect(properties["group.id"] == "g")
    }

    /// A silent peer (a host cut off) is noticed within 10 s rather than librdkafka's 60, idle connections are
    /// kept alive, and a moved broker is found within a minute: every client, producer and consumer alike.
    @Test func networkTimeoutsSuitARealNetworkAndCanBeOverridden() {
        var kafka = KafkaConfiguration(brokers: "h:1")
        for properties in [
            KafkaProducerConfiguration(kafka: kafka).properties,
            KafkaConsumerConfiguration(kafka: kafka, groupID: "g", topics: ["t"]).properties,
        ] {
            #expect(properties["socket.timeout.ms"] == "10000")
            #expect(properties["socket.keepalive.enable"] == "true")
            #expect(properties["metadata.max.age.ms"] == "60000")
        }
        kafka.additionalProperties = ["socket.timeout.ms": "60000"]
        #expect(KafkaProducerConfiguration(kafka: kafka).properties["socket.timeout.ms"] == "60000")
    }

    @Test func additionalPropertiesOverrideTypedOnes() {
        var kafka = KafkaConfiguration(brokers: "h:1")
        kafka.additionalProperties = ["acks": "1", "security.protocol": "SASL_SSL"]
        let properties = KafkaProducerConfiguration(kafka: kafka).properties
        #expect(properties["acks"] == "1")
        #expect(properties["security.protocol"] == "SASL_SSL")
    }

    @Test func unknownPropertyIsNamedButItsValueIsNotShown() throws {
        var kafka = KafkaConfiguration(brokers: "127.0.0.1:1")
        kafka.additionalProperties = ["sasl.pasword": "hunter2-secret"]
        let error = try #require(throws: KafkaError.self) {
            _ = try KafkaAdmin(configuration: kafka, logger: Logger(label: "test"))
        }
        #expect(error.code == .configuration)
        #expect(error.reason.contains("sasl.pasword"))
        #expect(!error.description.contains("hunter2-secret"))
    }

    @Test func consumerConfigurationIsValidated() throws {
        var configuration = KafkaConsumerConfiguration(
            kafka: KafkaConfiguration(brokers: "h:1"),
            groupID: "",
            topics: ["t"]
        )
        #expect(throws: KafkaError.self) { try configuration.validate() }
        configuration.groupID = "g"
        configuration.readBatchSize = 0
        let batch = try #require(throws: KafkaError.self) { try configuration.validate() }
        #expect(batch.reason.contains("readBatchSize"))
        configuration.readBatchSize = 1024
        configuration.heartbeatInterval = .seconds(60)
        let error = try #require(throws: KafkaError.self) { try configuration.validate() }
        #expect(error.reason.contains("heartbeatInterval"))
    }

    @Test func durationsBecomeMilliseconds() {
        #expect(Duration.seconds(2).milliseconds == 2000)
        #expect(Duration.milliseconds(1500).milliseconds == 1500)
        #expect(Duration.microseconds(2500).milliseconds == 2)
    }
}
