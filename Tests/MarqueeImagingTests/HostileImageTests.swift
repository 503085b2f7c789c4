import Foundation
import Testing

@_spi(Testing) @testable import MarqueeImaging

/// Hostile images that are not refused by their header — a JPEG stuffed with megabytes of EXIF, a GIF with
/// thousands of frames — are handled in bounded time, from one decode of what matters, with nothing of the
/// junk carried into the variants.
@Suite(.serialized)
struct HostileImageTests {
    @Test func aJPEGWithMegabytesOfEXIFIsProcessedAndStripped() async throws {
        let jpeg = TestImages.jpeg(600, 900)
        // 100 APP1 segments of 64 KB each right after SOI: "Exif\0\0" and junk, 6.5 MB in all.
        var stuffed: [UInt8] = [0xFF, 0xD8]
        for index in 0..<100 {
            let body =
                Array("Exif\0\0".utf8) + [UInt8](repeating: UInt8(truncatingIfNeeded: index &* 37), count: 65_527)
            let length = body.count + 2
            stuffed += [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + body
        }
        stuffed += jpeg.dropFirst(2)
        #expect(stuffed.count > 6_000_000)

        let processor = try ImageProcessor(configuration: ImagingConfiguration())
        defer { Task { await processor.shutdown() } }
        let start = ContinuousClock.now
        let outcome: Result<ProcessedImage, any Error>
        do {
            outcome = .success(try await processor.process(stuffed))
        } catch {
            outcome = .failure(error)
        }
        #expect(ContinuousClock.now - start < .seconds(20))
        switch outcome {
        case .success(let image):
            #expect(image.original.width == 600 && image.original.height == 900)
            for variant in image.variants {
                #expect(
                    variant.data.count < 200_000,
                    "no EXIF carried into the \(variant.width) px \(variant.encoding)"
                )
            }
        case .failure(let error as ImagingError):
            // Refusing it is fine too, as long as it is a clear, permanent refusal.
            #expect(!error.isRetriable && !error.reason.isEmpty)
        case .failure(let error):
            Issue.record("unexpected error: \(error)")
        }
    }

    @Test func aGIFWithThousandsOfFramesGivesVariantsOfItsFirstFrameOnly() async throws {
        let gif = Self.animatedGIF(width: 300, height: 450, frames: 5_000)
        let processor = try ImageProcessor(configuration: ImagingConfiguration())
        defer { Task { await processor.shutdown() } }
        let start = ContinuousClock.now
        let image = try await processor.process(gif)
        #expect(ContinuousClock.now - start < .seconds(20), "only the first frame is decoded")
        #expect(image.original.format == .gif && image.original.width == 300 && image.original.height == 450)
        #expect(
            !image.variants.isEmpty
                && image.variants.allSatisfy { $0.height == $0.width * 3 / 2 || abs($0.height - $0.width * 3 / 2) <= 1 }
        )
    }

    /// A GIF89a with a 2-colour table and `frames` single-pixel frames (an animation loop), `width`×`height`.
    static func animatedGIF(width: Int, height: Int, frames: Int) -> [UInt8] {
        func little(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        var bytes = Array("GIF89a".utf8) + little(width) + little(height) + [0x80, 0x00, 0x00]
        bytes += [0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00]  // global colour table: white, black
        bytes += [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [0x03, 0x01, 0x00, 0x00, 0x00]  // loop forever
        for frame in 0..<frames {
            bytes += [0x21, 0xF9, 0x04, 0x00, 0x02, 0x00, 0x00, 0x00]  // graphic control: 20 ms
            bytes += [0x2C] + little(frame % width) + little(frame % height) + little(1) + little(1) + [0x00]
            bytes += [0x02, 0x02, 0x44, 0x01, 0x00]  // LZW: one pixel of colour 0
        }
        return bytes + [0x3B]
    }
}
