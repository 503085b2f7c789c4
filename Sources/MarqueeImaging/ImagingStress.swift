import CMarqueeVips

/// A concurrency stress of ``ImageProcessor``: for tests and the imaging benchmark, never for production.
///
/// Every poster is submitted at once, so each of the pool's threads runs the imaging path back to back with the
/// others for the whole run. Small posters and many small widths make the run dense in libvips operation builds
/// and teardowns (each resize builds a `vips_reduce`), which is where a process-wide hazard in libvips or a library
/// under it shows up first: libvips 8.14 compiles ORC programs for every vertical reduce it builds and frees them
/// with the operation, and ORC 0.4.33's code allocator is not safe against that from several threads
/// (docs/imaging.md, "Vector code (ORC) is off").
@_spi(Testing) public enum ImagingStress {
    /// What a run did.
    public struct Report: Sendable, CustomStringConvertible {
        /// Posters processed (posters × rounds).
        public var processed: Int
        /// Variants made.
        public var variants: Int
        /// The processor's pool threads.
        public var threads: Int
        /// Whether libvips' vector (ORC) paths were on during the run.
        public var isVectorEnabled: Bool
        /// From the first submission to the last result.
        public var elapsed: Duration

        /// One line: `stress: processed=… variants=… threads=… vector=on|off elapsed_ms=…`.
        public var description: String {
            let (seconds, attoseconds) = self.elapsed.components
            let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
            return "stress: processed=\(self.processed) variants=\(self.variants) threads=\(self.threads) "
                + "vector=\(self.isVectorEnabled ? "on" : "off") elapsed_ms=\(milliseconds)"
        }
    }

    /// `count` JPEG posters of `width` × `height` like the emulator's: varied colours and noise, one in ten
    /// stored turned with EXIF orientation 6 or 8.
    ///
    /// - Throws: An ``ImagingError`` if libvips cannot render one.
    public static func posters(count: Int, width: Int = 64, height: Int = 96) throws(ImagingError) -> [[UInt8]] {
        var posters: [[UInt8]] = []
        posters.reserveCapacity(count)
        for index in 0..<count {
            var spec = SyntheticImage.Spec(
                width: width,
                height: height,
                pattern: .random(seed: UInt64(index) &* 7919 &+ 3),
                encoding: .jpeg(quality: 80 + index % 3 * 5)
            )
            spec.noise = Double(2 + index % 5 * 2)
            if index % 10 == 9 { spec.orientation = index % 20 == 9 ? 6 : 8 }
            posters.append(try SyntheticImage.render(spec))
        }
        return posters
    }

    /// The processor settings of a stress: `threads` pool threads, WebP only, the poster's own width, and every
    /// width from an eighth to a quarter of it.
    ///
    /// Reducing by 4 to 8 gives `vips_reduce` its longest kernels, and libvips 8.14 builds one ORC program per
    /// few taps of a vertical reduce (10 for a factor of 8, 2 for 1.5), while such small variants cost little to
    /// encode: most of a poster's time goes to building and freeing operations.
    public static func configuration(threads: Int, posterWidth: Int = 64) -> ImagingConfiguration {
        var configuration = ImagingConfiguration()
        configuration.threads = threads
        configuration.writesJPEGFallback = false
        let smallest = max(1, posterWidth / 8)
        configuration.widths = Array(smallest...max(smallest, posterWidth / 4)) + [posterWidth]
        return configuration
    }

    /// Processes every poster `rounds` times on one processor, everything submitted at once, and checks that
    /// each result has one variant per expected width.
    ///
    /// - Throws: An ``ImagingError`` from the processor, or one with code ``ImagingError/Code/internal`` when a
    ///   result is short of variants.
    public static func run(
        _ posters: [[UInt8]],
        configuration: ImagingConfiguration,
        rounds: Int = 1
    ) async throws -> Report {
        let processor = try ImageProcessor(configuration: configuration)
        let clock = ContinuousClock()
        let start = clock.now
        let processed: Int
        let variants: Int
        do {
            (processed, variants) = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<rounds {
                    for poster in posters {
                        group.addTask {
                            let image = try await processor.process(poster)
                            let expected = configuration.outputWidths(forOriginalWidth: image.original.uprightWidth)
                            guard image.variants.map(\.width) == expected else {
                                throw ImagingError(
                                    code: .internal,
                                    reason: "variants \(image.variants.map(\.width)), expected \(expected)"
                                )
                            }
                            return image.variants.count
                        }
                    }
                }
                var processed = 0
                var variants = 0
                for try await count in group {
                    processed += 1
                    variants += count
                }
                return (processed, variants)
            }
        } catch {
            await processor.shutdown()
            throw error
        }
        let elapsed = clock.now - start
        await processor.shutdown()
        return Report(
            processed: processed,
            variants: variants,
            threads: configuration.threads,
            isVectorEnabled: Vips.isVectorEnabled,
            elapsed: elapsed
        )
    }
}
