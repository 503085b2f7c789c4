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
    public var showRangeStart: String?
    public var showRangeEnd: String?
    /// By rank.
    public var entries: [BoxOfficeEntry]

    enum CodingKeys: String, CodingKey {
        case period
        case periodKey = "period_key"
        case showRangeStart = "show_range_start"
        case showRangeEnd = "show_range_end"
        case entries
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.period, forKey: .period)
        try container.encode(self.periodKey, forKey: .periodKey)
        try container.encode(self.showRangeStart, forKey: .showRangeStart)
        try container.encode(self.showRangeEnd, forKey: .showRangeEnd)
        try container.encode(self.entries, forKey: .entries)
    }
}

/// One rank of a box-office list.
public struct BoxOfficeEntry: Codable, Hashable, Sendable {
    public var rank: Int
    /// Places gained since the previous period (negative: lost).
    public var rankChange: Int?
    /// New in the list this period.
    public var isNew: Bool?
    public var movieCd: String?
    public var movieName: String?
    /// `YYYY-MM-DD`.
    public var openDate: String?
    public var audienceCount: Int?
    public var audienceAccumulated: Int?
    /// KRW.
    public var salesAmount: Int?
    /// Percent of the period's sales.
    public var salesShare: Double?
    public var screenCount: Int?
    public var showCount: Int?
    /// The TMDB movie linked to the KOFIC movie (the most popular one when several are), if any.
    public var tmdbMovieID: Int64?
    /// Its title, in the requested language when the store has it.
    public var tmdbTitle: String?

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

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.rank, forKey: .rank)
        try container.encode(self.rankChange, forKey: .rankChange)
        try container.encode(self.isNew, forKey: .isNew)
        try container.encode(self.movieCd, forKey: .movieCd)
        try container.encode(self.movieName, forKey: .movieName)
        try container.encode(self.openDate, forKey: .openDate)
        try container.encode(self.audienceCount, forKey: .audienceCount)
        try container.encode(self.audienceAccumulated, forKey: .audienceAccumulated)
        try container.encode(self.salesAmount, forKey: .salesAmount)
        try container.encode(self.salesShare, forKey: .salesShare)
        try container.encode(self.screenCount, forKey: .screenCount)
        try container.encode(self.showCount, forKey: .showCount)
        try container.encode(self.tmdbMovieID, forKey: .tmdbMovieID)
        try container.encode(self.tmdbTitle, forKey: .tmdbTitle)
    }
}
