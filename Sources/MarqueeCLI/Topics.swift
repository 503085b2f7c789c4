import ArgumentParser
import MarqueeKafka

struct Topics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List or create topics.",
        subcommands: [List.self, Create.self],
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

extension String {
    func padding(_ width: Int) -> String {
        self.count >= width ? self : self + String(repeating: " ", count: width - self.count)
    }
}
