import Foundation
import MarqueeCore

// The read models of `marquee query box-office` (Store's queries in StoreQueries.swift). Codable with snake_case
// keys, part of docs/query.md's contract.

/// KOFIC's box-office periods: one day, or a week (`week` Monday–Sunday, `weekend` Friday–Sunday, `weekdays`
/// Monday–Thursday).
public enum BoxOfficePeriod: String, Codable, Hashable, Sendable, CaseIterable {
    case daily, week, weekend, weekdays
}

/// One box-office list (``Store/boxOffice(period:date:language:)``).
public struct BoxOfficeChart: Codable, Hashable, Sendable {
    public var period: BoxOfficePeriod
    /// The day as `yyyyMMdd` (daily) or KOFIC's `yearWeekTime` (`201922`).
    public var periodKey: String
    /// The first day the list covers, and the last (`YYYY-MM-DD`; the same day for a daily list).
    @ExplicitNull public var showRangeStart: String?
    @ExplicitNull public var showRangeEnd: String?
    /// By rank.
    public var entries: [BoxOfficeEntry]

    enum CodingKeys: String, CodingKey {
        case period
        case periodKey = "period_key"
        case showRangeStart = "show_range_start"
        case showRangeEnd = "show_range_end"
        case entries
    }

}

/// One rank of a box-office list.
public struct BoxOfficeEntry: Codable, Hashable, Sendable {
    public var rank: Int
    /// Places gained since the previous period (negative: lost).
    @ExplicitNull public var rankChange: Int?
    /// New in the list this period.
    @ExplicitNull public var isNew: Bool?
    @ExplicitNull public var movieCd: String?
    @ExplicitNull public var movieName: String?
    /// `YYYY-MM-DD`.
    @ExplicitNull public var openDate: String?
    @ExplicitNull public var audienceCount: Int?
    @ExplicitNull public var audienceAccumulated: Int?
    /// KRW.
    @ExplicitNull public var salesAmount: Int?
    /// Percent of the period's sales.
    @ExplicitNull public var salesShare: Double?
    @ExplicitNull public var screenCount: Int?
    @ExplicitNull public var showCount: Int?
    /// The TMDB movie linked to the KOFIC movie (the most popular one when several are), if any.
    @ExplicitNull public var tmdbMovieID: Int64?
    /// Its title, in the requested language when the store has it.
    @ExplicitNull public var tmdbTitle: String?

    enum CodingKeys: String, CodingKey {
        case rank
        case rankChange = "rank_change"
        case isNew = "is_new"
        case movieCd = "movie_cd"
        case movieName = "movie_name"
        case openDate = "open_date"
        case audienceCount = "audience_count"
        case audienceAccumulated = "audience_accumulated"
        case salesAmount = "sales_amount"
        case salesShare = "sales_share"
        case screenCount = "screen_count"
        case showCount = "show_count"
        case tmdbMovieID = "tmdb_movie_id"
        case tmdbTitle = "tmdb_title"
    }

}
