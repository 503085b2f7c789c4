public import Logging
public import MarqueeHTTP
import MarqueeImageStore
public import MarqueeImaging
public import MarqueeLimits
public import ServiceLifecycle

/// What an image worker needs besides the stage's own settings.
public struct ImageWorkerSettings: Sendable {
    public var imaging: ImagingConfiguration
    public var http: HTTPFetcherConfiguration
    /// `file://…` or `s3://bucket/prefix?endpoint=…&region=…` (docs/image-store.md).
    public var storeLocation: String
    public var handler = ImageHandler.Configuration()
    /// Requests per second per image host for the whole pipeline (``ImageLimits``). Default: none.
    public var rateLimits: [(host: String, rate: Double)] = []
    /// Where the limits are shared with the other image workers (the store); `nil` for this process alone.
    public var coordination: (any Coordination)? = nil
    /// The rest of the limits' settings (member expiry, probe interval).
    public var limitsTuning: (@Sendable (inout SourceLimitsConfiguration) -> Void)? = nil
    /// Where each image URL's validators are kept for revalidation (``StoreValidatorCache``: shared by every image
    /// worker on the store); `nil` downloads every image in full. Default: `nil`.
    public var validatorCache: (any ValidatorCache)? = nil

    public init(imaging: ImagingConfiguration, http: HTTPFetcherConfiguration, storeLocation: String) {
        self.imaging = imaging
        self.http = http
        self.storeLocation = storeLocation
    }
}

/// The image worker's parts: the HTTP client, the image processor and the limits (services that stop after the
/// stage, in ``services``), the image store, and the handler.
public final class ImageWorker: Service, Sendable {
    public let handler: ImageHandler
    /// The image hosts' limits; `nil` when none is configured.
    public let limits: SourceLimits?
    private let fetcher: HTTPFetcher
    private let processor: ImageProcessor
    private let store: any ImageStore

    /// - Parameters:
    ///   - environment: Where the S3 store finds its credentials.
    public init(settings: ImageWorkerSettings, environment: [String: String], logger: Logger) throws {
        try ImageProcessor.globalInit()
        var http = settings.http
        http.maxBodyBytes = max(http.maxBodyBytes, settings.imaging.maxBytes)
        self.fetcher = try HTTPFetcher(configuration: http, logger: logger)
        self.processor = try ImageProcessor(configuration: settings.imaging)
        let store = try ImageStores.make(
            location: settings.storeLocation,
            environment: environment,
            fetcher: self.fetcher,
            logger: logger
        )
        self.store = store
        if settings.rateLimits.isEmpty {
            self.limits = nil
        } else {
            var limits = SourceLimitsConfiguration(
                limits: ImageLimits.sourceLimits(settings.rateLimits),
                stage: "images",
                member: SourceLimitsConfiguration.memberName(stage: "images"),
                host: SourceLimitsConfiguration.hostName
            )
            settings.limitsTuning?(&limits)
            self.limits = SourceLimits(
                configuration: limits,
                coordination: settings.coordination ?? LocalCoordination(),
                logger: logger
            )
        }
        self.handler = ImageHandler(
            configuration: settings.handler,
            fetcher: self.fetcher,
            processor: self.processor,
            imaging: settings.imaging,
            store: store,
            limits: self.limits,
            validators: settings.validatorCache,
            logger: logger
        )
    }

    /// Keeps the whole original of a dead letter too large for its topic in the image store, beside the images
    /// (``ImageKey/deadLetter(_:)``), and returns its URL: the stage's ``StageConfiguration/keepOversized``.
    public func keepOversized(name: String, bytes: [UInt8]) async throws -> String {
        guard let key = ImageKey.deadLetter(name) else {
            throw ImageStoreError(
                code: .invalidLocation,
                reason: "'\(name)' is not a dead letter's name (dlq/<topic>/<partition>/<offset>)"
            )
        }
        try await self.store.put(key, bytes, contentType: "application/octet-stream")
        return self.store.url(for: key)
    }

    /// The services the handler needs, in the order a `ServiceGroup` starts them: the HTTP client, the processor,
    /// then the limits (``run()``), so they stop in the opposite order after the stage.
    public var services: [any Service] { [self.fetcher, self.processor, self] }

    /// Runs the limits (when configured) until graceful shutdown (after the stage stopped); then leaves the
    /// limits' members.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            if let limits = self.limits { group.addTask { await limits.run() } }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        await self.limits?.close()
    }
}
