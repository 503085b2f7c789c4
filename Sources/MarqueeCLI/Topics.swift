import ArgumentParser
import MarqueeKafka
import MarqueePipeline

import class Foundation.ProcessInfo

struct Topics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List or create topics.",
        subcommands: [List.self, Create.self, CreateStages.self],
        defaultSubcommand: List.self
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the cluster's topics and partition counts.")

        @OptionGroup var kafka: KafkaOptions

        func run() async throws {
            try await reportingKafkaErrors {
                let admin = try self.kafka.makeAdmin()
                let topics = try await admin.listTopics()
                let width = max(5, topics.map(\.name.count).max() ?? 0)
                print("TOPIC".padding(width) + "  PARTITIONS")
                for topic in topics {
                    print(topic.name.padding(width) + "  \(topic.partitions.count)")
                }
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create topics; existing ones are left as they are."
        )

        @OptionGroup var kafka: KafkaOptions

        @Option(help: "Partitions per topic.")
        var partitions = 4

        @Option(help: "Replicas per partition.")
        var replicationFactor = 1

        @Argument(help: "Topic names.")
        var names: [String]

        func validate() throws {
            guard self.partitions > 0 else { throw ValidationError("--partitions must be at least 1") }
            guard self.replicationFactor > 0 else { throw ValidationError("--replication-factor must be at least 1") }
            guard !self.names.isEmpty else { throw ValidationError("name at least one topic") }
        }

        func run() async throws {
            try await reportingKafkaErrors {
                let admin = try self.kafka.makeAdmin()
                let created = Set(
                    try await admin.createTopics(
                        self.names.map {
                            .init(name: $0, partitions: self.partitions, replicationFactor: self.replicationFactor)
                        }
                    )
                )
                for name in self.names {
                    print("\(name): \(created.contains(name) ? "created" : "exists")")
                }
            }
        }
    }
}

extension Topics {
    struct CreateStages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-stages",
            abstract: "Create every stage topic: main, retry tiers and dead letters of fetch, images and records.",
            discussion: "Existing topics are left as they are. With the defaults: marquee.fetch, marquee.fetch.retry.1…3, marquee.fetch.dlq, and the same for images and records."
        )

        @OptionGroup var kafka: KafkaOptions

        @Option(help: "The topic prefix (default: $MARQUEE_TOPIC_PREFIX, else marquee.).")
        var prefix: String = ProcessInfo.processInfo.environment["MARQUEE_TOPIC_PREFIX"] ?? "marquee."

        @Option(help: "Partitions per topic.")
        var partitions = 8

        @Option(help: "Retry tiers per stage.")
        var tiers = 3

        @Option(help: "Replicas per partition.")
        var replicationFactor = 1

        func validate() throws {
            guard self.partitions > 0 else { throw ValidationError("--partitions must be at least 1") }
            guard (0...10).contains(self.tiers) else { throw ValidationError("--tiers must be from 0 to 10") }
            guard self.replicationFactor > 0 else { throw ValidationError("--replication-factor must be at least 1") }
        }

        func run() async throws {
            try await reportingKafkaErrors {
                let stages = ["fetch", "images", "records"].map { StageTopics(stage: $0, prefix: self.prefix, tiers: self.tiers) }
                let created = Set(
                    try await StageTopics.createAll(
                        stages, partitions: self.partitions, replicationFactor: self.replicationFactor, admin: try self.kafka.makeAdmin()
                    )
                )
                for name in stages.flatMap(\.all) {
                    print("\(name): \(created.contains(name) ? "created" : "exists")")
                }
            }
        }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        self.count >= width ? self : self + String(repeating: " ", count: width - self.count)
    }
}
