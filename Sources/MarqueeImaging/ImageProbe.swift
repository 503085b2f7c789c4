/// What an encoded image's magic bytes and header say about it, read without decoding any pixel.
public struct ImageProbe: Sendable, Hashable {
    /// The format, from the magic bytes (and confirmed by libvips' loader).
    public var format: ImageFormat
    /// Width in pixels as stored, before EXIF auto-rotation.
    public var width: Int
    /// Height in pixels as stored, before EXIF auto-rotation.
    public var height: Int
    /// Size of the encoded file in bytes.
    public var bytes: Int
    /// Whether the image has an alpha band (GIFs always report one).
    public var hasAlpha: Bool
    /// The EXIF orientation tag, 1…8 (1 when absent). 5…8 mean the stored image is turned a quarter: the upright
    /// image is ``height`` × ``width``.
    public var orientation: Int

    /// Creates a probe result.
    public init(format: ImageFormat, width: Int, height: Int, bytes: Int, hasAlpha: Bool, orientation: Int) {
        self.format = format
        self.width = width
        self.height = height
        self.bytes = bytes
        self.hasAlpha = hasAlpha
        self.orientation = orientation
    }

    /// Width of the upright image (after EXIF auto-rotation).
    public var uprightWidth: Int { (5...8).contains(self.orientation) ? self.height : self.width }
    /// Height of the upright image (after EXIF auto-rotation).
    public var uprightHeight: Int { (5...8).contains(self.orientation) ? self.width : self.height }
    /// Width × height.
    public var pixels: Int { self.width * self.height }
}
