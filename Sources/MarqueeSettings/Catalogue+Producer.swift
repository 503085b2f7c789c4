// The scheduler's own settings (marquee-producer); it shares the Kafka, metrics and log settings of Catalogue.swift.

extension Catalogue {
    public static let schedule = Setting<String>(
        "MARQUEE_SCHEDULE",
        flag: "schedule",
        readers: "marquee-producer",
        summary: "The schedule file (YAML, docs/producer.md).",
        expected: "a file path",
        default: "",
        defaultText: "none (required unless --check)",
        parse: SettingParsers.line
    )

    public static let producerGroup = Setting<String>(
        "MARQUEE_PRODUCER_GROUP",
        flag: "group",
        readers: "marquee-producer",
        summary: "The scheduler replicas' consumer group (empty: <prefix>producer).",
        expected: "a consumer group name",
        default: "",
        defaultText: "<prefix>producer",
        parse: SettingParsers.line
    )

    public static let claimTimeout = Setting<Duration>(
        "MARQUEE_PRODUCER_CLAIM_TIMEOUT",
        flag: "claim-timeout",
        readers: "marquee-producer",
        summary:
            "How long a window's claim may stay unconfirmed before the leader sends the window again (same job ids).",
        expected: "a duration from 4s to 24h, such as 60s",
        default: .seconds(60),
        defaultText: "60s",
        parse: SettingParsers.duration(in: .seconds(4) ... .seconds(86_400))
    )

    public static let stateReplication = Setting<Int>(
        "MARQUEE_PRODUCER_STATE_REPLICATION",
        flag: "state-replication",
        readers: "marquee-producer",
        summary:
            "Replicas of the scheduler's state topic when it is created (-1: the brokers' default; use 3 in production).",
        expected: "-1, or a whole number from 1 to 32",
        default: -1,
        defaultText: "-1",
        parse: { Int($0).flatMap { $0 == -1 || (1...32).contains($0) ? $0 : nil } }
    )

    /// Every setting `marquee-producer` reads.
    public static let producer: [any AnySetting] = [
        brokers, kafkaProperties, topicPrefix, logLevel, sessionTimeout, metricsAddress, metricsAdvertisedAddress,
        metricsAllowedHosts,
        schedule, producerGroup, claimTimeout, stateReplication,
    ]
}
