import ArgumentParser
import MarqueeCore
import MarqueeKafka
import MarqueePipeline

import class Foundation.FileHandle
import class Foundation.ProcessInfo
import struct Foundation.Data

/// `marquee enqueue`: root fetch jobs onto the fetch stage's main topic, from flags or JSON lines.
///
/// Every job is built and checked with the fetch stage's own decoding (`FetchJob.decode`) before anything is
/// sent; one invalid line sends nothing. Each job is a root (`marquee-id` = `marquee-root`).
struct Enqueue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enqueue fetch jobs, from flags or JSON lines (a file, or - for standard input).",
        discussion: """
            Every job is checked before anything is sent: with any invalid line, each bad line is reported with its \
            number and reason, and nothing is sent (exit 65). --dry-run prints the jobs instead of sending them.

            Examples:
              marquee enqueue tmdb-list popular --pages 1-5 --language ko-KR,en-US --details --images
              marquee enqueue tmdb-search "기생충" --pages 2
              marquee enqueue kofic-daily --from 2024-01-01 --to 2024-01-31 --details
              marquee enqueue openlibrary-search "swift programming" --details --images
              marquee enqueue --file jobs.jsonl
              jq -c '.[]' jobs.json | marquee enqueue --file -
            A JSON line is a fetch job as docs/fetch.md describes it, e.g.
              {"v":1,"kind":"tmdb.list","list":"popular","page":1,"language":"ko-KR"}
            """,
        subcommands: [TMDBListJobs.self, TMDBSearchJobs.self, KOFICDailyJobs.self, OpenLibrarySearchJobs.self]
    )

    @OptionGroup var sending: EnqueueOptions

    @Option(name: .long, help: "JSON lines of fetch jobs: a file, or - for standard input.")
    var file: String?

    func run() async throws {
        guard let file = self.file else {
            throw ValidationError("name the jobs: --file PATH (or - for standard input), or a subcommand such as tmdb-list")
        }
        let bytes: [UInt8]
        if file == "-" {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else {
            guard let handle = FileHandle(forReadingAtPath: file) else {
                throw Self.fail("cannot read \(file)", code: .init(66))  // EX_NOINPUT
            }
            bytes = Array(handle.readDataToEndOfFile())
        }
        let jobs = try Self.parse(lines: bytes)
        try await self.sending.send(jobs)
    }

    /// The jobs of JSON lines (blank lines skipped). With any bad line, reports every bad line and exits 65
    /// (EX_DATAERR) without returning.
    static func parse(lines bytes: [UInt8]) throws -> [FetchJob] {
        var jobs: [FetchJob] = []
        var problems: [String] = []
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            guard let start = line.firstIndex(where: { !blank($0) }), let end = line.lastIndex(where: { !blank($0) }) else {
                continue
            }
            do {
                jobs.append(try FetchJob.decode(line[start...end]))
            } catch {
                problems.append("line \(index + 1): \(error.description)")
            }
        }
        guard problems.isEmpty else {
            var standardError = StandardError()
            for problem in problems.prefix(100) { print("marquee: \(problem)", to: &standardError) }
            if problems.count > 100 { print("marquee: … and \(problems.count - 100) more bad lines", to: &standardError) }
            throw Self.fail("\(problems.count) bad line\(problems.count == 1 ? "" : "s"): nothing was sent", code: .init(65))
        }
        guard !jobs.isEmpty else { throw Self.fail("no jobs in the input: nothing was sent", code: .init(65)) }
        return jobs
    }

    static func fail(_ message: String, code: ExitCode) -> ExitCode {
        var standardError = StandardError()
        print("marquee: \(message)", to: &standardError)
        return code
    }
}

/// What every form of `marquee enqueue` shares: where to send, and whether to.
struct EnqueueOptions: ParsableArguments {
    @OptionGroup var kafka: KafkaOptions

    @Option(name: .long, help: ArgumentHelp("Prefix of every topic name.", discussion: "Env: MARQUEE_TOPIC_PREFIX."))
    var topicPrefix: String = ProcessInfo.processInfo.environment["MARQUEE_TOPIC_PREFIX"] ?? "marquee."

    @Flag(name: .long, help: "Print the jobs as JSON lines instead of sending them.")
    var dryRun = false

