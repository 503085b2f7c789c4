import ArgumentParser
import MarqueeCore
import MarqueeOperations

/// The subcommands of `marquee enqueue` that build jobs from flags, one per job kind. The jobs are built and
/// checked by `EnqueueJobs` (MarqueeOperations); these parse the flags and send.

// MARK: - Flags

/// `--pages 3` or `--pages 1-5`.
struct PageRange: ExpressibleByArgument {
    var pages: ClosedRange<Int64>

    init?(argument: String) {
        guard let pages = EnqueueJobs.pages(argument) else { return nil }
        self.pages = pages
    }
}

/// The follow-up flags of list-like jobs.
struct FollowOptions: ParsableArguments {
    @Flag(help: "Also fetch each listed item's details.")
    var details = false
    @Flag(help: "Also fetch reviews (TMDB).")
    var reviews = false
    @Flag(help: "Also download posters and covers.")
    var images = false
    @Flag(help: "Also download backdrops (TMDB; about as many again as posters).")
    var backdrops = false

    var follow: Follow {
        Follow(details: self.details, reviews: self.reviews, images: self.images, backdrops: self.backdrops)
    }
}

/// The jobs `build` makes; a flag that cannot make them is a usage error.
func buildJobs(_ build: () throws -> [FetchJob]) throws -> [FetchJob] {
    do {
        return try build()
    } catch let error as OperationsError {
        throw ValidationError(error.description)
    }
}

struct TMDBListJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-list",
        abstract: "TMDB movie lists: popular, now_playing, top_rated, upcoming.",
        discussion: "Example: marquee enqueue tmdb-list popular --pages 1-5 --language ko-KR,en-US --details"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Argument(help: "popular, now_playing, top_rated or upcoming.")
    var list: String

    @Option(help: "Pages, e.g. 3 or 1-5.")
    var pages = PageRange(argument: "1")!

    @Option(help: "Languages, comma-separated.")
    var language = "ko-KR"

    @Option(help: "ISO 3166-1 region (for release dates), e.g. KR.")
    var region: String?

    func run() async throws {
        let jobs = try buildJobs {
            try EnqueueJobs.tmdbList(
                self.list,
                pages: self.pages.pages,
                languages: EnqueueJobs.languages(self.language),
                region: self.region,
                follow: self.following.follow
            )
        }
        try await self.sending.send(jobs)
    }
}

struct TMDBSearchJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-search",
        abstract: "TMDB movie search.",
        discussion: "Example: marquee enqueue tmdb-search \"기생충\" --pages 2 --language ko-KR"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Argument(help: "What to search for.")
    var query: String

    @Option(help: "Pages: N fetches pages 1…N (page 1 queues the rest); a-b fetches pages a…b.")
    var pages = PageRange(argument: "1")!

    @Option(help: "Languages, comma-separated.")
    var language = "ko-KR"

    @Option(help: "Release year.")
    var year: Int64?

    func run() async throws {
        let jobs = try buildJobs {
            try EnqueueJobs.tmdbSearch(
                self.query,
                pages: self.pages.pages,
                languages: EnqueueJobs.languages(self.language),
                year: self.year,
                follow: self.following.follow
            )
        }
        try await self.sending.send(jobs)
    }
}

struct TMDBMovieJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-movie",
        abstract: "TMDB movie details, by id.",
        discussion: "Example: marquee enqueue tmdb-movie 496243 27205 --language ko-KR,en-US --reviews --images"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Argument(help: "TMDB movie ids.")
    var ids: [Int64]

    @Option(help: "Languages, comma-separated.")
    var language = "ko-KR"

    func run() async throws {
        let jobs = try buildJobs {
            try EnqueueJobs.tmdbMovies(
                self.ids,
                languages: EnqueueJobs.languages(self.language),
                follow: self.following.follow
            )
        }
        try await self.sending.send(jobs)
    }
}

struct TMDBReviewsJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-reviews",
        abstract: "TMDB reviews of a movie.",
        discussion: "Example: marquee enqueue tmdb-reviews 496243 --pages 3 --language en-US"
    )

    @OptionGroup var sending: EnqueueOptions

    @Argument(help: "TMDB movie ids.")
    var ids: [Int64]

    @Option(help: "Pages: page 1 queues pages 2…N.")
    var pages: Int64 = 1

    @Option(help: "Languages, comma-separated.")
    var language = "en-US"

    func run() async throws {
        let jobs = try buildJobs {
            try EnqueueJobs.tmdbReviews(self.ids, pages: self.pages, languages: EnqueueJobs.languages(self.language))
        }
        try await self.sending.send(jobs)
    }
}

