// Efficiency of the fetch worker, for `make bench-fetch` (scripts/bench-fetch.sh): the same code as `marquee-fetch`
// (`FetchWorker` + `Stage`, wired as the integration tests wire it) against the upstream emulator, with limits off.
//
//   FetchBenchmark urls --kind detail --count N          the exact request URLs of the workload's jobs, one a line
//                                                        (SourceAdapters.request(for:), what marquee-fetch requests)
//   FetchBenchmark run --kind detail|list|search --count N --concurrency C
//                                                        enqueues N jobs under a fresh topic prefix, then runs the
//                                                        fetch stage until N jobs finished; prints one line:
//                                                        jobs_per_sec=… cpu_us_per_job=… elapsed_ms=… jobs=… failed=…
//   FetchBenchmark rate --rate 50 --seconds 60           the stage under a client limit of 50 req/s (burst 1) for
//                                                        a fixed window; prints achieved=… error_pct=… requests=…
//   FetchBenchmark http --kind detail --count N          diagnostics: the worker's HTTP client alone, same URLs
//   FetchBenchmark parse --kind detail --count N --repeat R
//                                                        diagnostics: the handler's CPU work alone (decode the job,
//                                                        parse the body, encode the outputs) on bodies fetched once
//
// --concurrency N caps the requests in flight to the upstream (per-source HostLimit, connections per host), as
// curl's --parallel-max; the stage holds up to --stage-concurrency jobs (default 6 N, as marquee-fetch's defaults of
// 96 jobs and 16 a source). `run --drop-outputs` leaves the producer out (diagnostics).
//
// Upstream base URLs and keys come from the environment, as for marquee-fetch (`marquee-upstream --print-env`).
// `run` is timed from the first job started to the Nth finished (fetched, parsed, records, follow-ups and the job's
// outcome record acknowledged by the broker, input marked processed); the group join and the seeding are not timed. CPU is the
// whole process's user + system time (getrusage) over the same interval.
import ArgumentParser
// marquee-fetch's allocator (docs/fetch.md, "Memory allocator"), linked the same way.
import Cjemalloc
import Logging
import MarqueeCore
import MarqueeFetchStage
import MarqueeHTTP
import MarqueeKafka
import MarqueePipeline
import MarqueeSources
import ServiceLifecycle

import class Foundation.ProcessInfo
import struct Foundation.UUID

@main
struct FetchBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "FetchBenchmark",
        abstract: "Measure the fetch worker against the upstream emulator.",
        subcommands: [PrintURLs.self, RunWorkload.self, RunRate.self, RunHTTP.self, RunParse.self]
    )
}

struct Options: ParsableArguments {
    @Option(help: "Bootstrap brokers (default: $MARQUEE_BROKERS, else 127.0.0.1:19092).")
    var brokers: String = ProcessInfo.processInfo.environment["MARQUEE_BROKERS"] ?? "127.0.0.1:19092"

    @Option(help: "The topic prefix of this run (default: a fresh one).")
    var prefix: String = "bench-fetch.\(UUID().uuidString.prefix(8).lowercased())."

    @Option(
        help:
            "Requests in flight at once to the upstream (per-source limit, connections per host), as curl --parallel-max."
    )
    var concurrency = 32

    @Option(
        help:
            "Jobs in flight at once in the stage (default: 6 × --concurrency, as marquee-fetch's 96 jobs and 16 a source)."
    )
    var stageConcurrency: Int?

    @Option(help: "Partitions of each topic of the run.")
    var partitions = 4

    @Flag(help: "Diagnostics: keep the run's topics (by default they are deleted when the run ends).")
    var keepTopics = false

    @Option(help: "Diagnostics: the stage producer's linger.ms (default: marquee-fetch's, FetchWorker.producerLinger).")
    var lingerMs: Int?

    @Option(help: "Diagnostics: the stage producer's batch.num.messages (default: the producer's default).")
    var batchMessages: Int?