    /// Sends `jobs` (or prints them with `--dry-run`), then a summary: jobs by kind and the root ids.
    func send(_ jobs: [FetchJob]) async throws {
        if self.dryRun {
            for job in jobs { print(String(decoding: job.encoded(), as: UTF8.self)) }
            Self.summary(jobs, roots: nil, verb: "would be sent (dry run)")
            return
        }
        let topic = StageTopics(stage: "fetch", prefix: self.topicPrefix, tiers: 0).main
        let envelopes = jobs.map { _ in Envelope.root() }
        let progress = Progress(total: jobs.count)
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
                                topic: topic, key: Array(jobs[index].dedupeKey.utf8), value: jobs[index].encoded(),
                                headers: envelopes[index].kafkaHeaders
                            )
                        }
                    )
                    progress.update(slice.upperBound)
                }
                await producer.close()
            } catch {
                await producer.close()
                throw error
            }
        }
        progress.finish()
        Self.summary(jobs, roots: envelopes.map(\.id.description), verb: "sent to \(topic)")
    }

    private static func summary(_ jobs: [FetchJob], roots: [String]?, verb: String) {
        var standardError = StandardError()
        var byKind: [String: Int] = [:]
        for job in jobs { byKind[job.kind, default: 0] += 1 }
        print("\(jobs.count) job\(jobs.count == 1 ? "" : "s") \(verb):", to: &standardError)
        for (kind, count) in byKind.sorted(by: { $0.key < $1.key }) { print("  \(kind)  \(count)", to: &standardError) }
        if let roots {
            // Root ids on standard output, one per line: scripts follow their lineage (job_outcomes.root_id).
            for root in roots { print(root) }
        }
    }
}

/// A progress line on a terminal (standard error), plain lines every 10 % when it is not one.
final class Progress {
    private let total: Int
    private let terminal = isatty(2) == 1
    private var lastTenth = 0

    init(total: Int) { self.total = total }

    func update(_ done: Int) {
        guard self.total >= 5000 else { return }
        var standardError = StandardError()
        if self.terminal {
            let width = 30
            let filled = width * done / self.total
            print("\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] \(done)/\(self.total)", terminator: "", to: &standardError)
        } else if done * 10 / self.total > self.lastTenth {
            self.lastTenth = done * 10 / self.total
            print("sent \(done)/\(self.total)", to: &standardError)
        }
    }

