import ArgumentParser
import MarqueeCore
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline

import struct Foundation.Data
import class Foundation.FileHandle

/// `marquee enqueue`: root fetch jobs onto the fetch stage's main topic, from flags or JSON lines.
///
/// Every job is built and checked with the fetch stage's own decoding (`FetchJob.decode`) before anything is
/// sent; one invalid line sends nothing. Each job is a root (`marquee-id` = `marquee-root`) whose `marquee-refresh`
/// is the reason its kind implies (``RefreshReason/implied(by:)``): a list, a search, the change feed, else a
/// request made by hand.
struct Enqueue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enqueue fetch jobs, from flags or JSON lines (a file, or - for standard input).",
        discussion: """
            Every job is checked before anything is sent: with any invalid line, each bad line is reported with its \
            number and reason, and nothing is sent (exit 65). --dry-run prints the jobs instead of sending them.

            The store records why each movie was last refreshed: a list's or a search's movies as list or search, \
            the details of tmdb-changes as change, of tmdb-export as backfill, and anything else enqueued here \
            (tmdb-movie, JSON lines of details) as request.

            Examples:
              marquee enqueue tmdb-list popular --pages 1-5 --language ko-KR,en-US --details --images
              marquee enqueue tmdb-search "기생충" --pages 2
              marquee enqueue tmdb-movie 496243 27205 --language ko-KR,en-US --reviews --images
              marquee enqueue tmdb-export --details --images --min-popularity 1
              marquee enqueue tmdb-changes --from 2024-03-01 --to 2024-03-07 --language ko-KR,en-US --images
              marquee enqueue tmdb-account default
              marquee enqueue kofic-daily --from 2024-01-01 --to 2024-01-31 --details
              marquee enqueue kofic-weekly --from 2024-01-01 --to 2024-03-31 --period weekend
              marquee enqueue kofic-movies --open-from 2020 --open-to 2024 --details --images
              marquee enqueue openlibrary-work OL45804W --images
              marquee enqueue openlibrary-search "swift programming" --details --images
              marquee enqueue --file jobs.jsonl
              jq -c '.[]' jobs.json | marquee enqueue --file -
            A JSON line is a fetch job as docs/fetch.md describes it, e.g.
              {"v":1,"kind":"tmdb.list","list":"popular","page":1,"language":"ko-KR"}
            """,
        subcommands: [
            TMDBListJobs.self, TMDBSearchJobs.self, TMDBMovieJobs.self, TMDBReviewsJobs.self, TMDBGenresJobs.self,
            TMDBChangesJobs.self, TMDBAccountJobs.self,
            KOFICDailyJobs.self, KOFICWeeklyJobs.self, KOFICMovieJobs.self, KOFICCatalogueJobs.self,
            KakaoPosterJobs.self,
            OpenLibrarySearchJobs.self, OpenLibraryWorkJobs.self,
            TMDBExportJobs.self,
        ]
    )

    @OptionGroup var sending: EnqueueOptions

    @Option(name: .long, help: "JSON lines of fetch jobs: a file, or - for standard input.")
    var file: String?

    func run() async throws {
        guard let file = self.file else {
            throw ValidationError(
                "name the jobs: --file PATH (or - for standard input), or a subcommand such as tmdb-list"
            )
        }
        let bytes: [UInt8]
        if file == "-" {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else {
            guard let handle = FileHandle(forReadingAtPath: file) else {
                throw fail("cannot read \(file)", code: .init(66))  // EX_NOINPUT
            }
            bytes = Array(handle.readDataToEndOfFile())
        }
        let jobs = try Self.parse(lines: bytes)
        try await self.sending.send(jobs)
    }

    /// The jobs of JSON lines (blank lines skipped). With any bad line, reports every bad line and exits 65
    /// (EX_DATAERR) without returning.
    static func parse(lines bytes: [UInt8]) throws -> [FetchJob] {
        let lines = FetchJobLines(parsing: bytes)
        var standardError = StandardError()
        for problem in lines.report { print("marquee: \(problem)", to: &standardError) }
        if let refusal = lines.refusal { throw fail(refusal, code: .init(65)) }
        return lines.jobs
    }
}

/// What every form of `marquee enqueue` shares: where to send, and whether to.
struct EnqueueOptions: ParsableArguments {
    @OptionGroup var kafka: KafkaOptions

    @Flag(name: .long, help: "Print the jobs as JSON lines instead of sending them.")
    var dryRun = false

    /// Sends `jobs` (or prints them with `--dry-run`), then a summary: jobs by kind and the root ids.
    func send(_ jobs: [FetchJob]) async throws {
        if self.dryRun {
            for job in jobs { print(String(decoding: job.encoded(), as: UTF8.self)) }
            Self.summary(jobs, roots: nil, verb: "would be sent (dry run)")
            return
        }
        let topic = StageTopics(stage: "fetch", prefix: try self.kafka.layout().prefix, tiers: 0).main
        // Each root starts a trace that every job it spawns carries (the `trace_id` of their log lines), and says
        // why the crawl was made (its kind's reason: a list, a search, a change feed, a detail asked for by hand).
        let envelopes = jobs.map { Envelope.root(traceparent: TraceContext.make(), refresh: .implied(by: $0)) }
        var progress = EnqueueProgress(total: jobs.count, isTerminal: isatty(2) == 1)
        try await reportingKafkaErrors {
            var configuration = KafkaProducerConfiguration(kafka: self.kafka.configuration)
            configuration.kafka.clientID = "marquee-enqueue"
            let producer = try KafkaProducer(configuration: configuration, logger: self.kafka.logger)
            do {
                // In slices, so a large input shows progress and memory stays bounded.
                for start in stride(from: 0, to: jobs.count, by: 1000) {
                    let slice = start..<min(start + 1000, jobs.count)
                    try await producer.deliver(
                        slice.map { index in
                            KafkaProducerMessage(
                                topic: topic,
                                key: Array(jobs[index].dedupeKey.utf8),
                                value: jobs[index].encoded(),
                                headers: envelopes[index].kafkaHeaders
                            )
                        }
                    )
                    if let text = progress.update(slice.upperBound) {
                        var standardError = StandardError()
                        print(text, terminator: "", to: &standardError)
                    }
                }
                await producer.close()
            } catch {
                await producer.close()
                throw error
            }
        }
        if let text = progress.finish {
            var standardError = StandardError()
            print(text, terminator: "", to: &standardError)
        }
        Self.summary(jobs, roots: envelopes.map(\.id.description), verb: "sent to \(topic)")
    }

    private static func summary(_ jobs: [FetchJob], roots: [String]?, verb: String) {
        var standardError = StandardError()
        print(EnqueueJobs.summary(jobs, verb: verb), to: &standardError)
        if let roots {
            // Root ids on standard output, one per line: scripts follow their lineage (job_outcomes.root_id).
            for root in roots { print(root) }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