    @Option(
        help:
            "Diagnostics: the stage producer's compression: none, gzip, lz4 or zstd (default: marquee-fetch's, FetchWorker.producerCompression).",
        transform: { name throws -> KafkaProducerConfiguration.Compression in
            switch name {
            case "none": .none
            case "gzip": .gzip
            case "lz4": .lz4
            case "zstd": .zstd
            default: throw ValidationError("--compression must be none, gzip, lz4 or zstd, not '\(name)'")
            }
        }
    )
    var compression: KafkaProducerConfiguration.Compression?

    var kafka: KafkaConfiguration {
        var kafka = KafkaConfiguration(brokers: self.brokers)
        kafka.clientID = "marquee-bench-fetch"
        return kafka
    }

    var logger: Logger {
        var logger = Logger(label: "bench-fetch")
        logger.logLevel = .warning
        return logger
    }

    /// Base URLs and keys, read as marquee-fetch reads them.
    func sources() throws -> SourceConfiguration {
        let environment = ProcessInfo.processInfo.environment
        guard environment["TMDB_BASE_URL"] != nil else {
            throw ValidationError(
                "TMDB_BASE_URL is not set: eval \"$(marquee-upstream --print-env --port PORT)\" first"
            )
        }
        return try SourceConfiguration.fromEnvironment(environment)
    }
}

struct WorkloadOptions: ParsableArguments {
    @Option(
        help:
            "The job kind: detail (tmdb.movie with reviews and images appended), list (tmdb.list), search (tmdb.search)."
    )
    var kind: WorkloadKind = .detail

    @Option(help: "How many jobs.")
    var count = 2000

    @Flag(help: "Diagnostics: drop the handler's outputs instead of producing them (leaves the producer out).")
    var dropOutputs = false
}

struct PrintURLs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "urls",
        abstract: "Print the request URL of each job of the workload, one a line (the URLs marquee-fetch requests)."
    )
    @OptionGroup var options: Options
    @OptionGroup var workload: WorkloadOptions

    func run() async throws {
        let sources = try self.options.sources()
        let jobs = try await Workload.jobs(
            self.workload.kind,
            count: self.workload.count,
            sources: sources,
            logger: self.options.logger
        )
        let adapters = SourceAdapters(configuration: sources)
        var lines = ""
        for job in jobs { lines += try adapters.request(for: job).url + "\n" }
        print(lines, terminator: "")
    }
}

struct RunWorkload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Enqueue the workload's jobs, then run the fetch stage until they all finished."
    )
    @OptionGroup var options: Options
    @OptionGroup var workload: WorkloadOptions

    func run() async throws {
        let sources = try self.options.sources()
        let jobs = try await Workload.jobs(
            self.workload.kind,
            count: self.workload.count,
            sources: sources,
            logger: self.options.logger
        )
        try await BenchStage.seed(jobs, options: self.options)
        let progress = Progress(target: jobs.count)
        try await BenchStage.run(
            sources: sources,
            rate: nil,
            progress: progress,
            dropsOutputs: self.workload.dropOutputs,
            options: self.options
        ) {
            await progress.wait()
        }
        guard let result = progress.result() else { throw ValidationError("the run did not finish") }
        let seconds = result.elapsed.seconds
        print(
            "jobs_per_sec=\(Int((Double(jobs.count) / max(seconds, 1e-9)).rounded())) "
                + "cpu_us_per_job=\(Int((result.cpu.seconds * 1e6 / Double(jobs.count)).rounded())) "
                + "elapsed_ms=\(Int((seconds * 1000).rounded())) jobs=\(jobs.count) failed=\(result.failed) "
                + "handler_ms=\(String(format2: result.handlerMilliseconds)) job_ms=\(String(format2: result.jobMilliseconds)) "
                + "outputs_per_job=\(String(format2: result.outputsPerJob))"
        )
    }
}