    func finish() {
        if self.terminal, self.total >= 5000 {
            var standardError = StandardError()
            print("", to: &standardError)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Flags

/// `--pages 3` or `--pages 1-5`.
struct PageRange: ExpressibleByArgument {
    var pages: ClosedRange<Int64>

    init?(argument: String) {
        let parts = argument.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let first = Int64(parts[0]), let last = Int64(parts.last!), first >= 1, last >= first
        else { return nil }
        self.pages = first...last
    }
}

/// The follow-up flags of list-like jobs.
struct FollowOptions: ParsableArguments {
    @Flag(help: "Also fetch each listed item's details.")
    var details = false
    @Flag(help: "Also fetch reviews (TMDB).")
    var reviews = false
    @Flag(help: "Also download posters and covers.")
    var images = false

    var follow: Follow { Follow(details: self.details, reviews: self.reviews, images: self.images) }
}

/// Checks each built job with the fetch stage's decoding, so flags cannot produce a job the worker refuses.
func checked(_ jobs: [FetchJob]) throws -> [FetchJob] {
    try jobs.map { job in
        do {
            return try FetchJob.decode(job.encoded())
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

func languages(_ text: String) -> [String] {
    text.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
}

struct TMDBListJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-list",
        abstract: "TMDB movie lists: popular, now_playing, top_rated, upcoming.",
        discussion: "Example: marquee enqueue tmdb-list popular --pages 1-5 --language ko-KR,en-US --details"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Argument(help: "popular, now_playing, top_rated or upcoming.")
    var list: String

    @Option(help: "Pages, e.g. 3 or 1-5.")
    var pages = PageRange(argument: "1")!

    @Option(help: "Languages, comma-separated.")
    var language = "ko-KR"

    @Option(help: "ISO 3166-1 region (for release dates), e.g. KR.")
    var region: String?

    func run() async throws {
        guard let list = FetchJob.TMDBList(rawValue: self.list) else {
            throw ValidationError("'\(self.list)' is not a TMDB list: popular, now_playing, top_rated or upcoming")
        }
        let jobs = languages(self.language).flatMap { language in
            self.pages.pages.map {
                FetchJob.tmdbList(list: list, page: $0, language: language, region: self.region, follow: self.following.follow)
            }
        }
        try await self.sending.send(try checked(jobs))
    }
}

struct TMDBSearchJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-search",
        abstract: "TMDB movie search.",
        discussion: "Example: marquee enqueue tmdb-search \"기생충\" --pages 2 --language ko-KR"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Argument(help: "What to search for.")
    var query: String

    @Option(help: "Pages: N fetches pages 1…N (page 1 queues the rest); a-b fetches pages a…b.")
    var pages = PageRange(argument: "1")!

    @Option(help: "Languages, comma-separated.")
    var language = "ko-KR"

    @Option(help: "Release year.")
    var year: Int64?

    func run() async throws {
        let range = self.pages.pages
        let jobs = languages(self.language).flatMap { language in
            // `--pages N`: page 1 follows up to N; a range: each page on its own.
            range.lowerBound == range.upperBound
                ? [FetchJob.tmdbSearch(query: self.query, page: 1, language: language, year: self.year, follow: self.follow(pages: range.upperBound))]
                : range.map { FetchJob.tmdbSearch(query: self.query, page: $0, language: language, year: self.year, follow: self.follow(pages: 1)) }
        }
        try await self.sending.send(try checked(jobs))
    }

    private func follow(pages: Int64) -> Follow {
        var follow = self.following.follow
        follow.pages = pages
        return follow
    }
}

struct KOFICDailyJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kofic-daily",
        abstract: "KOFIC daily box office, one job per day.",
        discussion: "Example: marquee enqueue kofic-daily --from 2024-01-01 --to 2024-01-31 --details"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Option(help: "First day, YYYY-MM-DD.")
    var from: String

    @Option(help: "Last day, YYYY-MM-DD (default: --from).")
    var to: String?

    func run() async throws {
        guard let first = Day(self.from), let last = Day(self.to ?? self.from) else {
            throw ValidationError("--from and --to must be days as YYYY-MM-DD")
        }
        guard first <= last else { throw ValidationError("--to is before --from") }
        var jobs: [FetchJob] = []
        var day = first
        while day <= last {
            guard jobs.count < 3660 else { throw ValidationError("at most ten years of days at once") }
            jobs.append(.koficDailyBoxOffice(date: day.compact, follow: self.following.follow))
            day = day.next
        }
        try await self.sending.send(try checked(jobs))
    }
}

struct OpenLibrarySearchJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openlibrary-search",
        abstract: "Open Library book search.",
        discussion: "Example: marquee enqueue openlibrary-search \"swift programming\" --pages 2 --details --images"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Argument(help: "What to search for.")
    var query: String

    @Option(help: "Pages: page 1 queues pages 2…N.")
    var pages: Int64 = 1

    @Option(help: "Results per page (1–100).")
    var limit: Int64 = 20

    func run() async throws {
        var follow = self.following.follow
        follow.pages = self.pages
        try await self.sending.send(try checked([.openLibrarySearch(query: self.query, page: 1, limit: self.limit, follow: follow)]))
    }
}

/// A calendar day (proleptic Gregorian), for ranges of dates.
struct Day: Comparable {
    let year: Int, month: Int, day: Int

    /// `YYYY-MM-DD`, a real calendar day.
    init?(_ text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= Self.days(in: month, of: year)
        else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    private init(year: Int, month: Int, day: Int) { (self.year, self.month, self.day) = (year, month, day) }

    static func days(in month: Int, of year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// The day after.
    var next: Day {
        if self.day < Self.days(in: self.month, of: self.year) { return Day(year: self.year, month: self.month, day: self.day + 1) }
        return self.month < 12 ? Day(year: self.year, month: self.month + 1, day: 1) : Day(year: self.year + 1, month: 1, day: 1)
    }

    /// `yyyyMMdd`, as KOFIC's `targetDt`.
    var compact: String {
        func padded(_ value: Int, _ width: Int) -> String {
            String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
        }
        return padded(self.year, 4) + padded(self.month, 2) + padded(self.day, 2)
    }

    static func < (lhs: Day, rhs: Day) -> Bool { (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day) }
}
