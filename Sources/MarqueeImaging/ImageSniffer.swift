/// Recognises an input by its magic bytes (never by `Content-Type`), and names what it refuses.
enum ImageSniffer {
    /// The accepted format of `bytes`, or the refusal: ``ImagingError/Code/svg`` for SVG/XML,
    /// ``ImagingError/Code/unsupportedType`` for everything else that is not JPEG, PNG, WebP or GIF.
    static func format(of bytes: UnsafeRawBufferPointer) throws(ImagingError) -> ImageFormat {
        func starts(with magic: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + magic.count && zip(bytes[offset...], magic).allSatisfy { $0 == $1 }
        }
        if starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8)) { return .gif }
        if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) { return .webp }

        if let known = Self.knownUnsupported(bytes, starts: starts) {
            throw ImagingError(
                code: .unsupportedType,
                reason: "refused: \(known) is not an accepted image type (accepted: jpeg, png, webp, gif)"
            )
        }
        if let markup = Self.markup(bytes) {
            switch markup {
            case .svg:
                throw ImagingError(
                    code: .svg,
                    reason: "refused: an SVG/XML document (vector images are never rendered)"
                )
            case .html:
                throw ImagingError(code: .unsupportedType, reason: "refused: an HTML page, not an image")
            case .text:
                throw ImagingError(code: .unsupportedType, reason: "refused: text, not an image")
            }
        }
        let head = bytes.prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }
        throw ImagingError(
            code: .unsupportedType,
            reason: "refused: unknown type (first bytes \(head.joined(separator: " "))), not jpeg, png, webp or gif"
        )
    }

    /// Image and document types we recognise but refuse, by name (for a clearer reason).
    private static func knownUnsupported(
        _ bytes: UnsafeRawBufferPointer,
        starts: ([UInt8], Int) -> Bool
    ) -> String? {
        if starts([0x49, 0x49, 0x2A, 0x00], 0) || starts([0x4D, 0x4D, 0x00, 0x2A], 0) { return "TIFF" }
        if starts(Array("BM".utf8), 0) && bytes.count >= 26 { return "BMP" }
        if starts(Array("%PDF".utf8), 0) { return "PDF" }
        if starts(Array("ftyp".utf8), 4) { return "HEIF/AVIF/MP4 (ISO media)" }
        if starts([0x00, 0x00, 0x01, 0x00], 0) { return "ICO" }
        if starts([0xFF, 0x0A], 0) || starts([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20], 0) { return "JPEG XL" }
        if starts([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20], 0) || starts([0xFF, 0x4F, 0xFF, 0x51], 0) {
            return "JPEG 2000"
        }
        if starts(Array("8BPS".utf8), 0) { return "PSD" }
        return nil
    }

    private enum Markup { case svg, html, text }

    /// Classifies text input: XML/SVG, HTML, or other text (JSON, an error message …).
    private static func markup(_ bytes: UnsafeRawBufferPointer) -> Markup? {
        var start = 0
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { start = 3 }  // UTF-8 BOM
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        let head = bytes[start..<min(bytes.count, start + 1024)]
        guard !head.isEmpty else { return nil }
        // Text: printable ASCII, whitespace or UTF-8 lead/continuation bytes only.
        let isText = head.allSatisfy { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard isText else { return nil }
        let lower = String(decoding: head, as: UTF8.self).lowercased()
        if lower.hasPrefix("<?xml") || lower.hasPrefix("<svg") || lower.hasPrefix("<!doctype svg")
            || (lower.hasPrefix("<") && lower.contains("<svg"))
        {
            return .svg
        }
        if lower.hasPrefix("<!doctype html") || lower.hasPrefix("<html") || lower.hasPrefix("<head")
            || lower.hasPrefix("<body") || (lower.hasPrefix("<") && lower.contains("<html"))
        {
            return .html
        }
        return .text
    }
}
