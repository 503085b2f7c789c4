import NIOPosix
public import ServiceLifecycle

/// Turns an original image (a poster, a cover) into web variants and a placeholder, with libvips.
///
/// Inputs are recognised by their magic bytes (JPEG, PNG, WebP, GIF; see ``ImageFormat``) and checked against
/// ``ImagingConfiguration/maxBytes`` and, from the header and before any decode, against
/// ``ImagingConfiguration/maxPixels``. ``process(_:)`` decodes once, with shrink-on-load, at the largest output
/// width, auto-rotated (EXIF orientation) and converted to 8-bit sRGB; every output width is resized from that one
/// decode and saved as WebP (and a JPEG fallback), metadata stripped. Widths at or above the original's are not
/// upscaled: they become one variant at the original's width.
///
/// ```swift
/// try ImageProcessor.globalInit()                    // once, in main
/// let processor = try ImageProcessor(configuration: ImagingConfiguration())
/// let image = try await processor.process(bytes)     // on the processor's own threads
/// await processor.shutdown()
/// ```
///
/// - Important: libvips work runs on the processor's own bounded pool (``ImagingConfiguration/threads`` threads,
///   one image each), never on the Swift cooperative pool; libvips' internal threading is set to one thread per
///   operation, so the pool bounds both CPU use and memory. Call ``shutdown()`` before releasing the processor.
public final class ImageProcessor: Service, Sendable {
    /// The settings this processor was created with.
    public let configuration: ImagingConfiguration
    private let pipeline: ImagePipeline
    private let pool: NIOThreadPool

    /// Starts libvips for the process, once; later calls return the first call's outcome.
    ///
    /// Runs `vips_init`, sets libvips' per-operation concurrency to one thread (`vips_concurrency_set(1)`:
    /// parallelism comes from the processor's pool), turns libvips' ORC vector code off (ORC 0.4.33 corrupts its
    /// code memory when several threads build and free operations at once), blocks untrusted loaders and then
    /// every loader except JPEG, PNG, WebP and GIF from memory (no ImageMagick, PDF, SVG, TIFF, HEIF … even if
    /// libvips has them), and turns libvips' operation cache off so memory is released as soon as an image is
    /// done. Call it in `main` before starting services; ``init(configuration:)`` calls it too.
    ///
    /// - Throws: An ``ImagingError`` with code ``ImagingError/Code/internal`` if libvips cannot start.
    public static func globalInit() throws(ImagingError) {
        try Vips.initialization.get()
    }

    /// Creates a processor and starts its threads.
    ///
    /// - Parameter configuration: Widths, qualities, limits and thread count.
    /// - Throws: An ``ImagingError``: ``ImagingError/Code/invalidConfiguration`` for a bad setting,
    ///   ``ImagingError/Code/internal`` if libvips cannot start.
    public init(configuration: ImagingConfiguration = ImagingConfiguration()) throws(ImagingError) {
        try configuration.validate()
        try Self.globalInit()
        self.configuration = configuration
        self.pipeline = ImagePipeline(configuration: configuration)
        self.pool = NIOThreadPool(numberOfThreads: configuration.threads)
        self.pool.start()
    }

    /// Identifies `bytes` and reads its header, without decoding any pixel.
    ///
    /// Checks, in order: not empty, not over ``ImagingConfiguration/maxBytes``, an accepted format by its magic
    /// bytes, a readable header, not over ``ImagingConfiguration/maxPixels``. Cheap (a header parse), so it runs
    /// on the calling thread.
    ///
    /// - Parameter bytes: The encoded image.
    /// - Returns: Format, stored size, byte count, alpha and EXIF orientation.
    /// - Throws: An ``ImagingError``: ``ImagingError/Code/empty``, ``ImagingError/Code/tooLarge``,
    ///   ``ImagingError/Code/svg``, ``ImagingError/Code/unsupportedType``, ``ImagingError/Code/corrupt`` or
    ///   ``ImagingError/Code/tooManyPixels``, with a reason fit for a dead-letter header.
    public func probe(_ bytes: [UInt8]) throws(ImagingError) -> ImageProbe {
        try bytes.withImageBytes { (raw) throws(ImagingError) in try self.pipeline.probe(raw) }
    }

    /// Probes `bytes`, then makes every variant and the placeholder, on the processor's pool.
    ///
    /// - Parameter bytes: The encoded image.
    /// - Returns: The probe, the variants (ascending width; WebP, then JPEG per width) and the placeholder.
    /// - Throws: An ``ImagingError``: any of ``probe(_:)``'s refusals; ``ImagingError/Code/corrupt`` when the data
    ///   cannot be decoded (truncated, broken); ``ImagingError/Code/shutdown`` after ``shutdown()``;
    ///   ``ImagingError/Code/internal`` when an encoder fails.
    public func process(_ bytes: [UInt8]) async throws(ImagingError) -> ProcessedImage {
        let pipeline = self.pipeline
        do {
            return try await self.pool.runIfActive {
                try bytes.withImageBytes { (raw) throws(ImagingError) in try pipeline.process(raw) }
            }
        } catch let error as ImagingError {
            throw error
        } catch {
            throw ImagingError(code: .shutdown, reason: "the image processor is shut down", underlying: error)
        }
    }

    /// Stops the pool's threads after the images already submitted; later ``process(_:)`` calls throw
    /// ``ImagingError/Code/shutdown``.
    /// Keeps the processor until graceful shutdown (or cancellation), then shuts it down (``shutdown()``).
    public func run() async throws {
        try? await gracefulShutdown()
        await self.shutdown()
    }

    public func shutdown() async {
        try? await self.pool.shutdownGracefully()
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` with a typed error.
    func withImageBytes<Result>(
        _ body: (UnsafeRawBufferPointer) throws(ImagingError) -> Result
    ) throws(ImagingError) -> Result {
        let outcome: Swift.Result<Result, ImagingError> = self.withUnsafeBytes { raw in
            Swift.Result { () throws(ImagingError) -> Result in try body(raw) }
        }
        return try outcome.get()
    }
}
