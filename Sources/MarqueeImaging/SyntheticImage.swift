import CMarqueeVips
import Cvips

/// Deterministic test pictures encoded by libvips: for tests and the imaging benchmark, never for production.
@_spi(Testing) public enum SyntheticImage {
    /// What the picture shows.
    public enum Pattern: Sendable {
        /// A grid of random colours from `seed`, smoothly interpolated.
        case random(seed: UInt64)
        /// The top half one colour, the bottom half another (RGB, 0…255).
        case split(top: [UInt8], bottom: [UInt8])
        /// One colour.
        case solid([UInt8])
    }

    /// The output file format.
    public enum Encoding: Sendable {
        /// JPEG at a quality.
        case jpeg(quality: Int)
        /// PNG (8 or 16 bits).
        case png
        /// Lossy WebP at a quality.
        case webp(quality: Int)
        /// GIF (one frame, palette).
        case gif
    }

    /// A picture to render.
    public struct Spec: Sendable {
        /// Upright width (as an auto-rotating reader sees it).
        public var width: Int
        /// Upright height.
        public var height: Int
        /// Colours.
        public var pattern: Pattern
        /// File format.
        public var encoding: Encoding
        /// EXIF orientation: 1, or 6/8 to store the picture turned and tagged (JPEG only).
        public var orientation = 1
        /// Grey Gaussian noise added (standard deviation in levels), for photo-like entropy; 8-bit RGB without alpha.
        public var noise = 0.0
        /// An alpha band: opaque top half, transparent bottom half.
        public var hasAlpha = false
        /// Stored as CMYK (JPEG only).
        public var isCMYK = false
        /// 16 bits per sample (PNG only).
        public var isSixteenBit = false
        /// Embeds libvips' built-in sRGB ICC profile.
        public var embedsICCProfile = false

        /// A picture spec; the options are vars.
        public init(width: Int, height: Int, pattern: Pattern, encoding: Encoding) {
            self.width = width
            self.height = height
            self.pattern = pattern
            self.encoding = encoding
        }
    }

