public import Logging
import MarqueeCore
public import MarqueeHTTP
public import MarqueeImageStore
public import MarqueeImaging
public import MarqueeLimits
public import MarqueePipeline
import Synchronization

/// The image stage's handler: one image job → download (the smallest rendition that covers the largest
/// variant) → probe and refuse what is unsafe → decode once, write every variant → store them under the
/// SHA-256 of the downloaded bytes → one `image` record (docs/design.md, "Payloads"; docs/imaging.md).
///
/// | what happened | outcome |
/// |---|---|
/// | timeout, reset, 5xx, 429 while downloading | transient (a `Retry-After` is the minimum wait) |
/// | 404, other 4xx, a host off the allowlist or resolving to a private address, a body over the size cap | permanent |
/// | not an image we take (SVG, HTML, unknown magic), too many pixels, truncated or corrupt | permanent, with the reason |
/// | the image store is unreachable or refuses our credentials | the store is down: the stage pauses until it is back |
/// | the image host is paused for the pipeline (most of its downloads failing) | held: the job waits in a retry tier, no attempt spent |
///
/// A download from a host with a rate limit (`--rate-limits`) waits for its slot in the pipeline's schedule for
/// that host (``SourceLimits``, docs/limits.md), shared with every image worker on the same store.
///
/// The same bytes are processed and stored once: the variants and a manifest (what the record needs) live
/// under the content hash, and a job whose bytes are already stored reads the manifest instead of decoding.
/// Concurrent jobs for the same URL share one download and one processing.
public struct ImageHandler: StageHandler {
    /// Settings of the image stage beyond the stage runtime's.
    public struct Configuration: Sendable {
        /// Download originals instead of the smallest rendition that covers the largest variant. Default: false.
        public var prefersOriginals = false
        /// Keep the downloaded bytes in the store too (under `…/original`). Default: false.
        public var storesOriginals = false
        /// Told of image bytes moved: `in` downloaded, `out` written as variants (for metrics). Default: `nil`.
        public var onBytes: (@Sendable (_ direction: String, _ count: Int) -> Void)? = nil

        public init() {}
    }

    private let configuration: Configuration
    private let fetcher: HTTPFetcher
    private let processor: ImageProcessor
    private let imaging: ImagingConfiguration
    private let store: any ImageStore
    private let inFlight: SharedWork<String, ImageOutcome>
    private let limits: SourceLimits?
    private let logger: Logger

    /// - Parameter limits: The image hosts' rate limits and pauses, by host name; `nil` for none.
    public init(
        configuration: Configuration,
        fetcher: HTTPFetcher,
        processor: ImageProcessor,
        imaging: ImagingConfiguration,
        store: any ImageStore,
        limits: SourceLimits? = nil,
        logger: Logger
    ) {
        self.configuration = configuration
        self.limits = limits
        self.fetcher = fetcher
        self.processor = processor
        self.imaging = imaging
        self.store = store
        self.inFlight = SharedWork()
        self.logger = logger
    }

    public func handle(_ job: StageJob) async throws -> [StageOutput] {
        let imageJob: ImageJob
        do {
            imageJob = try ImageJob.decode(job.payload)
        } catch {
            throw StageError.poison(error)
        }
        let (url, rendition) = Rendition.pick(
            for: imageJob.url,
            largestWidth: self.imaging.widths.max() ?? 500,
            preferOriginal: self.configuration.prefersOriginals
        )
        // One download and one processing per URL at a time; every job waiting on it gets the same outcome.
        let outcome = try await self.inFlight.run(key: url) {
            try await self.stored(url: url, logger: job.logger)
        }
        let record = ImageRecord(
            job: imageJob,
            downloadedURL: url,
            rendition: rendition,
            outcome: outcome,
            store: self.store
        )
        .record(fetchedAt: Int64(JobID.nowMilliseconds()))
        return [StageOutput(stage: "records", key: record.dedupeKey, payload: record.encoded())]
    }

