import MarqueeCore
import MarqueeImageStore
import MarqueeImaging
import MarqueeJSON

import struct Foundation.Data
import class Foundation.JSONDecoder
import class Foundation.JSONEncoder

/// What processing one original produced: its hash, what it was, the stored variants and the placeholder. Kept
/// as a manifest next to the variants, so the same bytes met again need no decoding.
struct ImageOutcome: Codable, Sendable, Hashable {
    struct Variant: Codable, Sendable, Hashable {
        var width: Int
        var height: Int
        var format: String
        var bytes: Int
        var key: ImageKey
    }

    struct Original: Codable, Sendable, Hashable {
        var format: String
        var width: Int
        var height: Int
        var bytes: Int
    }

    var sha256: String
    var original: Original
    var variants: [Variant]
    var dominantColor: String
    var blurHash: String

    init(sha256: String, original: ImageProbe, variants: [Variant], placeholder: ImagePlaceholder) {
        self.sha256 = sha256
        self.original = Original(
            format: original.format.rawValue,
            width: original.width,
            height: original.height,
            bytes: original.bytes
        )
        self.variants = variants
        self.dominantColor = placeholder.dominantColor
        self.blurHash = placeholder.blurHash
    }

    /// Reads a stored manifest; `nil` when it is not one (it is then written again).
    init?(manifest: [UInt8]) {
        guard let outcome = try? JSONDecoder().decode(ImageOutcome.self, from: Data(manifest)) else { return nil }
        self = outcome
    }

    var manifest: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain strings and numbers cannot fail.
        return Array((try? encoder.encode(self)) ?? Data())
    }
}

/// The `image` record of one job: the stored image and its link to the owning entity (docs/records.md).
struct ImageRecord {
    let job: ImageJob
    let downloadedURL: String
    let rendition: String
    let outcome: ImageOutcome
    let store: any ImageStore

    /// Keyed by owner and role (an entity has one poster, one cover…; a newer one replaces it), carrying the
    /// image's own natural key, its hash.
    func record(fetchedAt: Int64) -> Record {
        Record(
            kind: .image,
            key: "\(self.job.owner):\(self.job.role.rawValue)",
            fetchedAt: fetchedAt,
            data: [
                "owner": .string(self.job.owner),
                "role": .string(self.job.role.rawValue),
                "sha256": .string(self.outcome.sha256),
                "source_url": .string(self.job.url),
                "downloaded_url": .string(self.downloadedURL),
                "rendition": .string(self.rendition),
                "original": .object([
                    "format": .string(self.outcome.original.format),
                    "width": .integer(Int64(self.outcome.original.width)),
                    "height": .integer(Int64(self.outcome.original.height)),
                    "bytes": .integer(Int64(self.outcome.original.bytes)),
                ]),
                "variants": .array(
                    self.outcome.variants.map { variant in
                        .object([
                            "width": .integer(Int64(variant.width)),
                            "height": .integer(Int64(variant.height)),
                            "format": .string(variant.format),
                            "bytes": .integer(Int64(variant.bytes)),
                            "key": .string(variant.key.rawValue),
                            "url": .string(self.store.url(for: variant.key)),
                        ])
                    }
                ),
                "dominant_color": .string(self.outcome.dominantColor),
                "blurhash": .string(self.outcome.blurHash),
            ]
        )
    }
}
