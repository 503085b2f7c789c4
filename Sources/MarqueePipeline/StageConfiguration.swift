public import MarqueeKafka

/// Settings of a ``Stage``.
public struct StageConfiguration: Sendable {
    /// The stage's topics (name, prefix, number of retry tiers).
    public var topics: StageTopics
    /// The Kafka settings the stage's consumer and producer share.
    public var kafka: KafkaConfiguration
    /// The consumer group. Default: `<prefix><stage>` (`marquee.fetch`).
    public var groupID: String
    /// Default: 10 s, 1 min, 10 min with ±10 % jitter.
    public var retry: RetryPolicy {
        didSet { self.topics.tiers = self.retry.delays.count }
    }
    /// How long a stage paused by a down dependency waits before it tries again: from the lower bound, doubling
    /// up to the upper, which bounds how long the stage takes to resume once the dependency is back. Default:
    /// 1 s to 10 s (one handed-back job tried every 10 s of a long outage).
    public var dependencyRetry: ClosedRange<Duration> = .seconds(1) ... .seconds(10)
    /// Called after each job's outcome is durable (outputs or hop acknowledged, input marked processed): for
    /// metrics and benchmarks. Runs on the job's task; keep it short.
    public var onJobFinished: (@Sendable (StageJobReport) -> Void)? = nil
    /// The stage whose main topic receives a `job.outcome` record (``JobOutcome``) each time a job finishes
    /// (done, retried, dead-lettered), for lineage; `nil` emits none. Workers set `records`.
    ///
    /// The record goes out in the same delivery as the job's outputs or its retry/DLQ hop, so the job is
    /// committed only once both are acknowledged. Its Kafka key is `job.outcome:<job id>`, its headers a child
    /// envelope of the job. Outputs to this stage are records; outputs to any other are jobs, listed in the
    /// outcome's `spawned`. A poison message whose headers are no envelope, and a job handed back unfinished
    /// (a dependency down, shutdown), emit none.
    ///
    /// - Important: It must not name the stage itself: each outcome would be a job of that stage whose outcome
    ///   is emitted in turn, without end (``Stage/init(configuration:handler:logger:)`` stops on it).
    ///
    /// Default: `nil`.
    public var outcomeStage: String? = nil
    /// Keeps the whole original of a dead letter too large for the producer's message limit (an image or object
    /// store), named by `name` (`dlq/<topic>/<partition>/<offset>`), and returns where (a URL), which the letter
    /// names in `marquee-original-location`. `nil`: the letter keeps what fits, with the original's size and
    /// SHA-256. A failure is logged and the letter goes without it.
    ///
    /// Default: `nil`.
    public var keepOversized: (@Sendable (_ name: String, _ bytes: [UInt8]) async throws -> String)? = nil
    /// The most jobs running at once in this process. Default: 16.
    public var concurrency: Int = 16
    /// How long in-flight jobs may take to finish on shutdown before they are handed back uncommitted.
    /// Default: 30 seconds.
    public var shutdownTimeout: Duration = .seconds(30)
    /// How long jobs cancelled at shutdown (past ``shutdownTimeout``, or after a job failed to produce) may take to
    /// end. A job still running then waits on something that ignores cancellation: the stage logs it with its
    /// phase and closes without it (uncommitted, it runs again). Default: 5 seconds.
    public var cancellationGrace: Duration = .seconds(5)
    /// How long the stage waits for its consumer to commit and leave the group when it stops. Leaving waits for
    /// the group's rebalance, which a member rejoining after a network partition can spend minutes in; past this
    /// the stage stops without it (what it processed but had not committed yet runs again on the partition's next
    /// owner). Default: 10 seconds.
    public var closeTimeout: Duration = .seconds(10)
    /// Consumer settings beyond the shared ones (session timeout and the like); group and topics are set by
    /// the stage.
    public var consumer: @Sendable (inout KafkaConsumerConfiguration) -> Void = { _ in }
    /// Producer settings beyond the shared ones.
    public var producer: @Sendable (inout KafkaProducerConfiguration) -> Void = { _ in }

    public init(
        stage: String,
        kafka: KafkaConfiguration,
        prefix: String = "marquee.",
        retry: RetryPolicy = RetryPolicy()
    ) {
        self.topics = StageTopics(stage: stage, prefix: prefix, tiers: retry.delays.count)
        self.kafka = kafka
        // Named after the topic prefix, so two pipelines on one cluster never share a group.
        self.groupID = "\(prefix)\(stage)"
        self.retry = retry
    }

    var consumerConfiguration: KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(
            kafka: self.kafka,
            groupID: self.groupID,
            topics: self.topics.consumed
        )
        self.consumer(&configuration)
        configuration.groupID = self.groupID
        configuration.topics = self.topics.consumed
        return configuration
    }

    var producerConfiguration: KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(kafka: self.kafka)
        self.producer(&configuration)
        return configuration
    }
}
