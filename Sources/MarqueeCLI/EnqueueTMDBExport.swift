import ArgumentParser
import MarqueeCore
import MarqueeHTTP
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import MarqueeSettings
import MarqueeWorker
import Synchronization
import UnixSignals

import class Foundation.FileManager
import class Foundation.ProcessInfo
import func Foundation.time

#if canImport(Glibc)
import Glibc
#endif

/// `marquee enqueue tmdb-export`: a detail job for every movie of TMDB's daily id export, streamed (never whole
/// in memory), at a bounded pace, resumable. The work is ``EnqueueTMDBExport`` (MarqueeOperations); this
/// downloads, wires the producer, the backlog and the signals, and prints.
struct TMDBExportJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-export",
        abstract: "Every movie of TMDB's daily id export (a full backfill): paced, with progress, resumable.",
        discussion: """
            Downloads movie_ids_MM_DD_YYYY.json.gz (the latest: today's from 08:00 UTC, else yesterday's) beside \
            the state file, or reads --file, and sends a job per movie and language, --rate jobs a second at most \
            and never while the fetch group's backlog is over --max-backlog. After each delivered batch the state \
            file records the line reached; --resume continues from it, sending nothing twice. A line that is not \
            a movie is reported with its number and skipped; more than --max-bad-lines stop the run (exit 65). \
            The store records the movies it refreshes as refreshed by the backfill.

            Examples:
              marquee enqueue tmdb-export --details --images --min-popularity 1
              marquee enqueue tmdb-export --date 2026-11-26 --details --reviews --language ko-KR,en-US
              marquee enqueue tmdb-export --file movie_ids_11_26_2026.json.gz --details --rate 0 --max-backlog 5000
              marquee enqueue tmdb-export --resume --details --images --min-popularity 1
            """
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Option(help: "The export's day, YYYY-MM-DD (default: the latest).")
    var date: String?

    @Option(
        name: .customLong("file"),
        help: "Read this export (gzip, or its lines unpacked) instead of downloading one."
    )
    var exportFile: String?

    /// `marquee enqueue` declares `--file` (JSON lines) too, and parses it: read from there.
    @ParentCommand var parent: Enqueue

    /// `--file`, whichever command parsed it.
    private var file: String? { self.exportFile ?? self.parent.file }

    @Option(name: .customLong("export-base-url"), help: ArgumentHelp(Catalogue.tmdbExportBaseURL))
    var exportBaseURL: String?

    @Option(help: "Skip movies whose popularity is below this.")
    var minPopularity: Double?

    @Flag(help: "Keep movies marked adult (skipped by default).")
    var includeAdult = false

    @Option(name: [.customLong("language"), .customLong("languages")], help: "Languages, comma-separated.")
    var language = "ko-KR"

    @Option(help: "Jobs a second at most (0: no limit).")
    var rate: Double = 50

    @Option(help: "Send nothing while the fetch group's backlog would pass this many jobs (0: no bound).")
    var maxBacklog = 10_000

    @Option(help: "The state file: how far the run got (the download is kept beside it until the run completes).")
    var state = "marquee-tmdb-export.state"

    @Flag(help: "Continue the run the state file records.")
    var resume = false

    @Option(help: "Lines that are not movies tolerated before the run stops.")
    var maxBadLines = 100

    @Flag(help: "No progress on standard error.")
    var quiet = false

    func validate() throws {
        guard self.rate >= 0, self.rate.isFinite else { throw ValidationError("--rate must be a number from 0") }
        guard self.maxBacklog >= 0 else { throw ValidationError("--max-backlog must be a number from 0") }
        guard self.maxBadLines >= 0 else { throw ValidationError("--max-bad-lines must be a number from 0") }
        if let date = self.date, LocalDate(parsing: date) == nil {
            throw ValidationError("--date must be a day as YYYY-MM-DD")
        }
    }

    func run() async throws {
        if self.file != nil && self.date != nil { throw ValidationError("give --date or --file, not both") }
        let plan: TMDBExportPlan
        do {
            plan = try TMDBExportPlan(
                filter: TMDBExportFilter(minPopularity: self.minPopularity, includesAdult: self.includeAdult),
                languages: EnqueueJobs.languages(self.language),
                follow: self.following.follow
            )
        } catch {
            throw ValidationError(error.description)
        }
        let isDryRun = self.sending.dryRun
        let existing = try dataError { try TMDBExportCheckpoint.read(from: self.state) }
        let checkpoint: TMDBExportCheckpoint
        let isDownload: Bool
        if self.resume {
            guard let existing else {
                throw fail("no state file \(self.state) to resume: run without --resume", status: .noInput)
            }
            if existing.isComplete {
                var standardError = StandardError()
                print(
                    "marquee: \(existing.export) was sent completely (\(self.state)); nothing to resume",
                    to: &standardError
                )
                return
            }
            guard existing.options == plan.fingerprint else {
                throw fail(
                    "the state file's run has other options (\(existing.options)) than these (\(plan.fingerprint)); give the same, or remove \(self.state) to start over",
                    status: .usage
                )
            }
            if let file = self.file, file != existing.path {
                throw fail("the state file's run reads \(existing.path), not \(file)", status: .usage)
            }
            if let date = self.date.flatMap(LocalDate.init(parsing:)), TMDBExport.fileName(date) != existing.export {
                throw fail("the state file's run reads \(existing.export), not the export of \(date)", status: .usage)
            }
            checkpoint = existing
            isDownload = self.file == nil && existing.path == self.downloadPath(existing.export)
        } else {
            if let existing, !isDryRun {
                let verb = existing.isComplete ? "sent all of" : "stopped at line \(existing.line) of"
                throw fail(
                    "\(self.state) records a run that \(verb) \(existing.export): --resume to continue it, or remove the file to start over",
                    status: .usage
                )
            }
            let path: String
            if let file = self.file {
                path = file
                isDownload = false
            } else {
                path = try await self.download()
                isDownload = true
            }
            let name = String(path.split(separator: "/").last ?? Substring(path))
            checkpoint = TMDBExportCheckpoint(export: name, path: path, size: 0, options: plan.fingerprint)
        }

        let reader = try dataError { try TMDBExportReader(path: checkpoint.path) }
        var start = checkpoint
        if self.resume {
            guard reader.size == checkpoint.size else {
                throw fail(
                    "\(checkpoint.path) is \(reader.size) bytes, not the \(checkpoint.size) of the export the state file describes; remove \(self.state) to start over",
                    status: .dataError
                )
            }
        } else {
            start.size = reader.size
            // Written before anything is sent: a run killed at once is resumed with the same file.
            if !isDryRun { try dataError { try start.write(to: self.state) } }
        }

        let layout = try self.sending.kafka.layout()
        guard let fetch = layout.stage("fetch") else { throw fail("the pipeline has no fetch stage", status: .usage) }
        let topic = fetch.topics.main
        var pacing = EnqueuePacing(rate: self.rate, maxBacklog: isDryRun ? 0 : self.maxBacklog)
        if isDryRun { pacing.rate = 0 }
        var enqueue = EnqueueTMDBExport(plan: plan, pacing: pacing)
        enqueue.maxBadLines = self.maxBadLines
        let display = ExportProgressDisplay(isTerminal: isatty(2) == 1, isQuiet: self.quiet)
        let stop = StopRequest()

        var outcome: (ending: EnqueueTMDBExport.Ending, checkpoint: TMDBExportCheckpoint)?
        do {
            try await reportingKafkaErrors {
                let admin = isDryRun || pacing.maxBacklog == 0 ? nil : try self.sending.kafka.makeAdmin()
                var configuration = KafkaProducerConfiguration(kafka: self.sending.kafka.configuration)
                configuration.kafka.clientID = "marquee-enqueue"
                let producer =
                    isDryRun ? nil : try KafkaProducer(configuration: configuration, logger: self.sending.kafka.logger)
                do {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            // SIGINT or SIGTERM: finish the batch in flight, record it, and stop.
                            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { stop.request() }
                        }
                        outcome = try await enqueue.run(
                            reader: reader,
                            checkpoint: start,
                            statePath: isDryRun ? nil : self.state,
                            send: { jobs in
                                guard let producer else {
                                    for job in jobs { print(String(decoding: job.encoded(), as: UTF8.self)) }
                                    return
                                }
                                try await producer.deliver(jobs.map { Self.message($0, topic: topic) })
                            },
                            backlog: {
                                guard let admin else { return 0 }
                                // The retry tiers the settings name but the cluster lacks hold nothing.
                                let existing = Set(try await admin.listTopics().map(\.name))
                                let topics = fetch.topics.consumed.filter { existing.contains($0) }
                                return try await admin.lag(group: fetch.group, topics: topics)
                                    .reduce(0) { $0 + Int($1.lag) }
                            },
                            shouldStop: { stop.isRequested },
                            progress: { display.show($0) },
                            problem: { display.problem($0) }
                        )
                        group.cancelAll()
                    }
                    await producer?.close()
                } catch {
                    await producer?.close()
                    throw error
                }
            }
        } catch let error as OperationsError {
            display.end()
            throw fail(error.reason, status: .dataError)
        }
        guard let outcome else { return }
        display.end()
        let final = outcome.checkpoint
        var standardError = StandardError()
        let verb = isDryRun ? "printed (dry run)" : "sent to \(topic)"
        print(
            "\(TextFormat.grouped(final.jobs)) job\(final.jobs == 1 ? "" : "s") \(verb) from \(final.export): \(TextFormat.grouped(final.line)) lines, "
                + "\(TextFormat.grouped(final.filtered)) filtered, \(TextFormat.grouped(final.bad)) bad",
            to: &standardError
        )
        switch outcome.ending {
        case .complete:
            // The download served its run (a dry run resuming leaves it to the run it previews).
            if isDownload && !(isDryRun && self.resume) { try? FileManager.default.removeItem(atPath: final.path) }
        case .stopped:
            throw fail(
                "stopped at line \(final.line); marquee enqueue tmdb-export --resume --state \(self.state) with the same options continues",
                status: .temporaryFailure
            )
        }
    }

    /// A root job's message: keyed by its dedupe key, a trace of its own, refreshed for the backfill.
    private static func message(_ job: FetchJob, topic: String) -> KafkaProducerMessage {
        KafkaProducerMessage(
            topic: topic,
            key: Array(job.dedupeKey.utf8),
            value: job.encoded(),
            headers: Envelope.root(traceparent: TraceContext.make(), refresh: .backfill).kafkaHeaders
        )
    }

    /// Where a download of `name` is kept: beside the state file.
    private func downloadPath(_ name: String) -> String {
        guard let slash = self.state.lastIndex(of: "/") else { return name }
        return String(self.state[...slash]) + name
    }

    /// Downloads the export of `--date` (or the latest) beside the state file; returns its path.
    private func download() async throws -> String {
        let settings = self.sending.kafka.settings(
            more: Settings.flags([(Catalogue.tmdbExportBaseURL, self.exportBaseURL)])
        )
        let baseURL: String
        do {
            baseURL = try settings.value(Catalogue.tmdbExportBaseURL)
        } catch {
            throw fail("\(error)", status: .configuration)
        }
        let days =
            self.date.flatMap(LocalDate.init(parsing:)).map { [$0] }
            ?? TMDBExport.latestDays(epochSeconds: Int64(time(nil)))
        let display = ExportProgressDisplay(isTerminal: isatty(2) == 1, isQuiet: self.quiet)
        var tried: [String] = []
        for day in days {
            let url = TMDBExport.url(baseURL: baseURL, day: day)
            let path = self.downloadPath(TMDBExport.fileName(day))
            let outcome: HTTPFileDownload.Outcome
            do {
                outcome = try await HTTPFileDownload.download(
                    url,
                    to: path + ".part",
                    userAgent: "marquee/1.0 (catalogue ingestion pipeline)",
                    progress: { received, total in display.download(received: received, total: total) }
                )
            } catch {
                try? FileManager.default.removeItem(atPath: path + ".part")
                display.end()
                throw fail("cannot download \(url): \(error.reason)", status: .unavailable)
            }
            display.end()
            guard outcome.status == 200 else {
                try? FileManager.default.removeItem(atPath: path + ".part")
                tried.append("\(url) (\(outcome.status))")
                continue
            }
            guard rename(path + ".part", path) == 0 else {
                throw fail("cannot keep the download as \(path): \(String(cString: strerror(errno)))", status: .failure)
            }
            return path
        }
        throw fail("no export to read: \(tried.joined(separator: ", "))", status: .noInput)
    }
}

