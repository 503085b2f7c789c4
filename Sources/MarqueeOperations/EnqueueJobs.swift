public import MarqueeCore

/// The fetch jobs `marquee enqueue` builds from its flags, one function per job kind: each builds every job the
/// flags ask for, then checks each with the fetch stage's own decoding, so flags cannot produce a job the worker
/// refuses.
///
/// Every function throws an ``OperationsError`` naming the flag at fault.
public enum EnqueueJobs {
    /// Languages from `--language`: comma-separated, white space ignored, empty values dropped.
    public static func languages(_ text: String) -> [String] {
        text.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
    }

    /// `--pages 3` or `--pages 1-5`: pages from 1; `nil` for anything else.
    public static func pages(_ text: String) -> ClosedRange<Int64>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let first = Int64(parts[0]), let last = parts.last.flatMap({ Int64($0) }),
            first >= 1, last >= first
        else { return nil }
        return first...last
    }

    /// A TMDB movie list (`popular`, `now_playing`, `top_rated` or `upcoming`): a job per page and language.
    public static func tmdbList(
        _ list: String,
        pages: ClosedRange<Int64>,
        languages: [String],
        region: String?,
        follow: Follow
    ) throws(OperationsError) -> [FetchJob] {
        guard let list = FetchJob.TMDBList(rawValue: list) else {
            throw OperationsError(.enqueue, "'\(list)' is not a TMDB list: popular, now_playing, top_rated or upcoming")
        }
        return try self.checked(
            languages.flatMap { language in
                pages.map {
                    FetchJob.tmdbList(list: list, page: $0, language: language, region: region, follow: follow)
                }
            }
        )
    }

    /// A TMDB search, per language: `pages` of one page (`--pages N`) is page 1 following up to N pages; a range
    /// of pages is a job per page, each on its own.
    public static func tmdbSearch(
        _ query: String,
        pages: ClosedRange<Int64>,
        languages: [String],
        year: Int64?,
        follow: Follow
    ) throws(OperationsError) -> [FetchJob] {
        func following(_ pages: Int64) -> Follow {
            var follow = follow
            follow.pages = pages
            return follow
        }
        return try self.checked(
            languages.flatMap { language in
                pages.lowerBound == pages.upperBound
                    ? [
                        FetchJob.tmdbSearch(
                            query: query,
                            page: 1,
                            language: language,
                            year: year,
                            follow: following(pages.upperBound)
                        )
                    ]
                    : pages.map {
                        FetchJob.tmdbSearch(
                            query: query,
                            page: $0,
                            language: language,
                            year: year,
                            follow: following(1)
                        )
                    }
            }
        )
    }

    /// TMDB movie details: a job per movie and language.
    public static func tmdbMovies(
        _ ids: [Int64],
        languages: [String],
        follow: Follow
    ) throws(OperationsError) -> [FetchJob] {
        guard !ids.isEmpty else { throw OperationsError(.enqueue, "name at least one movie id") }
        return try self.checked(
            languages.flatMap { language in ids.map { FetchJob.tmdbMovie(id: $0, language: language, follow: follow) } }
        )
    }

    /// TMDB reviews: a job per movie and language, page 1 queueing pages 2…`pages`.
    public static func tmdbReviews(
        _ ids: [Int64],
        pages: Int64,
        languages: [String]
    ) throws(OperationsError) -> [FetchJob] {
        guard !ids.isEmpty else { throw OperationsError(.enqueue, "name at least one movie id") }
        return try self.checked(
            languages.flatMap { language in
                ids.map { FetchJob.tmdbReviews(id: $0, page: 1, language: language, follow: Follow(pages: pages)) }
            }
        )
    }

    /// TMDB's genre list: a job per language.
    public static func tmdbGenres(languages: [String]) throws(OperationsError) -> [FetchJob] {
        try self.checked(languages.map { .tmdbGenres(language: $0) })
    }

    /// Signed-in TMDB accounts' details, ratings, favourites and watchlists: a `tmdb.account` job per account label
    /// (the fetch worker holds each label's session; the details answer queues the three lists).
    public static func tmdbAccounts(_ accounts: [String]) throws(OperationsError) -> [FetchJob] {
        try self.checked(accounts.map { .tmdbAccount(account: $0) })
    }

    /// TMDB's movie change feed for the days `from` to `to` (default: `from`), `YYYY-MM-DD`: a job per window of
    /// at most 14 days (the longest TMDB serves), consecutive windows covering the range, each refreshing the
    /// changed movies in every one of `languages` with `follow`'s reviews, images and backdrops.
    public static func tmdbChanges(
        from: String,
        to: String?,
        languages: [String],
        follow: Follow
    ) throws(OperationsError) -> [FetchJob] {
        let days = FetchJob.tmdbChangesMaxDays
        let starts = try LocalDate.range(from: from, to: to, step: Int(days))
        guard let last = LocalDate(parsing: to ?? from) else { return [] }
        return try self.checked(
            starts.map { start in
                let end = min(start.adding(days: days - 1), last)
                return FetchJob.tmdbChanges(
                    startDate: start.description,
                    endDate: end.description,
                    page: 1,
                    languages: languages,
                    follow: follow
                )
            }
        )
    }

    /// KOFIC's daily box office: a job per day from `from` to `to` (default: `from`), `YYYY-MM-DD`.
    public static func koficDaily(from: String, to: String?, follow: Follow) throws(OperationsError) -> [FetchJob] {
        try self.checked(
            try LocalDate.range(from: from, to: to, step: 1).map {
                FetchJob.koficDailyBoxOffice(date: $0.compact, follow: follow)
            }
        )
    }

    /// KOFIC's weekly box office of `period` (`week`, `weekend` or `weekdays`): a job per week, every 7 days from
    /// `from` to `to` (any day of a week names it).
    public static func koficWeekly(
        from: String,
        to: String?,
        period: String,
        follow: Follow
    ) throws(OperationsError) -> [FetchJob] {
        let week: FetchJob.KOFICWeek
        switch period {
        case "week": week = .week
        case "weekend": week = .weekend
        case "weekdays": week = .weekdays
        default: throw OperationsError(.enqueue, "--period must be week, weekend or weekdays, not '\(period)'")
        }
        return try self.checked(
            try LocalDate.range(from: from, to: to, step: 7).map {
                FetchJob.koficWeeklyBoxOffice(date: $0.compact, week: week, follow: follow)
            }
        )
    }

    /// KOFIC movie info: a job per movie code.
    public static func koficMovies(_ codes: [String], follow: Follow) throws(OperationsError) -> [FetchJob] {
        guard !codes.isEmpty else { throw OperationsError(.enqueue, "name at least one movie code") }
        return try self.checked(codes.map { .koficMovie(code: $0, follow: follow) })
    }

    /// KOFIC's catalogue (`kofic.movies`): page 1 of the movie list with the filters, which queues the rest of the
    /// list (to its end, or to `query.lastPage`).
    ///
    /// - Throws: An ``OperationsError`` naming the flag (`--open-from`, `--open-to`, `--production-from`,
    ///   `--production-to`, `--per-page`, `--pages`) whose value the fetch stage would refuse.
    public static func koficCatalogue(
        _ query: FetchJob.KOFICMovieQuery,
        follow: Follow
    ) throws(OperationsError) -> [FetchJob] {
        let years: ClosedRange<Int64> = 1870...2200
        func year(_ value: Int64?, _ flag: String) throws(OperationsError) {
            guard let value, !years.contains(value) else { return }
            throw OperationsError(.enqueue, "\(flag) must be a year from 1870 to 2200, not \(value)")
        }
        func span(_ from: Int64?, _ to: Int64?, _ name: String) throws(OperationsError) {
            try year(from, "--\(name)-from")
            try year(to, "--\(name)-to")
            if let from, let to, to < from {
                throw OperationsError(.enqueue, "--\(name)-to \(to) is before --\(name)-from \(from)")
            }
        }
        try span(query.openFrom, query.openTo, "open")
        try span(query.productionFrom, query.productionTo, "production")
        let maxPerPage = FetchJob.KOFICMovieQuery.maxPerPage
        guard (1...maxPerPage).contains(query.perPage) else {
            throw OperationsError(.enqueue, "--per-page must be from 1 to \(maxPerPage), not \(query.perPage)")
        }
        let maxPage = FetchJob.KOFICMovieQuery.maxPage
        guard (1...maxPage).contains(query.lastPage) else {
            throw OperationsError(.enqueue, "--pages must be from 1 to \(maxPage), not \(query.lastPage)")
        }
        var follow = follow
        follow.pages = 1
        return try self.checked([.koficMovies(query: query, page: 1, follow: follow)])
    }

    /// A Kakao image search for a poster.
    public static func kakaoPoster(_ query: String, movieCode: String?) throws(OperationsError) -> [FetchJob] {
        try self.checked([.kakaoPoster(query: query, movieCode: movieCode)])
    }

    /// Open Library works: a job per work id.
    public static func openLibraryWorks(_ ids: [String], follow: Follow) throws(OperationsError) -> [FetchJob] {
        guard !ids.isEmpty else { throw OperationsError(.enqueue, "name at least one work id") }
        return try self.checked(ids.map { .openLibraryWork(id: $0, follow: follow) })
    }

    /// An Open Library search: page 1, queueing pages 2…`pages`.
    public static func openLibrarySearch(
        _ query: String,
        pages: Int64,
        limit: Int64,
        follow: Follow
    ) throws(OperationsError) -> [FetchJob] {
        var follow = follow
        follow.pages = pages
        return try self.checked([.openLibrarySearch(query: query, page: 1, limit: limit, follow: follow)])
    }

    /// Each job as the fetch stage decodes it.
    ///
    /// - Throws: An ``OperationsError`` with the decoding's reason for the first job it refuses.
    static func checked(_ jobs: [FetchJob]) throws(OperationsError) -> [FetchJob] {
        try jobs.map { job throws(OperationsError) in
            do {
                return try FetchJob.decode(job.encoded())
            } catch {
                throw OperationsError(.enqueue, "\(error)")
            }
        }
    }

    /// `3 jobs sent to marquee.fetch:` and a line per kind with its count, kinds in order.
    public static func summary(_ jobs: [FetchJob], verb: String) -> String {
        var byKind: [String: Int] = [:]
        for job in jobs { byKind[job.kind, default: 0] += 1 }
        return
            (["\(TextFormat.count(jobs.count, "job")) \(verb):"]
            + byKind.sorted(by: { $0.key < $1.key }).map { "  \($0.key)  \($0.value)" }).joined(separator: "\n")
    }
}
