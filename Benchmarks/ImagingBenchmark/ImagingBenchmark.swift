// Throughput of the image worker's imaging path (MarqueeImaging), for `make bench-images`
// (scripts/bench-images.sh), which runs it side by side with vipsthumbnail and ImageMagick on the same inputs.
//
//   ImagingBenchmark generate --out DIR [--count 30] [--width 2000] [--height 3000]
//   ImagingBenchmark run --input DIR --out DIR [--threads N] [--jpeg-fallback]
//   ImagingBenchmark stress [--posters 300] [--width 64] [--height 96] [--threads 8] [--rounds 3]
//
// run prints one machine-readable line on standard output:
//   posters_per_sec=… elapsed_ms=… posters=… variants=… bytes_out=… peak_rss_mb=…
// Timed: from the first file read to the last variant written (the processor's threads are started before the
// clock starts). Each poster is read from disk, processed with ImageProcessor.process (default widths 92, 185,
// 342, 500 and WebP quality 80) and its variants written to --out, at most 2 × threads posters in flight.
//
// stress runs the imaging path from many pool threads at once on small generated posters (ImagingStress, the
// same stress as Tests/MarqueeImagingTests/ImagingStressTests.swift) and prints one line:
//   stress: processed=… variants=… threads=… vector=on|off elapsed_ms=…
// It exits 0 when every poster gave its variants; a crash of libvips or a library under it kills the process.
import ArgumentParser
@_spi(Testing) import MarqueeImaging

import struct Foundation.Data
import class Foundation.FileManager
import struct Foundation.URL

@main
struct ImagingBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ImagingBenchmark",
        abstract: "Measure MarqueeImaging's poster throughput (make bench-images).",
        subcommands: [Generate.self, Run.self, Stress.self]
    )
}

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write varied synthetic poster JPEGs.")

    @Option(help: "Output directory.") var out: String
    @Option(help: "How many posters.") var count = 30
    @Option(help: "Width in pixels.") var width = 2000
    @Option(help: "Height in pixels.") var height = 3000

    func run() throws {
        try ImageProcessor.globalInit()
        try FileManager.default.createDirectory(atPath: self.out, withIntermediateDirectories: true)
        var total = 0
        for index in 0..<self.count {
            // Varied: random colour grids, noise from 4 to 14 levels (photo-like entropy), quality 85–95.
            var spec = SyntheticImage.Spec(
                width: self.width,
                height: self.height,
                pattern: .random(seed: UInt64(index) &* 7919 &+ 1),
                encoding: .jpeg(quality: 85 + index % 3 * 5)
            )
            spec.noise = Double(4 + index % 6 * 2)
            let bytes = try SyntheticImage.render(spec)
            let name = "poster-\(String(index + 1000).dropFirst()).jpg"
            try Data(bytes).write(to: URL(fileURLWithPath: self.out).appendingPathComponent(name))
            total += bytes.count
        }
        print("generated=\(self.count) bytes=\(total) width=\(self.width) height=\(self.height)")
    }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Process every .jpg of a directory, timed.")

    @Option(help: "Directory of .jpg originals.") var input: String
    @Option(help: "Directory for the variants.") var out: String
    @Option(help: "Processor threads (default: the active processor count).") var threads: Int?
    @Flag(help: "Also write the JPEG fallback of every width.") var jpegFallback = false

    func run() async throws {
        var configuration = ImagingConfiguration()
        configuration.writesJPEGFallback = self.jpegFallback
        if let threads = self.threads { configuration.threads = threads }
        let processor = try ImageProcessor(configuration: configuration)
        try FileManager.default.createDirectory(atPath: self.out, withIntermediateDirectories: true)
        let names = try FileManager.default.contentsOfDirectory(atPath: self.input).filter { $0.hasSuffix(".jpg") }
            .sorted()
        guard !names.isEmpty else { throw ValidationError("no .jpg in \(self.input)") }
        let input = self.input
        let out = self.out
        let window = configuration.threads * 2

        let clock = ContinuousClock()
        let start = clock.now
        let (variants, bytesOut) = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            var next = 0
            var variants = 0
            var bytesOut = 0
            func submit(_ name: String) {
                group.addTask {
                    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input).appendingPathComponent(name)))
                    let image = try await processor.process(bytes)
                    var written = 0
                    let stem = name.dropLast(4)
                    for variant in image.variants {
                        let file = "\(stem)_\(variant.width).\(variant.encoding.rawValue)"
                        try Data(variant.data).write(to: URL(fileURLWithPath: out).appendingPathComponent(file))
                        written += variant.data.count
                    }
                    return (image.variants.count, written)
                }
            }
            while next < min(window, names.count) {
                submit(names[next])
                next += 1
            }
            while let (count, written) = try await group.next() {
                variants += count
                bytesOut += written
                if next < names.count {
                    submit(names[next])
                    next += 1
                }
            }
            return (variants, bytesOut)
        }
        let elapsed = clock.now - start
        await processor.shutdown()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let peak = Self.peakRSSMegabytes()
        print(
            "posters_per_sec=\(String(format2: Double(names.count) / seconds)) elapsed_ms=\(Int(seconds * 1000)) "
                + "posters=\(names.count) variants=\(variants) bytes_out=\(bytesOut) threads=\(configuration.threads) "
                + "peak_rss_mb=\(peak)"
        )
    }

    /// VmHWM of this process, in MB.
    static func peakRSSMegabytes() -> Int {
        guard let data = FileManager.default.contents(atPath: "/proc/self/status") else { return -1 }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? -1024) / 1024
        }
        return -1
    }
}

struct Stress: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the imaging path from many pool threads at once on small generated posters."
    )

    @Option(help: "Posters to generate.") var posters = 300
    @Option(help: "Poster width in pixels (variants: this width, and every width from an eighth to a quarter of it).")
    var width = 64
    @Option(help: "Poster height in pixels.") var height = 96
    @Option(help: "Processor threads.") var threads = 8
    @Option(help: "Times every poster is processed.") var rounds = 3

    func validate() throws {
        guard self.posters > 0, self.rounds > 0, self.threads > 0, self.width > 0, self.height > 0 else {
            throw ValidationError("every option must be positive")
        }
    }

    func run() async throws {
        let posters = try ImagingStress.posters(count: self.posters, width: self.width, height: self.height)
        let report = try await ImagingStress.run(
            posters,
            configuration: ImagingStress.configuration(threads: self.threads, posterWidth: self.width),
            rounds: self.rounds
        )
        print(report)
    }
}

extension String {
    /// `value` with two decimals.
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        self = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