struct TMDBGenresJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-genres",
        abstract: "TMDB's genre list, per language.",
        discussion: "Example: marquee enqueue tmdb-genres --language ko-KR,en-US"
    )

    @OptionGroup var sending: EnqueueOptions

    @Option(help: "Languages, comma-separated.")
    var language = "ko-KR"

    func run() async throws {
        try await self.sending.send(
            try buildJobs { try EnqueueJobs.tmdbGenres(languages: EnqueueJobs.languages(self.language)) }
        )
    }
}

struct TMDBAccountJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-account",
        abstract: "Signed-in TMDB accounts: details, rated movies (with the ratings), favourites and watchlist.",
        discussion: """
            Names each account by its label, never by its session or token: the fetch workers hold the \
            sessions (TMDB_SESSION_ID with TMDB_ACCOUNT, default label "default"; or TMDB_SESSIONS, label=session \
            pairs) and v4 access tokens (TMDB_ACCESS_TOKEN, TMDB_ACCESS_TOKENS). The details job queues every page \
            of the three lists. A refused session or token pauses that account's jobs.

            Examples:
              marquee enqueue tmdb-account
              marquee enqueue tmdb-account default family
            """
    )

    @OptionGroup var sending: EnqueueOptions

    @Argument(help: "Account labels (a-z, 0-9, '.', '_', '-').")
    var accounts: [String] = ["default"]

    func run() async throws {
        try await self.sending.send(try buildJobs { try EnqueueJobs.tmdbAccounts(self.accounts) })
    }
}

struct TMDBChangesJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tmdb-changes",
        abstract: "TMDB's movie change feed: refresh the details of each movie changed in the days.",
        discussion: """
            A range over 14 days (the longest window TMDB serves) is split into consecutive windows of 14 days, one \
            job each. Each job reads every page of the feed and queues a detail refresh per changed movie and \
            language.

            Example: marquee enqueue tmdb-changes --from 2024-03-01 --to 2024-03-07 --language ko-KR,en-US --images
            """
    )

    @OptionGroup var sending: EnqueueOptions

    @Option(help: "First day, YYYY-MM-DD.")
    var from: String

    @Option(help: "Last day, YYYY-MM-DD (default: --from).")
    var to: String?

    @Option(help: "Languages to refresh each changed movie in, comma-separated (at most 10).")
    var language = "en-US"

    @Flag(help: "Also fetch each changed movie's reviews.")
    var reviews = false
    @Flag(help: "Also download each changed movie's poster.")
    var images = false
    @Flag(help: "Also download each changed movie's backdrop.")
    var backdrops = false

    func run() async throws {
        let jobs = try buildJobs {
            try EnqueueJobs.tmdbChanges(
                from: self.from,
                to: self.to,
                languages: EnqueueJobs.languages(self.language),
                follow: Follow(reviews: self.reviews, images: self.images, backdrops: self.backdrops)
            )
        }
        try await self.sending.send(jobs)
    }
}

struct KOFICDailyJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kofic-daily",
        abstract: "KOFIC daily box office, one job per day.",
        discussion: "Example: marquee enqueue kofic-daily --from 2024-01-01 --to 2024-01-31 --details"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Option(help: "First day, YYYY-MM-DD.")
    var from: String

    @Option(help: "Last day, YYYY-MM-DD (default: --from).")
    var to: String?

    func run() async throws {
        try await self.sending.send(
            try buildJobs { try EnqueueJobs.koficDaily(from: self.from, to: self.to, follow: self.following.follow) }
        )
    }
}

struct KOFICWeeklyJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kofic-weekly",
        abstract: "KOFIC weekly box office, one job per week (any day of a week names it).",
        discussion: "Example: marquee enqueue kofic-weekly --from 2024-01-01 --to 2024-03-31 --period weekend --details"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Option(help: "A day of the first week, YYYY-MM-DD.")
    var from: String

    @Option(help: "A day of the last week, YYYY-MM-DD (default: --from).")
    var to: String?

    @Option(help: "week (Monday to Sunday), weekend (Friday to Sunday) or weekdays (Monday to Thursday).")
    var period = "week"

    func run() async throws {
        let jobs = try buildJobs {
            try EnqueueJobs.koficWeekly(
                from: self.from,
                to: self.to,
                period: self.period,
                follow: self.following.follow
            )
        }
        try await self.sending.send(jobs)
    }
}