    /// Renders `spec` on the calling thread (blocking).
    ///
    /// - Throws: An ``ImagingError`` if libvips fails.
    public static func render(_ spec: Spec) throws(ImagingError) -> [UInt8] {
        try Vips.initialization.get()
        let columns = 8
        let rows = max(2, Int((Double(columns) * Double(spec.height) / Double(spec.width)).rounded()))
        var generator = SplitMix64(
            seed: { if case .random(let seed) = spec.pattern { return seed } else { return 0 } }()
        )
        let bands = spec.isCMYK || spec.hasAlpha ? 4 : 3
        var samples: [Int] = []
        samples.reserveCapacity(columns * rows * bands)
        for row in 0..<rows {
            for _ in 0..<columns {
                let rgb: [Int]
                switch spec.pattern {
                case .random: rgb = (0..<3).map { _ in Int(generator.next() % 216) + 20 }
                case .split(let top, let bottom): rgb = (row < rows / 2 ? top : bottom).map(Int.init)
                case .solid(let colour): rgb = colour.map(Int.init)
                }
                if spec.isCMYK {
                    samples += rgb.map { 255 - $0 } + [0]
                } else {
                    samples += rgb
                    if spec.hasAlpha { samples.append(row < rows / 2 ? 255 : 0) }
                }
            }
        }
        let format = spec.isSixteenBit ? VIPS_FORMAT_USHORT : VIPS_FORMAT_UCHAR
        let created: UnsafeMutablePointer<VipsImage>? =
            spec.isSixteenBit
            ? samples.map { UInt16($0 * 257) }.withUnsafeBytes {
                vips_image_new_from_memory_copy(
                    $0.baseAddress,
                    $0.count,
                    Int32(columns),
                    Int32(rows),
                    Int32(bands),
                    format
                )
            }
            : samples.map { UInt8($0) }.withUnsafeBytes {
                vips_image_new_from_memory_copy(
                    $0.baseAddress,
                    $0.count,
                    Int32(columns),
                    Int32(rows),
                    Int32(bands),
                    format
                )
            }
        guard let created else {
            throw ImagingError(code: .internal, reason: "vips_image_new_from_memory_copy: \(Vips.lastError())")
        }
        var image = VipsImageRef(owning: created)
        // Scale a little past the target and cut the exact size (rounding never leaves it a pixel short).
        let kernel = if case .random = spec.pattern { VIPS_KERNEL_LINEAR } else { VIPS_KERNEL_NEAREST }
        image = try image.apply("vips_resize") {
            CMarqueeVips_resize(
                $0,
                &$1,
                Double(spec.width + 1) / Double(columns),
                Double(spec.height + 1) / Double(rows),
                Int32(kernel.rawValue)
            )
        }
        image = try image.apply("vips_extract_area") {
            CMarqueeVips_extract_area($0, &$1, 0, 0, Int32(spec.width), Int32(spec.height))
        }
        if spec.noise > 0 && !spec.isSixteenBit && !spec.isCMYK && !spec.hasAlpha {
            let seed = Int32(truncatingIfNeeded: generator.next())
            let noise = try Self.make("vips_gaussnoise") {
                CMarqueeVips_gaussnoise(&$0, Int32(spec.width), Int32(spec.height), 0, spec.noise, seed)
            }
            let noisy = try image.apply("vips_add") { CMarqueeVips_add($0, noise.pointer, &$1) }
            image = try noisy.apply("vips_cast") { CMarqueeVips_cast($0, &$1, Int32(VIPS_FORMAT_UCHAR.rawValue)) }
        }
        let interpretation =
            spec.isCMYK
            ? VIPS_INTERPRETATION_CMYK : spec.isSixteenBit ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_sRGB
        image = try image.apply("vips_copy") {
            CMarqueeVips_copy_interpretation($0, &$1, Int32(interpretation.rawValue))
        }
        if spec.embedsICCProfile {
            image = try image.apply("vips_icc_transform") { CMarqueeVips_icc_transform($0, &$1, "srgb", "srgb") }
        }
        if spec.orientation == 6 || spec.orientation == 8 {
            // Orientation 6 means "turn 90° clockwise to view": store the picture turned 90° anticlockwise.
            let angle = spec.orientation == 6 ? VIPS_ANGLE_D270 : VIPS_ANGLE_D90
            image = try image.apply("vips_rot") { CMarqueeVips_rot($0, &$1, Int32(angle.rawValue)) }
            image = try image.copiedToMemory(code: .internal, what: "vips_image_copy_memory")
            vips_image_set_int(image.pointer, "orientation", Int32(spec.orientation))
        }
        let strip: Int32 = spec.orientation == 1 && !spec.embedsICCProfile ? 1 : 0
        switch spec.encoding {
        case .jpeg(let quality):
            return try image.encoded("vips_jpegsave_buffer") {
                CMarqueeVips_jpegsave_buffer($0, &$1, &$2, Int32(quality), strip)
            }
        case .png:
            return try image.encoded("vips_pngsave_buffer") { CMarqueeVips_pngsave_buffer($0, &$1, &$2, 6, strip) }
        case .webp(let quality):
            return try image.encoded("vips_webpsave_buffer") {
                CMarqueeVips_webpsave_buffer($0, &$1, &$2, Int32(quality), strip)
            }
        case .gif:
            return try image.encoded("vips_gifsave_buffer") { CMarqueeVips_image_write_to_buffer($0, ".gif", &$1, &$2) }
        }
    }

    private static func make(
        _ what: String,
        _ operation: (inout UnsafeMutablePointer<VipsImage>?) -> Int32
    ) throws(ImagingError) -> VipsImageRef {
        var out: UnsafeMutablePointer<VipsImage>?
        guard operation(&out) == 0, let out else {
            throw ImagingError(code: .internal, reason: "\(what) failed: \(Vips.lastError())")
        }
        return VipsImageRef(owning: out)
    }
}

/// A small deterministic generator (SplitMix64).
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var value = self.state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE5_E9B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

@_spi(Testing) extension SyntheticImage {
    /// A decompression bomb written by hand: a valid PNG signature and IHDR declaring `width` × `height` RGB
    /// pixels, one small IDAT with a valid zlib stream (a stored block holding the first row's start), IEND. A
    /// few hundred bytes that would need width × height × 3 bytes decoded.
    public static func bombPNG(width: UInt32 = 50_000, height: UInt32 = 50_000) -> [UInt8] {
        func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(UInt32(data.count)) + body + be32(crc32(body))
        }
        let ihdr = be32(width) + be32(height) + [8, 2, 0, 0, 0]  // 8-bit, RGB, deflate, adaptive filter, no interlace
        let raw = [UInt8](repeating: 0, count: 256)  // filter byte 0 and black samples
        var zlib: [UInt8] = [0x78, 0x01]  // deflate, 32 KB window, no dictionary
        zlib += [0x01] + [UInt8(raw.count & 0xFF), UInt8(raw.count >> 8)]
        zlib += [UInt8(~raw.count & 0xFF), UInt8((~raw.count >> 8) & 0xFF)]
        zlib += raw + be32(adler32(raw))
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", zlib)
            + chunk("IEND", [])
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }
}