struct RunRate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rate",
        abstract: "Run detail jobs under a client limit of --rate requests/s (burst 1) and measure the rate achieved."
    )
    @OptionGroup var options: Options

    @Option(help: "The client limit, requests per second (HostLimit, burst 1).")
    var rate: Double = 50

    @Option(help: "The measured window, seconds (from the first job started).")
    var seconds = 60

    func run() async throws {
        let sources = try self.options.sources()
        // More jobs than the window can take, so the stage never runs dry inside it.
        let count = Int(self.rate * Double(self.seconds) * 1.1) + 100
        // The emulator limits too: the requests that find the movie ids keep to the same rate.
        let jobs = try await Workload.jobs(
            .detail,
            count: count,
            sources: sources,
            rate: self.rate,
            logger: self.options.logger
        )
        try await BenchStage.seed(jobs, options: self.options)
        let progress = Progress(target: jobs.count)
        let window = Duration.seconds(self.seconds)
        var finishedInWindow = 0
        try await BenchStage.run(sources: sources, rate: self.rate, progress: progress, options: self.options) {
            let start = await progress.firstStart()
            try? await Task.sleep(until: start + window, clock: .continuous)
            finishedInWindow = progress.finishedCount
        }
        let achieved = Double(finishedInWindow) / window.seconds
        let errorPercent = abs(achieved - self.rate) / self.rate * 100
        print(
            "achieved=\(String(format2: achieved)) error_pct=\(String(format2: errorPercent)) "
                + "requests=\(finishedInWindow) seconds=\(self.seconds) failed=\(progress.failedCount)"
        )
    }
}

struct RunHTTP: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "Diagnostics: fetch the workload's URLs with the worker's HTTP client alone (no parsing, no Kafka)."
    )
    @OptionGroup var options: Options
    @OptionGroup var workload: WorkloadOptions

    func run() async throws {
        let sources = try self.options.sources()
        let jobs = try await Workload.jobs(
            self.workload.kind,
            count: self.workload.count,
            sources: sources,
            logger: self.options.logger
        )
        let adapters = SourceAdapters(configuration: sources)
        let requests = try jobs.map { job in
            let request = try adapters.request(for: job)
            var fetch = FetchRequest(
                url: request.url,
                headers: request.headers.map { HTTPHeader(name: $0.name, value: $0.value) },
                purpose: .api
            )
            fetch.isConditional = false
            return fetch
        }
        var http = HTTPFetcherConfiguration()
        http.allowsPrivateAddresses = true
        http.maxConnectionsPerHost = self.options.concurrency
        let fetcher = try HTTPFetcher(configuration: http, logger: self.options.logger)
        let progress = Progress(target: requests.count)
        let limiter = AsyncLimiter(limit: self.options.concurrency)
        try await withThrowingDiscardingTaskGroup { group in
            for request in requests {
                _ = await limiter.acquire()
                group.addTask {
                    defer { limiter.release() }
                    progress.started()
                    let response = try await fetcher.fetch(request)
                    progress.finished(response.status == 200 ? .succeeded(outputs: 0) : .deadLettered(.permanent))
                }
            }
        }
        await fetcher.shutdown()
        guard let result = progress.result() else { throw ValidationError("the run did not finish") }
        let seconds = result.elapsed.seconds
        print(
            "requests_per_sec=\(Int((Double(requests.count) / max(seconds, 1e-9)).rounded())) "
                + "cpu_us_per_request=\(Int((result.cpu.seconds * 1e6 / Double(requests.count)).rounded())) "
                + "elapsed_ms=\(Int((seconds * 1000).rounded())) failed=\(result.failed)"
        )
    }
}

