import ArgumentParser
import MarqueeCore

/// The subcommands of `marquee enqueue` that build jobs from flags, one per job kind.

// MARK: - Flags

/// `--pages 3` or `--pages 1-5`.
struct PageRange: ExpressibleByArgument {
    var pages: ClosedRange<Int64>

    init?(argument: String) {
        let parts = argument.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let first = Int64(parts[0]), let last = Int64(parts.last!), first >= 1, last >= first
        else { return nil }
        self.pages = first...last
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

/// Checks each built job with the fetch stage's decoding, so flags cannot produce a job the worker refuses.
func checked(_ jobs: [FetchJob]) throws -> [FetchJob] {
    try jobs.map { job in
        do {
            return try FetchJob.decode(job.encoded())
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

func languages(_ text: String) -> [String] {
    text.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
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
        guard let list = FetchJob.TMDBList(rawValue: self.list) else {
            throw ValidationError("'\(self.list)' is not a TMDB list: popular, now_playing, top_rated or upcoming")
        }
        let jobs = languages(self.language).flatMap { language in
            self.pages.pages.map {
                FetchJob.tmdbList(list: list, page: $0, language: language, region: self.region, follow: self.following.follow)
            }
        }
        try await self.sending.send(try checked(jobs))
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
        let range = self.pages.pages
        let jobs = languages(self.language).flatMap { language in
            // `--pages N`: page 1 follows up to N; a range: each page on its own.
            range.lowerBound == range.upperBound
                ? [FetchJob.tmdbSearch(query: self.query, page: 1, language: language, year: self.year, follow: self.follow(pages: range.upperBound))]
                : range.map { FetchJob.tmdbSearch(query: self.query, page: $0, language: language, year: self.year, follow: self.follow(pages: 1)) }
        }
        try await self.sending.send(try checked(jobs))
    }

    private func follow(pages: Int64) -> Follow {
        var follow = self.following.follow
        follow.pages = pages
        return follow
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
        guard !self.ids.isEmpty else { throw ValidationError("name at least one movie id") }
        let jobs = languages(self.language).flatMap { language in
            self.ids.map { FetchJob.tmdbMovie(id: $0, language: language, follow: self.following.follow) }
        }
        try await self.sending.send(try checked(jobs))
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
        guard !self.ids.isEmpty else { throw ValidationError("name at least one movie id") }
        let jobs = languages(self.language).flatMap { language in
            self.ids.map { FetchJob.tmdbReviews(id: $0, page: 1, language: language, follow: Follow(pages: self.pages)) }
        }
        try await self.sending.send(try checked(jobs))
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
        try await self.sending.send(try checked(languages(self.language).map { .tmdbGenres(language: $0) }))
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
        let jobs = try days(from: self.from, to: self.to, step: 1).map {
            FetchJob.koficDailyBoxOffice(date: $0.compact, follow: self.following.follow)
        }
        try await self.sending.send(try checked(jobs))
    }
}

/// The days from `from` to `to` (default: `from`), `step` days apart; at most ten years of them.
func days(from: String, to: String?, step: Int) throws -> [Day] {
    guard let first = Day(from), let last = Day(to ?? from) else {
        throw ValidationError("--from and --to must be days as YYYY-MM-DD")
    }
    guard first <= last else { throw ValidationError("--to is before --from") }
    var days: [Day] = []
    var day = first
    while day <= last {
        guard days.count < 3660 / step else { throw ValidationError("at most ten years of days at once") }
        days.append(day)
        for _ in 0..<step { day = day.next }
    }
    return days
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
        let week: FetchJob.KOFICWeek
        switch self.period {
        case "week": week = .week
        case "weekend": week = .weekend
        case "weekdays": week = .weekdays
        default: throw ValidationError("--period must be week, weekend or weekdays, not '\(self.period)'")
        }
        let jobs = try days(from: self.from, to: self.to, step: 7).map {
            FetchJob.koficWeeklyBoxOffice(date: $0.compact, week: week, follow: self.following.follow)
        }
        try await self.sending.send(try checked(jobs))
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
        guard !self.codes.isEmpty else { throw ValidationError("name at least one movie code") }
        try await self.sending.send(try checked(self.codes.map { .koficMovie(code: $0, follow: self.following.follow) }))
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
        try await self.sending.send(try checked([.kakaoPoster(query: self.query, movieCode: self.movieCode)]))
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
        guard !self.ids.isEmpty else { throw ValidationError("name at least one work id") }
        try await self.sending.send(try checked(self.ids.map { .openLibraryWork(id: $0, follow: self.following.follow) }))
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
        var follow = self.following.follow
        follow.pages = self.pages
        try await self.sending.send(try checked([.openLibrarySearch(query: self.query, page: 1, limit: self.limit, follow: follow)]))
    }
}

/// A calendar day (proleptic Gregorian), for ranges of dates.
struct Day: Comparable {
    let year: Int, month: Int, day: Int

    /// `YYYY-MM-DD`, a real calendar day.
    init?(_ text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= Self.days(in: month, of: year)
        else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    private init(year: Int, month: Int, day: Int) { (self.year, self.month, self.day) = (year, month, day) }

    static func days(in month: Int, of year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// The day after.
    var next: Day {
        if self.day < Self.days(in: self.month, of: self.year) { return Day(year: self.year, month: self.month, day: self.day + 1) }
        return self.month < 12 ? Day(year: self.year, month: self.month + 1, day: 1) : Day(year: self.year + 1, month: 1, day: 1)
    }

    /// `yyyyMMdd`, as KOFIC's `targetDt`.
    var compact: String {
        func padded(_ value: Int, _ width: Int) -> String {
            String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
        }
        return padded(self.year, 4) + padded(self.month, 2) + padded(self.day, 2)
    }

    static func < (lhs: Day, rhs: Day) -> Bool { (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day) }
}
