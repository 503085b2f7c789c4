import Foundation

/// Which upstream rendition of an image to download: the smallest that still covers the largest variant
/// (docs/imaging.md), instead of a 2000×3000 original.
///
/// Two URL shapes are known:
/// - TMDB's image CDN, `…/t/p/{size}/{file}` with sizes `w92`, `w154`, `w185`, `w342`, `w500`, `w780` and
///   `original`;
/// - Open Library Covers, `…/b/{id|isbn|olid}/{value}-{S|M|L}.jpg` (about 45, 180 and 500 pixels wide).
///
/// Any other URL is downloaded as it is.
public enum Rendition {
    /// TMDB's widths by size name, smallest first.
    static let tmdbSizes: [(name: String, width: Int)] = [
        ("w92", 92), ("w154", 154), ("w185", 185), ("w342", 342), ("w500", 500), ("w780", 780),
    ]
    /// Open Library's cover sizes and their nominal widths.
    static let coverSizes: [(name: String, width: Int)] = [("S", 45), ("M", 180), ("L", 500)]

    /// The URL to download for variants up to `largestWidth` pixels wide, and the rendition's name (`w500`,
    /// `L`, `original`, or `as given`).
    ///
    /// - Parameters:
    ///   - preferOriginal: Download the original whatever the widths (configuration asks for originals).
    public static func pick(
        for url: String,
        largestWidth: Int,
        preferOriginal: Bool = false
    ) -> (url: String, rendition: String) {
        if let tmdb = self.tmdb(url) {
            let size =
                preferOriginal ? "original" : (self.tmdbSizes.first { $0.width >= largestWidth }?.name ?? "original")
            return (tmdb.prefix + size + tmdb.suffix, size)
        }
        if let cover = self.cover(url) {
            // Open Library has nothing larger than L: it is the "original" here.
            let size = preferOriginal ? "L" : (self.coverSizes.first { $0.width >= largestWidth }?.name ?? "L")
            return (cover.prefix + size + cover.suffix, size)
        }
        return (url, "as given")
    }

    /// `(…/t/p/, /file.jpg)` around the size segment of a TMDB image URL.
    private static func tmdb(_ url: String) -> (prefix: String, suffix: String)? {
        guard let marker = url.range(of: "/t/p/") else { return nil }
        let rest = url[marker.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let size = rest[..<slash]
        guard size == "original" || self.tmdbSizes.contains(where: { $0.name == size }) else { return nil }
        return (String(url[..<marker.upperBound]), String(rest[slash...]))
    }

    /// `(…/b/id/123-, .jpg)` around the size letter of an Open Library cover URL.
    private static func cover(_ url: String) -> (prefix: String, suffix: String)? {
        guard url.contains("/b/id/") || url.contains("/b/isbn/") || url.contains("/b/olid/") else { return nil }
        for suffix in [".jpg", ".jpeg", ".png"] where url.hasSuffix(suffix) {
            let stem = url.dropLast(suffix.count)
            guard let letter = stem.last, "SML".contains(letter), stem.dropLast().last == "-" else { return nil }
            return (String(stem.dropLast()), suffix)
        }
        return nil
    }
}