    /// Downloads `url`, and stores its variants unless these bytes are stored already; logs through `logger` (the
    /// job's that does the work).
    private func stored(url: String, logger: Logger) async throws -> ImageOutcome {
        let bytes = try await self.download(url)
        let hash = ContentHash.sha256Hex(bytes)
        let manifestKey = ImageKey.manifest(sha256: hash)
        do {
            if let manifest = try await self.store.get(manifestKey), let outcome = ImageOutcome(manifest: manifest) {
                // The same bytes were processed before: nothing new to store.
                logger.debug(
                    "image already stored",
                    metadata: ["marquee.image.sha256": "\(hash)", "marquee.url": "\(url)"]
                )
                return outcome
            }
        } catch {
            throw Self.storeDown(error)
        }
        let processed: ProcessedImage
        do {
            processed = try await self.processor.process(bytes)
        } catch {
            throw StageError.permanent(error.reason)
        }
        var variants: [ImageOutcome.Variant] = []
        do {
            if self.configuration.storesOriginals {
                try await self.store.put(
                    ImageKey.original(sha256: hash),
                    bytes,
                    contentType: processed.original.format.mediaType
                )
            }
            for variant in processed.variants {
                let key = ImageKey.variant(sha256: hash, width: variant.width, format: variant.encoding.rawValue)
                try await self.store.put(key, variant.data, contentType: variant.contentType)
                self.configuration.onBytes?("out", variant.data.count)
                variants.append(
                    ImageOutcome.Variant(
                        width: variant.width,
                        height: variant.height,
                        format: variant.encoding.rawValue,
                        bytes: variant.data.count,
                        key: key
                    )
                )
            }
            let outcome = ImageOutcome(
                sha256: hash,
                original: processed.original,
                variants: variants,
                placeholder: processed.placeholder
            )
            // The manifest goes last: its presence says every variant is stored.
            try await self.store.put(manifestKey, outcome.manifest, contentType: "application/json")
            return outcome
        } catch {
            throw Self.storeDown(error)
        }
    }

    private func download(_ url: String) async throws -> [UInt8] {
        var request = FetchRequest(url: url, purpose: .image)
        request.maxBodyBytes = self.imaging.maxBytes
        request.isConditional = false
        var ticket: SourceTicket?
        if let limits = self.limits {
            do {
                ticket = try await limits.admit(ImageLimits.host(ofURL: url))
            } catch let held as SourceHeld {
                throw StageError.held(held.reason, wait: held.wait)
            }
        }
        /// Tells the limits how the download went; a paused host holds the job instead of spending an attempt.
        func report(_ result: SourceRequestResult) async throws {
            guard let limits = self.limits, let ticket else { return }
            if let held = await limits.report(ticket, result) { throw StageError.held(held.reason, wait: held.wait) }
        }
        let response: FetchResponse
        do {
            response = try await self.fetcher.fetch(request)
        } catch {
            if error.isCancellation { throw CancellationError() }  // shutdown: handed back, it runs again
            if error.isRetriable {
                try await report(.failed(error.code.description))
                throw StageError.transient(error.description)
            }
            try await report(.answered)
            throw StageError.permanent(error.description)
        }
        switch response.status {
        case 200..<300:
            try await report(.answered)
            self.configuration.onBytes?("in", response.body.count)
            return response.body
        case 429:
            try await report(.throttled(retryAfter: response.retryAfter))
            throw StageError.transient(
                "HTTP \(response.status) from \(response.effectiveURL)",
                minimumWait: response.retryAfter
            )
        case 500...:
            try await report(.failed("HTTP \(response.status)"))
            throw StageError.transient(
                "HTTP \(response.status) from \(response.effectiveURL)",
                minimumWait: response.retryAfter
            )
        default:
            try await report(.answered)
            throw StageError.permanent("HTTP \(response.status) from \(response.effectiveURL)")
        }
    }

    private static func storeDown(_ error: any Error) -> StageError {
        if let error = error as? StageError { return error }
        return .dependencyDown("the image store", "\(error)")
    }
}
