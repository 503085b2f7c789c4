/// Every setting Marquee's executables read through ``Settings``, declared once. docs/configuration.md's table
/// is ``markdownTable(_:)`` of ``all`` (a test keeps the two equal).
public enum Catalogue {
    // MARK: Kafka: every executable and subcommand that talks to the broker

    public static let brokers = Setting<String>(
        "MARQUEE_BROKERS",
        flag: "brokers",
        readers: "all",
        summary: "Bootstrap brokers, comma-separated host:port.",
        expected: "host:port, comma-separated, such as kafka-0:9092,kafka-1:9092",
        default: "127.0.0.1:19092",
        defaultText: "127.0.0.1:19092",
        parse: { SettingParsers.brokers($0)?.joined(separator: ",") }
    )

    public static let kafkaProperties = Setting<[String: String]>(
        "MARQUEE_KAFKA_PROPERTIES",
        flag: "kafka-property",
        readers: "all",
        summary: "librdkafka properties passed through as key=value (-X, repeatable): SASL, TLS and the like.",
        expected: "key=value pairs, comma-separated, such as security.protocol=ssl,ssl.ca.location=/etc/ca.pem",
        default: [:],
        defaultText: "none",
        isSecret: true,
        parse: SettingParsers.properties
    )

    public static let topicPrefix = Setting<String>(
        "MARQUEE_TOPIC_PREFIX",
        flag: "topic-prefix",
        readers: "all",
        summary: "Prefix of every topic name.",
        expected: "letters, digits, '.', '_' and '-', such as marquee.",
        default: "marquee.",
        defaultText: "marquee.",
        parse: SettingParsers.topicPrefix
    )

    public static let retryDelays = Setting<[Duration]>(
        "MARQUEE_RETRY_DELAYS",
        flag: "retry-delays",
        readers: "workers, marquee",
        summary: "Delays of the retry tiers, comma-separated; their number is the number of tiers.",
        expected: "1 to 10 durations above zero, comma-separated, such as 10s,1m,10m",
        default: [.seconds(10), .seconds(60), .seconds(600)],
        defaultText: "10s,1m,10m",
        parse: SettingParsers.retryDelays
    )

    public static let logLevel = Setting<String>(
        "MARQUEE_LOG_LEVEL",
        flag: "log-level",
        readers: "workers, marquee-producer",
        summary: "Log level.",
        expected: "one of trace, debug, info, notice, warning, error, critical",
        default: "info",
        defaultText: "info",
        parse: SettingParsers.choice(["trace", "debug", "info", "notice", "warning", "error", "critical"])
    )

    // MARK: Workers (marquee-fetch, marquee-images, marquee-index)

    public static let group = Setting<String>(
        "MARQUEE_GROUP",
        flag: "group",
        readers: "workers",
        summary: "The worker's consumer group (empty: <prefix><stage>, such as marquee.fetch).",
        expected: "a consumer group name",
        default: "",
        defaultText: "<prefix><stage>",
        parse: SettingParsers.text
    )

    public static let concurrency = Setting<Int>(
        "MARQUEE_CONCURRENCY",
        flag: "concurrency",
        readers: "workers",
        summary: "Most jobs running at once in this process (0: the worker's default).",
        expected: "a whole number from 0 to 100000",
        default: 0,
        defaultText: "0 (fetch 96, images 4, index by its batch size)",
        parse: SettingParsers.integer(in: 0...100_000)
    )

    public static let shutdownTimeout = Setting<Duration>(
        "MARQUEE_SHUTDOWN_TIMEOUT",
        flag: "shutdown-timeout",
        readers: "workers",
        summary: "How long in-flight jobs may take to finish on SIGTERM before they are handed back.",
        expected: "a duration from 0s to 1h, such as 30s",
        default: .seconds(30),
        defaultText: "30s",
        parse: SettingParsers.duration(in: .zero ... .seconds(3600))
    )

    public static let sessionTimeout = Setting<Duration>(
        "MARQUEE_SESSION_TIMEOUT",
        flag: "session-timeout",
        readers: "workers, marquee-producer",
        summary:
            "Consumer-group session timeout: how long a silent member keeps its partitions (heartbeats every third of it, at most 3 s).",
        expected: "a duration from 1s to 1h, such as 10s",
        default: .seconds(10),
        defaultText: "10s",
        parse: SettingParsers.duration(in: .seconds(1) ... .seconds(3600))
    )

    public static let maxMessageBytes = Setting<Int>(
        "MARQUEE_MAX_MESSAGE_BYTES",
        flag: "max-message-bytes",
        readers: "workers",
        summary:
            "The most bytes one produced message may take (librdkafka's message.max.bytes): outputs, hops and dead letters.",
        expected: "a number of bytes from 10000 to 100000000",
        default: 1_000_000,
        defaultText: "1000000",
        parse: SettingParsers.integer(in: 10_000...100_000_000)
    )

    public static let metricsAddress = Setting<String>(
        "MARQUEE_METRICS_ADDRESS",
        flag: "metrics-address",
        readers: "workers, marquee-producer",
        summary: "Address of /metrics, /healthz and /readyz (port 0 picks a free one).",
        expected: "host:port, such as 0.0.0.0:9101",
        default: "",
        defaultText: "127.0.0.1 and the executable's own port (fetch 9101, images 9102, index 9103, producer 9104)",
        parse: { SettingParsers.isHostPort($0) ? $0 : nil }
    )

