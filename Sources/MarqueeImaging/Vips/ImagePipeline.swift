import CMarqueeVips
import Cvips

/// The blocking work of ``ImageProcessor``: probe, decode once, variants, placeholder.
///
/// - Important: Every method blocks (libvips decodes and encodes on the calling thread) and must run on the
///   processor's pool, except ``probe(_:)``, which reads headers only.
struct ImagePipeline: Sendable {
    let configuration: ImagingConfiguration

    /// The placeholder is computed from the smallest variant's pixels if it is at most this wide (the default
    /// smallest width, 92, is), else from a resize of it to ``placeholderWidth``.
    static let placeholderMaxWidth = 128
    /// The width the placeholder's source is resized to when the smallest variant is wider than
    /// ``placeholderMaxWidth``.
    static let placeholderWidth = 32

    /// The loader libvips must pick for each format (anything else means the magic bytes lied).
    private static func loader(for format: ImageFormat) -> String {
        switch format {
        case .jpeg: "jpegload_buffer"
        case .png: "pngload_buffer"
        case .webp: "webpload_buffer"
        case .gif: "gifload_buffer"
        }
    }

    /// Size cap, magic bytes, then the header through libvips with sequential access: the loader parses the
    /// header and stops; no pixel is decoded or allocated. Then the pixel cap.
    func probe(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) -> ImageProbe {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw ImagingError(code: .empty, reason: "refused: the input has zero bytes")
        }
        guard bytes.count <= self.configuration.maxBytes else {
            throw ImagingError(
                code: .tooLarge,
                reason: "refused: \(bytes.count) bytes is over the cap of \(self.configuration.maxBytes) bytes"
            )
        }
        let format = try ImageSniffer.format(of: bytes)
        vips_error_clear()
        // Borrowed memory: libvips does not copy the buffer, so the header image must be released before
        // `bytes` goes (it is, at the end of this scope).
        guard let raw = CMarqueeVips_image_new_from_buffer(base, bytes.count, nil, 1) else {
            throw ImagingError(code: .corrupt, reason: "refused: unreadable \(format) header: \(Vips.lastError())")
        }
        let header = VipsImageRef(owning: raw)
        let expected = Self.loader(for: format)
        if let loader = header.string("vips-loader"), loader != expected {
            throw ImagingError(
                code: .unsupportedType,
                reason: "refused: looks like \(format) but libvips reads it with \(loader), not \(expected)"
            )
        }
        let width = header.width
        let height = header.height
        guard width > 0, height > 0 else {
            throw ImagingError(code: .corrupt, reason: "refused: the \(format) header says \(width)×\(height) pixels")
        }
        guard width.multipliedReportingOverflow(by: height).partialValue <= self.configuration.maxPixels else {
            throw ImagingError(
                code: .tooManyPixels,
                reason: "refused: \(width)×\(height) pixels is over the cap of \(self.configuration.maxPixels)"
            )
        }
        let orientation = header.int("orientation").flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
        return ImageProbe(
            format: format,
            width: width,
            height: height,
            bytes: bytes.count,
            hasAlpha: header.hasAlpha,
            orientation: orientation
        )
    }

    /// Probes, decodes once at the largest output width, and makes every variant and the placeholder from that.
    func process(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) -> ProcessedImage {
        let probe = try self.probe(bytes)
        let widths = self.configuration.outputWidths(forOriginalWidth: probe.uprightWidth)
        guard let largest = widths.last, let base = bytes.baseAddress else {
            throw ImagingError(code: .internal, reason: "no output width")
        }

        // One shrink-on-load decode: JPEG is decoded by libjpeg at 1/2, 1/4 or 1/8 scale, then reduced to
        // exactly `largest` pixels wide (height 0 = VIPS_MAX_COORD: constrain the width only), EXIF orientation
        // applied. fail_on=error through option_string (thumbnail ignores its own fail_on in 8.14) makes
        // truncated and corrupt data an error rather than grey pixels. The buffer is borrowed, as above.
        let thumbnail = try Self.loaded(probe.format) { () -> (Int32, UnsafeMutablePointer<VipsImage>?) in
            var out: UnsafeMutablePointer<VipsImage>?
            let result = CMarqueeVips_thumbnail_buffer(base, bytes.count, &out, Int32(largest), 0, 0, "fail_on=error")
            return (result, out)
        }
        // sRGB, 8 bits per sample: CMYK and greyscale are converted (thumbnail already imports embedded ICC
        // profiles and exports sRGB), 16-bit samples become 8-bit; alpha is kept.
        var normalised = thumbnail
        if normalised.interpretation != VIPS_INTERPRETATION_sRGB {
            normalised = try normalised.apply("vips_colourspace", code: .corrupt) {
                CMarqueeVips_colourspace($0, &$1, Int32(VIPS_INTERPRETATION_sRGB.rawValue))
            }
        }
        if normalised.format != VIPS_FORMAT_UCHAR {
            normalised = try normalised.apply("vips_cast") {
                CMarqueeVips_cast($0, &$1, Int32(VIPS_FORMAT_UCHAR.rawValue))
            }
        }
        // Render once into memory: the decode runs here (and fails here on truncated data). Every variant is
        // then made from these pixels, never from the encoded original again.
        let decoded = try normalised.copiedToMemory(code: .corrupt, what: "refused: \(probe.format) data is corrupt")
        // Metadata goes: the savers' strip drops most, but not all in 8.14.1 (webpsave still writes EXIF, rebuilt
        // from the fields; see WebPMetadata). The variants inherit this image's fields, so remove them once, here.
        decoded.removeMetadata()

        var variants: [ImageVariant] = []
        variants.reserveCapacity(widths.count * 2)
        // The smallest variant, in memory: the placeholder is made from its pixels (widths are ascending).
        var smallest: VipsImageRef?
        for width in widths {
            var image = width == decoded.width ? decoded : try decoded.resized(toWidth: width)
            if smallest == nil {
                // Rendered once here, then read by the encoders and the placeholder (a lazy resize would run twice).
                if image !== decoded {
                    image = try image.copiedToMemory(
                        code: .internal,
                        what: "rendering the \(width)-wide variant failed"
                    )
                }
                smallest = image
            }
            let quality = Int32(self.configuration.webpQuality)
            let webp = WebPMetadata.stripped(
                try image.encoded("vips_webpsave_buffer") { CMarqueeVips_webpsave_buffer($0, &$1, &$2, quality, 1) }
            )
            variants.append(ImageVariant(width: image.width, height: image.height, encoding: .webp, data: webp))
            if self.configuration.writesJPEGFallback {
                let jpegQuality = Int32(self.configuration.jpegQuality)
                let flat = try image.flattenedOntoWhite()
                let jpeg = try flat.encoded("vips_jpegsave_buffer") {
                    CMarqueeVips_jpegsave_buffer($0, &$1, &$2, jpegQuality, 1)
                }
                variants.append(ImageVariant(width: image.width, height: image.height, encoding: .jpeg, data: jpeg))
            }
        }
        let placeholder = try Self.placeholder(of: smallest ?? decoded)
        return ProcessedImage(original: probe, variants: variants, placeholder: placeholder)
    }

    private static func loaded(
        _ format: ImageFormat,
        _ load: () -> (Int32, UnsafeMutablePointer<VipsImage>?)
    ) throws(ImagingError) -> VipsImageRef {
        let (result, out) = load()
        guard result == 0, let out else {
            if let out { g_object_unref(out) }
            throw ImagingError(code: .corrupt, reason: "refused: \(format) data is corrupt: \(Vips.lastError())")
        }
        return VipsImageRef(owning: out)
    }

    /// Dominant colour and BlurHash of `image` (in practice the smallest variant), alpha flattened onto white;
    /// resized to ``placeholderWidth`` first if it is wider than ``placeholderMaxWidth``.
    static func placeholder(of image: VipsImageRef) throws(ImagingError) -> ImagePlaceholder {
        var small = try image.flattenedOntoWhite()
        if small.width > Self.placeholderMaxWidth {
            small = try small.resized(toWidth: Self.placeholderWidth)
        }
        var bytes = try small.pixelBytes()
        let bands = small.bands
        let count = small.width * small.height
        guard bands >= 1, bytes.count == count * bands else {
            throw ImagingError(code: .internal, reason: "placeholder: \(bytes.count) bytes for \(count)×\(bands)")
        }
        if bands != 3 {
            // Grey is repeated into the three channels; a fourth band (none after the flatten) is dropped.
            var rgb = [UInt8](repeating: 0, count: count * 3)
            for pixel in 0..<count {
                for channel in 0..<3 {
                    rgb[pixel * 3 + channel] = bytes[pixel * bands + min(channel, bands - 1)]
                }
            }
            bytes = rgb
        }
        let encoded = BlurHash.encode(pixels: bytes, width: small.width, height: small.height)
        let colour = encoded.averageColor
        return ImagePlaceholder(
            dominantColor: "#" + [colour.red, colour.green, colour.blue].map(Self.hex).joined(),
            blurHash: encoded.hash
        )
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
