/// An upstream API the fetch stage calls (docs/design.md, "Sources").
public enum Source: String, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    /// The Movie Database, API v3.
    case tmdb
    /// The Korean Film Council's open API (kobis).
    case kofic
    /// Kakao (Daum) search, used to find posters for KOFIC movies.
    case kakao
    /// Open Library: search, works and covers.
    case openLibrary = "openlibrary"

    /// The raw value, as it appears in logs and metrics.
    public var description: String { self.rawValue }
}