    public static let metricsAdvertisedAddress = Setting<String>(
        "MARQUEE_METRICS_ADVERTISED_ADDRESS",
        flag: "metrics-advertised-address",
        readers: "workers, marquee-producer",
        summary:
            "Address others reach /metrics at, announced in the Kafka client id for `marquee dashboard` (host 0.0.0.0: the address the broker sees).",
        expected:
            "host:port or [host]:port (brackets needed for IPv6), port 1 to 65535, such as 10.0.0.5:9101 or [fd00::5]:9101",
        default: "",
        defaultText: "the metrics address; bound to 0.0.0.0 or ::, the host name; none on port 0",
        parse: { $0.isEmpty || SettingParsers.isAdvertisedAddress($0) ? $0 : nil }
    )

    public static let metricsAllowedHosts = Setting<[String]>(
        "MARQUEE_METRICS_ALLOWED_HOSTS",
        flag: "metrics-allowed-host",
        readers: "workers, marquee-producer",
        summary:
            "Host names the metrics address answers besides localhost, IP addresses and names without a dot (.example.org: every name under it).",
        expected: "host names, comma-separated",
        default: [],
        defaultText: "none",
        parse: { SettingParsers.list($0) }
    )

    public static let storeTimeout = Setting<Int>(
        "MARQUEE_STORE_TIMEOUT",
        flag: "store-timeout",
        readers: "workers",
        summary:
            "Seconds one store operation may take (waiting for a connection included) before the store counts as down.",
        expected: "a whole number of seconds from 1 to 3600",
        default: 30,
        defaultText: "30",
        parse: SettingParsers.integer(in: 1...3600)
    )

    // MARK: The operator tools' view of the pipeline (marquee)

    public static let topicPartitions = Setting<Int>(
        "MARQUEE_TOPIC_PARTITIONS",
        readers: "marquee",
        summary: "Partitions of each topic `marquee topics create` makes.",
        expected: "a whole number from 1 to 10000",
        default: 8,
        defaultText: "8",
        parse: SettingParsers.integer(in: 1...10_000)
    )

    public static let replicationFactor = Setting<Int>(
        "MARQUEE_REPLICATION_FACTOR",
        readers: "marquee",
        summary: "Replicas of each topic `marquee topics create` makes.",
        expected: "a whole number from 1 to 100",
        default: 1,
        defaultText: "1",
        parse: SettingParsers.integer(in: 1...100)
    )

    public static let workers = Setting<String>(
        "MARQUEE_WORKERS",
        readers: "marquee",
        summary:
            "Each worker's observability address, for `marquee status` and `lag`'s stages; a stage named once per worker.",
        expected: "stage=host:port pairs, comma-separated, such as fetch=10.0.0.1:9101,fetch=10.0.0.2:9101",
        default: "",
        defaultText: "fetch=127.0.0.1:9101,images=127.0.0.1:9102,records=127.0.0.1:9103",
        parse: SettingParsers.text
    )

    /// The workers' consumer group of each stage, as the operator tools look for it.
    public static let stageGroups: [(stage: String, setting: Setting<String>)] = ["fetch", "images", "records"].map {
        stage in
        (
            stage,
            Setting<String>(
                "MARQUEE_GROUP_\(stage.uppercased())",
                readers: "marquee",
                summary:
                    "The consumer group of the \(stage) stage's workers, when they were given another (`MARQUEE_GROUP`).",
                expected: "a consumer group name",
                default: "",
                defaultText: "<prefix>\(stage)",
                parse: SettingParsers.text
            )
        )
    }

    /// Every setting, in the order of docs/configuration.md's table.
    public static let all: [any AnySetting] =
        [
            brokers, kafkaProperties, topicPrefix, retryDelays, logLevel,
            group, concurrency, shutdownTimeout, sessionTimeout, maxMessageBytes, metricsAddress,
            metricsAdvertisedAddress,
            metricsAllowedHosts, storeTimeout, store, sharedLimits, imageHosts, allowPrivateAddresses,
            fetchRateLimits, perSourceConcurrency, koficDailyBudget, validatorCache, probeInterval,
        ] + sources + [
            imageStore, imageWidths, webpQuality, imageMaxBytes, imageMaxPixels, imageOriginals, imageRateLimits,
        ] + aws + [
            indexBatchSize, indexBatchWait, indexWriters, storeConnections,
            schedule, producerGroup, claimTimeout, stateReplication,
            topicPartitions, replicationFactor, workers,
        ] + stageGroups.map(\.setting) + [dlqReaderGroup, dashboardAllowedHosts, grafanaURL, tmdbExportBaseURL]

    /// The settings a worker executable reads through ``Settings``.
    public static let worker: [any AnySetting] = [
        brokers, kafkaProperties, topicPrefix, retryDelays, logLevel,
        group, concurrency, shutdownTimeout, sessionTimeout, maxMessageBytes, metricsAddress, metricsAdvertisedAddress,
        metricsAllowedHosts, storeTimeout,
    ]

    /// The table of `settings`: name, flag, default, form, and what it does.
    public static func markdownTable(_ settings: [any AnySetting]) -> String {
        var lines = [
            "| variable | flag | default | form | read by | what it sets |",
            "|---|---|---|---|---|---|",
        ]
        for setting in settings {
            let name = setting.isSecret ? "`\(setting.name)` (or `\(setting.name)_FILE`)" : "`\(setting.name)`"
            let flag = setting.flag.map { "`--\($0)`" } ?? "—"
            let cells = [name, flag, setting.defaultText, setting.expected, setting.readers, setting.summary]
            lines.append(
                "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
            )
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        self.split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
