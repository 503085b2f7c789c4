public import ArgumentParser
import MarqueeKafka
public import MarqueeObservability
public import MarqueePipeline

import Logging

import class Foundation.ProcessInfo

/// The options every worker executable (`marquee-fetch`, `marquee-images`, `marquee-index`) shares.
///
/// Each has an environment variable (DESIGN §5); a flag overrides it, and it overrides the default.
public struct WorkerOptions: ParsableArguments {
    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    @Option(help: ArgumentHelp("Bootstrap brokers, comma-separated host:port.", discussion: "Env: MARQUEE_BROKERS."))
    public var brokers: String = Self.environment["MARQUEE_BROKERS"] ?? "127.0.0.1:19092"

    @Option(help: ArgumentHelp("Prefix of every topic name.", discussion: "Env: MARQUEE_TOPIC_PREFIX."))
    public var topicPrefix: String = Self.environment["MARQUEE_TOPIC_PREFIX"] ?? "marquee."

    @Option(help: ArgumentHelp("Consumer group (empty: marquee-<stage>).", discussion: "Env: MARQUEE_GROUP."))
    public var group: String = Self.environment["MARQUEE_GROUP"] ?? ""

    @Option(
        help: ArgumentHelp("Most jobs running at once in this process (0: the worker's default).", discussion: "Env: MARQUEE_CONCURRENCY.")
    )
    public var concurrency: Int = Self.environment["MARQUEE_CONCURRENCY"].flatMap { Int($0) } ?? 0

    @Option(
        help: ArgumentHelp(
            "Delays of the retry tiers, comma-separated (ms, s, m, h).",
            discussion: "Env: MARQUEE_RETRY_DELAYS."
        )
    )
    public var retryDelays: String = Self.environment["MARQUEE_RETRY_DELAYS"] ?? "10s,1m,10m"

    @Option(
        help: ArgumentHelp(
            "How long in-flight jobs may take to finish on SIGTERM before they are handed back.",
            discussion: """
                Env: MARQUEE_SHUTDOWN_TIMEOUT. Then the jobs are cancelled; one that has not ended 5 s later is left \
                behind uncommitted and logged with what it waited for. A worker still running a minute after that \
                exits with status 70.
                """
        )
    )
    public var shutdownTimeout: String = Self.environment["MARQUEE_SHUTDOWN_TIMEOUT"] ?? "30s"

    @Option(
        help: ArgumentHelp(
            "Consumer-group session timeout: how long a silent member keeps its partitions (heartbeats every third of it, at most 3 s).",
            discussion: "Env: MARQUEE_SESSION_TIMEOUT. Kafka's own default is 45s; 10s hands a crashed worker's partitions over sooner."
        )
    )
    public var sessionTimeout: String = Self.environment["MARQUEE_SESSION_TIMEOUT"] ?? "10s"

    @Option(
        help: ArgumentHelp(
            "The most bytes one produced message may take (librdkafka's message.max.bytes): outputs, hops and dead letters.",
            discussion: """
                Env: MARQUEE_MAX_MESSAGE_BYTES. Keep it at most the topics' max.message.bytes (Kafka's default \
                1048588; `marquee topics create` sets the same figure): a worker checks its output topics at start \
                and says when they take less. A job whose output is larger fails permanently; a dead letter larger \
                keeps what fits, with the original's size and SHA-256 (docs/stage.md).
                """
        )
    )
    public var maxMessageBytes: Int = Self.environment["MARQUEE_MAX_MESSAGE_BYTES"].flatMap { Int($0) } ?? 1_000_000

    @Option(
        help: ArgumentHelp(
            "Address of /metrics, /healthz and /readyz, host:port (port 0 picks a free one; empty: 127.0.0.1 and the worker's own port, fetch 9101).",
            discussion: "Env: MARQUEE_METRICS_ADDRESS."
        )
    )
    public var metricsAddress: String = Self.environment["MARQUEE_METRICS_ADDRESS"] ?? ""

