import Cvips
import Foundation
import Testing

@_spi(Testing) @testable import MarqueeImaging

/// All imaging tests run one at a time: the memory test reads the process's peak RSS.
@Suite(.serialized)
struct ImageProcessorTests {
    let processor: ImageProcessor

    init() throws {
        self.processor = try ImageProcessor(configuration: ImagingConfiguration())
    }

    /// Runs `body` with the processor, and shuts it down afterwards.
    func withProcessor<T>(_ body: (ImageProcessor) async throws -> T) async throws -> T {
        do {
            let result = try await body(self.processor)
            await self.processor.shutdown()
            return result
        } catch {
            await self.processor.shutdown()
            throw error
        }
    }

    static func webp(_ image: ProcessedImage) -> [ImageVariant] { image.variants.filter { $0.encoding == .webp } }
    static func jpeg(_ image: ProcessedImage) -> [ImageVariant] { image.variants.filter { $0.encoding == .jpeg } }

    // MARK: - Orientation, colour, alpha, sizes

    @Test func exifRotatedJPEGGivesUprightVariants() async throws {
        // Upright 400×600, red on top, blue below; stored as 600×400 with orientation 6.
        let bytes = TestImages.jpeg(400, 600, .split(top: [220, 30, 30], bottom: [30, 30, 220])) { $0.orientation = 6 }
        let probe = try self.processor.probe(bytes)
        #expect(probe.format == .jpeg && probe.width == 600 && probe.height == 400 && probe.orientation == 6)
        #expect(probe.uprightWidth == 400 && probe.uprightHeight == 600)

        let image = try await self.withProcessor { try await $0.process(bytes) }
        let webp = Self.webp(image)
        #expect(webp.map(\.width) == [92, 185, 342, 400])
        #expect(webp.map(\.height) == [92, 185, 342, 400].map { Int((Double($0) * 1.5).rounded()) })
        #expect(Self.jpeg(image).map(\.width) == [92, 185, 342, 400])
        for variant in image.variants {
            let decoded = try DecodedImage(variant.data)
            #expect(decoded.width == variant.width && decoded.height == variant.height)
            #expect(variant.contentType == (variant.encoding == .webp ? "image/webp" : "image/jpeg"))
            // Upright: red at the top, blue at the bottom.
            let top = decoded.pixel(decoded.width / 2, decoded.height / 8)
            let bottom = decoded.pixel(decoded.width / 2, decoded.height * 7 / 8)
            #expect(top[0] > 150 && top[2] < 90, "top \(top) of \(variant.width) \(variant.encoding)")
            #expect(bottom[2] > 150 && bottom[0] < 90, "bottom \(bottom) of \(variant.width) \(variant.encoding)")
        }
    }

    @Test func cmykJPEGBecomesSRGB() async throws {
        let bytes = TestImages.jpeg(600, 900, .solid([200, 40, 40])) { $0.isCMYK = true }
        let probe = try self.processor.probe(bytes)
        #expect(probe.format == .jpeg)
        let image = try await self.withProcessor { try await $0.process(bytes) }
        for variant in image.variants {
            let decoded = try DecodedImage(variant.data)
            #expect(decoded.bands == 3, "\(variant.encoding) \(variant.width)")
            #expect(decoded.format == VIPS_FORMAT_UCHAR && decoded.interpretation == VIPS_INTERPRETATION_sRGB)
            let centre = decoded.pixel(decoded.width / 2, decoded.height / 2)
            #expect(centre[0] > centre[1] + 60 && centre[0] > centre[2] + 60, "reddish: \(centre)")
        }
    }

    @Test func sixteenBitPNGBecomesEightBitSRGB() async throws {
        let bytes = TestImages.png(600, 900, .solid([64, 128, 192])) { $0.isSixteenBit = true }
        #expect(try self.processor.probe(bytes).format == .png)
        let image = try await self.withProcessor { try await $0.process(bytes) }
        for variant in image.variants {
            let decoded = try DecodedImage(variant.data)
            #expect(decoded.bands == 3 && decoded.format == VIPS_FORMAT_UCHAR)
            #expect(decoded.interpretation == VIPS_INTERPRETATION_sRGB)
            let centre = decoded.pixel(decoded.width / 2, decoded.height / 2)
            #expect(zip(centre, [64, 128, 192]).allSatisfy { abs($0 - $1) <= 4 }, "\(centre)")
        }
    }

