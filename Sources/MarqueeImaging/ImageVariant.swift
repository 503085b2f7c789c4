/// One encoded output of ``ImageProcessor/process(_:)``: the upright image at one width.
public struct ImageVariant: Sendable, Hashable {
    /// The output encoding of a variant.
    public enum Encoding: String, Sendable {
        /// WebP (lossy, alpha kept when the input has alpha).
        case webp
        /// JPEG (baseline; alpha flattened onto white): the fallback for clients without WebP.
        case jpeg

        /// The `Content-Type` of the encoding.
        public var contentType: String {
            switch self {
            case .webp: "image/webp"
            case .jpeg: "image/jpeg"
            }
        }
    }

    /// Width in pixels (one of the configured widths, or the original width when that is smaller).
    public var width: Int
    /// Height in pixels (the upright aspect ratio, rounded).
    public var height: Int
    /// WebP or JPEG.
    public var encoding: Encoding
    /// The encoded file, without metadata (no EXIF, XMP or ICC profile; sRGB, 8 bits per sample).
    public var data: [UInt8]
    /// `image/webp` or `image/jpeg`.
    public var contentType: String

    /// Creates a variant; ``contentType`` follows from `encoding`.
    public init(width: Int, height: Int, encoding: Encoding, data: [UInt8]) {
        self.width = width
        self.height = height
        self.encoding = encoding
        self.data = data
        self.contentType = encoding.contentType
    }
}
