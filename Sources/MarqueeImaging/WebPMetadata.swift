/// Removes metadata chunks from a WebP file.
///
/// libvips 8.14.1 (Debian bookworm) writes an EXIF chunk (orientation, resolution, pixel size …) into every WebP
/// even when asked to strip metadata. The container is simple RIFF, so the chunks are dropped here: `EXIF`,
/// `XMP ` and `ICCP` go, their flags in the `VP8X` header are cleared, and the RIFF size is rewritten. The image
/// data chunks (`VP8 `, `VP8L`, `ALPH`, `ANIM`/`ANMF`) are copied unchanged.
enum WebPMetadata {
    private static let metadataChunks: Set<[UInt8]> = [Array("EXIF".utf8), Array("XMP ".utf8), Array("ICCP".utf8)]
    /// VP8X flag bits: ICC profile (0x20), EXIF (0x08), XMP (0x04).
    private static let metadataFlags: UInt8 = 0x20 | 0x08 | 0x04

    /// `webp` without metadata chunks; unchanged if it has none or is not a well-formed WebP.
    static func stripped(_ webp: [UInt8]) -> [UInt8] {
        guard webp.count >= 12, webp[0..<4].elementsEqual("RIFF".utf8), webp[8..<12].elementsEqual("WEBP".utf8)
        else { return webp }
        var output: [UInt8] = Array(webp[0..<12])
        output.reserveCapacity(webp.count)
        var offset = 12
        var removed = false
        while offset + 8 <= webp.count {
            let fourCC = Array(webp[offset..<offset + 4])
            let size =
                Int(webp[offset + 4]) | Int(webp[offset + 5]) << 8 | Int(webp[offset + 6]) << 16
                | Int(webp[offset + 7]) << 24
            let end = offset + 8 + size + (size & 1)  // chunks are padded to an even size
            guard end <= webp.count || (end == webp.count + 1 && size & 1 == 1) else { return webp }
            let chunkEnd = min(end, webp.count)
            if Self.metadataChunks.contains(fourCC) {
                removed = true
            } else {
                let start = output.count
                output += webp[offset..<chunkEnd]
                if fourCC.elementsEqual("VP8X".utf8), size >= 1 {
                    output[start + 8] &= ~Self.metadataFlags
                }
            }
            offset = end
        }
        guard removed else { return webp }
        let riffSize = UInt32(output.count - 8)
        for byte in 0..<4 { output[4 + byte] = UInt8(truncatingIfNeeded: riffSize >> (8 * byte)) }
        return output
    }
}
