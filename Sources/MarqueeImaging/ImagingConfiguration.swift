import class Foundation.ProcessInfo

/// Settings of an ``ImageProcessor``: output widths and qualities, input limits, threads.
public struct ImagingConfiguration: Sendable {
    /// Output widths in pixels. A width at or above the upright original's width is not upscaled: all such
    /// widths collapse into one variant at the original's own width.
    ///
    /// Default: `[92, 185, 342, 500]` (TMDB's poster sizes).
    public var widths: [Int] = [92, 185, 342, 500]
    /// WebP quality, 1…100.
    ///
    /// Default: `80`.
    public var webpQuality: Int = 80
    /// JPEG quality, 1…100.
    ///
    /// Default: `85`.
    public var jpegQuality: Int = 85
    /// Whether every width also gets a JPEG (alpha flattened onto white) besides the WebP.
    ///
    /// Default: `true`.
    public var writesJPEGFallback: Bool = true
    /// Largest accepted encoded input, in bytes (checked before anything else is read).
    ///
    /// Default: 20 MiB.
    public var maxBytes: Int = 20 << 20
    /// Largest accepted width × height, from the header, before any decode.
    ///
    /// A 2000 × 3000 poster is 6 MP and a 12 MP phone photo is 12 MP; 50 MP leaves room for large scans while
    /// refusing decompression bombs (a few KB declaring 50,000 × 50,000). JPEG is decoded at a fraction of its
    /// size (shrink-on-load), so its cost grows slowly with pixels; PNG, WebP and GIF are decoded whole, one
    /// strip at a time — except interlaced PNG, which libvips must hold entirely in memory (about 4 bytes a
    /// pixel, 8 for 16-bit: up to 200–400 MB per thread at the cap). Lower the cap to bound that.
    ///
    /// Default: `50_000_000`.
    public var maxPixels: Int = 50_000_000
    /// Threads of the processor's own pool, each running one image at a time.
    ///
    /// Default: the active processor count.
    public var threads: Int = ProcessInfo.processInfo.activeProcessorCount

    /// A configuration with the defaults.
    public init() {}

    /// Checks every value.
    ///
    /// - Throws: An ``ImagingError`` with code ``ImagingError/Code/invalidConfiguration`` naming the first bad
    ///   value.
    public func validate() throws(ImagingError) {
        func refuse(_ reason: String) -> ImagingError { ImagingError(code: .invalidConfiguration, reason: reason) }
        guard !self.widths.isEmpty else { throw refuse("widths is empty") }
        guard self.widths.allSatisfy({ $0 > 0 && $0 <= 16384 }) else {
            throw refuse("widths must be 1…16384, got \(self.widths)")
        }
        guard (1...100).contains(self.webpQuality) else {
            throw refuse("webpQuality must be 1…100, got \(self.webpQuality)")
        }
        guard (1...100).contains(self.jpegQuality) else {
            throw refuse("jpegQuality must be 1…100, got \(self.jpegQuality)")
        }
        guard self.maxBytes > 0 else { throw refuse("maxBytes must be positive, got \(self.maxBytes)") }
        guard self.maxPixels > 0 else { throw refuse("maxPixels must be positive, got \(self.maxPixels)") }
        guard (1...256).contains(self.threads) else { throw refuse("threads must be 1…256, got \(self.threads)") }
    }

    /// The widths to produce for an upright original `originalWidth` pixels wide: the configured widths below
    /// it, plus the original width once if any configured width reaches it; ascending, without duplicates.
    func outputWidths(forOriginalWidth originalWidth: Int) -> [Int] {
        Array(Set(self.widths.map { min($0, originalWidth) })).sorted()
    }
}
