public import Logging
public import MarqueeHTTP
import MarqueeImageStore
public import MarqueeImaging
public import ServiceLifecycle

/// What an image worker needs besides the stage's own settings.
public struct ImageWorkerSettings: Sendable {
    public var imaging: ImagingConfiguration
    public var http: HTTPFetcherConfiguration
    /// `file://…` or `s3://bucket/prefix?endpoint=…&region=…` (docs/image-store.md).
    public var storeLocation: String
    public var handler = ImageHandler.Configuration()

    public init(imaging: ImagingConfiguration, http: HTTPFetcherConfiguration, storeLocation: String) {
        self.imaging = imaging
        self.http = http
        self.storeLocation = storeLocation
    }
}

/// The image worker's parts: the HTTP client, the image processor and the store (services that stop after the
/// stage), and the handler.
public final class ImageWorker: Service, Sendable {
    public let handler: ImageHandler
    private let fetcher: HTTPFetcher
    private let processor: ImageProcessor

    /// - Parameters:
    ///   - environment: Where the S3 store finds its credentials.
    public init(settings: ImageWorkerSettings, environment: [String: String], logger: Logger) throws {
        try ImageProcessor.globalInit()
        var http = settings.http
        http.maxBodyBytes = max(http.maxBodyBytes, settings.imaging.maxBytes)
        self.fetcher = try HTTPFetcher(configuration: http, logger: logger)
        self.processor = try ImageProcessor(configuration: settings.imaging)
        let store = try ImageStores.make(location: settings.storeLocation, environment: environment, fetcher: self.fetcher, logger: logger)
        self.handler = ImageHandler(
            configuration: settings.handler,
            fetcher: self.fetcher,
            processor: self.processor,
            imaging: settings.imaging,
            store: store,
            logger: logger
        )
    }

    /// Keeps the HTTP client and the processor until graceful shutdown (after the stage stopped).
    public func run() async throws {
        try? await gracefulShutdown()
        await self.processor.shutdown()
        await self.fetcher.shutdown()
    }
}
