public import MarqueeKafka
import MarqueePipeline

/// Settings of a ``WindowProducer``.
public struct WindowProducerConfiguration: Sendable {
    /// The shared client settings.
    public var kafka: KafkaConfiguration

    /// This process, as the state records name it (host, process id and a random part: unique per run).
    public var owner: String

    /// Default: `marquee.`.
    public var prefix: String = "marquee."

    /// The consumer group whose member holding the state topic's partition is the leader.
    ///
    /// Default: `nil`, which means `<prefix>producer`.
    public var groupID: String? = nil

    /// Consumer-group session timeout: how long a silent leader keeps the leadership.
    ///
    /// Default: 10 seconds.
    public var sessionTimeout: Duration = .seconds(10)

    /// How long a window's winning claim may go unconfirmed before the leader takes it over and sends the
    /// window's jobs again (with the same ids). A winner sends only if it read its claim back within a quarter of
    /// it, and each send gives up after a quarter, so a live winner confirms before anyone may take over.
    ///
    /// Default: 60 seconds.
    public var claimTimeout: Duration = .seconds(60)

    /// Replicas of the state topic when the producer creates it; -1 takes the brokers' `default.replication.factor`.
    /// The exactly-once guarantee rests on this topic: use 3 on a production cluster.
    ///
    /// Default: -1.
    public var stateReplicationFactor: Int = -1

    /// Where a test makes the process kill itself, as `kill -9` would.
    public enum CrashPoint: Hashable, Sendable {
        /// After its `n`th winning claim, before sending the window's jobs.
        case claimed(Int)
        /// After the jobs of its `n`th winning claim were acknowledged, before the window is confirmed.
        case sent(Int)
    }

    /// Test fault: the process kills itself (SIGKILL) at this point, to test takeovers. Default: `nil`.
    public var crashPoint: CrashPoint? = nil

    public init(kafka: KafkaConfiguration, owner: String) {
        self.kafka = kafka
        self.owner = owner
    }

    /// `<prefix>producer.windows`: one partition, compacted, keyed by schedule.
    public var stateTopic: String { "\(self.prefix)producer.windows" }

    /// The fetch stage's main topic, where the jobs go.
    public var fetchTopic: String { StageTopics(stage: "fetch", prefix: self.prefix, tiers: 0).main }

    /// The leader-election group.
    public var group: String { self.groupID ?? "\(self.prefix)producer" }
}
