import ArgumentParser
import Logging
import MarqueeCore
import MarqueeKafka
import MarqueeObservability
import MarqueeScheduler
import MarqueeWorker
import ServiceLifecycle
import UnixSignals

import struct Foundation.Data
import class Foundation.FileHandle
import class Foundation.ProcessInfo
import struct Foundation.TimeZone

#if canImport(Glibc)
import Glibc
#endif

/// `marquee-producer`: the scheduler (DESIGN §5). Wiring only; the logic is in MarqueeScheduler.
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

    @Option(help: ArgumentHelp("The schedule file (YAML, docs/producer.md).", discussion: "Env: MARQUEE_SCHEDULE."))
    var schedule: String = Self.environment["MARQUEE_SCHEDULE"] ?? ""

    @Option(help: ArgumentHelp("Check a schedule file, print each schedule's next windows and job counts, and exit.", valueName: "file"))
    var check: String?

    @Option(help: "With --check: how many windows of each schedule to show.")
    var windows: Int = 3

    @Flag(help: "With --check: print the jobs of each schedule's next window as JSON lines on standard output.")
    var jobs = false

    @Option(help: ArgumentHelp("Bootstrap brokers, comma-separated host:port.", discussion: "Env: MARQUEE_BROKERS."))
    var brokers: String = Self.environment["MARQUEE_BROKERS"] ?? "127.0.0.1:19092"

    @Option(help: ArgumentHelp("Prefix of every topic name.", discussion: "Env: MARQUEE_TOPIC_PREFIX."))
    var topicPrefix: String = Self.environment["MARQUEE_TOPIC_PREFIX"] ?? "marquee."

    @Option(help: ArgumentHelp("The replicas' consumer group (empty: <prefix>producer).", discussion: "Env: MARQUEE_PRODUCER_GROUP."))
    var group: String = Self.environment["MARQUEE_PRODUCER_GROUP"] ?? ""

    @Option(
        help: ArgumentHelp(
            "How long a silent leader keeps the leadership before a standby takes over.",
            discussion: "Env: MARQUEE_SESSION_TIMEOUT."
        )
    )
    var sessionTimeout: String = Self.environment["MARQUEE_SESSION_TIMEOUT"] ?? "10s"

    @Option(
        help: ArgumentHelp(
            "How long a window's claim may stay unconfirmed before the leader sends the window again (same job ids).",
            discussion: "Env: MARQUEE_PRODUCER_CLAIM_TIMEOUT."
        )
    )
    var claimTimeout: String = Self.environment["MARQUEE_PRODUCER_CLAIM_TIMEOUT"] ?? "60s"

    @Option(
        help: ArgumentHelp(
            "Replicas of the state topic when it is created (-1: the brokers' default; use 3 in production).",
            discussion: "Env: MARQUEE_PRODUCER_STATE_REPLICATION."
        )
    )
    var stateReplication: Int = Self.environment["MARQUEE_PRODUCER_STATE_REPLICATION"].flatMap { Int($0) } ?? -1

    @Option(
        help: ArgumentHelp(
            "Address of /metrics, /healthz and /readyz, host:port (port 0 picks a free one).",
            discussion: "Env: MARQUEE_METRICS_ADDRESS."
        )
    )
    var metricsAddress: String = Self.environment["MARQUEE_METRICS_ADDRESS"] ?? "127.0.0.1:9104"

    @Option(
        name: .customLong("metrics-allowed-host"),
        help: ArgumentHelp(
            "A Host name the metrics address answers besides localhost, IP addresses and names without a dot (repeatable).",
            discussion: "Env: MARQUEE_METRICS_ALLOWED_HOSTS (comma-separated). Other names are refused with 421 (DNS rebinding).",
            valueName: "name"
        )
    )
    var metricsAllowedHosts: [String] = HostAllowList.split(Self.environment["MARQUEE_METRICS_ALLOWED_HOSTS"] ?? "")

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", discussion: "Env: MARQUEE_LOG_LEVEL."))
    var logLevel: String = Self.environment["MARQUEE_LOG_LEVEL"] ?? "info"

    @Option(
        name: [.customShort("X"), .customLong("kafka-property")],
        help: ArgumentHelp(
            "A librdkafka property passed through as key=value (repeatable).",
            discussion: "Env: MARQUEE_KAFKA_PROPERTIES (comma-separated key=value)."
        )
    )
    var kafkaProperties: [String] = (Self.environment["MARQUEE_KAFKA_PROPERTIES"] ?? "").split(separator: ",").map(String.init)

    /// Test fault (`claimed:N` or `sent:N`: kill the process at that point of its Nth winning claim): hidden.
    @Option(help: .hidden)
    var crashAt: String = Self.environment["MARQUEE_PRODUCER_CRASH_AT"] ?? ""

    func validate() throws {
        if self.check == nil, self.schedule.isEmpty {
            throw ValidationError("name the schedule file: --schedule FILE (or MARQUEE_SCHEDULE), or --check FILE")
        }
        guard (1...100).contains(self.windows) else { throw ValidationError("--windows must be 1…100") }
        guard let session = DurationText.parse(self.sessionTimeout), session >= .seconds(1), session <= .seconds(3600) else {
            throw ValidationError("--session-timeout: '\(self.sessionTimeout)' is not a duration between 1s and 1h")
        }
        guard let claim = DurationText.parse(self.claimTimeout), claim >= .seconds(4), claim <= .seconds(86_400) else {
            throw ValidationError("--claim-timeout: '\(self.claimTimeout)' is not a duration between 4s and 24h")
        }
        guard Logger.Level(rawValue: self.logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical; got '\(self.logLevel)'")
        }
        _ = try self.parsedMetricsAddress()
        _ = try WorkerOptions.parseMetricsAllowedHosts(self.metricsAllowedHosts)
        _ = try self.parsedKafkaProperties()
        _ = try self.parsedCrashPoint()
        guard self.stateReplication == -1 || (1...32).contains(self.stateReplication) else {
            throw ValidationError("--state-replication must be -1 (the brokers' default) or 1…32")
        }
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
        if let check = self.check {
            let file = try Self.load(check, now: now)
            self.printCheck(file, now: now)
            return
        }
        let file = try Self.load(self.schedule, now: now)
        let logger = WorkerRunner.bootstrapLogging(label: "marquee.producer", level: self.logLevel)
        var kafka = KafkaConfiguration(brokers: self.brokers)
        kafka.clientID = "marquee-producer"
        kafka.additionalProperties = try self.parsedKafkaProperties()
        var settings = WindowProducerConfiguration(kafka: kafka, owner: Self.owner())
        settings.prefix = self.topicPrefix
        settings.groupID = self.group.isEmpty ? nil : self.group
        settings.sessionTimeout = DurationText.parse(self.sessionTimeout)!
        settings.claimTimeout = DurationText.parse(self.claimTimeout)!
        settings.crashPoint = try self.parsedCrashPoint()
        settings.stateReplicationFactor = self.stateReplication
        let configuration = settings
        let metrics = ProducerMetrics()
        let producer = WindowProducer(schedules: file.schedules, configuration: configuration, metrics: metrics, logger: logger)
        do {
            try await producer.prepare()
        } catch {
            var standardError = StandardError()
            print("marquee-producer: \(error)", to: &standardError)
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
        let (host, port) = try self.parsedMetricsAddress()
        let server = ObservabilityServer(
            host: host,
            port: port,
            allowedHosts: try WorkerOptions.parseMetricsAllowedHosts(self.metricsAllowedHosts),
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
                    "marquee.metrics": "http://\(host):\(port)/metrics", "marquee.schedules": "\(file.schedules.map(\.name).joined(separator: ","))",
                    "marquee.group": "\(configuration.group)",
                ]
            )
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: server),
                    .init(service: producer, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }

    /// Loads a schedule file, or says what is wrong with it and exits 78 (EX_CONFIG).
    static func load(_ path: String, now: Int64) throws -> ScheduleFile {
        do {
            return try ScheduleFile.load(path: path, now: now)
        } catch {
            var standardError = StandardError()
            print("marquee-producer: \(error)", to: &standardError)
            print("marquee-producer: the schedule file is invalid: nothing was sent", to: &standardError)
            throw ExitCode(78)
        }
    }

    func printCheck(_ file: ScheduleFile, now: Int64) {
        var standardError = StandardError()
        print("\(self.check ?? ""): \(file.schedules.count) schedule\(file.schedules.count == 1 ? "" : "s"), valid", to: &standardError)
        for schedule in file.schedules {
            print("", to: &standardError)
            print("\(schedule.name): \(schedule.timing) \(schedule.calendar.zone.identifier), catch-up \(schedule.catchUp), \(schedule.jobCount) job\(schedule.jobCount == 1 ? "" : "s") per window", to: &standardError)
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
                for job in (try? schedule.jobs(for: window)) ?? [] { print(String(decoding: job.encoded(), as: UTF8.self)) }
            }
        }
    }

    static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// `host/pid/random`: unique per process run.
    static func owner() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0
            ? name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "unknown"
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return "\(host)/\(getpid())/\(random)"
    }

    func parsedMetricsAddress() throws -> (String, Int) {
        try WorkerOptions.parseMetricsAddress(self.metricsAddress)
    }

    func parsedKafkaProperties() throws -> [String: String] {
        try WorkerOptions.parseKafkaProperties(self.kafkaProperties)
    }
}

/// Standard error as a `TextOutputStream`.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
