/// Everything ``ImageProcessor/process(_:)`` makes from one original.
public struct ProcessedImage: Sendable {
    /// The original's probe (format, stored size, bytes, alpha, orientation).
    public var original: ImageProbe
    /// The variants, by ascending width; for each width the WebP first, then the JPEG fallback (when
    /// ``ImagingConfiguration/writesJPEGFallback`` is on).
    public var variants: [ImageVariant]
    /// The placeholder colour and BlurHash.
    public var placeholder: ImagePlaceholder

    /// Creates a result.
    public init(original: ImageProbe, variants: [ImageVariant], placeholder: ImagePlaceholder) {
        self.original = original
        self.variants = variants
        self.placeholder = placeholder
    }
}
