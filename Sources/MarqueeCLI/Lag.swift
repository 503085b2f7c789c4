import ArgumentParser
import MarqueeCore
import MarqueeKafka
import MarqueeObservability
import MarqueeOperations
import MarqueeWorker
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// `marquee lag`: consumer lag of each stage's group, per topic and partition, with a status per group over a
/// window of samples (docs/lag.md). The model and the status rules live in `MarqueeOperations`
/// (`LagSampler`, `LagWindow`, `LagEvaluation`), the text in `LagReport+Text`; this samples and prints.
struct Lag: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Consumer lag per stage, group, topic and partition, with a status per group.",
        discussion: """
            Takes --samples samples --interval apart (default 3, 1s), then prints per stage its group's status and \
            a table: committed offset, end offset, lag, lag age (age of the oldest unconsumed message), rate \
            (committed messages per second over the window), drain time (due lag / rate), and for retry tiers \
            the messages overdue and not yet due (from marquee-not-before). Delayed retries are not lag the \
            group should have run: not-yet-due messages count in LAG, not in the due lag.

            Status of a group over the window (in the manner of Burrow):
              OK       nothing due, or the group keeps up
              LAGGING  commits move, but the due lag grew from sample to sample across the window
              STALLED  messages were due in every sample and the committed offset did not move
              STOPPED  the group has no member and messages are due (no member, nothing due: OK)
            A single sample cannot show movement: its status is OK or STOPPED.

            --watch redraws every interval (in place on a terminal), judging the last --samples samples \
            (default 10). --json prints one JSON document per report (one line each with --watch); \
            docs/lag.md lists its fields.

            Exit status: 0; 1 when a stage's due lag (main topics' lag plus retry tiers' overdue messages) \
            exceeds --max-lag (one-shot only; --watch flags it and goes on); 64 bad arguments or settings; \
            69 no broker answered; 76 the broker refused a request.

            Examples:
              marquee lag
              marquee lag --stage fetch,images --samples 5 --interval 2s
              marquee lag --watch
              marquee lag --json | jq '.stages[] | {stage, status, lag: .totals.lag_due}'
              marquee lag --max-lag 10000 || alert "pipeline behind"
              marquee lag --stage images --group posters-canary
              MARQUEE_TOPIC_PREFIX=staging. marquee lag --config staging.env
            """
    )

    @OptionGroup var kafka: KafkaOptions

    @Option(
        name: .long,
        help: ArgumentHelp("Stages to show, comma-separated: fetch, images, records.", valueName: "stages")
    )
    var stage: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The consumer group of a stage: stage=group, or a group name when one stage is shown. Repeatable.",
            discussion: "Default: $MARQUEE_GROUP_<STAGE>, else <prefix><stage>.",
            valueName: "group"
        )
    )
    var group: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Time between samples: 500ms, 1s, 1.5s, 2m (a bare number is seconds).",
            discussion: "Default: 1s, or 15s with --serve.",
            valueName: "duration"
        )
    )
    var interval: IntervalArgument?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Samples the status is judged on: taken before printing, or the sliding window with --watch.",
            discussion: "Default: 3, or 10 with --watch."
        )
    )
    var samples: Int?

    @Flag(name: .long, help: "Refresh every interval until interrupted.")
    var watch = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve the lag on /metrics at this address (Prometheus; kafka-lag-exporter's names), sampling every --interval until stopped.",
            discussion: "Also /healthz and /readyz. Default --interval with --serve: 15s; --samples: 6.",
            valueName: "host:port"
        )
    )
    var serve: String?

    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(
            "With --serve: a Host name answered besides localhost, IP addresses and names without a dot (repeatable).",
            valueName: "name"
        )
    )
    var allowedHosts: [String] = []

    @Flag(name: .long, help: "Print JSON (one document per report) instead of tables.")
    var json = false

    @Option(
        name: .customLong("max-lag"),
        help: ArgumentHelp(
            "Exit 1 when a stage's due lag exceeds this many messages.",
            discussion:
                "Due lag: main topics' lag plus retry tiers' overdue messages; not-yet-due retries do not count."
        )
    )
    var maxLag: Int64?

    @Flag(name: .long, help: "List every partition; by default a topic's idle partitions (no lag) share one row.")
    var allPartitions = false

    @Option(name: .long, help: "Unconsumed messages read per retry-tier partition for their not-before.")
    var scanLimit = 10_000

    func validate() throws {
        if let samples = self.samples, samples < 1 { throw ValidationError("--samples must be at least 1") }
        if let maxLag = self.maxLag, maxLag < 0 { throw ValidationError("--max-lag must be 0 or more") }
        guard self.scanLimit >= 1 else { throw ValidationError("--scan-limit must be at least 1") }
        if let serve = self.serve {
            guard !self.watch, !self.json, self.maxLag == nil else {
                throw ValidationError("--serve runs until stopped: it takes no --watch, --json or --max-lag")
            }
            _ = try WorkerOptions.parseMetricsAddress(serve)
            _ = try Self.allowList(self.allowedHosts)
        } else if !self.allowedHosts.isEmpty {
            throw ValidationError("--allowed-host goes with --serve")
        }
        // Stages, groups and MARQUEE_* settings are checked here, so a mistake shows this command's usage.
        _ = try self.targets(try self.kafka.layout())
    }

    func run() async throws {
        let layout = try self.kafka.layout()
        let targets = try self.targets(layout)
        if let serve = self.serve {
            try await self.serve(serve, targets: targets)
            return
        }
        let samples = self.samples ?? (self.watch ? 10 : 3)
        do {
            let admin = try self.kafka.makeAdmin()
            let reader = try KafkaReader(configuration: self.kafka.configuration, logger: self.kafka.logger)
            var sampler = LagSampler(
                admin: admin,
                reader: reader,
                targets: targets,
                scanLimit: self.scanLimit,
                readTimeout: .seconds(self.kafka.timeout)
            )
            var window = LagWindow(capacity: samples)
            let clock = ContinuousClock()
            var next = clock.now
            if self.watch {
                let terminal = isatty(1) == 1
                while !Task.isCancelled {
                    let observations: [GroupObservation]
                    do {
                        observations = try await sampler.sample()
                    } catch {
                        guard window.observationCount > 0, error.isRetriable else { throw error }
                        // A broker that went away after the first round: say so, keep the window, try again.
                        let line =
                            "broker unreachable, trying again every \(self.sampleInterval.compactDescription): "
                            + error.reason
                        if terminal && !self.json {
                            Self.write("\u{1B}[H\u{1B}[2J" + line + "\n")
                        } else {
                            var standardError = StandardError()
                            print("marquee: \(line)", to: &standardError)
                        }
                        next = max(next + self.sampleInterval, clock.now)
                        try await clock.sleep(until: next)
                        continue
                    }
                    window.append(observations)
                    let report = LagReport(stages: window.evaluate(), maxLag: self.maxLag)
                    if self.json {
                        Self.write(report.json() + "\n")
                    } else {
                        let frame =
                            report.watchFrame(
                                interval: self.sampleInterval,
                                samples: samples,
                                observed: window.observationCount,
                                allPartitions: self.allPartitions
                            ) + "\n"
                        // Home and clear, then the whole frame in one write: no flicker, no scrolling.
                        Self.write(terminal ? "\u{1B}[H\u{1B}[2J" + frame : frame + "\n")
                    }
                    next = max(next + self.sampleInterval, clock.now)
                    try await clock.sleep(until: next)
                }
            } else {
                for round in 0..<samples {
                    if round > 0 {
                        next = next + self.sampleInterval
                        try await clock.sleep(until: next)
                    }
                    window.append(try await sampler.sample())
                }
                let report = LagReport(stages: window.evaluate(), maxLag: self.maxLag)
                let text = self.json ? report.json() : report.text(allPartitions: self.allPartitions)
                Self.write(text + "\n")
                let exceeding = report.exceeding
                if let maxLag = self.maxLag, !exceeding.isEmpty {
                    let stages = exceeding.map { "\($0.stage) \($0.totals.dueLag)" }.joined(separator: ", ")
                    throw fail("due lag above --max-lag \(maxLag): \(stages)", code: .failure)
                }
            }
        } catch let error as KafkaError {
            throw fail(error.reason, code: ExitStatus(error).exitCode)
        }
    }

    /// The stages asked for, each with its group.
    func targets(_ layout: PipelineLayout) throws -> [LagTarget] {
        do {
            return try LagTarget.selecting(stages: self.stage, groups: self.group, layout: layout)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// `--serve`: the lag exporter and its listener, until SIGTERM or SIGINT.
    func serve(_ address: String, targets: [LagTarget]) async throws {
        let (host, port) = try WorkerOptions.parseMetricsAddress(address)
        let interval = self.sampleInterval
        let logger = self.kafka.logger
        let exporter: LagExporter
        do {
            exporter = LagExporter(
                sampler: LagSampler(
                    admin: try self.kafka.makeAdmin(),
                    reader: try KafkaReader(configuration: self.kafka.configuration, logger: logger),
                    targets: targets,
                    scanLimit: self.scanLimit,
                    readTimeout: .seconds(self.kafka.timeout)
                ),
                samples: self.samples ?? 6,
                interval: interval,
                logger: logger
            )
        } catch {
            throw fail(error.reason, code: ExitStatus(error).exitCode)
        }
        let server = ObservabilityServer(
            host: host,
            port: port,
            allowedHosts: try Self.allowList(self.allowedHosts),
            metrics: { exporter.metrics() },
            readiness: { exporter.notReadyReason.map { .notReady($0) } ?? .ready },
            logger: logger
        ) { port in
            var standardError = StandardError()
            let shown = host.contains(":") ? "[\(host)]" : host
            print(
                "marquee lag: serving http://\(shown):\(port)/metrics, sampling every \(interval.compactDescription) (Ctrl-C to stop)",
                to: &standardError
            )
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: server), .init(service: exporter)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
        } catch {
            throw fail("cannot serve on \(address): \(error)", code: ExitStatus.unavailable.exitCode)
        }
    }

    /// `--interval`, else 1 s, or 15 s for an exporter, which samples less often than a person watching.
    private var sampleInterval: Duration {
        self.interval?.duration ?? (self.serve == nil ? .seconds(1) : .seconds(15))
    }

    static func allowList(_ names: [String]) throws -> HostAllowList {
        do {
            return try HostAllowList.observability.adding(names)
        } catch {
            throw ValidationError("--allowed-host: \(error)")
        }
    }

    static func write(_ text: String) {
        print(text, terminator: "")
        // Piped output is block-buffered: flush, so a script reading JSON lines gets each one at once.
        fflush(nil)
    }

}

/// `--interval`: `500ms`, `1s`, `1.5s`, `2m`, `1h`, or a bare number of seconds.
struct IntervalArgument: ExpressibleByArgument {
    var duration: Duration

    init(duration: Duration) { self.duration = duration }

    init?(argument: String) {
        guard let duration = Duration(interval: argument) else { return nil }
        self.duration = duration
    }

    var defaultValueDescription: String { self.duration.compactDescription }
}
