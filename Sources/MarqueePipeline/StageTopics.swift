public import MarqueeKafka

/// The topics of one stage: `<prefix><stage>`, its retry tiers `<prefix><stage>.retry.<n>` and its dead letters
/// `<prefix><stage>.dlq` (docs/design.md, "Topics").
public struct StageTopics: Hashable, Sendable {
    /// The stage's name: `fetch`, `images` or `records`.
    public let stage: String
    /// Default: `marquee.`.
    public let prefix: String
    /// How many retry tiers.
    public var tiers: Int
    /// The main topic.
    public let main: String
    private let retryPrefix: String

    public init(stage: String, prefix: String = "marquee.", tiers: Int) {
        self.stage = stage
        self.prefix = prefix
        self.tiers = tiers
        self.main = "\(prefix)\(stage)"
        self.retryPrefix = "\(prefix)\(stage).retry."
    }

    /// The topic of retry tier `tier` (1-based).
    public func retry(_ tier: Int) -> String {
        precondition((1...self.tiers).contains(tier), "retry tier \(tier) of \(self.tiers)")
        return "\(self.retryPrefix)\(tier)"
    }

    public var dlq: String { "\(self.prefix)\(self.stage).dlq" }

    /// The main topic and the retry tiers: what the stage consumes.
    public var consumed: [String] { [self.main] + (1...max(self.tiers, 1)).prefix(self.tiers).map(self.retry) }

    /// Every topic of the stage.
    public var all: [String] { self.consumed + [self.dlq] }

    /// The retry tier a topic is, or `nil` for the main topic (or any other).
    public func tier(of topic: String) -> Int? {
        guard topic != self.main, topic.hasPrefix(self.retryPrefix),
            let tier = Int(topic.dropFirst(self.retryPrefix.count)),
            (1...max(self.tiers, 1)).contains(tier), tier <= self.tiers
        else {
            return nil
        }
        return tier
    }

    /// The main topic of another stage under the same prefix (where outputs go).
    public func topic(ofStage stage: String) -> String { "\(self.prefix)\(stage)" }

    /// The configs every pipeline topic is created with: `max.message.bytes` set to Kafka's default, 1,048,588,
    /// explicitly, so a broker whose default is lower does not refuse what a worker (1,000,000 by default) sends.
    public static let topicConfigs = ["max.message.bytes": "1048588"]

    /// Creates every topic of these stages (idempotent).
    ///
    /// - Parameters:
    ///   - partitions: Partitions of each main and retry topic; dead-letter topics get the same.
    public static func createAll(
        _ stages: [StageTopics],
        partitions: Int,
        replicationFactor: Int = 1,
        admin: KafkaAdmin
    ) async throws(KafkaError) -> [String] {
        try await admin.createTopics(
            stages.flatMap(\.all).map {
                .init(
                    name: $0,
                    partitions: partitions,
                    replicationFactor: replicationFactor,
                    configs: Self.topicConfigs
                )
            }
        )
    }
}
