public import ArgumentParser
import Logging
import MarqueeKafka
public import MarqueeObservability
public import MarqueeSettings

import class Foundation.ProcessInfo

/// The options every worker executable (`marquee-fetch`, `marquee-images`, `marquee-index`) shares.
///
/// Each is a setting of ``Catalogue``: a flag here, else its environment variable, else the settings file
/// (`--config`, else `MARQUEE_CONFIG`), else its default. ``resolved(environment:flags:)`` reads them all; a malformed
/// value is refused with the setting's name, where it came from and the form it needs.
public struct WorkerOptions: ParsableArguments {
    @Option(help: ArgumentHelp(Catalogue.brokers))
    public var brokers: String?

    @Option(help: ArgumentHelp(Catalogue.topicPrefix))
    public var topicPrefix: String?

    @Option(help: ArgumentHelp(Catalogue.group))
    public var group: String?

    @Option(help: ArgumentHelp(Catalogue.concurrency))
    public var concurrency: String?

    @Option(help: ArgumentHelp(Catalogue.retryDelays))
    public var retryDelays: String?

    @Option(
        help: ArgumentHelp(
            Catalogue.shutdownTimeout,
            more: """
                Then the jobs are cancelled; one that has not ended 5 s later is left behind uncommitted and logged \
                with what it waited for. A worker still running a minute after that exits with status 70.
                """
        )
    )
    public var shutdownTimeout: String?

    @Option(
        help: ArgumentHelp(
            Catalogue.sessionTimeout,
            more: "Kafka's own default is 45s; 10s hands a crashed worker's partitions over sooner."
        )
    )
    public var sessionTimeout: String?

    @Option(
        help: ArgumentHelp(
            Catalogue.maxMessageBytes,
            more: """
                Keep it at most the topics' max.message.bytes (Kafka's default 1048588; `marquee topics create` sets \
                the same figure): a worker checks its output topics at start and says when they take less. A job \
                whose output is larger fails permanently; a dead letter larger keeps what fits, with the original's \
                size and SHA-256 (docs/stage.md).
                """
        )
    )
    public var maxMessageBytes: String?

    @Option(help: ArgumentHelp(Catalogue.metricsAddress))
    public var metricsAddress: String?

    @Option(
        help: ArgumentHelp(
            Catalogue.metricsAdvertisedAddress,
            more: """
                The worker's Kafka client id carries it (marquee-fetch_10.0.0.5_9101), so `marquee dashboard` finds \
                every member of the stage's group. With a metrics port of 0 nothing is announced by default: the \
                port is chosen after the client id is set.
                """
        )
    )
    public var metricsAdvertisedAddress: String?

    @Option(
        name: .customLong("metrics-allowed-host"),
        help: ArgumentHelp(
            Catalogue.metricsAllowedHosts,
            more: """
                Repeatable. Requests naming any other host are refused with 421, so a web page elsewhere cannot read \
                the worker through a browser (DNS rebinding).
                """,
            valueName: "name"
        )
    )
    public var metricsAllowedHosts: [String] = []

    @Option(help: ArgumentHelp(Catalogue.logLevel))
    public var logLevel: String?

    @Option(
        name: [.customShort("X"), .customLong("kafka-property")],
        help: ArgumentHelp(Catalogue.kafkaProperties, more: "Repeatable.")
    )
    public var kafkaProperties: [String] = []

    @Option(help: ArgumentHelp(Catalogue.storeTimeout))
    public var storeTimeout: String?

    @OptionGroup public var config: ConfigFileOptions

    public init() {}

    /// The flags given, by setting name.
    var flags: [String: String] {
        Settings.flags([
            (Catalogue.brokers, self.brokers), (Catalogue.topicPrefix, self.topicPrefix), (Catalogue.group, self.group),
            (Catalogue.concurrency, self.concurrency), (Catalogue.retryDelays, self.retryDelays),
            (Catalogue.shutdownTimeout, self.shutdownTimeout), (Catalogue.sessionTimeout, self.sessionTimeout),
            (Catalogue.maxMessageBytes, self.maxMessageBytes), (Catalogue.metricsAddress, self.metricsAddress),
            (Catalogue.metricsAdvertisedAddress, self.metricsAdvertisedAddress),
            (Catalogue.logLevel, self.logLevel), (Catalogue.storeTimeout, self.storeTimeout),
            (
                Catalogue.metricsAllowedHosts,
                self.metricsAllowedHosts.isEmpty ? nil : self.metricsAllowedHosts.joined(separator: ",")
            ),
        ])
    }

