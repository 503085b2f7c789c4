public import MarqueeCore
import MarqueeJSON

/// Records for tests that need rows in the store without a crawl.
public enum TestRecords {
    /// The `image` record of `owner`'s poster `sha256`, with one 92 px WebP variant stored under `variantKey`.
    public static func poster(owner: String, sha256: String, variantKey: String, fetchedAt: Int64) -> Record {
        Record(
            kind: .image,
            key: "\(owner):poster",
            fetchedAt: fetchedAt,
            data: [
                "owner": .string(owner), "role": .string("poster"), "sha256": .string(sha256),
                "source_url": .string("https://image.tmdb.org/t/p/w500/poster.jpg"),
                "downloaded_url": .string("https://image.tmdb.org/t/p/w500/poster.jpg"), "rendition": .string("w500"),
                "original": .object([
                    "format": .string("jpeg"), "width": .integer(500), "height": .integer(750),
                    "bytes": .integer(80_000),
                ]),
                "variants": .array([
                    .object([
                        "width": .integer(92), "height": .integer(138), "format": .string("webp"),
                        "bytes": .integer(1_000), "key": .string(variantKey), "url": .null,
                    ])
                ]),
                "dominant_color": .string("#c83c28"), "blurhash": .null,
            ]
        )
    }
}
