import ArgumentParser
import Logging
import MarqueeHTTP
import MarqueeImageStage
import MarqueeImageStore
import MarqueeImaging
import MarqueeLimits
import MarqueeObservability
import MarqueePipeline
import MarqueeSettings
import MarqueeStore
import MarqueeWorker

/// `marquee-images`: the image worker (docs/design.md, "Executables"). Wiring only; the logic is in MarqueeImageStage.
@main
struct MarqueeImages: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee-images",
        abstract:
            "Image worker: downloads posters and covers, writes their variants to the image store, emits image records.",
        discussion: """
            The image store is MARQUEE_IMAGE_STORE: file://./var/images (default) or \
            s3://bucket/prefix?endpoint=…&region=… with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or *_FILE). \
            Unsafe inputs (SVG, HTML, unknown types, decompression bombs, truncated files) are refused before \
            decoding and dead-lettered with the reason; an unreachable store pauses the stage. A URL downloaded \
            before is revalidated with its ETag/Last-Modified (a 304 downloads nothing); --validator-cache store \
            keeps them in MARQUEE_STORE for every image worker.

            Examples:
              marquee-images
              MARQUEE_IMAGE_WIDTHS=185,342 MARQUEE_WEBP_QUALITY=75 marquee-images --concurrency 4
              MARQUEE_IMAGE_STORE='s3://posters/marquee?endpoint=http://127.0.0.1:9000&region=us-east-1' marquee-images
            """
    )

    @OptionGroup var worker: WorkerOptions

    @Option(help: ArgumentHelp(Catalogue.imageStore))
    var imageStore: String?

    @Option(help: ArgumentHelp(Catalogue.imageWidths))
    var widths: String?

    @Option(help: ArgumentHelp(Catalogue.webpQuality))
    var webpQuality: String?

    @Option(help: ArgumentHelp(Catalogue.imageMaxBytes))
    var maxBytes: String?

    @Option(help: ArgumentHelp(Catalogue.imageMaxPixels))
    var maxPixels: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(Catalogue.imageOriginals))
    var originals: Bool?

    @Option(help: ArgumentHelp(Catalogue.imageHosts))
    var imageHosts: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(Catalogue.allowPrivateAddresses))
    var allowPrivateAddresses: Bool?

    @Option(help: ArgumentHelp(Catalogue.imageRateLimits))
    var rateLimits: String?

    @Option(help: ArgumentHelp(Catalogue.sharedLimits))
    var sharedLimits: String?

    @Option(help: ArgumentHelp(Catalogue.validatorCache))
    var validatorCache: String?

    @Option(
        help: ArgumentHelp(
            Catalogue.store,
            more: "Read with --rate-limits and --shared-limits store, or --validator-cache store."
        )
    )
    var store: String?

    /// This executable's own flags, by setting name.
    var flags: [String: String] {
        Settings.flags([
            (Catalogue.imageStore, self.imageStore), (Catalogue.imageWidths, self.widths),
            (Catalogue.webpQuality, self.webpQuality), (Catalogue.imageMaxBytes, self.maxBytes),
            (Catalogue.imageMaxPixels, self.maxPixels),
            (Catalogue.imageOriginals, self.originals.map { $0 ? "1" : "0" }),
            (Catalogue.imageHosts, self.imageHosts),
            (Catalogue.allowPrivateAddresses, self.allowPrivateAddresses.map { $0 ? "1" : "0" }),
            (Catalogue.imageRateLimits, self.rateLimits), (Catalogue.sharedLimits, self.sharedLimits),
            (Catalogue.store, self.store), (Catalogue.validatorCache, self.validatorCache),
        ])
    }

    func validate() throws {
        try WorkerOptions.validate(flags: self.flags, of: Catalogue.imageWorker)
    }

    func run() async throws {
        let common = try self.worker.resolvedForRun(
            executable: "marquee-images",
            more: Catalogue.imageWorker,
            flags: self.flags
        )
        let logger = WorkerRunner.bootstrapLogging(label: "marquee.images", level: common.logLevel)
        let read = common.settings
        var (settings, sharedLimits, validatorCache, location, environment) =
            try ConfigFileOptions.exitingOnSettingError(
                executable: "marquee-images"
            ) { () throws(SettingError) in
                var imaging = ImagingConfiguration()
                imaging.widths = try read.value(Catalogue.imageWidths)
                imaging.webpQuality = try read.value(Catalogue.webpQuality)
                imaging.maxBytes = try read.value(Catalogue.imageMaxBytes)
                imaging.maxPixels = try read.value(Catalogue.imageMaxPixels)
                var http = HTTPFetcherConfiguration()
                http.allowsPrivateAddresses = try read.value(Catalogue.allowPrivateAddresses)
                let hosts = try read.value(Catalogue.imageHosts)
                if !hosts.isEmpty { http.imageHostAllowlist = hosts }
                var settings = ImageWorkerSettings(
                    imaging: imaging,
                    http: http,
                    storeLocation: try read.value(Catalogue.imageStore)
                )
                settings.handler.prefersOriginals = try read.value(Catalogue.imageOriginals)
                settings.rateLimits = try read.value(Catalogue.imageRateLimits) { rates in
                    rates.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { (host: $0.key, rate: $0.value) }
                }
                return (
                    settings, try read.value(Catalogue.sharedLimits), try read.value(Catalogue.validatorCache),
                    try read.value(Catalogue.store) { try StoreLocation(parsing: $0) },
                    try read.texts(Catalogue.aws)
                )
            }
        var coordinationStore: Store?
        let sharesLimits = !settings.rateLimits.isEmpty && sharedLimits == "store"
        if sharesLimits || validatorCache == "store" {
            coordinationStore = try Store.open(
                location,
                maximumConnections: 2,
                timeout: common.storeDeadline,
                logger: logger
            )
        }
        if sharesLimits, let store = coordinationStore { settings.coordination = StoreCoordination(store: store) }
        if validatorCache == "store", let store = coordinationStore {
            settings.validatorCache = StoreValidatorCache(store: store, logger: logger)
        } else {
            settings.validatorCache = InMemoryValidatorCache()
        }
        let sessionTimeout = common.sessionTimeout
        settings.limitsTuning = { $0.memberExpiry = sessionTimeout }
        let metrics = StageMetrics(stage: "images")
        settings.handler.onBytes = { direction, count in metrics.recordImageBytes(direction: direction, count: count) }
        settings.handler.onDownload = { result in metrics.recordImageDownload(result: result) }
        let worker = try ImageWorker(settings: settings, environment: environment, logger: logger)
        var configuration = common.stageConfiguration(stage: "images", defaultConcurrency: 4)
        configuration.keepOversized = { name, bytes in try await worker.keepOversized(name: name, bytes: bytes) }
        try await WorkerRunner.run(
            configuration: configuration,
            handler: worker.handler,
            metricsAddress: common.metricsAddress(defaultPort: 9102),
            // The store the limits and validators share stops last, after the worker's services.
            services: (coordinationStore.map { [$0] } ?? []) + worker.services,
            metrics: metrics,
            logger: logger
        )
    }
}