    /// A flag given with a malformed value is refused here, with the usage.
    public func validate() throws {
        let settings = try Self.validation { () throws(SettingError) in
            try Settings(flags: self.flags, environment: [:])
        }
        try Self.validation { () throws(SettingError) in try settings.validate(Catalogue.worker) }
        _ = try Self.parseKafkaProperties(self.kafkaProperties)
    }

    /// The settings from the flags (these and the executable's own, `more`), the environment, the settings file and
    /// the defaults.
    ///
    /// `-X` is kept apart from the other flags: each is one `key=value` whose value may hold commas (`debug=cgrp,topic`),
    /// where `MARQUEE_KAFKA_PROPERTIES` is a comma-separated list; the flags' properties win over its.
    ///
    /// - Throws: ``SettingError`` naming the setting, where its value came from and the form it needs.
    public func resolved(
        environment: [String: String],
        flags more: [String: String] = [:]
    ) throws(SettingError) -> WorkerSettings {
        let settings = try Settings(
            flags: self.flags.merging(more) { ours, _ in ours },
            environment: environment,
            settingsFile: self.config.settingsFile
        )
        let flagProperties: [String: String]
        do {
            flagProperties = try Self.parseKafkaProperties(self.kafkaProperties)
        } catch {
            throw SettingError("\(error)")
        }
        return try WorkerSettings(settings, flagProperties: flagProperties)
    }

    /// ``resolved(environment:flags:)`` for an executable's `run()`, with the executable's own settings (`more`)
    /// and their flags (`flags`, by setting name): prints the settings and exits for `--print-config`; a malformed
    /// setting exits with status 78 (EX_CONFIG) and one line saying which.
    public func resolvedForRun(
        executable: String,
        more: [any AnySetting] = [],
        flags: [String: String] = [:]
    ) throws -> WorkerSettings {
        let resolved = try ConfigFileOptions.exitingOnSettingError(executable: executable) { () throws(SettingError) in
            try self.resolved(environment: ProcessInfo.processInfo.environment, flags: flags)
        }
        if self.config.printConfig {
            let printed = try ConfigFileOptions.exitingOnSettingError(executable: executable) {
                () throws(SettingError) in
                try resolved.settings.printed(Catalogue.worker + more)
            }
            print(printed)
            if !self.kafkaProperties.isEmpty {
                print(
                    "# and \(self.kafkaProperties.count) -X properties from the command line (values redacted): "
                        + resolved.flagProperties.keys.sorted().joined(separator: ", ")
                )
            }
            throw ExitCode.success
        }
        try ConfigFileOptions.exitingOnSettingError(executable: executable) { () throws(SettingError) in
            try resolved.settings.validate(more)
        }
        return resolved
    }

    /// Refuses, with the usage, an executable's own flag given with a malformed value.
    public static func validate(flags: [String: String], of catalogue: [any AnySetting]) throws {
        let settings = try Self.validation { () throws(SettingError) in try Settings(flags: flags, environment: [:]) }
        try Self.validation { () throws(SettingError) in try settings.validate(catalogue) }
    }

    private static func validation<T>(_ body: () throws(SettingError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw ValidationError(error.description)
        }
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

/// Where a worker's `/metrics`, `/healthz` and `/readyz` listen, the `Host` names they answer, and where others
/// reach them.
public struct MetricsAddress: Sendable, Hashable {
    /// The address to bind, e.g. `127.0.0.1` or `0.0.0.0`.
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int
    /// The `Host` names answered (``ObservabilityServer`` adds the bind address).
    /// Default: ``HostAllowList/observability``.
    public var allowedHosts: HostAllowList
    /// `MARQUEE_METRICS_ADVERTISED_ADDRESS` (`host:port`); empty: ``announced`` follows the bind address.
    /// Default: empty.
    public var advertised: String

    public init(host: String, port: Int, allowedHosts: HostAllowList = .observability, advertised: String = "") {
        self.host = host
        self.port = port
        self.allowedHosts = allowedHosts
        self.advertised = advertised
    }

    /// The address announced in the process's Kafka client id (``AnnouncedAddress/announced(advertised:bindHost:bindPort:hostName:)``):
    /// ``advertised`` when set, else the bind address when it is a specific one, else the host name with the port;
    /// `nil` on port 0, which is chosen only once the listener binds, after the client id is set.
    public var announced: AnnouncedAddress? {
        AnnouncedAddress.announced(advertised: self.advertised, bindHost: self.host, bindPort: self.port)
    }
}

/// Durations as operators write them: `500ms`, `10s`, `1m`, `2h` (a bare number is seconds).
public enum DurationText {
    public static func parse(_ text: some StringProtocol) -> Duration? { SettingParsers.duration(text) }
}
