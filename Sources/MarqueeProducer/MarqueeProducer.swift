import ArgumentParser
import Logging
import MarqueeCore
import MarqueeKafka
import MarqueeObservability
import MarqueeScheduler
import MarqueeSettings
import MarqueeWorker

import struct Foundation.Data
import class Foundation.FileHandle
import class Foundation.ProcessInfo
import struct Foundation.TimeZone

#if canImport(Glibc)
import Glibc
#endif

/// `marquee-producer`: the scheduler (docs/design.md, "Executables"). Wiring only; the logic is in MarqueeScheduler.
@main
struct MarqueeProducer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee-producer",
        abstract: "Scheduler: enqueues fetch jobs on the schedules of a YAML file, each window exactly once.",
        discussion: """
            Every replica joins one consumer group; the one holding the state topic <prefix>producer.windows leads \
            and fires windows, the others stand by and take over when it stops. A window is claimed in the state \
            topic, its jobs are sent to <prefix>fetch with ids derived from (schedule, window, job index), then \
            it is confirmed, so a window is enqueued once across restarts and replicas (docs/producer.md says \
            exactly what is guaranteed). An invalid schedule file stops the start with the line and field at \
            fault (exit 78), before anything is sent; a missing fetch topic or no broker exits 69.

            Examples:
              marquee-producer --check deploy/schedule.example.yaml
              marquee-producer --check deploy/schedule.example.yaml --jobs --windows 5
              marquee-producer --schedule deploy/schedule.example.yaml
              MARQUEE_SCHEDULE=/etc/marquee/schedule.yaml MARQUEE_BROKERS=kafka:9092 marquee-producer
            """
    )

    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    @OptionGroup var config: ConfigFileOptions

    @Option(help: ArgumentHelp(Catalogue.schedule))
    var schedule: String?

    @Option(
        help: ArgumentHelp(
            "Check a schedule file, print each schedule's next windows and job counts, and exit.",
            valueName: "file"
        )
    )
    var check: String?

    @Option(help: "With --check: how many windows of each schedule to show.")
    var windows: Int = 3

    @Flag(help: "With --check: print the jobs of each schedule's next window as JSON lines on standard output.")
    var jobs = false

    @Option(help: ArgumentHelp(Catalogue.brokers))
    var brokers: String?

    @Option(help: ArgumentHelp(Catalogue.topicPrefix))
    var topicPrefix: String?

    @Option(help: ArgumentHelp(Catalogue.producerGroup))
    var group: String?

    @Option(
        help: ArgumentHelp(
            Catalogue.sessionTimeout,
            more: "A silent leader keeps the leadership this long before a standby takes over."
        )
    )
    var sessionTimeout: String?

    @Option(help: ArgumentHelp(Catalogue.claimTimeout))
    var claimTimeout: String?

    @Option(help: ArgumentHelp(Catalogue.stateReplication))
    var stateReplication: String?

    @Option(help: ArgumentHelp(Catalogue.metricsAddress))
    var metricsAddress: String?

    @Option(
        help: ArgumentHelp(
            Catalogue.metricsAdvertisedAddress,
            more: "The Kafka client id carries it (marquee-producer_10.0.0.5_9104)."
        )
    )
    var metricsAdvertisedAddress: String?

    @Option(
        name: .customLong("metrics-allowed-host"),
        help: ArgumentHelp(
            Catalogue.metricsAllowedHosts,
            more: "Repeatable. Other names are refused with 421 (DNS rebinding).",
            valueName: "name"
        )
    )
    var metricsAllowedHosts: [String] = []

    @Option(help: ArgumentHelp(Catalogue.logLevel))
    var logLevel: String?

    @Option(
        name: [.customShort("X"), .customLong("kafka-property")],
        help: ArgumentHelp(Catalogue.kafkaProperties, more: "Repeatable.")
    )
    var kafkaProperties: [String] = []

    /// The flags given, by setting name.
    var flags: [String: String] {
        Settings.flags([
            (Catalogue.schedule, self.schedule), (Catalogue.brokers, self.brokers),
            (Catalogue.topicPrefix, self.topicPrefix),
            (Catalogue.producerGroup, self.group), (Catalogue.sessionTimeout, self.sessionTimeout),
            (Catalogue.claimTimeout, self.claimTimeout), (Catalogue.stateReplication, self.stateReplication),
            (Catalogue.metricsAddress, self.metricsAddress),
            (Catalogue.metricsAdvertisedAddress, self.metricsAdvertisedAddress),
            (
                Catalogue.metricsAllowedHosts,
                self.metricsAllowedHosts.isEmpty ? nil : self.metricsAllowedHosts.joined(separator: ",")
            ),
            (Catalogue.logLevel, self.logLevel),
        ])
    }

    /// Test fault (`claimed:N` or `sent:N`: kill the process at that point of its Nth winning claim): hidden.
    @Option(help: .hidden)
    var crashAt: String = Self.environment["MARQUEE_PRODUCER_CRASH_AT"] ?? ""

    func validate() throws {
        guard (1...100).contains(self.windows) else { throw ValidationError("--windows must be 1…100") }
        try WorkerOptions.validate(flags: self.flags, of: Catalogue.producer)
        _ = try WorkerOptions.parseKafkaProperties(self.kafkaProperties)
        _ = try self.parsedCrashPoint()
    }

    func parsedCrashPoint() throws -> WindowProducerConfiguration.CrashPoint? {
        guard !self.crashAt.isEmpty else { return nil }
        let parts = self.crashAt.split(separator: ":")
        guard parts.count == 2, let count = Int(parts[1]), count >= 1 else {
            throw ValidationError("--crash-at: expected claimed:N or sent:N")
        }
        switch parts[0] {
        case "claimed": return .claimed(count)
        case "sent": return .sent(count)
        default: throw ValidationError("--crash-at: expected claimed:N or sent:N")
        }
    }

    func run() async throws {
        let now = Int64(JobID.nowMilliseconds())
        let read = try self.config.settings(
            executable: "marquee-producer",
            flags: self.flags,
            catalogue: Catalogue.producer
        )
        if let check = self.check {
            let file = try Self.load(check, now: now)
            self.printCheck(file, now: now)
            return
        }
        let values = try ConfigFileOptions.exitingOnSettingError(executable: "marquee-producer") {
            () throws(SettingError) in
            try ProducerSettings(read, flagProperties: self.kafkaProperties)
        }
        let file = try Self.load(values.schedule, now: now)
        let logger = WorkerRunner.bootstrapLogging(label: "marquee.producer", level: values.logLevel)
        var kafka = KafkaConfiguration(brokers: values.brokers)
        // The client id carries where `/metrics` is reached, as the workers' do.
        kafka.clientID = AnnouncedAddress.clientID(
            name: "marquee-producer",
            announcing: AnnouncedAddress.announced(
                advertised: values.advertisedAddress,
                bindHost: values.metricsAddress.host,
                bindPort: values.metricsAddress.port
            )
        )
        kafka.additionalProperties = values.kafkaProperties
        var settings = WindowProducerConfiguration(kafka: kafka, owner: Self.owner())
        settings.prefix = values.topicPrefix
        settings.groupID = values.group.isEmpty ? nil : values.group
        settings.sessionTimeout = values.sessionTimeout
        settings.claimTimeout = values.claimTimeout
        settings.crashPoint = try self.parsedCrashPoint()
        settings.stateReplicationFactor = values.stateReplication
        let configuration = settings
        let metrics = ProducerMetrics()
        let producer = WindowProducer(
            schedules: file.schedules,
            configuration: configuration,
            metrics: metrics,
            logger: logger
        )
        do {
            try await producer.prepare()
        } catch {
            var standardError = StandardError()
            print("marquee-producer: \(error)", to: &standardError)
            throw ExitStatus.unavailable.exitCode
        }
        let (host, port) = values.metricsAddress
        let server = ObservabilityServer(
            host: host,
            port: port,
            allowedHosts: values.allowedHosts,
            metrics: {
                metrics.update(producer.status)
                return metrics.render()
            },
            readiness: { producer.status.notReadyReason.map { .notReady($0) } ?? .ready },
            logger: logger
        ) { port in
            logger.notice(
                "producer started",
                metadata: [
                    "marquee.metrics": "http://\(host):\(port)/metrics",
                    "marquee.schedules": "\(file.schedules.map(\.name).joined(separator: ","))",
                    "marquee.group": "\(configuration.group)",
                ]
            )
        }
        // A minute past the session timeout to leave the group, flush the producer and confirm the window in flight.
        try await WorkerRunner.run(
            main: producer,
            server: server,
            exitDeadline: values.sessionTimeout + .seconds(60),
            logger: logger
        )
    }

    /// Loads a schedule file, or says what is wrong with it and exits 78 (EX_CONFIG).
    static func load(_ path: String, now: Int64) throws -> ScheduleFile {
        do {
            return try ScheduleFile.load(path: path, now: now)
        } catch {
            var standardError = StandardError()
            print("marquee-producer: \(error)", to: &standardError)
            print("marquee-producer: the schedule file is invalid: nothing was sent", to: &standardError)
            throw ExitStatus.configuration.exitCode
        }
    }

    func printCheck(_ file: ScheduleFile, now: Int64) {
        var standardError = StandardError()
        print(
            "\(self.check ?? ""): \(file.schedules.count) schedule\(file.schedules.count == 1 ? "" : "s"), valid",
            to: &standardError
        )
        for schedule in file.schedules {
            print("", to: &standardError)
            print(
                "\(schedule.name): \(schedule.timing) \(schedule.calendar.zone.identifier), catch-up \(schedule.catchUp), \(schedule.jobCount) job\(schedule.jobCount == 1 ? "" : "s") per window",
                to: &standardError
            )
            var cursor = now
            for _ in 0..<self.windows {
                let window = schedule.timing.window(after: cursor, in: schedule.calendar)
                let date = schedule.calendar.localDate(at: window)
                let time = schedule.calendar.localTime(at: window)
                let offset = schedule.calendar.offset(at: window)
                let sign = offset < 0 ? "-" : "+"
                let zone = "\(sign)\(Self.two(Int(abs(offset)) / 3600)):\(Self.two(Int(abs(offset)) / 60 % 60))"
                var kinds: [String: Int] = [:]
                for job in (try? schedule.jobs(for: window)) ?? [] { kinds[job.kind, default: 0] += 1 }
                let summary = kinds.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                print("  \(date) \(time) \(zone)  \(summary)", to: &standardError)
                cursor = window
            }
            if self.jobs {
                let window = schedule.timing.window(after: now, in: schedule.calendar)
                for job in (try? schedule.jobs(for: window)) ?? [] {
                    print(String(decoding: job.encoded(), as: UTF8.self))
                }
            }
        }
    }

    static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// `host/pid/random`: unique per process run.
    static func owner() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count) == 0
            ? name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "unknown"
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return "\(host)/\(getpid())/\(random)"
    }
}

