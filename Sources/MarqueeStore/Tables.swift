/// The column types of the schema, and what each becomes on the two engines.
enum ColumnType: Sendable {
    case int, real, text, bool, date, json

    var postgres: String {
        switch self {
        case .int: "BIGINT"
        case .real: "DOUBLE PRECISION"
        case .text: "TEXT"
        case .bool: "BOOLEAN"
        case .date: "DATE"
        case .json: "JSONB"
        }
    }

    var sqlite: String {
        switch self {
        case .int, .bool: "INTEGER"
        case .real: "REAL"
        case .text, .date, .json: "TEXT"
        }
    }
}

struct Column: Sendable {
    var name: String
    var type: ColumnType
}

/// A table the upserts write: its natural key and the columns a row carries (``Schema`` creates it).
///
/// A *gated* table has `fetched_at`: an upsert replaces a row only when the new `fetched_at` is newer. A child
/// table (genre links, authors of a book, variants of an image) belongs to a gated parent: its rows of a parent
/// are replaced whenever the parent's row is.
struct Table: Sendable {
    var name: String
    var key: [Column]
    var values: [Column]
    var gated: Bool

    /// Every column a row holds, key first.
    var columns: [Column] { self.key + self.values + (self.gated ? [Column(name: "fetched_at", type: .int)] : []) }

    init(_ name: String, key: [(String, ColumnType)], values: [(String, ColumnType)], gated: Bool = true) {
        self.name = name
        self.key = key.map { Column(name: $0.0, type: $0.1) }
        self.values = values.map { Column(name: $0.0, type: $0.1) }
        self.gated = gated
    }
}

/// The tables records are written to, in the order a batch writes them.
enum Tables {
    static let movies = Table(
        "movies", key: [("movie_id", .int)],
        values: [
            ("original_title", .text), ("original_title_norm", .text), ("original_language", .text),
            ("release_date", .date), ("release_year", .int), ("adult", .bool), ("video", .bool),
            ("popularity", .real), ("vote_average", .real), ("vote_count", .int), ("genre_ids", .json),
            ("poster_path", .text), ("backdrop_path", .text),
        ]
    )
    static let movieGenres = Table("movie_genres", key: [("movie_id", .int), ("genre_id", .int)], values: [], gated: false)
    static let movieDetails = Table(
        "movie_details", key: [("movie_id", .int)],
        values: [
            ("runtime", .int), ("budget", .int), ("revenue", .int), ("imdb_id", .text), ("status", .text),
            ("collection_id", .int), ("production_countries", .json), ("spoken_languages", .json),
            ("origin_country", .json),
        ]
    )
    static let movieTranslations = Table(
        "movie_translations", key: [("movie_id", .int), ("language", .text)],
        values: [("title", .text), ("title_norm", .text), ("overview", .text)]
    )
    static let movieTranslationDetails = Table(
        "movie_translation_details", key: [("movie_id", .int), ("language", .text)],
        values: [("tagline", .text), ("homepage", .text), ("poster_path", .text)]
    )
    static let genres = Table("genres", key: [("genre_id", .int), ("language", .text)], values: [("name", .text)])
    static let reviews = Table(
        "reviews", key: [("review_id", .text)],
        values: [
            ("movie_id", .int), ("author", .text), ("author_name", .text), ("username", .text),
            ("avatar_url", .text), ("rating", .real), ("content", .text), ("url", .text), ("created_at", .text),
            ("updated_at", .text), ("language", .text),
        ]
    )
    static let koficMovies = Table(
        "kofic_movies", key: [("movie_cd", .text)],
        values: [
            ("title", .text), ("title_norm", .text), ("title_en", .text), ("title_en_norm", .text),
            ("title_original", .text), ("production_year", .int), ("open_date", .date), ("year", .int),
            ("runtime", .int), ("production_status", .text), ("type", .text), ("nations", .json),
            ("genres", .json), ("directors", .json), ("actors", .json), ("actor_count", .int),
            ("show_types", .json), ("companies", .json), ("audits", .json),
        ]
    )
    static let boxOffice = Table(
        "box_office", key: [("period", .text), ("period_key", .text), ("rank", .int)],
        values: [
            ("date", .date), ("year_week", .text), ("show_range", .text), ("show_range_start", .date),
            ("show_range_end", .date), ("rank_change", .int), ("is_new", .bool), ("movie_cd", .text),
            ("movie_name", .text), ("open_date", .date), ("sales_amount", .int), ("sales_share", .real),
            ("sales_change", .int), ("sales_change_rate", .real), ("sales_accumulated", .int),
            ("audience_count", .int), ("audience_change", .int), ("audience_change_rate", .real),
            ("audience_accumulated", .int), ("screen_count", .int), ("show_count", .int),
        ]
    )
    static let books = Table(
        "books", key: [("book_key", .text)],
        values: [
            ("work_id", .text), ("edition_id", .text), ("title", .text), ("title_norm", .text),
            ("cover_id", .int), ("subjects", .json),
        ]
    )
    static let bookSearchFacts = Table(
        "book_search_facts", key: [("book_key", .text)],
        values: [("first_publish_year", .int), ("isbn", .json), ("languages", .json), ("edition_count", .int)]
    )
    static let bookAuthors = Table(
        "book_authors", key: [("book_key", .text), ("position", .int)],
        values: [("author_key", .text), ("name", .text), ("name_norm", .text)], gated: false
    )
    static let bookWorkFacts = Table(
        "book_work_facts", key: [("book_key", .text)],
        values: [("description", .text), ("first_publish_date", .text), ("author_keys", .json), ("covers", .json)]
    )
    static let authors = Table("authors", key: [("author_key", .text)], values: [("name", .text), ("name_norm", .text)])
    static let images = Table(
        "images", key: [("sha256", .text)],
        values: [
            ("format", .text), ("width", .int), ("height", .int), ("bytes", .int), ("dominant_color", .text),
            ("blurhash", .text),
        ]
    )
    static let imageVariants = Table(
        "image_variants", key: [("sha256", .text), ("width", .int), ("format", .text)],
        values: [("height", .int), ("bytes", .int), ("store_key", .text), ("url", .text)], gated: false
    )
    static let entityImages = Table(
        "entity_images", key: [("owner", .text), ("role", .text)],
        values: [("sha256", .text), ("source_url", .text), ("downloaded_url", .text), ("rendition", .text)]
    )
    static let jobOutcomes = Table(
        "job_outcomes", key: [("job_id", .text)],
        values: [
            ("root_id", .text), ("parent_id", .text), ("stage", .text), ("kind", .text), ("attempt", .int),
            ("outcome", .text), ("tier", .int), ("error_kind", .text), ("error", .text), ("outputs", .json),
            ("spawned", .json), ("source", .text),
        ]
    )

    /// Gated tables in write order (parents before the tables that name them).
    static let gated: [Table] = [
        movies, movieDetails, movieTranslations, movieTranslationDetails, genres, reviews, koficMovies, boxOffice,
        books, bookSearchFacts, bookWorkFacts, authors, images, entityImages, jobOutcomes,
    ]
}
