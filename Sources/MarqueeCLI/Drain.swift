import ArgumentParser
import Logging
import MarqueeCore
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import MarqueeSettings
import MarqueeStore
import MarqueeWorker

import class Foundation.FileHandle
import struct Foundation.Data

/// `marquee drain`: live progress of the pipeline until every stage drained, then a summary.
struct Drain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the pipeline's progress until every stage drained, then a summary of what it stored.",
        discussion: """
            Every --interval it reads each stage's consumer lag (main topic and retry tiers), the dead letters, \
            what the store holds and — with --roots — how many jobs of the crawl finished, from the job-outcome \
            lineage. The pipeline counts as drained when every stage's lag is 0 and (with --roots) every job the \
            crawl consists of finished (done or dead-lettered, none waiting for a retry), for --settle samples in a \
            row. Then it prints what the store holds, the dead letters by reason, the elapsed time and where the \
            data is.

            On a terminal the progress redraws in place; otherwise one line every 5 seconds. Exit status: 0 when \
            drained, 1 when --max-wait passed first, 69 when the broker cannot be reached.

            Examples:
              marquee enqueue tmdb-list popular --pages 1-3 --details > roots.txt && marquee drain --roots roots.txt
              marquee drain --max-wait 10m --store postgres://marquee@127.0.0.1:15432/marquee
            """
    )

    @OptionGroup var kafka: KafkaOptions

    @Option(help: ArgumentHelp(Catalogue.store, more: "The store the indexer writes.", valueName: "location"))
    var store: String?

    @Option(help: ArgumentHelp("A file of root job ids, one per line (as `marquee enqueue` prints them), or - for standard input.", valueName: "file"))
    var roots: String?

    @Option(help: "Time between samples, e.g. 1s or 500ms.")
    var interval = "1s"

    @Option(help: "Give up after this long, e.g. 30m.")
    var maxWait = "30m"

    @Option(help: "Samples in a row that must find the pipeline idle.")
    var settle = 3

    func validate() throws {
        guard let interval = DurationText.parse(self.interval), interval > .zero else {
            throw ValidationError("--interval: '\(self.interval)' is not a duration such as 1s or 500ms")
        }
        guard DurationText.parse(self.maxWait) != nil else { throw ValidationError("--max-wait: '\(self.maxWait)' is not a duration such as 30m") }
        guard self.settle >= 1 else { throw ValidationError("--settle must be at least 1") }
        try WorkerOptions.validate(flags: self.flags, of: [Catalogue.store])
    }

    private var flags: [String: String] { Settings.flags([(Catalogue.store, self.store)]) }

    func run() async throws {
        let layout = try self.kafka.layout()
        let interval = DurationText.parse(self.interval)!
        let deadline = ContinuousClock.now + DurationText.parse(self.maxWait)!
        let roots = try self.readRoots()
        // Checked by `validate()`; read here rather than as the option's default, so `--help` never shows a password.
        let locationText = (try? self.kafka.settings(more: self.flags).value(Catalogue.store)) ?? StoreLocation.defaultValue
        let location: StoreLocation
        do {
            location = try StoreLocation(parsing: locationText)
        } catch {
            throw ValidationError("\(error.message) (--store or MARQUEE_STORE)")
        }
        var logger = Logger(label: "marquee")
        logger.logLevel = .critical
        let store = try Store.open(location, maximumConnections: 1, timeout: .seconds(10), logger: logger)
        do {
            try await self.watch(layout: layout, store: store, roots: roots, interval: interval, deadline: deadline)
            await store.close()
        } catch {
            await store.close()
            throw error
        }
    }

    /// Samples until drained (or past `deadline`), then prints the summary.
    private func watch(layout: PipelineLayout, store: Store, roots: [JobID]?, interval: Duration, deadline: ContinuousClock.Instant) async throws {
        let start = ContinuousClock.now
        let display = ProgressDisplay(terminal: isatty(1) == 1)
        var idle = 0
        try await reportingKafkaErrors {
            let admin = try self.kafka.makeAdmin()
            while true {
                let sample = try await DrainSample.take(layout: layout, admin: admin, store: store, roots: roots)
                display.show(sample, elapsed: ContinuousClock.now - start)
                idle = sample.isIdle ? idle + 1 : 0
                if idle >= self.settle { break }
                guard ContinuousClock.now < deadline else {
                    display.finish()
                    var standardError = StandardError()
                    print("marquee: not drained after \(self.maxWait): \(sample.pendingSummary)", to: &standardError)
                    throw ExitCode.failure
                }
                try await Task.sleep(for: interval)
            }
            display.finish()
            try await DrainSummary.print(
                layout: layout, kafka: self.kafka, store: store, elapsed: ContinuousClock.now - start, roots: roots
            )
        }
    }

    private func readRoots() throws -> [JobID]? {
        guard let path = self.roots else { return nil }
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw fail("cannot read \(path)", code: .init(66)) }
            data = handle.readDataToEndOfFile()
        }
        let ids = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
        guard !ids.isEmpty else { throw ValidationError("--roots: \(path) holds no job ids") }
        return ids.map(JobID.init(rawValue:))
    }
}

