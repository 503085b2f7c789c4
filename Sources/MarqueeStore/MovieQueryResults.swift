import Foundation
import MarqueeCore

// The read models of `marquee query movies` and `movie` (Store's queries in StoreQueries.swift). Codable with
// snake_case keys, part of docs/query.md's contract.

/// A movie found by ``Store/movies(titleContaining:language:limit:)``.
public struct MovieSummary: Codable, Hashable, Sendable {
    /// TMDB's id.
    public var movieID: Int64
    /// The title to show: the translation in the requested language, else another language's, else the original.
    public var title: String?
    /// The language of ``title`` (`ko-KR` …), `nil` when it is the original title.
    public var titleLanguage: String?
    public var originalTitle: String?
    /// `YYYY-MM-DD`.
    public var releaseDate: String?
    public var popularity: Double?
    public var voteAverage: Double?
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

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.movieID, forKey: .movieID)
        try container.encode(self.title, forKey: .title)
        try container.encode(self.titleLanguage, forKey: .titleLanguage)
        try container.encode(self.originalTitle, forKey: .originalTitle)
        try container.encode(self.releaseDate, forKey: .releaseDate)
        try container.encode(self.popularity, forKey: .popularity)
        try container.encode(self.voteAverage, forKey: .voteAverage)
        try container.encode(self.languages, forKey: .languages)
    }
}

/// Everything the store knows about one TMDB movie (``Store/movie(id:language:)``).
public struct MovieDetails: Codable, Hashable, Sendable {
    public var movieID: Int64
    /// As in ``MovieSummary/title``.
    public var title: String?
    /// As in ``MovieSummary/titleLanguage``.
    public var titleLanguage: String?
    public var originalTitle: String?
    /// ISO 639-1.
    public var originalLanguage: String?
    /// `YYYY-MM-DD`.
    public var releaseDate: String?
    public var isAdult: Bool?
    public var isVideo: Bool?
    public var popularity: Double?
    public var voteAverage: Double?
    public var voteCount: Int?
    /// TMDB image paths (`/abc.jpg`).
    public var posterPath: String?
    public var backdropPath: String?
    /// The facts only TMDB's details endpoint gives; `nil` until the movie's details were fetched.
    public var facts: MovieFacts?
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
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.movieID, forKey: .movieID)
        try container.encode(self.title, forKey: .title)
        try container.encode(self.titleLanguage, forKey: .titleLanguage)
        try container.encode(self.originalTitle, forKey: .originalTitle)
        try container.encode(self.originalLanguage, forKey: .originalLanguage)
        try container.encode(self.releaseDate, forKey: .releaseDate)
        try container.encode(self.isAdult, forKey: .isAdult)
        try container.encode(self.isVideo, forKey: .isVideo)
        try container.encode(self.popularity, forKey: .popularity)
        try container.encode(self.voteAverage, forKey: .voteAverage)
        try container.encode(self.voteCount, forKey: .voteCount)
        try container.encode(self.posterPath, forKey: .posterPath)
        try container.encode(self.backdropPath, forKey: .backdropPath)
        try container.encode(self.facts, forKey: .facts)
        try container.encode(self.localized, forKey: .localized)
        try container.encode(self.genres, forKey: .genres)
        try container.encode(self.reviews, forKey: .reviews)
        try container.encode(self.images, forKey: .images)
        try container.encode(self.koficLinks, forKey: .koficLinks)
    }
}

/// The facts of TMDB's movie details (the `movie_details` table).
public struct MovieFacts: Codable, Hashable, Sendable {
    /// Minutes.
    public var runtime: Int?
    /// USD.
    public var budget: Int?
    public var revenue: Int?
    public var imdbID: String?
    /// `Released`, `Post Production` …
    public var status: String?
    public var collectionID: Int64?
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

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.runtime, forKey: .runtime)
        try container.encode(self.budget, forKey: .budget)
        try container.encode(self.revenue, forKey: .revenue)
        try container.encode(self.imdbID, forKey: .imdbID)
        try container.encode(self.status, forKey: .status)
        try container.encode(self.collectionID, forKey: .collectionID)
        try container.encode(self.productionCountries, forKey: .productionCountries)
        try container.encode(self.spokenLanguages, forKey: .spokenLanguages)
        try container.encode(self.originCountry, forKey: .originCountry)
    }
}

