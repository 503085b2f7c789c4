import ArgumentParser
import MarqueeKafka
import MarqueeObservability
import MarqueeOperations
import MarqueeWorker
import ServiceLifecycle
import UnixSignals

import struct Foundation.Date

#if canImport(Glibc)
import Glibc
#endif

/// `marquee lag`: consumer lag of each stage's group, per topic and partition, with a status per group over a
/// window of samples (docs/lag.md). The model and the status rules live in `MarqueeOperations`
/// (`LagSampler`, `LagWindow`, `LagEvaluation`); this is their presentation.
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
                            "broker unreachable, trying again every \(LagFormat.duration(self.sampleInterval)): "
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
                        let heading =
                            "marquee lag — every \(LagFormat.duration(self.sampleInterval)), status over "
                            + "the last \(samples) samples (\(window.observationCount) so far) — Ctrl-C to stop"
                        let frame =
                            heading + "\n\n" + LagFormat.render(report, allPartitions: self.allPartitions) + "\n"
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
                let text = self.json ? report.json() : LagFormat.render(report, allPartitions: self.allPartitions)
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
        var stages = layout.stages
        if let names = self.stage {
            let wanted = names.split(separator: ",")
                .map { String($0.filter { !$0.isWhitespace }) }
                .filter { !$0.isEmpty }
            for name in wanted where layout.stage(name) == nil {
                throw ValidationError(
                    "--stage: no stage '\(name)' (stages: \(PipelineLayout.stageNames.joined(separator: ", ")))"
                )
            }
            guard !wanted.isEmpty else { throw ValidationError("--stage: name at least one stage") }
            stages = stages.filter { wanted.contains($0.name) }
        }
        var groups: [String: String] = [:]
        for value in self.group {
            let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 {
                guard stages.contains(where: { $0.name == parts[0] }) else {
                    throw ValidationError("--group \(value): stage '\(parts[0])' is not shown (see --stage)")
                }
                guard !parts[1].isEmpty else { throw ValidationError("--group \(value): the group name is empty") }
                groups[parts[0]] = parts[1]
            } else {
                guard stages.count == 1, !value.isEmpty else {
                    throw ValidationError("--group \(value): give stage=group, or show one stage (--stage)")
                }
                groups[stages[0].name] = value
            }
        }
        return stages.map { LagTarget(stage: $0, group: groups[$0.name]) }
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
                "marquee lag: serving http://\(shown):\(port)/metrics, sampling every \(LagFormat.duration(interval)) (Ctrl-C to stop)",
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
        let text = argument.trimmingSpaces()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var scale = 1.0
        var number = Substring(text)
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Double(number), value.isFinite, value > 0 else { return nil }
        let milliseconds = (value * scale * 1000).rounded()
        guard milliseconds >= 1, milliseconds <= 86_400_000 else { return nil }
        self.duration = .milliseconds(Int64(milliseconds))
    }

    var defaultValueDescription: String { LagFormat.duration(self.duration) }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