/// One look at the pipeline.
struct DrainSample {
    struct Stage {
        var name: String
        /// Unconsumed messages on the main topic and the retry tiers.
        var lag: Int64
        /// Messages held by the dead-letter topic.
        var deadLetters: Int64
    }

    var stages: [Stage]
    /// `nil` until the indexer created the schema.
    var counts: StoreCounts?
    var lineage: LineageProgress?

    static func take(layout: PipelineLayout, admin: KafkaAdmin, store: Store, roots: [JobID]?) async throws -> DrainSample {
        var stages: [Stage] = []
        for stage in layout.stages {
            var lag: Int64 = 0
            for topic in stage.topics.consumed {
                // A topic not created yet holds nothing to consume.
                guard let rows = try? await admin.lag(group: stage.group, topics: [topic]) else { continue }
                lag += rows.map(\.lag).reduce(0, +)
            }
            let dlq = (try? await admin.watermarks(topic: stage.topics.dlq)) ?? [:]
            stages.append(Stage(name: stage.name, lag: lag, deadLetters: dlq.values.map { $0.end - $0.start }.reduce(0, +)))
        }
        let counts = try? await store.counts()
        let lineage = counts == nil ? nil : try? await store.lineageProgress(roots: roots)
        return DrainSample(stages: stages, counts: counts, lineage: lineage ?? (roots == nil ? nil : LineageProgress()), roots: roots != nil)
    }

    /// Whether lineage was asked for (`--roots`).
    var roots: Bool

    init(stages: [Stage], counts: StoreCounts?, lineage: LineageProgress?, roots: Bool) {
        self.stages = stages
        self.counts = counts
        self.lineage = lineage
        self.roots = roots
    }

    var isIdle: Bool {
        self.stages.allSatisfy { $0.lag == 0 } && (!self.roots || self.lineage?.isComplete == true)
    }

    /// What is still pending, in words.
    var pendingSummary: String {
        var parts = self.stages.filter { $0.lag > 0 }.map { "\($0.name) lag \($0.lag)" }
        if self.roots, let lineage = self.lineage, !lineage.isComplete {
            parts.append("\(lineage.finished) of \(lineage.expected) jobs finished, \(lineage.retrying) waiting for a retry")
        }
        return parts.isEmpty ? "idle, not yet settled" : parts.joined(separator: ", ")
    }

    /// The lines of the progress display.
    func lines(elapsed: Duration) -> [String] {
        var lines = self.stages.map { stage in
            "\(stage.name.padding(8)) lag \(Format.grouped(Int(stage.lag)).leftPadded(9))   dead letters \(Format.grouped(Int(stage.deadLetters)))"
        }
        if let counts {
            lines.append(
                "stored   \(counts.movies) movies, \(counts.boxOfficeEntries) box-office entries, \(counts.books) books, \(counts.images) images"
            )
        } else {
            lines.append("stored   nothing yet (the indexer has not written its first batch)")
        }
        if self.roots, let lineage {
            lines.append(
                "jobs     \(lineage.finished) of \(lineage.expected) finished, \(lineage.retrying) waiting for a retry, \(lineage.deadLettered) dead-lettered"
            )
        }
        lines.append("elapsed  \(Format.elapsed(elapsed))")
        return lines
    }
}

