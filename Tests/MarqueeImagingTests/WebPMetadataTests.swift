import Testing

@testable import MarqueeImaging

struct WebPMetadataTests {
    @Test func dropsMetadataChunksAndFlags() {
        func chunk(_ fourCC: String, _ data: [UInt8]) -> [UInt8] {
            let size = UInt32(data.count)
            return Array(fourCC.utf8) + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) } + data
                + (data.count % 2 == 1 ? [0] : [])
        }
        func riff(_ chunks: [[UInt8]]) -> [UInt8] {
            let body = Array("WEBP".utf8) + chunks.flatMap { $0 }
            let size = UInt32(body.count)
            return Array("RIFF".utf8) + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) } + body
        }
        let vp8x = [0x2C as UInt8] + [UInt8](repeating: 0, count: 9)  // ICC + EXIF + XMP + alpha (0x10)
        let image = chunk("VP8 ", [1, 2, 3, 4, 5])
        let input = riff([
            chunk("VP8X", vp8x), chunk("ICCP", [9, 9]), image, chunk("EXIF", [7, 7, 7]), chunk("XMP ", [1]),
        ])
        let expected = riff([chunk("VP8X", [0x00] + [UInt8](repeating: 0, count: 9)), image])
        #expect(WebPMetadata.stripped(input) == expected)
        #expect(WebPMetadata.stripped(expected) == expected)
        #expect(WebPMetadata.stripped([1, 2, 3]) == [1, 2, 3])
    }
}