/// The scheduler's settings, resolved and typed.
struct ProducerSettings {
    /// `MARQUEE_METRICS_ADDRESS`, or 127.0.0.1 and the scheduler's own port.
    static func address(_ text: String, defaultPort: Int) throws -> (host: String, port: Int) {
        try WorkerOptions.parseMetricsAddress(text.isEmpty ? "127.0.0.1:\(defaultPort)" : text)
    }

    var schedule: String
    var brokers: String
    var topicPrefix: String
    var group: String
    var sessionTimeout: Duration
    var claimTimeout: Duration
    var stateReplication: Int
    var logLevel: String
    var metricsAddress: (host: String, port: Int)
    /// `MARQUEE_METRICS_ADVERTISED_ADDRESS`; empty: the metrics address, or the host name when it binds every
    /// interface.
    var advertisedAddress: String
    var allowedHosts: HostAllowList
    /// `MARQUEE_KAFKA_PROPERTIES` with the `-X` flags over it.
    var kafkaProperties: [String: String]

    init(_ settings: Settings, flagProperties: [String]) throws(SettingError) {
        self.schedule = try settings.value(Catalogue.schedule)
        guard !self.schedule.isEmpty else {
            throw SettingError("name the schedule file: --schedule FILE (or MARQUEE_SCHEDULE), or --check FILE")
        }
        self.brokers = try settings.value(Catalogue.brokers)
        self.topicPrefix = try settings.value(Catalogue.topicPrefix)
        self.group = try settings.value(Catalogue.producerGroup)
        self.sessionTimeout = try settings.value(Catalogue.sessionTimeout)
        self.claimTimeout = try settings.value(Catalogue.claimTimeout)
        self.stateReplication = try settings.value(Catalogue.stateReplication)
        self.logLevel = try settings.value(Catalogue.logLevel)
        self.metricsAddress = try settings.value(Catalogue.metricsAddress) { text in
            try Self.address(text, defaultPort: 9104)
        }
        self.advertisedAddress = try WorkerSettings.advertisedAddress(settings)
        self.allowedHosts = try settings.value(Catalogue.metricsAllowedHosts) {
            try HostAllowList.observability.adding($0)
        }
        // The `-X` flags were checked by `validate()`.
        let flags = (try? WorkerOptions.parseKafkaProperties(flagProperties)) ?? [:]
        self.kafkaProperties = try settings.value(Catalogue.kafkaProperties).merging(flags) { _, flag in flag }
    }
}

/// Standard error as a `TextOutputStream`.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
