/// Where the upstream APIs live and the keys to call them with (docs/design.md, "Sources" and "Configuration").
///
/// Every base URL is configurable so tests and the offline demo can point the adapters at the upstream emulator.
/// Base URLs are kept without a trailing slash.
public struct SourceConfiguration: Sendable {
    /// TMDB API v3. Default: `https://api.themoviedb.org/3`.
    public var tmdbBaseURL: String = "https://api.themoviedb.org/3"
    /// TMDB API v4, where an access token reads its account's lists. Default: ``tmdbBaseURL`` with its final `/3`
    /// as `/4` (`https://api.themoviedb.org/4`); `nil` when that base does not end in `/3` (then an access-token
    /// account needs it set).
    public var tmdbV4BaseURL: String?
    /// TMDB images; image jobs use `{tmdbImageBaseURL}/original{path}`. Default: `https://image.tmdb.org/t/p`.
    public var tmdbImageBaseURL: String = "https://image.tmdb.org/t/p"
    /// KOFIC's REST API. Default: `https://www.kobis.or.kr/kobisopenapi/webservice/rest`.
    public var koficBaseURL: String = "https://www.kobis.or.kr/kobisopenapi/webservice/rest"
    /// Kakao's search API. Default: `https://dapi.kakao.com`.
    public var kakaoBaseURL: String = "https://dapi.kakao.com"
    /// Open Library. Default: `https://openlibrary.org`.
    public var openLibraryBaseURL: String = "https://openlibrary.org"
    /// Open Library Covers. Default: `https://covers.openlibrary.org`.
    public var openLibraryCoversBaseURL: String = "https://covers.openlibrary.org"

    /// TMDB's v3 API key (`api_key` query). Default: none.
    public var tmdbAPIKey: Secret?
    /// KOFIC's key (`key` query). Default: none.
    public var koficAPIKey: Secret?
    /// Kakao's REST API key (`Authorization: KakaoAK <key>`). Default: none.
    public var kakaoAPIKey: Secret?
    /// Signed-in TMDB users' session ids (`session_id` query of the `/account` calls), by account label: jobs
    /// name an account by its label, and only the fetch worker holds the session. Default: none.
    public var tmdbSessions: [String: Secret] = [:]
    /// Signed-in TMDB users' v4 access tokens (`Authorization: Bearer` of the v4 account calls), by account label;
    /// each names its account's object id (``TMDBAccessToken``). A label has a session or a token, not both.
    /// Default: none.
    public var tmdbAccessTokens: [String: Secret] = [:]

    /// The `User-Agent` of every request; Open Library asks clients to identify themselves.
    /// Default: `marquee/1.0 (catalogue ingestion pipeline)`.
    public var userAgent: String = "marquee/1.0 (catalogue ingestion pipeline)"

    /// A configuration with the public defaults and no keys.
    public init() {}

    /// The keys that are configured, for scrubbing upstream messages before they go into an error.
    var secrets: [Secret] {
        [self.tmdbAPIKey, self.koficAPIKey, self.kakaoAPIKey].compactMap { $0 }
            + self.tmdbSessions.keys.sorted().compactMap { self.tmdbSessions[$0] }
            + self.tmdbAccessTokens.keys.sorted().compactMap { self.tmdbAccessTokens[$0] }
    }

    /// The labels of the signed-in TMDB accounts, by session or by access token, sorted.
    public var tmdbAccountLabels: [String] { Set(self.tmdbSessions.keys).union(self.tmdbAccessTokens.keys).sorted() }

    /// The secret that signs in the account `label`: its session or its access token.
    public func tmdbAccountSecret(_ label: String) -> Secret? {
        self.tmdbSessions[label] ?? self.tmdbAccessTokens[label]
    }

    /// The v4 base URL in effect: ``tmdbV4BaseURL``, else ``tmdbBaseURL`` with its final `/3` as `/4`.
    public var tmdbV4URL: String? {
        if let url = self.tmdbV4BaseURL { return url }
        guard self.tmdbBaseURL.hasSuffix("/3") else { return nil }
        return self.tmdbBaseURL.dropLast() + "4"
    }

    /// Checks every base URL and normalises it (a trailing slash is dropped).
    ///
    /// - Throws: A ``SourceError`` with code ``SourceError/Code-swift.struct/invalidConfiguration`` naming the
    ///   first wrong value.
    public mutating func validate() throws(SourceError) {
        self.tmdbBaseURL = try Self.checkedBaseURL(self.tmdbBaseURL, name: "tmdbBaseURL")
        if let url = self.tmdbV4BaseURL { self.tmdbV4BaseURL = try Self.checkedBaseURL(url, name: "tmdbV4BaseURL") }
        if !self.tmdbAccessTokens.isEmpty, self.tmdbV4URL == nil {
            throw SourceError(
                .invalidConfiguration,
                "tmdbV4BaseURL is needed for the access-token accounts: tmdbBaseURL does not end in /3 (set TMDB_V4_BASE_URL)"
            )
        }
        self.tmdbImageBaseURL = try Self.checkedBaseURL(self.tmdbImageBaseURL, name: "tmdbImageBaseURL")
        self.koficBaseURL = try Self.checkedBaseURL(self.koficBaseURL, name: "koficBaseURL")
        self.kakaoBaseURL = try Self.checkedBaseURL(self.kakaoBaseURL, name: "kakaoBaseURL")
        self.openLibraryBaseURL = try Self.checkedBaseURL(self.openLibraryBaseURL, name: "openLibraryBaseURL")
        self.openLibraryCoversBaseURL = try Self.checkedBaseURL(
            self.openLibraryCoversBaseURL,
            name: "openLibraryCoversBaseURL"
        )
        let agent = self.userAgent
        guard !agent.isEmpty, agent.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) else {
            throw SourceError(.invalidConfiguration, "userAgent must be non-empty printable ASCII")
        }
    }

    /// A base URL without its trailing slashes, if it is an absolute `http`/`https` URL with a host, no
    /// credentials, no query and no fragment.
    static func checkedBaseURL(_ value: String, name: String) throws(SourceError) -> String {
        var url = value.trimmingASCIIWhitespace()
        while url.hasSuffix("/") { url.removeLast() }
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            rest = url.dropFirst("https://".count)
        } else if lower.hasPrefix("http://") {
            rest = url.dropFirst("http://".count)
        } else {
            throw SourceError(.invalidConfiguration, "\(name) must be an http or https URL, got '\(value.prefix(200))'")
        }
        let authority = rest.prefix(while: { $0 != "/" })
        guard !authority.isEmpty, !authority.hasPrefix(":") else {
            throw SourceError(.invalidConfiguration, "\(name) has no host: '\(value.prefix(200))'")
        }
        guard !authority.contains("@") else {
            throw SourceError(
                .invalidConfiguration,
                "\(name) must not carry credentials; configure the API key instead"
            )
        }
        guard !url.contains("?"), !url.contains("#") else {
            throw SourceError(
                .invalidConfiguration,
                "\(name) must not have a query or fragment: '\(value.prefix(200))'"
            )
        }
        guard !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw SourceError(.invalidConfiguration, "\(name) contains spaces or control characters")
        }
        return url
    }
}
