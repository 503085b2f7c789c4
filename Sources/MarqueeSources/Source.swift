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
    /// The source's name in log lines and `/readyz`.
    public var displayName: String {
        switch self {
        case .tmdb: "TMDB"
        case .kofic: "KOFIC"
        case .kakao: "Kakao"
        case .openLibrary: "Open Library"
        }
    }

    /// The environment variable that holds the source's key; `nil` for Open Library, which needs none.
    public var keyVariable: String? {
        switch self {
        case .tmdb: "TMDB_API_KEY"
        case .kofic: "KOFIC_API_KEY"
        case .kakao: "KAKAO_REST_API_KEY"
        case .openLibrary: nil
        }
    }
}
