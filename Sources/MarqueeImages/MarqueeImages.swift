import ArgumentParser
import Logging
import MarqueeHTTP
import MarqueeObservability
import MarqueeImageStage
import MarqueeImageStore
import MarqueeImaging
import MarqueeLimits
import MarqueePipeline
import MarqueeStore
import MarqueeWorker

import class Foundation.ProcessInfo

/// `marquee-images`: the image worker (DESIGN §5). Wiring only; the logic is in MarqueeImageStage.
@main
struct MarqueeImages: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee-images",
        abstract: "Image worker: downloads posters and covers, writes their variants to the image store, emits image records.",
        discussion: """
            The image store is MARQUEE_IMAGE_STORE: file://./var/images (default) or \
            s3://bucket/prefix?endpoint=…&region=… with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or *_FILE). \
            Unsafe inputs (SVG, HTML, unknown types, decompression bombs, truncated files) are refused before \
            decoding and dead-lettered with the reason; an unreachable store pauses the stage.

            Examples:
              marquee-images
              MARQUEE_IMAGE_WIDTHS=185,342 MARQUEE_WEBP_QUALITY=75 marquee-images --concurrency 4
              MARQUEE_IMAGE_STORE='s3://posters/marquee?endpoint=http://127.0.0.1:9000&region=us-east-1' marquee-images
            """
    )

    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    @OptionGroup var worker: WorkerOptions

    @Option(help: ArgumentHelp("Where variants are stored.", discussion: "Env: MARQUEE_IMAGE_STORE."))
    var imageStore: String = Self.environment["MARQUEE_IMAGE_STORE"] ?? "file://./var/images"

    @Option(help: ArgumentHelp("Variant widths in pixels, comma-separated (never upscaled).", discussion: "Env: MARQUEE_IMAGE_WIDTHS."))
    var widths: String = Self.environment["MARQUEE_IMAGE_WIDTHS"] ?? "92,185,342,500"

    @Option(help: ArgumentHelp("WebP quality, 1–100.", discussion: "Env: MARQUEE_WEBP_QUALITY."))
    var webpQuality: Int = Self.environment["MARQUEE_WEBP_QUALITY"].flatMap { Int($0) } ?? 80

    @Option(help: ArgumentHelp("Largest download in bytes.", discussion: "Env: MARQUEE_IMAGE_MAX_BYTES."))
    var maxBytes: Int = Self.environment["MARQUEE_IMAGE_MAX_BYTES"].flatMap { Int($0) } ?? 20 * 1024 * 1024

    @Option(help: ArgumentHelp("Largest image in pixels (width × height), checked from the header before decoding.", discussion: "Env: MARQUEE_IMAGE_MAX_PIXELS."))
    var maxPixels: Int = Self.environment["MARQUEE_IMAGE_MAX_PIXELS"].flatMap { Int($0) } ?? 50_000_000

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp("Download originals instead of the smallest rendition covering the largest width.", discussion: "Env: MARQUEE_IMAGE_ORIGINALS=1.")
    )
    var originals = Self.environment["MARQUEE_IMAGE_ORIGINALS"] == "1"

    @Option(
        help: ArgumentHelp(
            "Image hosts allowed, comma-separated (exact hosts or *.suffix; empty: the real image hosts).",
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
            "Downloads per second per image host for the whole pipeline, as host=rate, comma-separated (none by default).",
            discussion: "Env: MARQUEE_IMAGE_RATE_LIMITS. Shared by every image worker on MARQUEE_STORE (docs/limits.md)."
        )
    )
    var rateLimits: String = Self.environment["MARQUEE_IMAGE_RATE_LIMITS"] ?? ""

    @Option(
        help: ArgumentHelp(
            "Where the rate limits are held: store (shared by every image worker on MARQUEE_STORE) or local (this process alone).",
            discussion: "Env: MARQUEE_SHARED_LIMITS."
        )
    )
    var sharedLimits: String = Self.environment["MARQUEE_SHARED_LIMITS"] ?? "store"

    @Option(help: ArgumentHelp("The store holding the shared rate limits (with --rate-limits and --shared-limits store).", discussion: "Env: MARQUEE_STORE."))
    var store: String = Self.environment["MARQUEE_STORE"] ?? StoreLocation.defaultValue

    func validate() throws {
        do {
            _ = try ImageLimits.parse(self.rateLimits)
        } catch {
            throw ValidationError("--rate-limits: \(error)")
        }
        guard ["store", "local"].contains(self.sharedLimits) else {
            throw ValidationError("--shared-limits must be store or local, not '\(self.sharedLimits)'")
        }
        if self.sharedLimits == "store" {
            do {
                _ = try StoreLocation(parsing: self.store)
            } catch {
                throw ValidationError("--store: \(error.message)")
            }
        }
        _ = try self.parsedWidths()
        guard (1...100).contains(self.webpQuality) else { throw ValidationError("--webp-quality must be 1…100") }
        guard self.maxBytes > 0, self.maxPixels > 0 else { throw ValidationError("--max-bytes and --max-pixels must be positive") }
    }

    func parsedWidths() throws -> [Int] {
        let widths = self.widths.split(separator: ",").map { Int($0.filter { !$0.isWhitespace }) }
        guard !widths.isEmpty, widths.allSatisfy({ ($0 ?? 0) > 0 && ($0 ?? 0) <= 4000 }) else {
            throw ValidationError("--widths: '\(self.widths)' is not a list of widths between 1 and 4000")
        }
        return widths.compactMap { $0 }
    }

    func run() async throws {
        let common = try self.worker.resolvedForRun(executable: "marquee-images")
        let logger = WorkerRunner.bootstrapLogging(label: "marquee.images", level: common.logLevel)
        var imaging = ImagingConfiguration()
        imaging.widths = try self.parsedWidths()
        imaging.webpQuality = self.webpQuality
        imaging.maxBytes = self.maxBytes
        imaging.maxPixels = self.maxPixels
        var http = HTTPFetcherConfiguration()
        http.allowsPrivateAddresses = self.allowPrivateAddresses
        if !self.imageHosts.isEmpty {
            http.imageHostAllowlist = self.imageHosts.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }
        }
        var settings = ImageWorkerSettings(imaging: imaging, http: http, storeLocation: self.imageStore)
        settings.handler.prefersOriginals = self.originals
        settings.rateLimits = try ImageLimits.parse(self.rateLimits)
        var coordinationStore: Store?
        if !settings.rateLimits.isEmpty, self.sharedLimits == "store" {
            let opened = try Store.open(
                try StoreLocation(parsing: self.store), maximumConnections: 2, timeout: common.storeDeadline, logger: logger
            )
            settings.coordination = StoreCoordination(store: opened)
            coordinationStore = opened
        }
        let sessionTimeout = common.sessionTimeout
        settings.limitsTuning = { $0.memberExpiry = sessionTimeout }
        let metrics = StageMetrics(stage: "images")
        settings.handler.onBytes = { direction, count in metrics.recordImageBytes(direction: direction, count: count) }
        let worker = try ImageWorker(settings: settings, environment: Self.environment, logger: logger)
        var configuration = common.stageConfiguration(stage: "images", defaultConcurrency: 4)
        configuration.keepOversized = { name, bytes in try await worker.keepOversized(name: name, bytes: bytes) }
        try await WorkerRunner.run(
            configuration: configuration,
            handler: worker.handler,
            metricsAddress: common.metricsAddress(defaultPort: 9102),
            services: [worker],
            metrics: metrics,
            logger: logger,
            whenStopped: { [coordinationStore] in await coordinationStore?.close() }
        )
    }
}
