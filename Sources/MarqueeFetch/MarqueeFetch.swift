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
import MarqueeSettings
import MarqueeSources
import MarqueeStore
import MarqueeWorker

/// `marquee-fetch`: the fetch worker (docs/design.md, "Executables"). Wiring only; the logic is in MarqueeFetchStage.
@main
struct MarqueeFetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee-fetch",
        abstract:
            "Fetch worker: consumes fetch jobs, calls the upstream APIs, emits records, image jobs and follow-ups.",
        discussion: """
            Upstreams and keys come from the environment (docs/design.md, "Configuration"): TMDB_API_KEY, TMDB_BASE_URL, \
            TMDB_IMAGE_BASE_URL, KOFIC_API_KEY, KOFIC_BASE_URL, KAKAO_REST_API_KEY, KAKAO_BASE_URL, \
            OPENLIBRARY_BASE_URL, OPENLIBRARY_COVERS_BASE_URL. A key may also come from a file: TMDB_API_KEY_FILE \
            and so on. Keys never appear in logs, errors, headers or metrics.

            Signed-in TMDB users (tmdb.account jobs) are read with their sessions, secrets like the keys: \
            TMDB_SESSION_ID (or TMDB_SESSION_ID_FILE) for the account TMDB_ACCOUNT labels (default "default"), or \
            TMDB_SESSIONS (or TMDB_SESSIONS_FILE), label=session pairs. Jobs name an account by its label only; a \
            refused session pauses that account's jobs, not TMDB's.

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

    @OptionGroup var worker: WorkerOptions

    @Option(help: ArgumentHelp(Catalogue.fetchRateLimits))
    var rateLimits: String?

    @Option(help: ArgumentHelp(Catalogue.perSourceConcurrency))
    var perSourceConcurrency: String?

    @Option(help: ArgumentHelp(Catalogue.koficDailyBudget))
    var koficDailyBudget: String?

    @Option(help: ArgumentHelp(Catalogue.imageHosts))
    var imageHosts: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(Catalogue.allowPrivateAddresses))
    var allowPrivateAddresses: Bool?

    @Option(help: ArgumentHelp(Catalogue.validatorCache))
    var validatorCache: String?

    @Option(help: ArgumentHelp(Catalogue.sharedLimits))
    var sharedLimits: String?

    @Option(help: ArgumentHelp(Catalogue.probeInterval))
    var probeInterval: String?

    @Option(help: ArgumentHelp(Catalogue.store, more: "Read with --shared-limits store or --validator-cache store."))
    var store: String?

    /// This executable's own flags, by setting name.
    var flags: [String: String] {
        Settings.flags([
            (Catalogue.fetchRateLimits, self.rateLimits), (Catalogue.perSourceConcurrency, self.perSourceConcurrency),
            (Catalogue.koficDailyBudget, self.koficDailyBudget), (Catalogue.imageHosts, self.imageHosts),
            (Catalogue.allowPrivateAddresses, self.allowPrivateAddresses.map { $0 ? "1" : "0" }),
            (Catalogue.validatorCache, self.validatorCache), (Catalogue.sharedLimits, self.sharedLimits),
            (Catalogue.probeInterval, self.probeInterval), (Catalogue.store, self.store),
        ])
    }

    func validate() throws {
        try WorkerOptions.validate(flags: self.flags, of: Catalogue.fetchWorker)
    }

    func run() async throws {
        let common = try self.worker.resolvedForRun(
            executable: "marquee-fetch",
            more: Catalogue.fetchWorker,
            flags: self.flags
        )
        let logger = WorkerRunner.bootstrapLogging(label: "marquee.fetch", level: common.logLevel)
        let read = common.settings
        var settings = try ConfigFileOptions.exitingOnSettingError(executable: "marquee-fetch") {
            () throws(SettingError) in
            var http = HTTPFetcherConfiguration()
            http.allowsPrivateAddresses = try read.value(Catalogue.allowPrivateAddresses)
            let hosts = try read.value(Catalogue.imageHosts)
            if !hosts.isEmpty { http.imageHostAllowlist = hosts }
            // The rates are the shared limits' (MarqueeLimits); the HTTP client only bounds each source's requests
            // in flight.
            let perSource = try read.value(Catalogue.perSourceConcurrency)
            for source in Source.allCases {
                http.hostLimits[source.rawValue] = HostLimit(
                    requestsPerSecond: .infinity,
                    burst: 1,
                    maxConcurrent: perSource
                )
            }
            let budget = try read.value(Catalogue.koficDailyBudget)
            let sources: SourceConfiguration
            do {
                sources = try SourceConfiguration.fromEnvironment(try read.texts(Catalogue.sources))
            } catch {
                throw SettingError("\(error)")
            }
            var settings = FetchWorkerSettings(
                sources: sources,
                http: http,
                koficDailyBudget: budget == 0 ? nil : budget
            )
            settings.rateLimits = try read.value(Catalogue.fetchRateLimits) { rates in
                Dictionary(
                    uniqueKeysWithValues: rates.compactMap { name, rate in
                        rate > 0 ? Source(rawValue: name).map { ($0, rate) } : nil
                    }
                )
            }
            return settings
        }
        let (validatorCache, sharedLimits, probeInterval, location) = try ConfigFileOptions.exitingOnSettingError(
            executable: "marquee-fetch"
        ) { () throws(SettingError) in
            (
                try read.value(Catalogue.validatorCache), try read.value(Catalogue.sharedLimits),
                try read.value(Catalogue.probeInterval),
                try read.value(Catalogue.store) { try StoreLocation(parsing: $0) }
            )
        }
        var store: Store?
        if validatorCache == "store" || sharedLimits == "store" {
            store = try Store.open(location, maximumConnections: 3, timeout: common.storeDeadline, logger: logger)
        }
        if validatorCache == "store", let store {
            settings.validatorCache = StoreValidatorCache(store: store, logger: logger)
        }
        if sharedLimits == "store", let store {
            settings.coordination = StoreCoordination(store: store)
        }
        let sessionTimeout = common.sessionTimeout
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
            case .budgetRemaining(let source, let remaining):
                metrics.setSourceBudgetRemaining(source: source, remaining)
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
            // The store (the limits' and validators') stops last, after the worker's services.
            services: (store.map { [$0] } ?? []) + worker.services,
            metrics: metrics,
            logger: logger
        )
    }
}