struct RunParse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract:
            "Diagnostics: the handler's CPU work alone (job decode, parse, output encoding) on bodies fetched once."
    )
    @OptionGroup var options: Options
    @OptionGroup var workload: WorkloadOptions

    @Option(help: "How many times each body is parsed.")
    var `repeat` = 5

    func run() async throws {
        let sources = try self.options.sources()
        let jobs = try await Workload.jobs(
            self.workload.kind,
            count: self.workload.count,
            sources: sources,
            logger: self.options.logger
        )
        let adapters = SourceAdapters(configuration: sources)
        var http = HTTPFetcherConfiguration()
        http.allowsPrivateAddresses = true
        let fetcher = try HTTPFetcher(configuration: http, logger: self.options.logger)
        var answers: [(payload: [UInt8], response: SourceResponse)] = []
        for job in jobs {
            let request = try adapters.request(for: job)
            var fetch = FetchRequest(
                url: request.url,
                headers: request.headers.map { HTTPHeader(name: $0.name, value: $0.value) },
                purpose: .api
            )
            fetch.isConditional = false
            let response = try await fetcher.fetch(fetch)
            answers.append(
                (
                    job.encoded(),
                    SourceResponse(
                        status: response.status,
                        headers: response.headers.map { ($0.name, $0.value) },
                        body: response.body
                    )
                )
            )
        }
        await fetcher.shutdown()
        var outputs = 0
        var bytes = 0
        let start = Progress.cpuTime()
        for _ in 0..<self.repeat {
            for answer in answers {
                let job = try FetchJob.decode(answer.payload)
                let result = try adapters.parse(answer.response, for: job, fetchedAt: 1_700_000_000_000)
                for output in FetchHandler.outputs(result) {
                    outputs += 1
                    bytes += output.payload.count
                }
            }
        }
        let cpu = Progress.cpuTime() - start
        let runs = Double(self.repeat * answers.count)
        print(
            "cpu_us_per_job=\(String(format2: cpu.seconds * 1e6 / runs)) jobs=\(answers.count) repeat=\(self.repeat) "
                + "outputs_per_job=\(String(format2: Double(outputs) / runs)) output_bytes_per_job=\(Int(Double(bytes) / runs))"
        )
    }
}

/// Seeding and running the fetch stage as marquee-fetch runs it.
enum BenchStage {
    /// The topics of a run: the fetch stage (one retry tier), its outputs, and a sink for follow-up fetch jobs.
    static func topics(prefix: String) -> [StageTopics] {
        [
            StageTopics(stage: "fetch", prefix: prefix, tiers: 1),
            StageTopics(stage: "records", prefix: prefix, tiers: 0),
            StageTopics(stage: "images", prefix: prefix, tiers: 0),
            StageTopics(stage: SinkHandler.followUpStage, prefix: prefix, tiers: 0),
        ]
    }

    /// Creates the run's topics and enqueues `jobs` on its fetch topic, as `marquee enqueue` does (root envelopes,
    /// keyed by the job's dedupe key).
    static func seed(_ jobs: [FetchJob], options: Options) async throws {
        let admin = try KafkaAdmin(configuration: options.kafka, logger: options.logger)
        _ = try await StageTopics.createAll(
            Self.topics(prefix: options.prefix),
            partitions: options.partitions,
            admin: admin
        )
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(kafka: options.kafka),
            logger: options.logger
        )
        let messages = jobs.map { job in
            KafkaProducerMessage(
                topic: "\(options.prefix)fetch",
                key: Array(job.dedupeKey.utf8),
                value: job.encoded(),
                headers: Envelope.root().kafkaHeaders
            )
        }
        do {
            try await producer.deliver(messages)
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
    }

