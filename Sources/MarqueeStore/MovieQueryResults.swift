import Foundation
import MarqueeCore

// The read models of `marquee query movies` and `movie` (Store's queries in StoreQueries.swift). Codable with
// snake_case keys, part of docs/query.md's contract.

/// A movie found by ``Store/movies(titleContaining:language:limit:)``.
public struct MovieSummary: Codable, Hashable, Sendable {
    /// TMDB's id.
    public var movieID: Int64
    /// The title to show: the translation in the requested language, else another language's, else the original.
    @ExplicitNull public var title: String?
    /// The language of ``title`` (`ko-KR` …), `nil` when it is the original title.
    @ExplicitNull public var titleLanguage: String?
    @ExplicitNull public var originalTitle: String?
    /// `YYYY-MM-DD`.
    @ExplicitNull public var releaseDate: String?
    @ExplicitNull public var popularity: Double?
    @ExplicitNull public var voteAverage: Double?
    /// The languages the store has a localized record for, sorted.
    public var languages: [String]

    enum CodingKeys: String, CodingKey {
        case movieID = "movie_id"
        case title
        case titleLanguage = "title_language"
        case originalTitle = "original_title"
        case releaseDate = "release_date"
        case popularity
        case voteAverage = "vote_average"
        case languages
    }

}

/// Everything the store knows about one TMDB movie (``Store/movie(id:language:)``).
public struct MovieDetails: Codable, Hashable, Sendable {
    public var movieID: Int64
    /// As in ``MovieSummary/title``.
    @ExplicitNull public var title: String?
    /// As in ``MovieSummary/titleLanguage``.
    @ExplicitNull public var titleLanguage: String?
    @ExplicitNull public var originalTitle: String?
    /// ISO 639-1.
    @ExplicitNull public var originalLanguage: String?
    /// `YYYY-MM-DD`.
    @ExplicitNull public var releaseDate: String?
    @ExplicitNull public var isAdult: Bool?
    @ExplicitNull public var isVideo: Bool?
    @ExplicitNull public var popularity: Double?
    @ExplicitNull public var voteAverage: Double?
    @ExplicitNull public var voteCount: Int?
    /// TMDB image paths (`/abc.jpg`).
    @ExplicitNull public var posterPath: String?
    @ExplicitNull public var backdropPath: String?
    /// The facts only TMDB's details endpoint gives; `nil` until the movie's details were fetched.
    @ExplicitNull public var facts: MovieFacts?
    /// One entry per language, sorted by language.
    public var localized: [LocalizedMovie]
    /// In TMDB's order.
    public var genres: [MovieGenre]
    /// Newest first.
    public var reviews: [ReviewExcerpt]
    /// Poster and backdrop, by role.
    public var images: [StoredImage]
    /// The KOFIC movies linked to this one (``TitleMatching``).
    public var koficLinks: [KOFICLink]
    /// When the movie was last refreshed and why (`movie_refreshes`); `nil` when no record of it carried a
    /// reason.
    @ExplicitNull public var refresh: MovieRefresh?

    enum CodingKeys: String, CodingKey {
        case movieID = "movie_id"
        case title
        case titleLanguage = "title_language"
        case originalTitle = "original_title"
        case originalLanguage = "original_language"
        case releaseDate = "release_date"
        case isAdult = "adult"
        case isVideo = "video"
        case popularity
        case voteAverage = "vote_average"
        case voteCount = "vote_count"
        case posterPath = "poster_path"
        case backdropPath = "backdrop_path"
        case facts = "details"
        case localized
        case genres
        case reviews
        case images
        case koficLinks = "kofic_links"
        case refresh
    }

}

/// When a movie was last refreshed and why (the `movie_refreshes` table).
public struct MovieRefresh: Codable, Hashable, Sendable {
    /// ``RefreshReason``'s name: `list`, `search`, `backfill`, `change`, `schedule` or `request`.
    public var reason: String
    /// When the record that refreshed it was fetched, epoch milliseconds.
    public var refreshedAtMilliseconds: Int64

    /// ``refreshedAtMilliseconds`` as ISO 8601 in UTC, with milliseconds: `2024-03-01T12:00:00.000Z`.
    public var refreshedAt: String {
        let instant = UTCInstant(milliseconds: self.refreshedAtMilliseconds)
        return "\(instant.date)T\(instant.time).\(LocalDate.padded(Int(instant.millisecondOfDay % 1000), 3))Z"
    }

    public init(reason: String, refreshedAtMilliseconds: Int64) {
        self.reason = reason
        self.refreshedAtMilliseconds = refreshedAtMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case reason
        case refreshedAt = "refreshed_at"
        case refreshedAtMilliseconds = "refreshed_at_ms"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.reason = try container.decode(String.self, forKey: .reason)
        self.refreshedAtMilliseconds = try container.decode(Int64.self, forKey: .refreshedAtMilliseconds)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.reason, forKey: .reason)
        try container.encode(self.refreshedAt, forKey: .refreshedAt)
        try container.encode(self.refreshedAtMilliseconds, forKey: .refreshedAtMilliseconds)
    }
}