    @Option(
        name: .customLong("metrics-allowed-host"),
        help: ArgumentHelp(
            "A Host name the metrics address answers besides localhost, IP addresses and names without a dot (repeatable; .example.org: every name under it).",
            discussion: """
                Env: MARQUEE_METRICS_ALLOWED_HOSTS (comma-separated). Requests naming any other host are refused \
                with 421, so a web page elsewhere cannot read the worker through a browser (DNS rebinding).
                """,
            valueName: "name"
        )
    )
    public var metricsAllowedHosts: [String] = HostAllowList.split(Self.environment["MARQUEE_METRICS_ALLOWED_HOSTS"] ?? "")

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", discussion: "Env: MARQUEE_LOG_LEVEL."))
    public var logLevel: String = Self.environment["MARQUEE_LOG_LEVEL"] ?? "info"

    @Option(
        name: [.customShort("X"), .customLong("kafka-property")],
        help: ArgumentHelp(
            "A librdkafka property passed through as key=value (repeatable): SASL, TLS and the like.",
            discussion: "Env: MARQUEE_KAFKA_PROPERTIES (comma-separated key=value)."
        )
    )
    public var kafkaProperties: [String] =
        (Self.environment["MARQUEE_KAFKA_PROPERTIES"] ?? "").split(separator: ",").map(String.init)

    @Option(
        help: ArgumentHelp(
            "Seconds one store operation may take (waiting for a connection included) before the store counts as down.",
            discussion: "Env: MARQUEE_STORE_TIMEOUT."
        )
    )
    public var storeTimeout: Int = Self.environment["MARQUEE_STORE_TIMEOUT"].flatMap { Int($0) } ?? 30

    /// `--store-timeout` as a duration.
    public var storeDeadline: Duration { .seconds(self.storeTimeout) }

    public init() {}

