internal import Crdkafka
import Logging

/// librdkafka's in-process mock cluster, for unit tests that need a broker but no network stack: producers,
/// consumer groups with commits, topic metadata.
///
/// A client configured with `test.mock.num.brokers` gets a cluster of its own; this one owns such a client and
/// hands out its bootstrap address, so that every producer and consumer of a test talks to the same cluster.
/// The cluster lives as long as this object.
final class KafkaMockCluster: Sendable {
    private let owner: RDKafkaClient
    /// The `rd_kafka_mock_cluster_t *`, owned by `owner`'s handle.
    private let cluster: SendableOpaquePointer
    /// The cluster's `bootstrap.servers`.
    let bootstrapServers: String

    /// - Parameter brokers: How many brokers the cluster has.
    init(brokers: Int = 1, logger: Logger) throws(KafkaError) {
        self.owner = try RDKafkaClient(
            kind: .producer,
            properties: ["test.mock.num.brokers": "\(brokers)", "client.id": "marquee-mock-cluster"],
            context: RDKafkaClientContext(logger: logger)
        )
        guard let cluster = rd_kafka_handle_mock_cluster(self.owner.handle) else {
            fatalError("a client with test.mock.num.brokers has no mock cluster")
        }
        self.cluster = SendableOpaquePointer(cluster)
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        // A group's first join otherwise waits 3 s for more members (group.initial.rebalance.delay.ms).
        rd_kafka_mock_group_initial_rebalance_delay_ms(cluster, 0)
    }

    /// A configuration whose bootstrap servers are this cluster's.
    var configuration: KafkaConfiguration {
        var configuration = KafkaConfiguration(brokers: self.bootstrapServers)
        configuration.connectTimeout = .seconds(10)
        return configuration
    }

    /// Creates a topic (the mock cluster has no CreateTopics).
    func createTopic(_ name: String, partitions: Int) throws(KafkaError) {
        let code = RDKafkaCode(rd_kafka_mock_topic_create(self.cluster.pointer, name, Int32(partitions), 1))
        guard code == .noError else { throw .rdKafka(.admin, code, context: "could not create mock topic '\(name)'") }
    }

    /// Takes a broker down (its connections are closed and refused) or brings it back.
    func setBroker(_ id: Int32, isUp: Bool) {
        let code = RDKafkaCode(
            isUp
                ? rd_kafka_mock_broker_set_up(self.cluster.pointer, id)
                : rd_kafka_mock_broker_set_down(self.cluster.pointer, id)
        )
        precondition(code == .noError, "mock broker \(id): \(code.message)")
    }
}
