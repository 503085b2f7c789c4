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
///
/// A URL downloaded before is revalidated (``Revalidation``): its `ETag`/`Last-Modified`, kept in the
/// ``ValidatorCache`` with the hash of the image they describe, go out as `If-None-Match`/`If-Modified-Since`
/// while that image is still in the image store; a `304` downloads nothing and the job's record names the stored
/// image again. A changed image is new bytes under a new hash: new variants, and the record points the entity at
/// it (docs/image-store.md, "Revalidation").
public struct ImageHandler: StageHandler {
    /// Settings of the image stage beyond the stage runtime's.
    public struct Configuration: Sendable {
        /// Download originals instead of the smallest rendition that covers the largest variant. Default: false.
        public var prefersOriginals = false
        /// Keep the downloaded bytes in the store too (under `…/original`). Default: false.
        public var storesOriginals = false
        /// Told of image bytes moved: `in` downloaded, `out` written as variants (for metrics). Default: `nil`.
        public var onBytes: (@Sendable (_ direction: String, _ count: Int) -> Void)? = nil
        /// Told of each image download's answer (for metrics): `full` (a whole body, no validators sent),
        /// `not_modified` (a `304`: the stored image stands) or `changed` (validators sent, a new body). Default:
        /// `nil`.
        public var onDownload: (@Sendable (_ result: String) -> Void)? = nil

        public init() {}
    }

    private let configuration: Configuration
    private let fetcher: HTTPFetcher
    private let processor: ImageProcessor
    private let imaging: ImagingConfiguration
    private let store: any ImageStore
    private let inFlight: SharedWork<String, ImageOutcome>
    private let limits: SourceLimits?
    private let validators: (any ValidatorCache)?
    private let logger: Logger

    /// - Parameters:
    ///   - limits: The image hosts' rate limits and pauses, by host name; `nil` for none.
    ///   - validators: Where each image URL's validators and the hash of its image are kept (the store's, shared
    ///     by every image worker); `nil` downloads every image in full.
    public init(
        configuration: Configuration,
        fetcher: HTTPFetcher,
        processor: ImageProcessor,
        imaging: ImagingConfiguration,
        store: any ImageStore,
        limits: SourceLimits? = nil,
        validators: (any ValidatorCache)? = nil,
        logger: Logger
    ) {
        self.configuration = configuration
        self.validators = validators
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

    /// Downloads `url` (revalidating what is stored for it), and stores its variants unless these bytes are
    /// stored already; logs through `logger` (the job's that does the work).
    private func stored(url: String, logger: Logger) async throws -> ImageOutcome {
        let validatorKey = FetchRequest(url: url, purpose: .image).redactedURL
        let kept = await self.validators?.validators(for: validatorKey)
        var plan = Revalidation.full
        if let hash = Revalidation.storedHash(of: kept) {
            // Validators are trusted only while the image they validate is stored.
            plan = Revalidation.plan(validators: kept, stored: try await self.storedOutcome(sha256: hash))
            if plan == .full {
                logger.debug(
                    "the image the validators name is not stored: downloading in full",
                    metadata: ["marquee.image.sha256": "\(hash)", "marquee.url": "\(url)"]
                )
            }
        }
        switch try await self.download(url, plan: plan) {
        case .notModified(let stored):
            // The stored image and its variants stand.
            return stored
        case .body(let bytes, let validators):
            let outcome = try await self.stored(bytes: bytes, url: url, logger: logger)
            if let cache = self.validators, let validators = Revalidation.kept(validators, sha256: outcome.sha256) {
                await cache.store(validators, for: validatorKey)
            }
            return outcome
        }
    }

    /// The stored image `sha256` as its manifest describes it; `nil` when it is not stored.
    private func storedOutcome(sha256: String) async throws -> ImageOutcome? {
        do {
            return try await self.store.get(ImageKey.manifest(sha256: sha256)).flatMap { ImageOutcome(manifest: $0) }
        } catch {
            throw Self.storeDown(error)
        }
    }

    /// Stores the variants of `bytes` unless these bytes are stored already.
    private func stored(bytes: [UInt8], url: String, logger: Logger) async throws -> ImageOutcome {
        let hash = ContentHash.sha256Hex(bytes)
        let manifestKey = ImageKey.manifest(sha256: hash)
        if let outcome = try await self.storedOutcome(sha256: hash) {
            // The same bytes were processed before: nothing new to store.
            logger.debug(
                "image already stored",
                metadata: ["marquee.image.sha256": "\(hash)", "marquee.url": "\(url)"]
            )
            return outcome
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

    /// A download's answer: the body with its validators, or (`304`) the stored image that stands.
    private enum Download {
        case body([UInt8], validators: HTTPValidators?)
        case notModified(ImageOutcome)
    }

    private func download(_ url: String, plan: Revalidation) async throws -> Download {
        var request = FetchRequest(url: url, headers: plan.headers, purpose: .image)
        request.maxBodyBytes = self.imaging.maxBytes
        request.isConditional = false  // the handler sends the validators itself
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
            self.configuration.onDownload?(plan == .full ? "full" : "changed")
            return .body(response.body, validators: response.validators)
        case 304:
            try await report(.answered)
            guard let stored = plan.notModified else {
                throw StageError.permanent("HTTP 304 from \(response.effectiveURL) to a request without validators")
            }
            self.configuration.onDownload?("not_modified")
            return .notModified(stored)
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

    /// Every failure of the image store pauses the stage (docs/stage.md, "A dependency down for everyone"): down,
    /// full, read-only, throttling, or refusing the credentials — none of it is the image's fault.
    private static func storeDown(_ error: any Error) -> StageError {
        if let error = error as? StageError { return error }
        guard let error = error as? ImageStoreError, error.code == .denied else {
            return .dependencyDown("the image store", "\(error)")
        }
        return .dependencyDown(
            "the image store",
            "\(error); fix the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or their _FILE) or the "
                + "permissions of MARQUEE_IMAGE_STORE",
            credentialsRefused: true
        )
    }
}
