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
        let folded = String(
            String.UnicodeScalarView(
                title.precomposedStringWithCompatibilityMapping.lowercased().unicodeScalars.filter {
                    $0.properties.isAlphabetic || $0.properties.numericType != nil
                }
            )
        )
        return folded.isEmpty ? nil : folded
    }
}