    /// Runs a fetch stage (the worker's handler, HTTP client and stage runtime) while `body` runs, then shuts it
    /// down gracefully.
    ///
    /// - Parameter rate: The client's limit for TMDB in requests per second (burst 1); `nil` for limits off.
    static func run(
        sources: SourceConfiguration,
        rate: Double?,
        progress: Progress,
        dropsOutputs: Bool = false,
        options: Options,
        _ body: () async throws -> Void
    ) async throws {
        var http = HTTPFetcherConfiguration()
        http.allowsPrivateAddresses = true
        // Limits off but for concurrency: at most `concurrency` requests in flight to the upstream (marquee-fetch's
        // --per-source-concurrency) over as many connections, while the stage may hold more jobs (parsing, or
        // waiting for the broker's acknowledgement of their outputs), as marquee-fetch does.
        http.maxConnectionsPerHost = options.concurrency
        http.maxTotalConnections = max(http.maxTotalConnections, options.concurrency)
        http.hostLimits[Source.tmdb.rawValue] = HostLimit(
            requestsPerSecond: rate ?? .infinity,
            burst: 1,
            maxConcurrent: options.concurrency
        )
        let worker = try FetchWorker(
            settings: FetchWorkerSettings(sources: sources, http: http),
            logger: options.logger
        )

        var configuration = StageConfiguration(
            stage: "fetch",
            kafka: options.kafka,
            prefix: options.prefix,
            retry: RetryPolicy(delays: [.seconds(1)])
        )
        configuration.groupID = "\(options.prefix)fetch"
        configuration.concurrency = options.stageConcurrency ?? 6 * options.concurrency
        configuration.consumer = { consumer in
            consumer.sessionTimeout = .seconds(6)
            consumer.heartbeatInterval = .seconds(1)
        }
        configuration.onJobFinished = { report in progress.finished(report.outcome, duration: report.duration) }
        // Each job's `job.outcome` record, as marquee-fetch sends it (WorkerOptions.stageConfiguration): one message
        // more per job, in the same delivery as its outputs. Not with --drop-outputs, which measures without the
        // producer.
        configuration.outcomeStage = dropsOutputs ? nil : "records"
        let (lingerMs, batchMessages, compression) = (options.lingerMs, options.batchMessages, options.compression)
        configuration.producer = { producer in
            producer.linger = lingerMs.map { .milliseconds($0) } ?? FetchWorker.producerLinger
            if let batchMessages { producer.batchMessages = batchMessages }
            producer.compression = compression ?? FetchWorker.producerCompression
        }
        let stage = Stage(
            configuration: configuration,
            handler: SinkHandler(inner: worker.handler, progress: progress, dropsOutputs: dropsOutputs),
            logger: options.logger
        )
        // The stage is last: a group stops its services in reverse order, so the HTTP client outlives the jobs.
        let group = ServiceGroup(services: [worker, stage], logger: options.logger)
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                do {
                    try await body()
                } catch {
                    await group.triggerGracefulShutdown()
                    throw error
                }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        } catch {
            await Self.deleteTopics(options: options)
            throw error
        }
        await Self.deleteTopics(options: options)
    }

    /// Deletes the run's topics, so the next run (the next round of make bench-fetch) meets the broker as this one
    /// did: the local broker slows down as topics and messages pile up, and only the worker's side of the
    /// comparison uses it (BENCHMARKS.md). `--keep-topics` leaves them, to look at.
    static func deleteTopics(options: Options) async {
        guard !options.keepTopics else { return }
        do {
            let admin = try KafkaAdmin(configuration: options.kafka, logger: options.logger)
            try await admin.deleteTopics(Self.topics(prefix: options.prefix).flatMap(\.all))
        } catch {
            options.logger.warning("could not delete the run's topics", metadata: ["error": "\(error)"])
        }
    }
}

/// The fetch handler, noting when the first job started, with follow-up fetch jobs sent to a topic this stage does
/// not read (so N jobs stay N jobs; producing them costs the same).
struct SinkHandler: StageHandler {
    static let followUpStage = "followups"
    let inner: FetchHandler
    let progress: Progress
    let dropsOutputs: Bool

    func handle(_ job: StageJob) async throws -> [StageOutput] {
        self.progress.started()
        let start = ContinuousClock.now
        var outputs = try await self.inner.handle(job)
        self.progress.handled(.now - start)
        if self.dropsOutputs { return [] }
        for index in outputs.indices where outputs[index].stage == "fetch" {
            outputs[index].stage = Self.followUpStage
        }
        return outputs
    }
}

extension Duration {
    var seconds: Double { Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18 }
}

extension String {
    /// Two decimals, without Foundation's `String(format:)`.
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = abs(hundredths % 100)
        self = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
