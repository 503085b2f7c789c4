/// The base URL of each upstream under one emulator address, as the fetch worker's configuration names them.
public struct UpstreamURLs: Sendable, Equatable {
    /// `http://127.0.0.1:PORT`.
    public let base: String

    /// The URLs under `base` (no trailing slash).
    public init(base: String) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    /// `TMDB_BASE_URL`: `<base>/tmdb/3`.
    public var tmdb: String { self.base + "/tmdb/3" }
    /// `TMDB_V4_BASE_URL`: `<base>/tmdb/4` (the v4 account API, read with a user access token).
    public var tmdbV4: String { self.base + "/tmdb/4" }
    /// `TMDB_IMAGE_BASE_URL`: `<base>/tmdb-images/t/p`.
    public var tmdbImages: String { self.base + "/tmdb-images/t/p" }
    /// `TMDB_EXPORT_BASE_URL`: `<base>/tmdb-files/p/exports` (the daily id exports).
    public var tmdbExports: String { self.base + "/tmdb-files/p/exports" }
    /// `KOFIC_BASE_URL`: `<base>/kofic/kobisopenapi/webservice/rest`.
    public var kofic: String { self.base + "/kofic/kobisopenapi/webservice/rest" }
    /// `KAKAO_BASE_URL`: `<base>/kakao`.
    public var kakao: String { self.base + "/kakao" }
    /// `OPENLIBRARY_BASE_URL`: `<base>/openlibrary`.
    public var openLibrary: String { self.base + "/openlibrary" }
    /// `OPENLIBRARY_COVERS_BASE_URL`: `<base>/covers`.
    public var openLibraryCovers: String { self.base + "/covers" }

    /// The environment variables (docs/design.md, "Configuration") that point the pipeline at this emulator, with the first
    /// accepted key of each upstream and the first accepted TMDB user session (the account `default`).
    ///
    /// No v4 access token is listed: `TMDB_ACCESS_TOKEN` would name the account `default` a second time, beside
    /// `TMDB_SESSION_ID`.
    public func environment(settings: EmulatorSettings) -> [(String, String)] {
        [
            ("TMDB_BASE_URL", self.tmdb),
            ("TMDB_V4_BASE_URL", self.tmdbV4),
            ("TMDB_IMAGE_BASE_URL", self.tmdbImages),
            ("TMDB_EXPORT_BASE_URL", self.tmdbExports),
            ("KOFIC_BASE_URL", self.kofic),
            ("KAKAO_BASE_URL", self.kakao),
            ("OPENLIBRARY_BASE_URL", self.openLibrary),
            ("OPENLIBRARY_COVERS_BASE_URL", self.openLibraryCovers),
            ("TMDB_API_KEY", settings.tmdbKeys.first ?? ""),
            ("TMDB_SESSION_ID", settings.tmdbSessions.first ?? ""),
            ("KOFIC_API_KEY", settings.koficKeys.first ?? ""),
            ("KAKAO_REST_API_KEY", settings.kakaoKeys.first ?? ""),
        ]
    }
}
