import ArgumentParser
import Logging
import MarqueeCore
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import MarqueeSettings
import MarqueeStore
import MarqueeWorker

import struct Foundation.Data
import class Foundation.FileHandle

/// `marquee drain`: live progress of the pipeline until every stage drained, then a summary.
struct Drain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the pipeline's progress until every stage drained, then a summary of what it stored.",
        discussion: """
            Every --interval it reads each stage's consumer lag (main topic and retry tiers), the dead letters, \
            what the store holds and — with --roots — how many jobs of the crawl finished, from the job-outcome \
            lineage. A stage whose consumer group has no member while its lag stays put and another group \
            consumes its topics (or every job of the crawl finished) is named in one line with the variable that \
            picks the group read (MARQUEE_GROUP_FETCH, …). The pipeline counts as drained when every stage's \
            lag is 0 and (with --roots) every job the crawl consists of finished (done or dead-lettered, none \
            waiting for a retry), for --settle samples in a row. Then it prints what the store holds, the dead letters by reason, the elapsed time and where the \
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

    @Option(
        help: ArgumentHelp(
            "A file of root job ids, one per line (as `marquee enqueue` prints them), or - for standard input.",
            valueName: "file"
        )
    )
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
        guard DurationText.parse(self.maxWait) != nil else {
            throw ValidationError("--max-wait: '\(self.maxWait)' is not a duration such as 30m")
        }
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
        let locationText =
            (try? self.kafka.settings(more: self.flags).value(Catalogue.store)) ?? StoreLocation.defaultValue
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
    private func watch(
        layout: PipelineLayout,
        store: Store,
        roots: [JobID]?,
        interval: Duration,
        deadline: ContinuousClock.Instant
    ) async throws {
        let start = ContinuousClock.now
        var display = DrainDisplay(isTerminal: isatty(1) == 1)
        var progress = DrainProgress(settle: self.settle)
        var notices = DrainNotices()
        var consumers = OtherConsumersCache()
        try await reportingKafkaErrors {
            let admin = try self.kafka.makeAdmin()
            while true {
                let sample = await DrainSample.take(
                    layout: layout,
                    admin: admin,
                    store: store,
                    roots: roots,
                    consumers: &consumers
                )
                if let frame = display.frame(sample, elapsed: ContinuousClock.now - start) {
                    print(frame, terminator: "")
                }
                // Said once each, below the progress, which then starts afresh underneath.
                let lines = notices.record(sample, now: .now)
                if !lines.isEmpty {
                    display.finish()
                    for line in lines { print(line) }
                }
                let decision = progress.record(isIdle: sample.isIdle, isPastDeadline: ContinuousClock.now >= deadline)
                if decision == .drained { break }
                if decision == .timedOut {
                    display.finish()
                    var standardError = StandardError()
                    print("marquee: not drained after \(self.maxWait): \(sample.pendingSummary)", to: &standardError)
                    for unread in notices.unread { print("marquee: \(unread.line)", to: &standardError) }
                    throw ExitCode.failure
                }
                try await Task.sleep(for: interval)
            }
            display.finish()
            try await self.printSummary(
                layout: layout,
                store: store,
                elapsed: ContinuousClock.now - start,
                roots: roots
            )
        }
    }

    /// Prints what the store holds, then the dead letters by reason, then where the data is: each part as soon as
    /// its figures are read.
    private func printSummary(layout: PipelineLayout, store: Store, elapsed: Duration, roots: [JobID]?) async throws {
        let counts = try? await store.counts()
        let lineage: LineageProgress? = if let roots { try? await store.lineageProgress(roots: roots) } else { nil }
        print(DrainSummary.stored(elapsed: elapsed, counts: counts, lineage: lineage))

        // Dead letters by stage, kind and reason (those not purged, as `marquee dlq list` shows them).
        let queue = DeadLetterQueue(
            layout: layout,
            admin: try self.kafka.makeAdmin(),
            reader: try KafkaReader(configuration: self.kafka.configuration, logger: self.kafka.logger)
        )
        var reasons = DrainSummary.DeadLetterReasons()
        try await queue.scan(try await queue.partitions(), includingPurged: false) { reasons.add($0) }
        print(reasons.text)

        let images = (try? self.kafka.settings().value(Catalogue.imageStore)) ?? Catalogue.imageStore.defaultValue
        let topTitle = (try? await store.boxOffice())?.entries.first?.movieName
        print(DrainSummary.whereToLook(store: store.location, imageStore: images, topTitle: topTitle))
    }

    private func readRoots() throws -> [JobID]? {
        guard let path = self.roots else { return nil }
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw fail("cannot read \(path)", code: .init(66))
            }
            data = handle.readDataToEndOfFile()
        }
        let ids = DrainSample.roots(in: String(decoding: data, as: UTF8.self))
        guard !ids.isEmpty else { throw ValidationError("--roots: \(path) holds no job ids") }
        return ids
    }
}

#if canImport(Glibc)
import Glibc
#endif
