public import MarqueeStore

// MARK: - StoredImage + text for people

extension StoredImage {
    /// The images table of a movie: role (IMAGE), the original's size, format and bytes, its VARIANTS, its
    /// dominant COLOUR and the start of its SHA-256.
    public static func table(_ images: [StoredImage]) -> String {
        var table = TextTable([
            .init(header: "IMAGE"), .init(header: "ORIGINAL"), .init(header: "VARIANTS", maxWidth: 80),
            .init(header: "COLOUR"), .init(header: "SHA-256", maxWidth: 14),
        ])
        for image in images {
            table.append([
                image.role, "\(image.width)×\(image.height) \(image.format) \(TextFormat.bytes(image.bytes))",
                image.variants.map { "\($0.width)w \($0.format) \(TextFormat.bytes($0.bytes))" }
                    .joined(separator: ", "),
                image.dominantColor ?? "–", image.sha256,
            ])
        }
        return table.render()
    }
}