    public func validate() throws {
        _ = try self.parsedRetryDelays()
        _ = try self.parsedShutdownTimeout()
        _ = try self.parsedSessionTimeout()
        _ = try self.parsedMetricsAddress(defaultPort: 0)
        _ = try self.parsedMetricsAllowedHosts()
        _ = try self.parsedKafkaProperties()
        guard (1...3600).contains(self.storeTimeout) else {
            throw ValidationError("--store-timeout: expected 1 to 3600 seconds, got \(self.storeTimeout)")
        }
        if self.concurrency < 0 { throw ValidationError("--concurrency cannot be negative, got \(self.concurrency)") }
        if !(Self.messageBytesRange ~= self.maxMessageBytes) {
            throw ValidationError("--max-message-bytes: expected a number of bytes from 10000 to 100000000, got \(self.maxMessageBytes)")
        }
        if Logger.Level(rawValue: self.logLevel) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical; got '\(self.logLevel)'")
        }
    }

    /// What `--max-message-bytes` accepts: room for a dead letter's headers, and at most librdkafka's 100 MB
    /// fetch limit per partition.
    static let messageBytesRange = 10_000...100_000_000

    /// The stage's configuration from these options.
    public func stageConfiguration(stage: String, defaultConcurrency: Int) throws -> StageConfiguration {
        var kafka = KafkaConfiguration(brokers: self.brokers)
        kafka.clientID = "marquee-\(stage)"
        kafka.additionalProperties = try self.parsedKafkaProperties()
        var configuration = StageConfiguration(
            stage: stage,
            kafka: kafka,
            prefix: self.topicPrefix,
            retry: RetryPolicy(delays: try self.parsedRetryDelays())
        )
        if !self.group.isEmpty { configuration.groupID = self.group }
        // Lineage: every job of the other stages reports its outcome to the indexer (docs/store.md); the records
        // stage itself must not (its outcomes would be records jobs of their own).
        configuration.outcomeStage = stage == "records" ? nil : "records"
        configuration.concurrency = self.concurrency == 0 ? defaultConcurrency : self.concurrency
        configuration.shutdownTimeout = try self.parsedShutdownTimeout()
        let session = try self.parsedSessionTimeout()
        configuration.consumer = { consumer in
            consumer.sessionTimeout = session
            consumer.heartbeatInterval = min(.seconds(3), session / 3)
        }
        let maxMessageBytes = self.maxMessageBytes
        configuration.producer = { producer in
            producer.maxMessageBytes = maxMessageBytes
        }
        return configuration
    }

    func parsedRetryDelays() throws -> [Duration] {
        let parts = self.retryDelays.split(separator: ",", omittingEmptySubsequences: false)
        let delays = try parts.map { part in
            guard let delay = DurationText.parse(part.filter { !$0.isWhitespace }), delay > .zero else {
                throw ValidationError("--retry-delays: '\(part)' is not a duration such as 500ms, 10s, 1m or 1h")
            }
            return delay
        }
        guard !delays.isEmpty else { throw ValidationError("--retry-delays needs at least one delay") }
        return delays
    }

    func parsedShutdownTimeout() throws -> Duration {
        guard let timeout = DurationText.parse(self.shutdownTimeout) else {
            throw ValidationError("--shutdown-timeout: '\(self.shutdownTimeout)' is not a duration such as 30s")
        }
        return timeout
    }

    public func parsedSessionTimeout() throws -> Duration {
        guard let timeout = DurationText.parse(self.sessionTimeout), timeout >= .seconds(1), timeout <= .seconds(3600) else {
            throw ValidationError("--session-timeout: '\(self.sessionTimeout)' is not a duration between 1s and 1h")
        }
        return timeout
    }

    /// Where the observability listener listens, and the `Host` names it answers.
    public func parsedMetricsAddress(defaultPort: Int) throws -> MetricsAddress {
        let (host, port) =
            self.metricsAddress.isEmpty ? ("127.0.0.1", defaultPort) : try Self.parseMetricsAddress(self.metricsAddress)
        return MetricsAddress(host: host, port: port, allowedHosts: try self.parsedMetricsAllowedHosts())
    }

    func parsedMetricsAllowedHosts() throws -> HostAllowList {
        try Self.parseMetricsAllowedHosts(self.metricsAllowedHosts)
    }

    /// The `Host` names an observability listener answers: ``HostAllowList/observability`` and `names`, as
    /// `--metrics-allowed-host` takes them.
    public static func parseMetricsAllowedHosts(_ names: [String]) throws -> HostAllowList {
        do {
            return try HostAllowList.observability.adding(names)
        } catch {
            throw ValidationError("--metrics-allowed-host (MARQUEE_METRICS_ALLOWED_HOSTS): \(error)")
        }
    }

    /// `host:port` (or `[v6]:port`; an empty host is 127.0.0.1), as `--metrics-address` takes it.
    public static func parseMetricsAddress(_ address: String) throws -> (host: String, port: Int) {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw ValidationError("--metrics-address: '\(address)' is not host:port")
        }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    func parsedKafkaProperties() throws -> [String: String] {
        try Self.parseKafkaProperties(self.kafkaProperties)
    }

    /// `key=value` librdkafka properties, as `--kafka-property` (`-X`) takes them.
    public static func parseKafkaProperties(_ texts: [String]) throws -> [String: String] {
        var properties: [String: String] = [:]
        for property in texts where !property.isEmpty {
            guard let equals = property.firstIndex(of: "="), equals != property.startIndex else {
                throw ValidationError("--kafka-property: '\(property)' is not key=value")
            }
            properties[String(property[..<equals])] = String(property[property.index(after: equals)...])
        }
        return properties
    }
}

/// Where a worker's `/metrics`, `/healthz` and `/readyz` listen, and the `Host` names they answer.
public struct MetricsAddress: Sendable, Hashable {
    /// The address to bind, e.g. `127.0.0.1` or `0.0.0.0`.
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int
    /// The `Host` names answered (``ObservabilityServer`` adds the bind address).
    /// Default: ``HostAllowList/observability``.
    public var allowedHosts: HostAllowList

    public init(host: String, port: Int, allowedHosts: HostAllowList = .observability) {
        self.host = host
        self.port = port
        self.allowedHosts = allowedHosts
    }
}

/// Durations as operators write them: `500ms`, `10s`, `1m`, `2h` (a bare number is seconds).
public enum DurationText {
    public static func parse(_ text: some StringProtocol) -> Duration? {
        let text = text.lowercased()
        let units: [(String, Duration)] = [("ms", .milliseconds(1)), ("s", .seconds(1)), ("m", .seconds(60)), ("h", .seconds(3600))]
        for (suffix, unit) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value >= 0, value.isFinite, value < 1e9 else { return nil }
            return unit * value
        }
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite, seconds < 1e9 else { return nil }
        return .seconds(seconds)
    }
}
