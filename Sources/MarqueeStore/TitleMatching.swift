import Foundation

/// How a KOFIC movie and a TMDB movie are recognised as the same film (the `movie_links` table).
///
/// Titles are compared *folded*: Unicode compatibility forms unified (NFKC: full-width letters, compatibility
/// ideographs), lower-cased, and everything that is not a letter or a digit removed, so `기생충`, `기생충 ` and
/// `Parasite!` match `기생충` and `parasite`. A link also needs the years to agree within one (KOFIC's opening
/// year in Korea, else its production year, against TMDB's release year: Korean releases often come a year
/// after the first release elsewhere).
///
/// | method | KOFIC | TMDB |
/// |---|---|---|
/// | `title+year` | `title` (Korean) | a localized `title`, any language |
/// | `original-title+year` | `title_en` | `original_title` |
public enum TitleMatching {
    /// The folded form of a title (`nil` for `nil` or a title with no letter or digit).
    public static func fold(_ title: String?) -> String? {
        guard let title else { return nil }
        if let folded = Self.foldASCII(title) { return folded.isEmpty ? nil : folded }
        let folded = String(
            String.UnicodeScalarView(
                title.precomposedStringWithCompatibilityMapping.lowercased().unicodeScalars.filter {
                    $0.properties.isAlphabetic || $0.properties.numericType != nil
                }
            )
        )
        return folded.isEmpty ? nil : folded
    }

    /// The folded form of an all-ASCII title without Unicode normalization, which leaves ASCII as it is: the
    /// letters lowercased, the digits kept, the rest dropped (what ``fold(_:)`` gives for it). `nil` when the title
    /// has a byte outside ASCII.
    static func foldASCII(_ title: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(title.utf8.count)
        for byte in title.utf8 {
            switch byte {
            case 0x80...: return nil
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): bytes.append(byte + 0x20)
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): bytes.append(byte)
            default: continue
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