/// The text form of a ``LagReport``.
enum LagFormat {
    /// A block per stage: a heading with the status and its reason, a table of partitions, a totals line, notes.
    static func render(_ report: LagReport, allPartitions: Bool = false) -> String {
        var blocks: [String] = []
        for stage in report.stages {
            var lines: [String] = []
            let members = "\(stage.members) member\(stage.members == 1 ? "" : "s")"
            let state = stage.state == .unknown ? "" : " (\(stage.state))"
            var heading = "\(stage.stage) — group \(stage.group), \(members)\(state): \(stage.status)"
            if let maxLag = report.maxLag, stage.totals.dueLag > maxLag {
                heading += " — due lag \(stage.totals.dueLag) above --max-lag \(maxLag)"
            }
            lines.append(heading)
            lines.append("  \(stage.reason)")
            let hasRetry = stage.partitions.contains { $0.sample.isRetryTier }
            var columns: [TextTable.Column] = [
                .init(header: "TOPIC", maxWidth: 60),
                .init(header: "PARTITION", alignment: .right),
                .init(header: "COMMITTED", alignment: .right),
                .init(header: "END", alignment: .right),
                .init(header: "LAG", alignment: .right),
                .init(header: "LAG AGE", alignment: .right),
                .init(header: "RATE/S", alignment: .right),
                .init(header: "DRAIN", alignment: .right),
            ]
            if hasRetry {
                columns += [.init(header: "OVERDUE", alignment: .right), .init(header: "NOT DUE", alignment: .right)]
            }
            columns.append(.init(header: "STATUS"))
            var table = TextTable(columns)
            // Partitions grouped by topic, in order; idle ones (no lag, OK) fold into one row per topic unless
            // every partition is asked for.
            var topics: [(name: String, partitions: [PartitionLag])] = []
            for partition in stage.partitions {
                if topics.last?.name == partition.partition.topic {
                    topics[topics.count - 1].partitions.append(partition)
                } else {
                    topics.append((partition.partition.topic, [partition]))
                }
            }
            for topic in topics {
                let isIdle: (PartitionLag) -> Bool = { $0.lag == 0 && $0.status == .ok }
                let idle = allPartitions ? [] : topic.partitions.filter(isIdle)
                for partition in topic.partitions where allPartitions || !isIdle(partition) {
                    table.append(Self.row(partition, hasRetry: hasRetry))
                }
                if !idle.isEmpty {
                    let rates = idle.compactMap(\.rate)
                    var row = [
                        topic.name,
                        idle.count == topic.partitions.count ? "all \(idle.count) idle" : "\(idle.count) more idle",
                        "", "", "0", "", rates.isEmpty ? "—" : Self.rate(rates.reduce(0, +)), "",
                    ]
                    if hasRetry { row += ["", ""] }
                    row.append("")
                    table.append(row)
                }
            }
            let totals = stage.totals
            var total = [
                "total (due \(totals.dueLag))", "", "", "", "\(totals.lag)",
                totals.lagAge.map(Self.duration) ?? "—",
                totals.rate.map(Self.rate) ?? "—",
                totals.dueLag > 0 ? totals.drainTime.map(Self.duration) ?? "—" : "",
            ]
            if hasRetry { total += ["\(totals.overdue)", "\(totals.notYetDue)"] }
            total.append("")
            table.append(total)
            if stage.partitions.isEmpty {
                lines.append("  no topics yet")
            } else {
                lines += table.render().split(separator: "\n").map { "  " + $0 }
            }
            if !stage.missingTopics.isEmpty {
                let names = stage.missingTopics.joined(separator: ", ")
                let verb = stage.missingTopics.count == 1 ? "does" : "do"
                lines.append("  note: \(names) \(verb) not exist yet (no lag)")
            }
            for note in stage.notes { lines.append("  note: \(note)") }
            blocks.append(lines.joined(separator: "\n"))
        }
        let window =
            report.stages.first.map { stage in
                stage.samples == 1 ? "1 sample" : "\(stage.samples) samples over \(Self.duration(stage.window))"
            } ?? "no stages"
        let time = Date(timeIntervalSince1970: Double(report.time) / 1000)
            .formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
        return (["\(time), \(window)"] + blocks).joined(separator: "\n\n")
    }

    /// One partition's row.
    static func row(_ partition: PartitionLag, hasRetry: Bool) -> [String] {
        let sample = partition.sample
        var row = [
            sample.partition.topic,
            "\(sample.partition.partition)",
            sample.committed.map { "\($0)" } ?? "—",
            "\(sample.end)",
            "\(sample.lag)",
            partition.lagAge.map(Self.duration) ?? "—",
            partition.rate.map(Self.rate) ?? "—",
            sample.dueLag > 0 ? partition.drainTime.map(Self.duration) ?? "—" : "",
        ]
        if hasRetry {
            let unknown = sample.isRetryTier && sample.lag > 0 ? "?" : ""
            row += [sample.retry.map { "\($0.overdue)" } ?? unknown, sample.retry.map { "\($0.notYetDue)" } ?? unknown]
        }
        row.append(partition.status == .ok ? "" : partition.status.rawValue)
        return row
    }

    static func duration(_ duration: Duration) -> String { duration.compactDescription }

    /// One decimal: `0.0`, `12.5`.
    static func rate(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
