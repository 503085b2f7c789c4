public import MarqueeCore
import MarqueeJSON

/// The adapter for KOFIC's open API (kobis): daily and weekly box office, movie information and the movie list
/// (the catalogue, paged).
///
/// Requests authenticate with the `key` query parameter. KOFIC answers errors with HTTP 200 and a `faultInfo`
/// body; numbers arrive as strings. See docs/records.md for the records and follow-ups.
public struct KOFICAdapter: SourceAdapter {
    /// The base URLs, key and user agent.
    public let configuration: SourceConfiguration

    /// KOFIC's fault code for an invalid key.
    public static let invalidKeyCode = "320010"
    /// KOFIC's fault code for a key whose daily quota is spent.
    public static let quotaExhaustedCode = "320011"

    /// Creates the adapter.
    ///
    /// - Parameter configuration: The source configuration; only the KOFIC values are used.
    public init(configuration: SourceConfiguration) {
        self.configuration = configuration
        self.check = ResponseCheck(source: .kofic, secrets: configuration.secrets)
    }

    /// How answers are checked (made once: it lists the configured keys, to keep them out of error texts).
    let check: ResponseCheck

    /// The request for a `kofic.*` job.
    ///
    /// - Throws: A ``SourceError`` when no KOFIC key is configured or the job is not a KOFIC job.
    public func request(for job: FetchJob) throws(SourceError) -> SourceRequest {
        switch job {
        case .koficDailyBoxOffice(let date, _):
            return try self.request(
                path: ["boxoffice", "searchDailyBoxOfficeList.json"],
                query: [QueryItem("targetDt", date)]
            )
        case .koficWeeklyBoxOffice(let date, let week, _):
            return try self.request(
                path: ["boxoffice", "searchWeeklyBoxOfficeList.json"],
                query: [QueryItem("targetDt", date), QueryItem("weekGb", String(week.rawValue))]
            )
        case .koficMovie(let code, _):
            return try self.request(path: ["movie", "searchMovieInfo.json"], query: [QueryItem("movieCd", code)])
        case .koficMovies(let filter, let page, _):
            var query = [QueryItem("curPage", String(page)), QueryItem("itemPerPage", String(filter.perPage))]
            func add(_ name: String, _ value: (some CustomStringConvertible)?) {
                if let value { query.append(QueryItem(name, value.description)) }
            }
            add("openStartDt", filter.openFrom)
            add("openEndDt", filter.openTo)
            add("prdtStartYear", filter.productionFrom)
            add("prdtEndYear", filter.productionTo)
            add("movieNm", filter.title)
            add("directorNm", filter.director)
            return try self.request(path: ["movie", "searchMovieList.json"], query: query)
        default:
            throw SourceError(.invalidConfiguration, source: .kofic, "a \(job.kind) job is not a KOFIC job")
        }
    }

    private func request(path: [String], query: [QueryItem]) throws(SourceError) -> SourceRequest {
        try .json(
            .kofic,
            key: self.configuration.koficAPIKey,
            as: "key",
            base: self.configuration.koficBaseURL,
            path: path,
            query: query,
            userAgent: self.configuration.userAgent
        )
    }

