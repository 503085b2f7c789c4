/// An encoded image format ``ImageProcessor`` accepts as input.
///
/// The format is recognised from the file's magic bytes, never from a `Content-Type` header or a file name. GIF
/// input is reduced to its first frame.
public enum ImageFormat: String, Sendable, CaseIterable {
    /// JPEG (`FF D8 FF`), baseline or progressive; CMYK and greyscale are converted to sRGB.
    case jpeg
    /// PNG (`89 50 4E 47 0D 0A 1A 0A`), 8 or 16 bits per sample, with or without alpha.
    case png
    /// WebP (`RIFF····WEBP`), lossy or lossless, with or without alpha.
    case webp
    /// GIF (`GIF87a`/`GIF89a`); only the first frame is used.
    case gif

    /// The media type of the format, e.g. `image/jpeg`.
    public var mediaType: String { "image/\(self.rawValue)" }
}