struct KOFICMovieJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kofic-movie",
        abstract: "KOFIC movie info, by movie code.",
        discussion: "Example: marquee enqueue kofic-movie 20183782 20112207 --images"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Argument(help: "KOFIC movie codes (movieCd), e.g. 20183782.")
    var codes: [String]

    func run() async throws {
        try await self.sending.send(
            try buildJobs { try EnqueueJobs.koficMovies(self.codes, follow: self.following.follow) }
        )
    }
}

struct KOFICCatalogueJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kofic-movies",
        abstract: "KOFIC's catalogue: its movie list, every page to the end (not only movies that charted).",
        discussion: """
            One job: page 1 of KOFIC's movie list with the filters; it queues every further page up to the end of \
            the list (at most 1,000 pages). Each page and each movie's info (--details) is one call of the KOFIC \
            key's daily budget: when the budget is spent, the jobs wait until midnight in Korea (docs/limits.md).

            Example: marquee enqueue kofic-movies --open-from 2020 --open-to 2024 --details --images
            """
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Option(help: "First opening year, e.g. 2020.")
    var openFrom: Int64?

    @Option(help: "Last opening year.")
    var openTo: Int64?

    @Option(help: "First production year.")
    var productionFrom: Int64?

    @Option(help: "Last production year.")
    var productionTo: Int64?

    @Option(help: "Part of the Korean title.")
    var title: String?

    @Option(help: "Part of a director's name.")
    var director: String?

    @Option(help: "Movies per page (1–100).")
    var perPage: Int64 = FetchJob.KOFICMovieQuery.maxPerPage

    @Option(help: "The last page to fetch (1–1000; default: the end of the list).")
    var pages: Int64?

    func run() async throws {
        let query = FetchJob.KOFICMovieQuery(
            openFrom: self.openFrom,
            openTo: self.openTo,
            productionFrom: self.productionFrom,
            productionTo: self.productionTo,
            title: self.title,
            director: self.director,
            perPage: self.perPage,
            lastPage: self.pages ?? FetchJob.KOFICMovieQuery.maxPage
        )
        try await self.sending.send(
            try buildJobs { try EnqueueJobs.koficCatalogue(query, follow: self.following.follow) }
        )
    }
}

struct KakaoPosterJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kakao-poster",
        abstract: "Find a poster with Kakao image search, for a title (and the KOFIC movie it belongs to).",
        discussion: "Example: marquee enqueue kakao-poster \"기생충 2019\" --movie-code 20183782"
    )

    @OptionGroup var sending: EnqueueOptions

    @Argument(help: "What to search for, e.g. the title and year.")
    var query: String

    @Option(help: "The KOFIC movie code the poster belongs to.")
    var movieCode: String?

    func run() async throws {
        try await self.sending.send(
            try buildJobs { try EnqueueJobs.kakaoPoster(self.query, movieCode: self.movieCode) }
        )
    }
}

struct OpenLibraryWorkJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openlibrary-work",
        abstract: "Open Library works, by id.",
        discussion: "Example: marquee enqueue openlibrary-work OL45804W OL27448W --images"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Argument(help: "Work ids such as OL45804W.")
    var ids: [String]

    func run() async throws {
        try await self.sending.send(
            try buildJobs { try EnqueueJobs.openLibraryWorks(self.ids, follow: self.following.follow) }
        )
    }
}

struct OpenLibrarySearchJobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openlibrary-search",
        abstract: "Open Library book search.",
        discussion: "Example: marquee enqueue openlibrary-search \"swift programming\" --pages 2 --details --images"
    )

    @OptionGroup var sending: EnqueueOptions
    @OptionGroup var following: FollowOptions

    @Argument(help: "What to search for.")
    var query: String

    @Option(help: "Pages: page 1 queues pages 2…N.")
    var pages: Int64 = 1

    @Option(help: "Results per page (1–100).")
    var limit: Int64 = 20

    func run() async throws {
        let jobs = try buildJobs {
            try EnqueueJobs.openLibrarySearch(
                self.query,
                pages: self.pages,
                limit: self.limit,
                follow: self.following.follow
            )
        }
        try await self.sending.send(jobs)
    }
}
