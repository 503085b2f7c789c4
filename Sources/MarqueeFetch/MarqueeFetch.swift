import ArgumentParser
// Linked, not called: jemalloc becomes the process's malloc (docs/fetch.md, "Memory allocator").
import Cjemalloc
import Logging
import MarqueeCore
import MarqueeFetchStage
import MarqueeHTTP
import MarqueeKafka
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

            A source answering 401/403 (or without a key) pauses the stage: /readyz names the source and the \
            variable to fix, and the stage tries again by itself with a growing backoff.

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
            "Requests per second per source, as source=rate, comma-separated (0 = no limit).",
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
            "The KOFIC key's daily call budget (0 = none): when spent, KOFIC jobs wait in the retry tiers.",
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

    @Option(help: ArgumentHelp("The store holding the shared validator cache (with --validator-cache store).", discussion: "Env: MARQUEE_STORE."))
    var store: String = Self.environment["MARQUEE_STORE"] ?? StoreLocation.defaultValue

    func validate() throws {
        guard ["memory", "store"].contains(self.validatorCache) else {
            throw ValidationError("--validator-cache must be memory or store, not '\(self.validatorCache)'")
        }
        if self.validatorCache == "store" {
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
        let logger = WorkerRunner.bootstrapLogging(label: "marquee.fetch", level: self.worker.logLevel)
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
        for (source, rate) in try FetchWorkerSettings.parseRateLimits(self.rateLimits) {
            http.hostLimits[source.rawValue] = HostLimit(
                requestsPerSecond: rate,
                burst: max(1, Int(rate.rounded(.up))),
                maxConcurrent: self.perSourceConcurrency
            )
        }
        var settings = FetchWorkerSettings(
            sources: sources,
            http: http,
            koficDailyBudget: self.koficDailyBudget == 0 ? nil : self.koficDailyBudget
        )
        var store: Store?
        if self.validatorCache == "store" {
            let opened = try Store.open(try StoreLocation(parsing: self.store), maximumConnections: 2, logger: logger)
            settings.validatorCache = StoreValidatorCache(store: opened, logger: logger)
            store = opened
        }
        let metrics = StageMetrics(stage: "fetch")
        settings.onResponse = { source, status in metrics.recordHTTPResponse(source: source, status: status) }
        let worker = try FetchWorker(settings: settings, logger: logger)
        // Six jobs for each of a source's 16 requests in flight: a job spends most of its time after its call,
        // waiting for its outputs' acknowledgement (docs/fetch.md, "Jobs in flight").
        var configuration = try self.worker.stageConfiguration(stage: "fetch", defaultConcurrency: 96)
        // Batches of outputs filled for longer than other stages wait, and compressed (docs/fetch.md, "Producer
        // batching and compression"); `-X linger.ms=…` or `-X compression.codec=…` given to the worker still wins
        // (raw properties are applied last).
        configuration.producer = { producer in
            producer.linger = FetchWorker.producerLinger
            producer.compression = FetchWorker.producerCompression
        }
        try await WorkerRunner.run(
            configuration: configuration,
            handler: worker.handler,
            metricsAddress: try self.worker.parsedMetricsAddress(defaultPort: 9101),
            services: [worker],
            metrics: metrics,
            logger: logger,
            whenStopped: { [store] in await store?.close() }
        )
    }
}