    @Test(arguments: [
        SyntheticImage.Encoding.png, .webp(quality: 90),
    ])
    func alphaIsKeptInWebPAndFlattenedInJPEG(_ encoding: SyntheticImage.Encoding) async throws {
        var spec = SyntheticImage.Spec(width: 400, height: 600, pattern: .solid([30, 160, 30]), encoding: encoding)
        spec.hasAlpha = true
        let bytes = TestImages.render(spec)
        #expect(try self.processor.probe(bytes).hasAlpha)
        let image = try await self.withProcessor { try await $0.process(bytes) }
        for variant in Self.webp(image) {
            let decoded = try DecodedImage(variant.data)
            #expect(decoded.bands == 4, "WebP \(variant.width) keeps alpha")
            #expect(decoded.pixel(decoded.width / 2, decoded.height / 8)[3] > 240)
            #expect(decoded.pixel(decoded.width / 2, decoded.height * 7 / 8)[3] < 15)
        }
        for variant in Self.jpeg(image) {
            let decoded = try DecodedImage(variant.data)
            #expect(decoded.bands == 3)
            let bottom = decoded.pixel(decoded.width / 2, decoded.height * 7 / 8)
            #expect(bottom.allSatisfy { $0 > 240 }, "transparent becomes white: \(bottom)")
        }
    }

    @Test func variantsNeverUpscale() async throws {
        let small = TestImages.jpeg(300, 450)
        let tiny = TestImages.png(50, 40)
        let (first, second) = try await self.withProcessor { processor in
            (try await processor.process(small), try await processor.process(tiny))
        }
        #expect(Self.webp(first).map(\.width) == [92, 185, 300])
        #expect(Self.webp(first).map(\.height) == [138, 278, 450])
        #expect(Self.webp(second).map(\.width) == [50])
        #expect(Self.webp(second).map(\.height) == [40])
        for variant in first.variants + second.variants {
            let decoded = try DecodedImage(variant.data)
            #expect(decoded.width == variant.width && decoded.height == variant.height)
        }
    }