/// A SIGINT or SIGTERM asked the run to stop.
private final class StopRequest: Sendable {
    private let flag = Atomic<Bool>(false)
    func request() { self.flag.store(true, ordering: .relaxed) }
    var isRequested: Bool { self.flag.load(ordering: .relaxed) }
}

/// The progress of a download and of sending, on standard error: redrawn in place on a terminal; otherwise a
/// line at each tenth of the file; nothing with `--quiet`. Bad lines always (the first 100 of them).
private final class ExportProgressDisplay: Sendable {
    let isTerminal: Bool
    let isQuiet: Bool
    private let state = Mutex<(tenth: Int, problems: Int, drawn: Bool)>((0, 0, false))

    init(isTerminal: Bool, isQuiet: Bool) {
        self.isTerminal = isTerminal
        self.isQuiet = isQuiet
    }

    func show(_ progress: TMDBExportProgress) {
        guard !self.isQuiet else { return }
        if self.isTerminal {
            self.draw(progress.text)
            return
        }
        let tenth = progress.size > 0 ? Int(10 * progress.bytesRead / progress.size) : 0
        let isNew = self.state.withLock { state in
            guard tenth > state.tenth else { return false }
            state.tenth = tenth
            return true
        }
        if isNew { FileHandleOutput.standardError(progress.text + "\n") }
    }

    func download(received: Int64, total: Int64?) {
        guard !self.isQuiet, self.isTerminal else { return }
        let share = total.map { " of \(TextFormat.bytes(Int($0)))" } ?? ""
        self.draw("downloading: \(TextFormat.bytes(Int(received)))\(share)")
    }

    func problem(_ text: String) {
        let count = self.state.withLock { state in
            state.problems += 1
            return state.problems
        }
        guard count <= 100 else { return }
        self.end()
        FileHandleOutput.standardError(
            "marquee: \(text)\(count == 100 ? " (further bad lines are counted, not shown)" : "")\n"
        )
    }

    /// Ends a line redrawn in place.
    func end() {
        let drawn = self.state.withLock { state in
            defer { state.drawn = false }
            return state.drawn
        }
        if drawn { FileHandleOutput.standardError("\n") }
    }

    private func draw(_ text: String) {
        self.state.withLock { $0.drawn = true }
        FileHandleOutput.standardError("\r\(text)\u{1B}[K")
    }
}

/// Runs `body`; an ``OperationsError`` becomes its reason on standard error and exit status 65.
private func dataError<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as OperationsError {
        throw fail(error.reason, status: .dataError)
    }
}
