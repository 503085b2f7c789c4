import CMarqueeVips
import Cvips

/// A picture drawn from a few shapes on a smooth background, encoded by libvips: the upstream emulator's
/// posters and covers. The caller chooses every colour and position (from its own seed), so the same picture
/// always gives the same bytes.
public struct DrawnPicture: Sendable {
    /// A filled disc.
    public struct Disc: Sendable {
        public var x: Int
        public var y: Int
        public var radius: Int
        /// RGB, 0…255.
        public var ink: [Double]

        public init(x: Int, y: Int, radius: Int, ink: [Double]) {
            self.x = x
            self.y = y
            self.radius = radius
            self.ink = ink
        }
    }

    /// A filled band across the whole width.
    public struct Band: Sendable {
        public var y: Int
        public var height: Int
        /// RGB, 0…255.
        public var ink: [Double]

        public init(y: Int, height: Int, ink: [Double]) {
            self.y = y
            self.height = height
            self.ink = ink
        }
    }

    /// The file format.
    public enum Encoding: Sendable, Hashable {
        case jpeg(quality: Int)
        case png
    }

    /// A small RGB image (8-bit samples, row by row) scaled up smoothly to make the background.
    public var background: [UInt8]
    public var backgroundWidth: Int
    public var backgroundHeight: Int
    /// Upright width (as an auto-rotating reader sees it).
    public var width: Int
    /// Upright height.
    public var height: Int
    /// Drawn over the background, in order.
    public var discs: [Disc]
    public var band: Band?
    /// EXIF orientation: 1, or 6/8 to store the picture turned and tagged (JPEG).
    public var orientation: Int
    public var encoding: Encoding

    public init(
        background: [UInt8],
        backgroundWidth: Int,
        backgroundHeight: Int,
        width: Int,
        height: Int,
        discs: [Disc],
        band: Band?,
        orientation: Int,
        encoding: Encoding
    ) {
        self.background = background
        self.backgroundWidth = backgroundWidth
        self.backgroundHeight = backgroundHeight
        self.width = width
        self.height = height
        self.discs = discs
        self.band = band
        self.orientation = orientation
        self.encoding = encoding
    }

    /// Renders the picture on the calling thread (blocking).
    ///
    /// - Throws: An ``ImagingError`` (``ImagingError/Code/internal``) if libvips fails.
    public func render() throws(ImagingError) -> [UInt8] {
        try Vips.initialization.get()
        let created = self.background.withUnsafeBytes {
            vips_image_new_from_memory_copy(
                $0.baseAddress,
                $0.count,
                Int32(self.backgroundWidth),
                Int32(self.backgroundHeight),
                3,
                VIPS_FORMAT_UCHAR
            )
        }
        guard let created else {
            throw ImagingError(code: .internal, reason: "vips_image_new_from_memory_copy: \(Vips.lastError())")
        }
        var image = VipsImageRef(owning: created)
        // Scale a little past the target, then cut the exact size (rounding never leaves it a pixel short).
        image = try image.apply("vips_resize") {
            CMarqueeVips_resize(
                $0,
                &$1,
                Double(self.width + 1) / Double(self.backgroundWidth),
                Double(self.height + 1) / Double(self.backgroundHeight),
                Int32(VIPS_KERNEL_LINEAR.rawValue)
            )
        }
        image = try image.apply("vips_extract_area") {
            CMarqueeVips_extract_area($0, &$1, 0, 0, Int32(self.width), Int32(self.height))
        }
        let canvas = try image.copiedToMemory(code: .internal, what: "vips_image_copy_memory")
        for disc in self.discs {
            var ink = disc.ink
            guard
                CMarqueeVips_draw_circle(
                    canvas.pointer,
                    &ink,
                    Int32(ink.count),
                    Int32(disc.x),
                    Int32(disc.y),
                    Int32(disc.radius),
                    1
                ) == 0
            else { throw ImagingError(code: .internal, reason: "vips_draw_circle: \(Vips.lastError())") }
        }
        if let band = self.band {
            var ink = band.ink
            guard
                CMarqueeVips_draw_rect(
                    canvas.pointer,
                    &ink,
                    Int32(ink.count),
                    0,
                    Int32(band.y),
                    Int32(self.width),
                    Int32(band.height),
                    1
                ) == 0
            else { throw ImagingError(code: .internal, reason: "vips_draw_rect: \(Vips.lastError())") }
        }
        var final = canvas
        if self.orientation == 6 || self.orientation == 8 {
            // Orientation 6 means "turn 90° clockwise to view": store the picture turned 90° anticlockwise.
            let angle = self.orientation == 6 ? VIPS_ANGLE_D270 : VIPS_ANGLE_D90
            final = try canvas.apply("vips_rot") { CMarqueeVips_rot($0, &$1, Int32(angle.rawValue)) }
            vips_image_set_int(final.pointer, "orientation", Int32(self.orientation))
        }
        switch self.encoding {
        case .jpeg(let quality):
            let strip: Int32 = self.orientation == 1 ? 1 : 0
            return try final.encoded("vips_jpegsave_buffer") {
                CMarqueeVips_jpegsave_buffer($0, &$1, &$2, Int32(quality), strip)
            }
        case .png:
            return try final.encoded("vips_pngsave_buffer") { CMarqueeVips_pngsave_buffer($0, &$1, &$2, 6, 1) }
        }
    }
}
