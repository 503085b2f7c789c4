// The operator tool's own settings (marquee); it shares the Kafka settings of Catalogue.swift and the store's.

extension Catalogue {
    public static let dlqReaderGroup = Setting<String>(
        "MARQUEE_DLQ_READER_GROUP",
        flag: "reader-group",
        readers: "marquee dlq, marquee dashboard",
        summary: "The consumer group whose committed offsets mark dead letters as purged (empty: <prefix>dlq-reader).",
        expected: "a consumer group name",
        default: "",
        defaultText: "<prefix>dlq-reader",
        parse: SettingParsers.line
    )

    public static let dashboardAllowedHosts = Setting<[String]>(
        "MARQUEE_DASHBOARD_ALLOWED_HOSTS",
        flag: "allowed-host",
        readers: "marquee dashboard",
        summary:
            "Host names the dashboard answers besides localhost, 127.0.0.1, [::1] and its --address host (.example.org: every name under it; *: any, only behind a proxy that checks the name).",
        expected: "host names, comma-separated",
        default: [],
        defaultText: "none",
        parse: { SettingParsers.list($0) }
    )

    public static let grafanaURL = Setting<String>(
        "MARQUEE_GRAFANA_URL",
        flag: "grafana-url",
        readers: "marquee dashboard",
        summary: "A Grafana dashboard the dashboard links to.",
        expected: "an http or https URL",
        default: "",
        defaultText: "none",
        parse: SettingParsers.httpURL
    )

    public static let tmdbExportBaseURL = Setting<String>(
        "TMDB_EXPORT_BASE_URL",
        flag: "export-base-url",
        readers: "marquee enqueue tmdb-export",
        summary: "Base URL of TMDB's daily id exports (movie_ids_MM_DD_YYYY.json.gz; the emulator's, in tests).",
        expected: "an http or https URL",
        default: "http://files.tmdb.org/p/exports",
        defaultText: "http://files.tmdb.org/p/exports",
        parse: SettingParsers.httpURL
    )

    /// Every setting `marquee` reads (`--print-config` shows them all, whichever subcommand).
    public static let marquee: [any AnySetting] =
        [
            brokers, kafkaProperties, topicPrefix, retryDelays, topicPartitions, replicationFactor, workers,
        ] + stageGroups.map(\.setting) + [
            store, dlqReaderGroup, imageStore, dashboardAllowedHosts, grafanaURL, tmdbExportBaseURL,
        ] + aws
}
