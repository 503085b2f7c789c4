import ArgumentParser
import MarqueeKafka
import MarqueeOperations

struct Topics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List or create topics.",
        discussion: """
            Examples:
              marquee topics create                 # every stage topic, MARQUEE_TOPIC_PARTITIONS partitions each
              marquee topics list --pipeline-only
            """,
        subcommands: [List.self, Create.self, CreateStages.self],
        defaultSubcommand: List.self
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List topics with their partitions, end offsets and messages held.",
            discussion: """
                MESSAGES is what the partitions hold now (end offset minus first retained offset); END is the sum of \
                the partitions' end offsets (every message ever written). The pipeline's own topics come first, \
                marked with their stage.

                Examples:
                  marquee topics list
                  marquee topics list --partitions          # one line per partition
                  marquee topics list --json | jq '.[] | select(.messages > 0)'
                """
        )

        @OptionGroup var kafka: KafkaOptions
        @Flag(help: "One line per partition, with its first and end offsets.")
        var partitions = false

        @Flag(help: "Only the pipeline's own topics (main, retry tiers, dead letters of each stage).")
        var pipelineOnly = false

        @Flag(help: "Print JSON instead of a table.")
        var json = false

        func run() async throws {
            let layout = try self.kafka.layout()
            try await reportingKafkaErrors {
                let listed = try await TopicListing.read(
                    admin: try self.kafka.makeAdmin(),
                    layout: layout,
                    pipelineOnly: self.pipelineOnly
                )
                if self.json {
                    try printJSON(listed)
                } else {
                    print(TopicListing.table(listed, byPartition: self.partitions))
                }
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the pipeline's topics (or the named ones); existing topics are left as they are.",
            discussion: """
                Without names: every stage's main topic, retry tiers and dead-letter topic — with the defaults \
                marquee.fetch, marquee.fetch.retry.1…3, marquee.fetch.dlq, and the same for images and records — \
                each with MARQUEE_TOPIC_PARTITIONS partitions (default 8) and MARQUEE_REPLICATION_FACTOR replicas \
                (default 1). The number of retry tiers follows MARQUEE_RETRY_DELAYS, as the workers do. Running it \
                again changes nothing (an existing topic keeps its partitions).

                Examples:
                  marquee topics create
                  MARQUEE_TOPIC_PARTITIONS=16 marquee topics create --config deploy/marquee.env
                  marquee topics create --partitions 1 marquee.roundtrip
                """
        )

        @OptionGroup var kafka: KafkaOptions
        @Option(help: "Partitions per topic (default: MARQUEE_TOPIC_PARTITIONS, else 8).")
        var partitions: Int?

        @Option(help: "Replicas per partition (default: MARQUEE_REPLICATION_FACTOR, else 1).")
        var replicationFactor: Int?

        @Argument(help: "Topic names (default: every stage topic of the pipeline).")
        var names: [String] = []

        func validate() throws {
            if let partitions, partitions < 1 { throw ValidationError("--partitions must be at least 1") }
            if let replicationFactor, replicationFactor < 1 {
                throw ValidationError("--replication-factor must be at least 1")
            }
        }

        func run() async throws {
            try await createTopics(
                layout: try self.kafka.layout(),
                names: self.names,
                partitions: self.partitions,
                replicationFactor: self.replicationFactor,
                kafka: self.kafka
            )
        }
    }

    /// The earlier name of `topics create` without names; kept for scripts.
    struct CreateStages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-stages",
            abstract: "Same as `marquee topics create` without names.",
            shouldDisplay: false
        )

        @OptionGroup var kafka: KafkaOptions
        @Option(help: "Partitions per topic.")
        var partitions: Int?

        func run() async throws {
            try await createTopics(
                layout: try self.kafka.layout(),
                names: [],
                partitions: self.partitions,
                replicationFactor: nil,
                kafka: self.kafka
            )
        }
    }
}

/// Creates `names` (or every stage topic of `layout`) and prints each one's fate.
private func createTopics(
    layout: PipelineLayout,
    names: [String],
    partitions: Int?,
    replicationFactor: Int?,
    kafka: KafkaOptions
) async throws {
    let topics = layout.newTopics(names: names, partitions: partitions, replicationFactor: replicationFactor)
    try await reportingKafkaErrors {
        let created = try await kafka.makeAdmin().createTopics(topics)
        if !topics.isEmpty { print(PipelineLayout.creationReport(topics, created: created)) }
    }
}