    /// The records and follow-ups of a KOFIC response.
    ///
    /// - Throws: A ``SourceError``: 429 rate limited, 5xx unavailable; `faultInfo` 320010 unauthorized, 320011 (or a
    ///   message saying 초과, "exceeded") quota exhausted until the next midnight in Korea, any other fault bad
    ///   request; an empty `movieInfo` not found; a success body of another shape (a movie list without `totCnt`
    ///   or `movieList`) malformed.
    public func parse(
        _ response: SourceResponse,
        for job: FetchJob,
        fetchedAt: Int64
    ) throws(SourceError) -> SourceResult {
        try self.check.transient(response, fetchedAt: fetchedAt)
        let json = self.check.json(response)
        if let fault = json?["faultInfo"] { throw self.faultError(fault, response: response, fetchedAt: fetchedAt) }
        try self.check.status(response, message: nil)
        guard let json else { throw self.check.malformed(response, "a KOFIC JSON object") }
        var parser = KOFICParser(fetchedAt: fetchedAt)
        switch job {
        case .koficDailyBoxOffice(let date, let follow):
            guard let result = json["boxOfficeResult"], let list = result["dailyBoxOfficeList"]?.arrayValue else {
                throw self.check.malformed(response, "boxOfficeResult.dailyBoxOfficeList")
            }
            parser.boxOffice(list, result: result, period: "daily", requestedDate: date, follow: follow)
        case .koficWeeklyBoxOffice(let date, let week, let follow):
            guard let result = json["boxOfficeResult"], let list = result["weeklyBoxOfficeList"]?.arrayValue else {
                throw self.check.malformed(response, "boxOfficeResult.weeklyBoxOfficeList")
            }
            parser.boxOffice(list, result: result, period: Self.periodName(week), requestedDate: date, follow: follow)
        case .koficMovie(let code, let follow):
            guard let result = json["movieInfoResult"], result.objectValue != nil else {
                throw self.check.malformed(response, "movieInfoResult")
            }
            guard let info = result["movieInfo"], let movieCode = info["movieCd"]?.trimmedText else {
                throw SourceError(.notFound, source: .kofic, "no movie \(code)", status: response.status)
            }
            parser.movie(info, code: movieCode, follow: follow)
        case .koficMovies(let query, let page, let follow):
            guard let result = json["movieListResult"], let list = result["movieList"]?.arrayValue,
                let total = result["totCnt"]?.int, total >= 0
            else {
                throw self.check.malformed(response, "movieListResult with totCnt and movieList")
            }
            parser.movieList(list, follow: follow)
            // Divided before rounding up, so a hostile totCnt near Int64.max cannot overflow.
            let totalPages = total / query.perPage + (total % query.perPage == 0 ? 0 : 1)
            for next in FanOut.pages(
                page: page,
                lastPage: query.lastPage,
                totalPages: totalPages,
                maxPage: FetchJob.KOFICMovieQuery.maxPage
            ) {
                parser.result.add(.koficMovies(query: query, page: next, follow: follow))
            }
        default:
            throw SourceError(.invalidConfiguration, source: .kofic, "a \(job.kind) job is not a KOFIC job")
        }
        return parser.result
    }

    /// The record key segment and `period` of a weekly box office.
    static func periodName(_ week: FetchJob.KOFICWeek) -> String {
        switch week {
        case .week: "week"
        case .weekend: "weekend"
        case .weekdays: "weekdays"
        }
    }

    private func faultError(_ fault: JSONValue, response: SourceResponse, fetchedAt: Int64) -> SourceError {
        let code = fault["errorCode"]?.trimmedText ?? fault["errorCode"]?.int.map(String.init) ?? "?"
        let message = self.check.scrubbed(fault["message"]?.trimmedText ?? "fault")
        let reason = "\(message) (errorCode \(code))"
        if code == Self.invalidKeyCode {
            return SourceError(.unauthorized(.kofic), reason, status: response.status)
        }
        if code == Self.quotaExhaustedCode || message.contains("초과") || message.lowercased().contains("exceed") {
            return SourceError(
                .quotaExhausted,
                source: .kofic,
                reason,
                status: response.status,
                retryAfter: Self.untilNextMidnightKST(fetchedAt)
            )
        }
        return SourceError(.badRequest, source: .kofic, reason, status: response.status)
    }

    /// The time from `now` (epoch milliseconds) to the next midnight in Korea (UTC+9, no daylight saving), when
    /// KOFIC's daily quota resets.
    static func untilNextMidnightKST(_ now: Int64) -> Duration {
        let day: Int64 = 86_400_000
        let local = now + 9 * 3_600_000
        let next = (local.floorDivided(by: day) + 1) * day
        return .milliseconds(next - local)
    }
}
