import CMarqueeVips
import Cvips
public import NIOCore
import NIOPosix
import Synchronization

/// What to draw: a deterministic picture from `seed`, at a size, in a format, with an EXIF orientation.
public struct ImageSpec: Hashable, Sendable {
    /// The encoded format.
    public enum Format: Sendable, Hashable {
        case jpeg
        case png

        /// The truthful `Content-Type`.
        public var contentType: String {
            switch self {
            case .jpeg: "image/jpeg"
            case .png: "image/png"
            }
        }
    }

    /// Colours and shapes come from this.
    public var seed: UInt64
    /// Width as an auto-rotating reader sees it.
    public var width: Int
    /// Height as an auto-rotating reader sees it.
    public var height: Int
    /// JPEG or PNG.
    public var format: Format
    /// EXIF orientation: 1 (none), 6 or 8 (stored rotated, the tag says how to turn it upright).
    public var orientation: Int
    /// JPEG quality.
    public var quality: Int

    /// A picture to render.
    public init(seed: UInt64, width: Int, height: Int, format: Format, orientation: Int, quality: Int) {
        self.seed = seed
        self.width = width
        self.height = height
        self.format = format
        self.orientation = orientation
        self.quality = quality
    }
}

/// Encoded image bytes with their strong ETag.
public struct RenderedImage: Sendable {
    /// The encoded file.
    public let bytes: [UInt8]
    /// `"<digest>"`.
    public let etag: String
    /// `image/jpeg` or `image/png`.
    public let contentType: String
}

/// A libvips failure while rendering.
public struct ImageRenderError: Error, CustomStringConvertible {
    /// What failed, with libvips' error text.
    public let reason: String

    public var description: String { "image rendering failed: \(self.reason)" }
}

/// Renders ``ImageSpec``s with libvips on a bounded thread pool of its own, and keeps the bytes in a bounded LRU
/// cache so repeated requests are cheap.
///
/// - Important: libvips calls block for milliseconds to a second; they run only on ``pool``, never on an event
///   loop or the Swift cooperative pool.
public final class ImageRenderer: Sendable {
    private let pool: NIOThreadPool
    private let cache: Mutex<LRUCache>

    /// Starts libvips (once per process) and the render threads.
    ///
    /// - Parameters:
    ///   - threads: Render threads (default: one per core).
    ///   - cacheBytes: The cache's byte budget.
    public init(threads: Int? = nil, cacheBytes: Int = 256 << 20) throws {
        guard Vips.isInitialized else { throw ImageRenderError(reason: "vips_init failed") }
        self.pool = NIOThreadPool(numberOfThreads: max(1, threads ?? System.coreCount))
        self.pool.start()
        self.cache = Mutex(LRUCache(budget: cacheBytes))
    }

    /// Stops the render threads.
    public func shutdown() async throws {
        try await self.pool.shutdownGracefully()
    }

    /// The image for `spec`, from the cache or rendered on the pool; completes on `eventLoop`.
    public func image(_ spec: ImageSpec, on eventLoop: any EventLoop) -> EventLoopFuture<RenderedImage> {
        if let cached = self.cache.withLock({ $0.get(spec) }) {
            return eventLoop.makeSucceededFuture(cached)
        }
        return self.pool.runIfActive(eventLoop: eventLoop) { [self] in
            if let cached = self.cache.withLock({ $0.get(spec) }) { return cached }
            let bytes = try Self.render(spec)
            let image = RenderedImage(
                bytes: bytes, etag: "\"\(StableHash.digest(bytes))\"", contentType: spec.format.contentType)
            self.cache.withLock { $0.put(spec, image) }
            return image
        }
    }

