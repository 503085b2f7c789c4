public import MarqueeCore

/// Routes fetch jobs to their source's adapter: the one object the fetch worker needs.
public struct SourceAdapters: Sendable {
    /// The configuration the adapters were made with.
    public let configuration: SourceConfiguration
    /// The TMDB adapter.
    public let tmdb: TMDBAdapter
    /// The KOFIC adapter.
    public let kofic: KOFICAdapter
    /// The Kakao adapter.
    public let kakao: KakaoAdapter
    /// The Open Library adapter.
    public let openLibrary: OpenLibraryAdapter

    /// Creates the adapters.
    ///
    /// - Parameters:
    ///   - configuration: Base URLs, keys and user agent.
    ///   - imageHostAllowed: The image host allowlist (lowercased host in, verdict out); Kakao search results
    ///     on refused hosts are passed over.
    public init(
        configuration: SourceConfiguration,
        imageHostAllowed: @escaping @Sendable (String) -> Bool = { _ in true }
    ) {
        self.configuration = configuration
        self.tmdb = TMDBAdapter(configuration: configuration)
        self.kofic = KOFICAdapter(configuration: configuration)
        self.kakao = KakaoAdapter(configuration: configuration, imageHostAllowed: imageHostAllowed)
        self.openLibrary = OpenLibraryAdapter(configuration: configuration)
    }

    /// The source that serves `job`.
    public func source(of job: FetchJob) -> Source {
        Self.source(of: job)
    }

    /// The source that serves `job`.
    public static func source(of job: FetchJob) -> Source {
        switch job {
        case .tmdbList, .tmdbSearch, .tmdbMovie, .tmdbReviews, .tmdbGenres, .tmdbChanges, .tmdbAccount,
            .tmdbAccountList:
            .tmdb
        case .koficDailyBoxOffice, .koficWeeklyBoxOffice, .koficMovie, .koficMovies: .kofic
        case .kakaoPoster: .kakao
        case .openLibrarySearch, .openLibraryWork: .openLibrary
        }
    }

    /// The request for `job`.
    ///
    /// - Throws: A ``SourceError`` with code ``SourceError/Code-swift.struct/missingKey(_:)`` when the job's source
    ///   needs a key that is not configured.
    public func request(for job: FetchJob) throws(SourceError) -> SourceRequest {
        // Each adapter called directly (an `any SourceAdapter` would box the adapter on every call).
        switch self.source(of: job) {
        case .tmdb: try self.tmdb.request(for: job)
        case .kofic: try self.kofic.request(for: job)
        case .kakao: try self.kakao.request(for: job)
        case .openLibrary: try self.openLibrary.request(for: job)
        }
    }

    /// The records, follow-up jobs and image jobs in the response to `job`'s request.
    ///
    /// - Parameters:
    ///   - response: The upstream's answer, whatever its status.
    ///   - job: The job the request was made for.
    ///   - fetchedAt: When the response arrived, in milliseconds since the epoch.
    /// - Throws: A ``SourceError`` classifying an error answer or a malformed body.
    public func parse(
        _ response: SourceResponse,
        for job: FetchJob,
        fetchedAt: Int64
    ) throws(SourceError) -> SourceResult {
        switch self.source(of: job) {
        case .tmdb: try self.tmdb.parse(response, for: job, fetchedAt: fetchedAt)
        case .kofic: try self.kofic.parse(response, for: job, fetchedAt: fetchedAt)
        case .kakao: try self.kakao.parse(response, for: job, fetchedAt: fetchedAt)
        case .openLibrary: try self.openLibrary.parse(response, for: job, fetchedAt: fetchedAt)
        }
    }

    /// The request for TMDB's `GET /configuration`, which the worker makes at start-up (see
    /// ``TMDBConfiguration``).
    ///
    /// - Throws: A ``SourceError`` when no TMDB key is configured.
    public func tmdbConfigurationRequest() throws(SourceError) -> SourceRequest {
        try self.tmdb.configurationRequest()
    }
}