/// Draws samples: redrawn in place on a terminal, a line every 5 seconds otherwise.
final class ProgressDisplay {
    private let terminal: Bool
    private var drawn = 0
    private var lastPlain: ContinuousClock.Instant?

    init(terminal: Bool) { self.terminal = terminal }

    func show(_ sample: DrainSample, elapsed: Duration) {
        let lines = sample.lines(elapsed: elapsed)
        if self.terminal {
            // Up to the first line drawn last time, then each line cleared and rewritten.
            var output = self.drawn > 0 ? "\u{1B}[\(self.drawn)F" : ""
            for line in lines { output += "\u{1B}[2K" + line + "\n" }
            print(output, terminator: "")
            self.drawn = lines.count
        } else if self.lastPlain.map({ ContinuousClock.now - $0 >= .seconds(5) }) ?? true {
            self.lastPlain = .now
            print(lines.map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }.joined(separator: " | "))
        }
    }

    func finish() {
        if self.terminal { self.drawn = 0 }
    }
}

/// What `marquee drain` prints once the pipeline drained.
enum DrainSummary {
    static func print(layout: PipelineLayout, kafka: KafkaOptions, store: Store, elapsed: Duration, roots: [JobID]?) async throws {
        Swift.print("\nDrained after \(Format.elapsed(elapsed)).\n")
        if let counts = try? await store.counts() {
            var table = TextTable([.init(header: "STORED"), .init(header: "ROWS", alignment: .right)])
            for (name, count) in counts.all where count > 0 { table.append([name.replacingUnderscores, Format.grouped(count)]) }
            Swift.print(table.render())
        }
        if let roots, let lineage = try? await store.lineageProgress(roots: roots) {
            Swift.print("\nJobs of this crawl: \(lineage.finished) finished, \(lineage.deadLettered) of them dead-lettered.")
        }

        // Dead letters by stage, kind and reason (those not purged, as `marquee dlq list` shows them).
        let queue = DeadLetterQueue(
            layout: layout, admin: try kafka.makeAdmin(), reader: try KafkaReader(configuration: kafka.configuration, logger: kafka.logger)
        )
        var reasons: [String: Int] = [:]
        var total = 0
        try await queue.scan(try await queue.partitions(), includingPurged: false) { letter in
            total += 1
            reasons["\(letter.id.stage)  \(letter.kind)  \(letter.errorKind)  \(String((letter.error ?? "no reason recorded").prefix(90)))", default: 0] += 1
        }
        if total == 0 {
            Swift.print("\nNo dead letters.")
        } else {
            Swift.print("\n\(total) dead letter\(total == 1 ? "" : "s") (marquee dlq list shows them; marquee dlq replay sends them again):")
            var table = TextTable([.init(header: "COUNT", alignment: .right), .init(header: "STAGE  KIND  ERROR KIND  REASON", maxWidth: 140)])
            for (reason, count) in reasons.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }).prefix(10) {
                table.append([String(count), reason])
            }
            Swift.print(table.render())
        }

        let images = (try? kafka.settings().value(Catalogue.imageStore)) ?? Catalogue.imageStore.defaultValue
        Swift.print("\nThe catalogue is in \(store.location); the images in \(images).")
        Swift.print("Try:")
        let storeFlag = store.location.description == StoreLocation.defaultValue ? "" : " --store '\(store.location)'"
        var examples = ["marquee query counts\(storeFlag)", "marquee query box-office\(storeFlag)"]
        if let chart = try? await store.boxOffice(), let title = chart.entries.first?.movieName {
            examples.append("marquee query movies \"\(title)\"\(storeFlag)")
        } else {
            examples.append("marquee query movies 기생충\(storeFlag)")
        }
        for example in examples { Swift.print("  \(example)") }
    }
}

extension String {
    fileprivate var replacingUnderscores: String { self.split(separator: "_").joined(separator: " ") }

    fileprivate func leftPadded(_ width: Int) -> String {
        self.count >= width ? self : String(repeating: " ", count: width - self.count) + self
    }
}

#if canImport(Glibc)
import Glibc
#endif
