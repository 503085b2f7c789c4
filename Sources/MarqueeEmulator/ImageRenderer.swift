import MarqueeImaging
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
    /// - Throws: An `ImagingError` when libvips cannot start.
    ///
    /// - Parameters:
    ///   - threads: Render threads (default: one per core).
    ///   - cacheBytes: The cache's byte budget.
    public init(threads: Int? = nil, cacheBytes: Int = 256 << 20) throws {
        try ImageProcessor.globalInit()
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
                bytes: bytes,
                etag: "\"\(StableHash.digest(bytes))\"",
                contentType: spec.format.contentType
            )
            self.cache.withLock { $0.put(spec, image) }
            return image
        }
    }

    /// Renders `spec` now, on the calling thread (blocking).
    ///
    /// - Throws: An `ImagingError` when a libvips call fails.
    public static func render(_ spec: ImageSpec) throws -> [UInt8] {
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
                    let value =
                        Double(top[band]) * (1 - t) + Double(bottom[band]) * t + wobble
                        + Double(x) * Double(band - 1) * 2
                    pixels[(y * sourceWidth + x) * 3 + band] = UInt8(max(0, min(255, value)))
                }
            }
        }
        // Shapes drawn at full size: a few discs and a title band.
        let side = min(spec.width, spec.height)
        var discs: [DrawnPicture.Disc] = []
        for _ in 0..<3 {
            let ink = Self.colour(&random).map(Double.init)
            let x = random.int(0...spec.width)
            let y = random.int(0...spec.height)
            let radius = max(1, side * random.int(8...30) / 100)
            discs.append(DrawnPicture.Disc(x: x, y: y, radius: radius, ink: ink))
        }
        let band = DrawnPicture.Band(
            y: spec.height * 78 / 100,
            height: max(1, spec.height / 8),
            ink: Self.colour(&random).map { Double($0) * 0.35 }
        )
        let encoding: DrawnPicture.Encoding =
            switch spec.format {
            case .jpeg: .jpeg(quality: spec.quality)
            case .png: .png
            }
        return try DrawnPicture(
            background: pixels,
            backgroundWidth: sourceWidth,
            backgroundHeight: sourceHeight,
            width: spec.width,
            height: spec.height,
            discs: discs,
            band: band,
            orientation: spec.orientation,
            encoding: encoding
        ).render()
    }

    private static func colour(_ random: inout SeededRandom) -> [UInt8] {
        [UInt8(random.int(20...235)), UInt8(random.int(20...235)), UInt8(random.int(20...235))]
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