    /// Renders `spec` now, on the calling thread (blocking).
    ///
    /// - Throws: ``ImageRenderError`` when a libvips call fails.
    public static func render(_ spec: ImageSpec) throws -> [UInt8] {
        guard Vips.isInitialized else { throw ImageRenderError(reason: "vips_init failed") }
        var random = SeededRandom(spec.seed, 0x1A6E)
        // A small source (8 px wide) with two colours, a gradient and a few blobs, scaled up smoothly.
        let sourceWidth = 8
        let sourceHeight = max(2, Int((Double(sourceWidth) * Double(spec.height) / Double(spec.width)).rounded()))
        let top = Self.colour(&random)
        let bottom = Self.colour(&random)
        var pixels = [UInt8](repeating: 0, count: sourceWidth * sourceHeight * 3)
        for y in 0..<sourceHeight {
            for x in 0..<sourceWidth {
                let t = Double(y) / Double(sourceHeight - 1)
                let wobble = Double(random.int(-18...18))
                for band in 0..<3 {
                    let value = Double(top[band]) * (1 - t) + Double(bottom[band]) * t + wobble
                        + Double(x) * Double(band - 1) * 2
                    pixels[(y * sourceWidth + x) * 3 + band] = UInt8(max(0, min(255, value)))
                }
            }
        }
        var owned: [UnsafeMutablePointer<VipsImage>] = []
        defer { for image in owned { g_object_unref(image) } }
        func keep(_ image: UnsafeMutablePointer<VipsImage>?, _ what: String) throws -> UnsafeMutablePointer<VipsImage> {
            guard let image else { throw ImageRenderError(reason: "\(what): \(Vips.lastError())") }
            owned.append(image)
            return image
        }
        let source = try keep(
            pixels.withUnsafeBytes {
                vips_image_new_from_memory_copy($0.baseAddress, $0.count, Int32(sourceWidth), Int32(sourceHeight), 3,
                    VIPS_FORMAT_UCHAR)
            }, "vips_image_new_from_memory_copy")
        // Scale a little past the target, then cut the exact size (rounding never leaves it a pixel short).
        var scaled: UnsafeMutablePointer<VipsImage>?
        try Vips.check(
            CMarqueeVips_resize(
                source, &scaled, Double(spec.width + 1) / Double(sourceWidth),
                Double(spec.height + 1) / Double(sourceHeight), Int32(VIPS_KERNEL_LINEAR.rawValue)),
            "vips_resize")
        let resized = try keep(scaled, "vips_resize")
        var cut: UnsafeMutablePointer<VipsImage>?
        try Vips.check(
            CMarqueeVips_extract_area(resized, &cut, 0, 0, Int32(spec.width), Int32(spec.height)), "vips_extract_area")
        let exact = try keep(cut, "vips_extract_area")
        let canvas = try keep(vips_image_copy_memory(exact), "vips_image_copy_memory")
        // Shapes drawn at full size: a few discs and a title band.
        let side = min(spec.width, spec.height)
        for _ in 0..<3 {
            var ink = Self.colour(&random).map(Double.init)
            try Vips.check(
                CMarqueeVips_draw_circle(
                    canvas, &ink, 3, Int32(random.int(0...spec.width)), Int32(random.int(0...spec.height)),
                    Int32(max(1, side * random.int(8...30) / 100)), 1),
                "vips_draw_circle")
        }
        var band = Self.colour(&random).map { Double($0) * 0.35 }
        try Vips.check(
            CMarqueeVips_draw_rect(
                canvas, &band, 3, 0, Int32(spec.height * 78 / 100), Int32(spec.width), Int32(max(1, spec.height / 8)), 1),
            "vips_draw_rect")
        var final = canvas
        if spec.orientation == 6 || spec.orientation == 8 {
            // Orientation 6 means "turn 90° clockwise to view": store the picture turned 90° anticlockwise.
            var rotated: UnsafeMutablePointer<VipsImage>?
            let angle = spec.orientation == 6 ? VIPS_ANGLE_D270 : VIPS_ANGLE_D90
            try Vips.check(CMarqueeVips_rot(canvas, &rotated, Int32(angle.rawValue)), "vips_rot")
            final = try keep(rotated, "vips_rot")
            vips_image_set_int(final, "orientation", Int32(spec.orientation))
        }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        switch spec.format {
        case .jpeg:
            try Vips.check(
                CMarqueeVips_jpegsave_buffer(final, &buffer, &length, Int32(spec.quality), spec.orientation == 1 ? 1 : 0),
                "vips_jpegsave_buffer")
        case .png:
            try Vips.check(CMarqueeVips_pngsave_buffer(final, &buffer, &length, 6, 1), "vips_pngsave_buffer")
        }
        guard let buffer else { throw ImageRenderError(reason: "save returned no buffer") }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    private static func colour(_ random: inout SeededRandom) -> [UInt8] {
        [UInt8(random.int(20...235)), UInt8(random.int(20...235)), UInt8(random.int(20...235))]
    }
}

/// libvips' process-wide state.
enum Vips {
    /// `vips_init` runs once, on first use (a Swift `static let` is initialized exactly once, thread-safely).
    static let isInitialized: Bool = CMarqueeVips_init("marquee-upstream", 1) == 0

    static func check(_ result: Int32, _ what: String) throws {
        guard result == 0 else { throw ImageRenderError(reason: "\(what): \(Self.lastError())") }
    }

    /// libvips' error text, and clears it (the buffer is global to the process, shared by every thread).
    static func lastError() -> String {
        guard let text = vips_error_buffer_copy() else { return "unknown error" }
        defer { g_free(text) }
        return String(cString: text)
    }
}

/// A byte-budgeted least-recently-used cache of rendered images.
struct LRUCache {
    private var entries: [ImageSpec: (image: RenderedImage, tick: UInt64)] = [:]
    private var tick: UInt64 = 0
    private var bytes = 0
    let budget: Int

    init(budget: Int) { self.budget = budget }

    mutating func get(_ spec: ImageSpec) -> RenderedImage? {
        guard let entry = self.entries[spec] else { return nil }
        self.tick += 1
        self.entries[spec] = (entry.image, self.tick)
        return entry.image
    }

    mutating func put(_ spec: ImageSpec, _ image: RenderedImage) {
        guard image.bytes.count <= self.budget else { return }
        self.tick += 1
        if let old = self.entries.updateValue((image, self.tick), forKey: spec) { self.bytes -= old.image.bytes.count }
        self.bytes += image.bytes.count
        if self.bytes > self.budget {
            // Evict the least recently used down to 90 % of the budget, in one pass.
            for (key, entry) in self.entries.sorted(by: { $0.value.tick < $1.value.tick }) {
                guard self.bytes > self.budget * 9 / 10 else { break }
                self.entries[key] = nil
                self.bytes -= entry.image.bytes.count
            }
        }
    }

    var count: Int { self.entries.count }
}