/// The facts of TMDB's movie details (the `movie_details` table).
public struct MovieFacts: Codable, Hashable, Sendable {
    /// Minutes.
    @ExplicitNull public var runtime: Int?
    /// USD.
    @ExplicitNull public var budget: Int?
    @ExplicitNull public var revenue: Int?
    @ExplicitNull public var imdbID: String?
    /// `Released`, `Post Production` …
    @ExplicitNull public var status: String?
    @ExplicitNull public var collectionID: Int64?
    /// ISO 3166-1 codes.
    public var productionCountries: [String]
    /// ISO 639-1 codes.
    public var spokenLanguages: [String]
    public var originCountry: [String]

    enum CodingKeys: String, CodingKey {
        case runtime, budget, revenue
        case imdbID = "imdb_id"
        case status
        case collectionID = "collection_id"
        case productionCountries = "production_countries"
        case spokenLanguages = "spoken_languages"
        case originCountry = "origin_country"
    }

}

/// A movie's title and texts in one language (`movie.localized` records).
public struct LocalizedMovie: Codable, Hashable, Sendable {
    /// The fetch job's language (`ko-KR`, `ja-JP`, `en-US` …).
    public var language: String
    @ExplicitNull public var title: String?
    @ExplicitNull public var overview: String?
    /// From details only.
    @ExplicitNull public var tagline: String?
    @ExplicitNull public var homepage: String?
    /// The best-voted poster in this language (details with images only).
    @ExplicitNull public var posterPath: String?

    enum CodingKeys: String, CodingKey {
        case language, title, overview, tagline, homepage
        case posterPath = "poster_path"
    }

}

/// A genre of a movie, named in the requested language when the store has that name.
public struct MovieGenre: Codable, Hashable, Sendable {
    public var genreID: Int64
    /// `nil` when the store has no name for the genre in any language.
    @ExplicitNull public var name: String?
    /// The language of ``name``.
    @ExplicitNull public var language: String?

    enum CodingKeys: String, CodingKey {
        case genreID = "genre_id"
        case name, language
    }

}

/// A review, with the start of its text.
public struct ReviewExcerpt: Codable, Hashable, Sendable {
    public var reviewID: String
    /// The author's name, else their TMDB username.
    @ExplicitNull public var author: String?
    /// 0–10; `nil` when the author gave none.
    @ExplicitNull public var rating: Double?
    /// ISO-8601, as TMDB sent it.
    @ExplicitNull public var createdAt: String?
    /// The content with runs of white space (line breaks included) made one space, at most 300 characters
    /// (a cut text ends with `…`).
    @ExplicitNull public var excerpt: String?
    @ExplicitNull public var url: String?

    enum CodingKeys: String, CodingKey {
        case reviewID = "review_id"
        case author, rating
        case createdAt = "created_at"
        case excerpt, url
    }

}

/// An image stored for an entity (`image` records): the downloaded original and its variants.
public struct StoredImage: Codable, Hashable, Sendable {
    /// `poster`, `backdrop` or `cover`.
    public var role: String
    /// The content hash the variants are stored under.
    public var sha256: String
    /// The URL the image job named.
    public var sourceURL: String
    /// The original's format (`jpeg`, `png`, `webp`, `gif`) and size.
    public var format: String
    public var width: Int
    public var height: Int
    public var bytes: Int
    /// `#rrggbb`.
    @ExplicitNull public var dominantColor: String?
    @ExplicitNull public var blurhash: String?
    /// Narrowest first.
    public var variants: [StoredImageVariant]

    enum CodingKeys: String, CodingKey {
        case role, sha256
        case sourceURL = "source_url"
        case format, width, height, bytes
        case dominantColor = "dominant_color"
        case blurhash, variants
    }

}

/// One rendition of a stored image.
public struct StoredImageVariant: Codable, Hashable, Sendable {
    public var width: Int
    public var height: Int
    /// `webp` or `jpeg`.
    public var format: String
    public var bytes: Int
    /// The key in the image store.
    public var storeKey: String
    /// Where an app reads it.
    @ExplicitNull public var url: String?

    enum CodingKeys: String, CodingKey {
        case width, height, format, bytes
        case storeKey = "store_key"
        case url
    }

}

/// A KOFIC movie linked to a TMDB movie (`movie_links`).
public struct KOFICLink: Codable, Hashable, Sendable {
    /// KOFIC's `movieCd`.
    public var movieCd: String
    /// The Korean title (`nil` when the KOFIC movie is no longer stored).
    @ExplicitNull public var title: String?
    @ExplicitNull public var titleEnglish: String?
    /// `YYYY-MM-DD`.
    @ExplicitNull public var openDate: String?
    /// How the link was made: `title+year` or `original-title+year`.
    public var method: String

    enum CodingKeys: String, CodingKey {
        case movieCd = "movie_cd"
        case title
        case titleEnglish = "title_en"
        case openDate = "open_date"
        case method
    }

}