    @Test func gifGivesVariantsFromItsFirstFrame() async throws {
        let bytes = TestImages.render(
            SyntheticImage.Spec(
                width: 240,
                height: 360,
                pattern: .split(top: [250, 250, 0], bottom: [0, 0, 0]),
                encoding: .gif
            )
        )
        let probe = try self.processor.probe(bytes)
        #expect(probe.format == .gif && probe.width == 240 && probe.height == 360)
        let image = try await self.withProcessor { try await $0.process(bytes) }
        #expect(Self.webp(image).map(\.width) == [92, 185, 240])
        let decoded = try DecodedImage(try #require(Self.jpeg(image).last).data)
        let top = decoded.pixel(decoded.width / 2, decoded.height / 8)
        #expect(top[0] > 200 && top[1] > 200 && top[2] < 60, "yellow top: \(top)")
    }

    @Test func outputsCarryNoMetadata() async throws {
        let bytes = TestImages.jpeg(500, 750) {
            $0.orientation = 6
            $0.embedsICCProfile = true
        }
        let source = try DecodedImage(bytes)
        let (sourceEXIF, sourceICC) = (source.hasEXIF, source.hasICC)
        #expect(sourceEXIF && sourceICC, "the input does carry EXIF and ICC")
        let image = try await self.withProcessor { try await $0.process(bytes) }
        #expect(image.variants.count == 8)
        for variant in image.variants {
            let decoded = try DecodedImage(variant.data)
            let (exif, icc, xmp) = (decoded.hasEXIF, decoded.hasICC, decoded.hasXMP)
            #expect(!exif, "EXIF in \(variant.encoding) \(variant.width)")
            #expect(!icc, "ICC in \(variant.encoding) \(variant.width)")
            #expect(!xmp, "XMP in \(variant.encoding) \(variant.width)")
        }
    }

    @Test func webpOnlyWhenTheFallbackIsOff() async throws {
        var configuration = ImagingConfiguration()
        configuration.writesJPEGFallback = false
        configuration.widths = [500, 92, 92]
        let processor = try ImageProcessor(configuration: configuration)
        let image = try await processor.process(TestImages.jpeg(1000, 1500))
        await processor.shutdown()
        await self.processor.shutdown()
        #expect(image.variants.map(\.width) == [92, 500])
        #expect(image.variants.allSatisfy { $0.encoding == .webp })
    }

    // MARK: - Placeholder

    @Test func placeholderIsDeterministic() async throws {
        let bytes = TestImages.jpeg(800, 1200, .random(seed: 7))
        let solid = TestImages.png(300, 300, .solid([12, 200, 99]))
        let (a, b, c) = try await self.withProcessor { processor in
            (try await processor.process(bytes), try await processor.process(bytes), try await processor.process(solid))
        }
        #expect(a.placeholder == b.placeholder)
        let alphabet = Set(BlurHash.alphabet)
        for placeholder in [a.placeholder, c.placeholder] {
            #expect(placeholder.blurHash.utf8.count == 28)
            #expect(placeholder.blurHash.utf8.allSatisfy { alphabet.contains($0) })
            #expect(placeholder.blurHash.hasPrefix("L"), "4 × 3 components")
            #expect(placeholder.dominantColor.wholeMatch(of: /#[0-9a-f]{6}/) != nil)
        }
        #expect(c.placeholder.dominantColor == "#0cc863")
    }

    // MARK: - Refusals

    @Test func refusals() async throws {
        var truncated = TestImages.jpeg(800, 1200)
        truncated.removeLast(truncated.count * 2 / 5)
        var random = SplitMix64(seed: 42)
        let cases: [(String, [UInt8], ImagingError.Code, String)] = [
            ("bomb", TestImages.bombPNG(), .tooManyPixels, "refused: 50000×50000 pixels is over the cap of 50000000"),
            ("truncated JPEG", truncated, .corrupt, "jpeg"),
            ("zero bytes", [], .empty, "zero bytes"),
            ("SVG", Array(#"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>"#.utf8), .svg, "SVG"),
            ("bare SVG", Array("  <svg width=\"10\" height=\"10\"></svg>".utf8), .svg, "SVG"),
            ("HTML", Array("<!DOCTYPE html><html><body>Not found</body></html>".utf8), .unsupportedType, "HTML"),
            ("random", (0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) }, .unsupportedType, "unknown"),
            ("TIFF", [0x49, 0x49, 0x2A, 0x00] + [UInt8](repeating: 0, count: 64), .unsupportedType, "TIFF"),
            ("JPEG magic, no JPEG", [0xFF, 0xD8, 0xFF, 0xE0, 0, 0, 0, 0], .corrupt, "jpeg"),
        ]
        #expect(TestImages.bombPNG().count < 1024)
        try await self.withProcessor { processor in
            for (name, bytes, code, phrase) in cases {
                let clock = ContinuousClock()
                let start = clock.now
                let error = await #expect(throws: ImagingError.self, "\(name)") { try await processor.process(bytes) }
                let elapsed = clock.now - start
                #expect(error?.code == code, "\(name): \(error.map(String.init(describing:)) ?? "no error")")
                #expect(error?.reason.contains(phrase) == true, "\(name): \(error?.reason ?? "")")
                #expect(error?.isRetriable == false)
                // Refusals take microseconds; decoding a bomb would take about a minute. The bound leaves room for a
                // loaded machine running other suites at the same time.
                #expect(elapsed < .seconds(5), "\(name) took \(elapsed)")
            }
            // The header-level refusals also come from probe, without the pool.
            #expect(throws: ImagingError.self) { try processor.probe(TestImages.bombPNG()) }
        }
    }

    @Test func sizeCapRefusesBeforeReading() async throws {
        var configuration = ImagingConfiguration()
        configuration.maxBytes = 1000
        let processor = try ImageProcessor(configuration: configuration)
        await processor.shutdown()
        await self.processor.shutdown()
        let error = #expect(throws: ImagingError.self) { try processor.probe(TestImages.jpeg(200, 300)) }
        #expect(error?.code == .tooLarge)
        #expect(error?.reason.contains("over the cap of 1000 bytes") == true)
    }

    @Test func badConfigurationAndShutdown() async throws {
        var configuration = ImagingConfiguration()
        configuration.webpQuality = 0
        #expect(throws: ImagingError.self) { try ImageProcessor(configuration: configuration) }
        await self.processor.shutdown()
        let error = await #expect(throws: ImagingError.self) {
            try await self.processor.process(TestImages.jpeg(20, 30))
        }
        #expect(error?.code == .shutdown)
    }

    // MARK: - Memory

    @Test func peakMemoryStaysBounded() async throws {
        // Four distinct 2000×3000 posters with photo-like noise, each processed five times: 20 posters.
        let posters = (0..<4).map { seed in
            TestImages.jpeg(2000, 3000, .random(seed: UInt64(seed)), quality: 90) { $0.noise = 10 }
        }
        let bomb = TestImages.bombPNG()
        let canReset = ProcessMemory.resetPeak()
        let baseline = try #require(ProcessMemory.field("VmRSS"))
        let peakBefore = try #require(ProcessMemory.field("VmHWM"))
        let processed = try await self.withProcessor { processor in
            let bombError = await #expect(throws: ImagingError.self) { try await processor.process(bomb) }
            #expect(bombError?.code == .tooManyPixels)
            return try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask { try await processor.process(posters[index % 4]).variants.count }
                }
                return try await group.reduce(0, +)
            }
        }
        #expect(processed == 20 * 8)
        let peak = try #require(ProcessMemory.field("VmHWM"))
        // Without a reset, the peak is the process's own high-water mark so far: measure the growth.
        let growth = canReset ? peak - baseline : peak - peakBefore
        print(
            "imaging memory: baseline RSS \(baseline >> 20) MB, peak \(peak >> 20) MB, growth \(growth >> 20) MB (reset \(canReset))"
        )
        // A full-size decode of one poster alone would be 18 MB per thread; the bomb 7.5 GB.
        #expect(growth < 150 << 20, "peak grew by \(growth >> 20) MB")
    }
}
