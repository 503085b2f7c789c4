/// A job for the fetch stage: one call to one upstream API (docs/design.md, "Payloads").
///
/// The JSON form is `{"v": 1, "kind": "tmdb.list", …fields}`; ``decode(_:)`` is strict (unknown fields, wrong
/// types and out-of-range values are refused with the field's name) and ``dedupeKey`` names the entity, so one
/// entity's jobs land on one partition.
public enum FetchJob: Hashable, Sendable {
    /// The TMDB movie lists.
    public enum TMDBList: String, Hashable, Sendable, CaseIterable {
        case nowPlaying = "now_playing"
        case popular
        case topRated = "top_rated"
        case upcoming
    }

    /// KOFIC's weekly box-office periods (`weekGb`).
    public enum KOFICWeek: Int64, Hashable, Sendable, CaseIterable {
        case week = 0
        case weekend = 1
        case weekdays = 2
    }

    case tmdbList(list: TMDBList, page: Int64, language: String, region: String?, follow: Follow)
    case tmdbSearch(query: String, page: Int64, language: String, year: Int64?, follow: Follow)
    case tmdbMovie(id: Int64, language: String, follow: Follow)
    case tmdbReviews(id: Int64, page: Int64, language: String, follow: Follow)
    case tmdbGenres(language: String)
    /// A page of TMDB's movie change feed for the days `startDate`…`endDate` (`YYYY-MM-DD`, at most
    /// ``tmdbChangesMaxDays`` days): each changed id becomes a `tmdb.movie` job in each of `languages`, following
    /// `follow`'s reviews, images and backdrops.
    case tmdbChanges(startDate: String, endDate: String, page: Int64, languages: [String], follow: Follow)
    /// A signed-in TMDB account's details (`/account`), named by its label in the fetch worker's settings (never
    /// by its session id, a secret): each answer queues page 1 of the account's rated movies, favourites and
    /// watchlist.
    case tmdbAccount(account: String)
    /// A page of one of a signed-in account's movie lists (v3 `/account/{account_id}/<list>/movies` with the
    /// account's session, v4 `/account/{account_object_id}/movie/<list>` with its access token); page 1 queues the
    /// rest of the list. `asOf` names the refresh the page belongs to (when its `tmdb.account` job fetched the
    /// details, epoch ms; 0 for none): a refresh read whole replaces the entries of the refreshes before it.
    case tmdbAccountList(account: String, accountID: TMDBAccountID, list: TMDBAccountList, page: Int64, asOf: Int64 = 0)
    /// `date` is `yyyyMMdd`.
    case koficDailyBoxOffice(date: String, follow: Follow)
    /// `date` is any day of the week, `yyyyMMdd`.
    case koficWeeklyBoxOffice(date: String, week: KOFICWeek, follow: Follow)
    case koficMovie(code: String, follow: Follow)
    /// A page of KOFIC's catalogue (`movie/searchMovieList.json`); page 1 queues the rest of the list.
    case koficMovies(query: KOFICMovieQuery, page: Int64, follow: Follow)
    /// Find a poster for a KOFIC movie by title (and year).
    case kakaoPoster(query: String, movieCode: String?)
    case openLibrarySearch(query: String, page: Int64, limit: Int64, follow: Follow)
    /// `id` is a work id such as `OL45804W`.
    case openLibraryWork(id: String, follow: Follow)

    /// The current payload version.
    public static let version: Int64 = 1

    /// Every `kind` string, in the order docs/design.md, "Payloads" lists them.
    public static let kinds = [
        "tmdb.list", "tmdb.search", "tmdb.movie", "tmdb.reviews", "tmdb.genres", "kofic.boxoffice.daily",
        "kofic.boxoffice.weekly", "kofic.movie", "kofic.movies", "kakao.poster", "openlibrary.search",
        "openlibrary.work", "tmdb.changes", "tmdb.account", "tmdb.account.list",
    ]

    /// The most days one `tmdb.changes` job spans (TMDB refuses a longer window).
    public static let tmdbChangesMaxDays: Int64 = 14
    /// The last page of TMDB's change feed.
    public static let tmdbChangesMaxPage: Int64 = 1000
    /// The most languages one `tmdb.changes` job refreshes in.
    public static let tmdbChangesMaxLanguages = 10

    /// The payload's `kind`.
    public var kind: String {
        switch self {
        case .tmdbList: "tmdb.list"
        case .tmdbSearch: "tmdb.search"
        case .tmdbMovie: "tmdb.movie"
        case .tmdbReviews: "tmdb.reviews"
        case .tmdbGenres: "tmdb.genres"
        case .tmdbChanges: "tmdb.changes"
        case .tmdbAccount: "tmdb.account"
        case .tmdbAccountList: "tmdb.account.list"
        case .koficDailyBoxOffice: "kofic.boxoffice.daily"
        case .koficWeeklyBoxOffice: "kofic.boxoffice.weekly"
        case .koficMovie: "kofic.movie"
        case .koficMovies: "kofic.movies"
        case .kakaoPoster: "kakao.poster"
        case .openLibrarySearch: "openlibrary.search"
        case .openLibraryWork: "openlibrary.work"
        }
    }

    /// The entity this job fetches: the message key, and the key a store dedupes on.
    public var dedupeKey: String {
        switch self {
        case .tmdbList(let list, let page, let language, let region, _):
            "tmdb:list:\(list.rawValue):\(language):\(region ?? "-"):\(page)"
        case .tmdbSearch(let query, let page, let language, let year, _):
            "tmdb:search:\(language):\(year.map(String.init) ?? "-"):\(page):\(query)"
        case .tmdbMovie(let id, let language, _): "tmdb:movie:\(id):\(language)"
        case .tmdbReviews(let id, let page, let language, _): "tmdb:reviews:\(id):\(language):\(page)"
        case .tmdbGenres(let language): "tmdb:genres:\(language)"
        case .tmdbChanges(let start, let end, let page, _, _): "tmdb:changes:\(start):\(end):\(page)"
        case .tmdbAccount(let account): "tmdb:account:\(account)"
        case .tmdbAccountList(let account, _, let list, let page, _): "tmdb:account:\(account):\(list.rawValue):\(page)"
        case .koficDailyBoxOffice(let date, _): "kofic:daily:\(date)"
        case .koficWeeklyBoxOffice(let date, let week, _): "kofic:weekly:\(week.rawValue):\(date)"
        case .koficMovie(let code, _): "kofic:movie:\(code)"
        case .koficMovies(let query, let page, _): "kofic:movies:\(page):\(query.keyPart)"
        case .kakaoPoster(let query, let movieCode): "kakao:poster:\(movieCode ?? query)"
        case .openLibrarySearch(let query, let page, let limit, _): "openlibrary:search:\(limit):\(page):\(query)"
        case .openLibraryWork(let id, _): "openlibrary:work:\(id)"
        }
    }
}
