import CMarqueeVips
import Cvips
import Foundation

@_spi(Testing) @testable import MarqueeImaging

/// An encoded output decoded again with libvips, to look at its pixels and header.
struct DecodedImage {
    var width: Int
    var height: Int
    var bands: Int
    var format: VipsBandFormat
    var interpretation: VipsInterpretation
    var loader: String?
    var hasEXIF: Bool
    var hasICC: Bool
    var hasXMP: Bool
    var pixels: [UInt8]

    init(_ bytes: [UInt8]) throws {
        try ImageProcessor.globalInit()
        let image = try bytes.withUnsafeBytes { raw in
            guard let image = CMarqueeVips_image_new_from_buffer(raw.baseAddress!, raw.count, "fail_on=error", 0) else {
                throw TestFailure("decode: \(Vips.lastError())")
            }
            return VipsImageRef(owning: image)
        }
        self.width = image.width
        self.height = image.height
        self.bands = image.bands
        self.format = image.format
        self.interpretation = image.interpretation
        self.loader = image.string("vips-loader")
        self.hasEXIF = image.has("exif-data")
        self.hasICC = image.has("icc-profile-data")
        self.hasXMP = image.has("xmp-data")
        self.pixels = try image.pixelBytes()
    }

    /// The samples of the pixel at (x, y) (8-bit images only).
    func pixel(_ x: Int, _ y: Int) -> [Int] {
        let start = (y * self.width + x) * self.bands
        return self.pixels[start..<start + self.bands].map(Int.init)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum TestImages {
    static func render(_ spec: SyntheticImage.Spec) -> [UInt8] {
        try! SyntheticImage.render(spec)
    }

    static func jpeg(
        _ width: Int,
        _ height: Int,
        _ pattern: SyntheticImage.Pattern = .random(seed: 1),
        quality: Int = 90,
        configure: (inout SyntheticImage.Spec) -> Void = { _ in }
    ) -> [UInt8] {
        var spec = SyntheticImage.Spec(
            width: width,
            height: height,
            pattern: pattern,
            encoding: .jpeg(quality: quality)
        )
        configure(&spec)
        return Self.render(spec)
    }

    static func png(
        _ width: Int,
        _ height: Int,
        _ pattern: SyntheticImage.Pattern = .random(seed: 2),
        configure: (inout SyntheticImage.Spec) -> Void = { _ in }
    ) -> [UInt8] {
        var spec = SyntheticImage.Spec(width: width, height: height, pattern: pattern, encoding: .png)
        configure(&spec)
        return Self.render(spec)
    }

    /// A decompression bomb written by hand (``SyntheticImage/bombPNG(width:height:)``).
    static func bombPNG(width: UInt32 = 50_000, height: UInt32 = 50_000) -> [UInt8] {
        SyntheticImage.bombPNG(width: width, height: height)
    }
}

/// This process's memory from /proc/self/status, in bytes.
enum ProcessMemory {
    static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return digits.map { $0 * 1024 }
        }
        return nil
    }

    /// Resets the peak (VmHWM) to the current RSS ("5" → /proc/self/clear_refs, Linux ≥ 4.0); false if refused.
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}

extension DecodedImage: CustomStringConvertible {
    /// Short, so a failed expectation does not print every pixel.
    var description: String { "\(self.width)×\(self.height)×\(self.bands) (\(self.loader ?? "?"))" }
}
