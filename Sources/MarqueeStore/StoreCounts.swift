import Foundation
import MarqueeCore

// Rows per table, for `marquee query counts`, `drain` and the dashboard (Store's queries in StoreQueries.swift).
// Codable with snake_case keys, part of docs/query.md's contract.

/// Rows per main table (``Store/counts()``).
public struct StoreCounts: Codable, Hashable, Sendable {
    public var movies = 0
    public var movieTranslations = 0
    /// Genre names (one per genre and language).
    public var genres = 0
    public var reviews = 0
    public var koficMovies = 0
    /// Movies of KOFIC's catalogue (its movie list), with or without their info.
    public var koficCatalogue = 0
    /// Box-office lists: distinct periods and days or weeks.
    public var boxOfficeCharts = 0
    public var boxOfficeEntries = 0
    public var books = 0
    public var authors = 0
    public var images = 0
    public var imageVariants = 0
    /// KOFIC↔TMDB links.
    public var movieLinks = 0
    public var jobOutcomes = 0
    /// Signed-in TMDB accounts, the movies they rated, and the movies on their favourites and watchlists.
    public var tmdbAccounts = 0
    public var accountRatings = 0
    public var accountLists = 0

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case movies
        case movieTranslations = "movie_translations"
        case genres, reviews
        case koficMovies = "kofic_movies"
        case koficCatalogue = "kofic_catalogue"
        case boxOfficeCharts = "box_office_charts"
        case boxOfficeEntries = "box_office_entries"
        case books, authors, images
        case imageVariants = "image_variants"
        case movieLinks = "movie_links"
        case jobOutcomes = "job_outcomes"
        case tmdbAccounts = "tmdb_accounts"
        case accountRatings = "account_ratings"
        case accountLists = "account_lists"
    }

    /// Every count with its JSON key, in a fixed order (for tables and summaries).
    public var all: [(name: String, count: Int)] {
        CodingKeys.allCases.map { ($0.rawValue, self[$0]) }
    }

    subscript(key: CodingKeys) -> Int {
        get {
            switch key {
            case .movies: self.movies
            case .movieTranslations: self.movieTranslations
            case .genres: self.genres
            case .reviews: self.reviews
            case .koficMovies: self.koficMovies
            case .koficCatalogue: self.koficCatalogue
            case .boxOfficeCharts: self.boxOfficeCharts
            case .boxOfficeEntries: self.boxOfficeEntries
            case .books: self.books
            case .authors: self.authors
            case .images: self.images
            case .imageVariants: self.imageVariants
            case .movieLinks: self.movieLinks
            case .jobOutcomes: self.jobOutcomes
            case .tmdbAccounts: self.tmdbAccounts
            case .accountRatings: self.accountRatings
            case .accountLists: self.accountLists
            }
        }
        set {
            switch key {
            case .movies: self.movies = newValue
            case .movieTranslations: self.movieTranslations = newValue
            case .genres: self.genres = newValue
            case .reviews: self.reviews = newValue
            case .koficMovies: self.koficMovies = newValue
            case .koficCatalogue: self.koficCatalogue = newValue
            case .boxOfficeCharts: self.boxOfficeCharts = newValue
            case .boxOfficeEntries: self.boxOfficeEntries = newValue
            case .books: self.books = newValue
            case .authors: self.authors = newValue
            case .images: self.images = newValue
            case .imageVariants: self.imageVariants = newValue
            case .movieLinks: self.movieLinks = newValue
            case .jobOutcomes: self.jobOutcomes = newValue
            case .tmdbAccounts: self.tmdbAccounts = newValue
            case .accountRatings: self.accountRatings = newValue
            case .accountLists: self.accountLists = newValue
            }
        }
    }

    /// The SQL that counts each key's rows.
    static func counting(_ key: CodingKeys) -> String {
        switch key {
        case .boxOfficeCharts: "SELECT COUNT(*) FROM (SELECT DISTINCT period, period_key FROM box_office) charts"
        case .boxOfficeEntries: "SELECT COUNT(*) FROM box_office"
        default: "SELECT COUNT(*) FROM \(key.rawValue)"
        }
    }
}
