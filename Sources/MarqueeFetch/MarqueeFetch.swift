import ArgumentParser
// Linked, not called: jemalloc becomes the process's malloc (docs/fetch.md, "Memory allocator").
import Cjemalloc
import Logging
import MarqueeCore
import MarqueeFetchStage
import MarqueeHTTP
import MarqueeKafka
import MarqueeLimits
import MarqueeObservability
import MarqueePipeline
import MarqueeSources
import MarqueeStore
import MarqueeWorker

import class Foundation.ProcessInfo

/// `marquee-fetch`: the fetch worker (DESIGN §5). Wiring only; the logic is in MarqueeFetchStage.
@main
struct MarqueeFetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee-fetch",
        abstract: "Fetch worker: consumes fetch jobs, calls the upstream APIs, emits records, image jobs and follow-ups.",
        discussion: """
            Upstreams and keys come from the environment (DESIGN §5): TMDB_API_KEY, TMDB_BASE_URL, \
            TMDB_IMAGE_BASE_URL, KOFIC_API_KEY, KOFIC_BASE_URL, KAKAO_REST_API_KEY, KAKAO_BASE_URL, \
            OPENLIBRARY_BASE_URL, OPENLIBRARY_COVERS_BASE_URL. A key may also come from a file: TMDB_API_KEY_FILE \
            and so on. Keys never appear in logs, errors, headers or metrics.

            The rate limits and the KOFIC budget are the whole pipeline's, not this process's: every fetch worker \
            on the same store (MARQUEE_STORE: SQLite on one machine, PostgreSQL across machines) takes its \
            requests from one schedule per source and key (docs/limits.md). A source answering 401/403, or failing \
            most of its requests for a while, is paused in every worker: its jobs wait in the retry tiers without \
            spending attempts, a probe tries it now and then, and the other sources go on. `marquee sources` shows \
            it all.

            Examples:
              TMDB_API_KEY_FILE=/run/secrets/tmdb KOFIC_API_KEY=… marquee-fetch
              MARQUEE_BROKERS=kafka:9092 marquee-fetch --concurrency 128 --metrics-address 0.0.0.0:9101
              TMDB_BASE_URL=http://127.0.0.1:8181/tmdb/3 MARQUEE_ALLOW_PRIVATE_ADDRESSES=1 marquee-fetch   # the emulator
            """
    )

    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    @OptionGroup var worker: WorkerOptions

    @Option(
        help: ArgumentHelp(
            "Requests per second per source for the whole pipeline, as source=rate, comma-separated (0 = no limit).",
            discussion: "Env: MARQUEE_FETCH_RATE_LIMITS."
        )
    )
    var rateLimits: String = Self.environment["MARQUEE_FETCH_RATE_LIMITS"] ?? "tmdb=40,kofic=10,kakao=10,openlibrary=1"

    @Option(
        help: ArgumentHelp(
            "Requests in flight at once per source.",
            discussion: "Env: MARQUEE_FETCH_PER_SOURCE_CONCURRENCY."
        )
    )
    var perSourceConcurrency: Int = Self.environment["MARQUEE_FETCH_PER_SOURCE_CONCURRENCY"].flatMap { Int($0) } ?? 16

    @Option(
        help: ArgumentHelp(
            "The KOFIC key's daily call budget for the whole pipeline (0 = none): when spent, KOFIC jobs wait in the retry tiers until midnight in Korea.",
            discussion: "Env: KOFIC_DAILY_BUDGET."
        )
    )
    var koficDailyBudget: Int = Self.environment["KOFIC_DAILY_BUDGET"].flatMap { Int($0) } ?? 3000

    @Option(
        help: ArgumentHelp(
            "Image hosts allowed in image jobs, comma-separated (exact hosts or *.suffix; empty: the real image hosts: image.tmdb.org, covers.openlibrary.org, Kakao's thumbnail CDNs).",
            discussion: "Env: MARQUEE_IMAGE_HOSTS."
        )
    )
    var imageHosts: String = Self.environment["MARQUEE_IMAGE_HOSTS"] ?? ""

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Allow image URLs that resolve to loopback or private addresses (for the local emulator only).",
            discussion: "Env: MARQUEE_ALLOW_PRIVATE_ADDRESSES=1."
        )
    )
    var allowPrivateAddresses = Self.environment["MARQUEE_ALLOW_PRIVATE_ADDRESSES"] == "1"

    @Option(
        help: ArgumentHelp(
            "Where ETag/Last-Modified validators are kept: memory (this process) or store (the shared cache in MARQUEE_STORE, kept across restarts and shared by workers).",
            discussion: "Env: MARQUEE_VALIDATOR_CACHE."
        )
    )
    var validatorCache: String = Self.environment["MARQUEE_VALIDATOR_CACHE"] ?? "memory"

    @Option(
        help: ArgumentHelp(
            "Where the limits are held: store (shared by every worker on MARQUEE_STORE) or local (this process alone: one worker only).",
            discussion: "Env: MARQUEE_SHARED_LIMITS."
        )
    )
    var sharedLimits: String = Self.environment["MARQUEE_SHARED_LIMITS"] ?? "store"

    @Option(
        help: ArgumentHelp(
            "How long a paused source waits before its first probe; it doubles after each failed probe, up to 12 times this.",
            discussion: "Env: MARQUEE_SOURCE_PROBE_INTERVAL."
        )
    )
    var probeInterval: String = Self.environment["MARQUEE_SOURCE_PROBE_INTERVAL"] ?? "5s"

    @Option(
        help: ArgumentHelp(
            "The store holding the shared limits (with --shared-limits store) and the validator cache (with --validator-cache store).",
            discussion: "Env: MARQUEE_STORE."
        )
    )
    var store: String = Self.environment["MARQUEE_STORE"] ?? StoreLocation.defaultValue

    func validate() throws {
        guard ["memory", "store"].contains(self.validatorCache) else {
            throw ValidationError("--validator-cache must be memory or store, not '\(self.validatorCache)'")
        }
        guard ["store", "local"].contains(self.sharedLimits) else {
            throw ValidationError("--shared-limits must be store or local, not '\(self.sharedLimits)'")
        }
        guard let probe = DurationText.parse(self.probeInterval), probe >= .milliseconds(100), probe <= .seconds(3600) else {
            throw ValidationError("--probe-interval: '\(self.probeInterval)' is not a duration between 100ms and 1h")
        }
        if self.validatorCache == "store" || self.sharedLimits == "store" {
            do {
                _ = try StoreLocation(parsing: self.store)
            } catch {
                throw ValidationError("--store: \(error.message)")
            }
        }
        _ = try FetchWorkerSettings.parseRateLimits(self.rateLimits)
        guard self.perSourceConcurrency >= 1 else { throw ValidationError("--per-source-concurrency must be at least 1") }
        guard self.koficDailyBudget >= 0 else { throw ValidationError("--kofic-daily-budget cannot be negative") }
    }

    func run() async throws {
        let common = try self.worker.resolvedForRun(executable: "marquee-fetch")
        let logger = WorkerRunner.bootstrapLogging(label: "marquee.fetch", level: common.logLevel)
        let sources: SourceConfiguration
        do {
            sources = try SourceConfiguration.fromEnvironment(Self.environment)
        } catch {
            throw ValidationError("\(error)")
        }
        var http = HTTPFetcherConfiguration()
        http.allowsPrivateAddresses = self.allowPrivateAddresses
        if !self.imageHosts.isEmpty {
            http.imageHostAllowlist = self.imageHosts.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }
        }
        // The rates are the shared limits' (MarqueeLimits); the HTTP client only bounds each source's requests in flight.
        for source in Source.allCases {
            http.hostLimits[source.rawValue] = HostLimit(requestsPerSecond: .infinity, burst: 1, maxConcurrent: self.perSourceConcurrency)
        }
        var settings = FetchWorkerSettings(
            sources: sources,
            http: http,
            koficDailyBudget: self.koficDailyBudget == 0 ? nil : self.koficDailyBudget
        )
        settings.rateLimits = Dictionary(try FetchWorkerSettings.parseRateLimits(self.rateLimits)) { _, last in last }
        var store: Store?
        if self.validatorCache == "store" || self.sharedLimits == "store" {
            store = try Store.open(
                try StoreLocation(parsing: self.store), maximumConnections: 3, timeout: common.storeDeadline, logger: logger
            )
        }
        if self.validatorCache == "store", let store {
            settings.validatorCache = StoreValidatorCache(store: store, logger: logger)
        }
        if self.sharedLimits == "store", let store {
            settings.coordination = StoreCoordination(store: store)
        }
        let sessionTimeout = common.sessionTimeout
        let probeInterval = DurationText.parse(self.probeInterval) ?? .seconds(5)
        settings.limitsTuning = { limits in
            limits.memberExpiry = sessionTimeout
            limits.probeInterval = probeInterval
            limits.probeIntervalMaximum = probeInterval * 12
        }
        let metrics = StageMetrics(stage: "fetch")
        settings.onResponse = { source, status in metrics.recordHTTPResponse(source: source, status: status) }
        settings.onLimitEvent = { event in
            switch event {
            case .admitted(let source, let waited): metrics.recordSourceRequest(source: source, waited: waited)
            case .throttled(let source): metrics.recordSourceThrottled(source: source)
            case .paused(let source, let paused): metrics.setSourcePaused(source: source, paused)
            case .budgetRemaining(let source, let remaining): metrics.setSourceBudgetRemaining(source: source, remaining)
            }
        }
        let worker = try FetchWorker(settings: settings, logger: logger)
        // Six jobs for each of a source's 16 requests in flight: a job spends most of its time after its call,
        // waiting for its outputs' acknowledgement (docs/fetch.md, "Jobs in flight").
        var configuration = common.stageConfiguration(stage: "fetch", defaultConcurrency: 96)
        // Batches of outputs filled for longer than other stages wait, and compressed (docs/fetch.md, "Producer
        // batching and compression"); `-X linger.ms=…` or `-X compression.codec=…` given to the worker still wins
        // (raw properties are applied last).
        let workerProducer = configuration.producer
        configuration.producer = { producer in
            workerProducer(&producer)
            producer.linger = FetchWorker.producerLinger
            producer.compression = FetchWorker.producerCompression
        }
        try await WorkerRunner.run(
            configuration: configuration,
            handler: worker.handler,
            metricsAddress: common.metricsAddress(defaultPort: 9101),
            services: [worker],
            metrics: metrics,
            logger: logger,
            whenStopped: { [store] in await store?.close() }
        )
    }
}