/// A movie's title and texts in one language (`movie.localized` records).
public struct LocalizedMovie: Codable, Hashable, Sendable {
    /// The fetch job's language (`ko-KR`, `ja-JP`, `en-US` …).
    public var language: String
    public var title: String?
    public var overview: String?
    /// From details only.
    public var tagline: String?
    public var homepage: String?
    /// The best-voted poster in this language (details with images only).
    public var posterPath: String?

    enum CodingKeys: String, CodingKey {
        case language, title, overview, tagline, homepage
        case posterPath = "poster_path"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.language, forKey: .language)
        try container.encode(self.title, forKey: .title)
        try container.encode(self.overview, forKey: .overview)
        try container.encode(self.tagline, forKey: .tagline)
        try container.encode(self.homepage, forKey: .homepage)
        try container.encode(self.posterPath, forKey: .posterPath)
    }
}

/// A genre of a movie, named in the requested language when the store has that name.
public struct MovieGenre: Codable, Hashable, Sendable {
    public var genreID: Int64
    /// `nil` when the store has no name for the genre in any language.
    public var name: String?
    /// The language of ``name``.
    public var language: String?

    enum CodingKeys: String, CodingKey {
        case genreID = "genre_id"
        case name, language
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.genreID, forKey: .genreID)
        try container.encode(self.name, forKey: .name)
        try container.encode(self.language, forKey: .language)
    }
}

/// A review, with the start of its text.
public struct ReviewExcerpt: Codable, Hashable, Sendable {
    public var reviewID: String
    /// The author's name, else their TMDB username.
    public var author: String?
    /// 0–10; `nil` when the author gave none.
    public var rating: Double?
    /// ISO-8601, as TMDB sent it.
    public var createdAt: String?
    /// The content with runs of white space (line breaks included) made one space, at most 300 characters
    /// (a cut text ends with `…`).
    public var excerpt: String?
    public var url: String?

    enum CodingKeys: String, CodingKey {
        case reviewID = "review_id"
        case author, rating
        case createdAt = "created_at"
        case excerpt, url
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.reviewID, forKey: .reviewID)
        try container.encode(self.author, forKey: .author)
        try container.encode(self.rating, forKey: .rating)
        try container.encode(self.createdAt, forKey: .createdAt)
        try container.encode(self.excerpt, forKey: .excerpt)
        try container.encode(self.url, forKey: .url)
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
    public var dominantColor: String?
    public var blurhash: String?
    /// Narrowest first.
    public var variants: [StoredImageVariant]

    enum CodingKeys: String, CodingKey {
        case role, sha256
        case sourceURL = "source_url"
        case format, width, height, bytes
        case dominantColor = "dominant_color"
        case blurhash, variants
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.role, forKey: .role)
        try container.encode(self.sha256, forKey: .sha256)
        try container.encode(self.sourceURL, forKey: .sourceURL)
        try container.encode(self.format, forKey: .format)
        try container.encode(self.width, forKey: .width)
        try container.encode(self.height, forKey: .height)
        try container.encode(self.bytes, forKey: .bytes)
        try container.encode(self.dominantColor, forKey: .dominantColor)
        try container.encode(self.blurhash, forKey: .blurhash)
        try container.encode(self.variants, forKey: .variants)
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
    public var url: String?

    enum CodingKeys: String, CodingKey {
        case width, height, format, bytes
        case storeKey = "store_key"
        case url
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.width, forKey: .width)
        try container.encode(self.height, forKey: .height)
        try container.encode(self.format, forKey: .format)
        try container.encode(self.bytes, forKey: .bytes)
        try container.encode(self.storeKey, forKey: .storeKey)
        try container.encode(self.url, forKey: .url)
    }
}

/// A KOFIC movie linked to a TMDB movie (`movie_links`).
public struct KOFICLink: Codable, Hashable, Sendable {
    /// KOFIC's `movieCd`.
    public var movieCd: String
    /// The Korean title (`nil` when the KOFIC movie is no longer stored).
    public var title: String?
    public var titleEnglish: String?
    /// `YYYY-MM-DD`.
    public var openDate: String?
    /// How the link was made: `title+year` or `original-title+year`.
    public var method: String

    enum CodingKeys: String, CodingKey {
        case movieCd = "movie_cd"
        case title
        case titleEnglish = "title_en"
        case openDate = "open_date"
        case method
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.movieCd, forKey: .movieCd)
        try container.encode(self.title, forKey: .title)
        try container.encode(self.titleEnglish, forKey: .titleEnglish)
        try container.encode(self.openDate, forKey: .openDate)
        try container.encode(self.method, forKey: .method)
    }
}
