public import ArgumentParser
import MarqueeKafka
import MarqueeObservability
public import MarqueePipeline
public import MarqueeSettings

/// The settings every worker shares, resolved and typed (``WorkerOptions/resolved(environment:)``).
public struct WorkerSettings: Sendable {
    /// The layered source, for the executable's own settings.
    public let settings: Settings
    public let brokers: String
    public let topicPrefix: String
    /// Empty: the stage's default group.
    public let group: String
    public let concurrency: Int
    public let retryDelays: [Duration]
    public let shutdownTimeout: Duration
    public let sessionTimeout: Duration
    public let maxMessageBytes: Int
    public let logLevel: String
    public let storeTimeout: Int
    /// `MARQUEE_KAFKA_PROPERTIES` with the `-X` flags over it.
    public let kafkaProperties: [String: String]
    /// The `-X` flags alone.
    public let flagProperties: [String: String]
    private let metricsAddressText: String
    private let advertisedAddressText: String
    private let allowedHosts: HostAllowList

    init(_ settings: Settings, flagProperties: [String: String]) throws(SettingError) {
        self.settings = settings
        self.brokers = try settings.value(Catalogue.brokers)
        self.topicPrefix = try settings.value(Catalogue.topicPrefix)
        self.group = try settings.value(Catalogue.group)
        self.concurrency = try settings.value(Catalogue.concurrency)
        self.retryDelays = try settings.value(Catalogue.retryDelays)
        self.shutdownTimeout = try settings.value(Catalogue.shutdownTimeout)
        self.sessionTimeout = try settings.value(Catalogue.sessionTimeout)
        self.maxMessageBytes = try settings.value(Catalogue.maxMessageBytes)
        self.logLevel = try settings.value(Catalogue.logLevel)
        self.storeTimeout = try settings.value(Catalogue.storeTimeout)
        self.flagProperties = flagProperties
        self.kafkaProperties = try settings.value(Catalogue.kafkaProperties).merging(flagProperties) { _, flag in flag }
        self.metricsAddressText = try settings.value(Catalogue.metricsAddress)
        self.advertisedAddressText = try Self.advertisedAddress(settings)
        let (hosts, origin) = try settings.resolved(Catalogue.metricsAllowedHosts)
        do {
            self.allowedHosts = try HostAllowList.observability.adding(hosts)
        } catch {
            throw SettingError(
                "\(Catalogue.metricsAllowedHosts.name) (--metrics-allowed-host) from \(origin): \(error)"
            )
        }
    }

    /// How long one store operation may take.
    public var storeDeadline: Duration { .seconds(self.storeTimeout) }

    /// Where the observability listener listens (the worker's own port unless set), the `Host` names it answers
    /// and the address it announces (``MetricsAddress/announced``).
    public func metricsAddress(defaultPort: Int) -> MetricsAddress {
        guard !self.metricsAddressText.isEmpty,
            let (host, port) = try? WorkerOptions.parseMetricsAddress(self.metricsAddressText)
        else {
            return MetricsAddress(
                host: "127.0.0.1",
                port: defaultPort,
                allowedHosts: self.allowedHosts,
                advertised: self.advertisedAddressText
            )
        }
        return MetricsAddress(
            host: host,
            port: port,
            allowedHosts: self.allowedHosts,
            advertised: self.advertisedAddressText
        )
    }

    /// `MARQUEE_METRICS_ADVERTISED_ADDRESS`, checked further than its setting's form: a host a client id can carry.
    ///
    /// - Throws: ``SettingError`` naming the setting and where its value came from.
    public static func advertisedAddress(_ settings: Settings) throws(SettingError) -> String {
        let (text, origin) = try settings.resolved(Catalogue.metricsAdvertisedAddress)
        guard text.isEmpty || AnnouncedAddress.hostAndPort(text) != nil else {
            throw SettingError(
                "\(Catalogue.metricsAdvertisedAddress.name) (--metrics-advertised-address) '\(text)' from \(origin): "
                    + "expected \(Catalogue.metricsAdvertisedAddress.expected)"
            )
        }
        return text
    }

    /// The stage's configuration from these settings.
    public func stageConfiguration(stage: String, defaultConcurrency: Int) -> StageConfiguration {
        var kafka = KafkaConfiguration(brokers: self.brokers)
        kafka.clientID = "marquee-\(stage)"
        kafka.additionalProperties = self.kafkaProperties
        var configuration = StageConfiguration(
            stage: stage,
            kafka: kafka,
            prefix: self.topicPrefix,
            retry: RetryPolicy(delays: self.retryDelays)
        )
        if !self.group.isEmpty { configuration.groupID = self.group }
        // Lineage: every job of the other stages reports its outcome to the indexer (docs/store.md); the records
        // stage itself must not (its outcomes would be records jobs of their own).
        configuration.outcomeStage = stage == "records" ? nil : "records"
        configuration.concurrency = self.concurrency == 0 ? defaultConcurrency : self.concurrency
        configuration.shutdownTimeout = self.shutdownTimeout
        let session = self.sessionTimeout
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
}

extension ArgumentHelp {
    /// A flag's help from its setting's declaration: the summary, then the environment variable and the default
    /// (and `more`).
    public init(_ setting: some AnySetting, more: String? = nil, valueName: String? = nil) {
        self.init(
            setting.summary,
            discussion: [setting.flagDiscussion, more].compactMap { $0 }.joined(separator: " "),
            valueName: valueName
        )
    }
}
