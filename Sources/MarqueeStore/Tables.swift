import MarqueeCore
import MarqueeJSON

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
    /// Columns that accumulate instead of being replaced: a newer row's value is merged with the stored one (see
    /// ``Accumulation``). The other columns follow the gate as usual.
    var accumulating: [String: Accumulation] = [:]
    /// A job-outcome table: a `retried` outcome never replaces a finished one (`done`, `dead-lettered`) of the
    /// same or a later attempt, whatever its time. A worker cut off from the cluster may route a job to a retry
    /// tier after another worker finished it (its produce requests reach the broker once the link is back); its
    /// late outcome must not send the lineage backwards.
    var keepsFinishedOutcomes = false

    /// Every column a row holds, key first.
    var columns: [Column] { self.key + self.values + (self.gated ? [Column(name: "fetched_at", type: .int)] : []) }

    init(_ name: String, key: [(String, ColumnType)], values: [(String, ColumnType)], gated: Bool = true) {
        self.name = name
        self.key = key.map { Column(name: $0.0, type: $0.1) }
        self.values = values.map { Column(name: $0.0, type: $0.1) }
        self.gated = gated
    }
}

/// How a column of a newer row is merged with the stored value (``Table/accumulating``).
enum Accumulation: Sendable {
    /// A JSON array: the stored elements, then the newer row's elements not among them.
    case arrayUnion
    /// A JSON object of counts: every key of either, with the larger count.
    case objectMaximum

    /// The upsert's `SET` expression (`t` is the stored row, `excluded` the newer one).
    func sql(_ column: String, dialect: SQLDialect) -> String {
        switch (self, dialect) {
        case (.arrayUnion, .postgres):
            """
            t.\(column) || COALESCE((SELECT jsonb_agg(e) FROM jsonb_array_elements(excluded.\(column)) AS e \
            WHERE NOT t.\(column) @> jsonb_build_array(e)), '[]'::jsonb)
            """
        case (.arrayUnion, .sqlite):
            """
            (SELECT json_group_array(value) FROM (SELECT value FROM json_each(t.\(column)) UNION ALL \
            SELECT n.value FROM json_each(excluded.\(column)) AS n \
            WHERE n.value NOT IN (SELECT value FROM json_each(t.\(column)))))
            """
        case (.objectMaximum, .postgres):
            """
            (SELECT COALESCE(jsonb_object_agg(k, m), '{}'::jsonb) FROM (SELECT k, max(v) AS m FROM \
            (SELECT key AS k, (value #>> '{}')::bigint AS v FROM jsonb_each(t.\(column)) UNION ALL \
            SELECT key, (value #>> '{}')::bigint FROM jsonb_each(excluded.\(column))) AS u GROUP BY k) AS g)
            """
        case (.objectMaximum, .sqlite):
            """
            (SELECT json_group_object(k, m) FROM (SELECT key AS k, max(value) AS m FROM \
            (SELECT key, value FROM json_each(t.\(column)) UNION ALL \
            SELECT key, value FROM json_each(excluded.\(column))) GROUP BY key))
            """
        }
    }

    /// The same merge for two rows of one batch.
    func merge(_ older: JSONValue?, _ newer: JSONValue?) -> JSONValue? {
        switch (self, older, newer) {
        case (.arrayUnion, .array(let old)?, .array(let new)?):
            return .array(old + new.filter { !old.contains($0) })
        case (.objectMaximum, .object(let old)?, .object(let new)?):
            return .object(
                JSONObject(
                    old.dictionary.merging(new.dictionary) { a, b in
                        if case .integer(let x) = a, case .integer(let y) = b { return .integer(max(x, y)) }
                        return b
                    }
                )
            )
        default:
            return newer ?? older
        }
    }
}

/// The tables records are written to, in the order a batch writes them.
enum Tables {
    static let movies = Table(
        "movies",
        key: [("movie_id", .int)],
        values: [
            ("original_title", .text), ("original_title_norm", .text), ("original_language", .text),
            ("release_date", .date), ("release_year", .int), ("adult", .bool), ("video", .bool),
            ("popularity", .real), ("vote_average", .real), ("vote_count", .int), ("genre_ids", .json),
            ("poster_path", .text), ("backdrop_path", .text),
        ]
    )
    static let movieGenres = Table(
        "movie_genres",
        key: [("movie_id", .int), ("genre_id", .int)],
        values: [],
        gated: false
    )
    static let movieDetails = Table(
        "movie_details",
        key: [("movie_id", .int)],
        values: [
            ("runtime", .int), ("budget", .int), ("revenue", .int), ("imdb_id", .text), ("status", .text),
            ("collection_id", .int), ("production_countries", .json), ("spoken_languages", .json),
            ("origin_country", .json),
        ]
    )
    /// When a movie was last refreshed and why (``RefreshReason``): written with each `movie` record whose
    /// envelope carries a reason, its `fetched_at` the record's.
    static let movieRefreshes = Table("movie_refreshes", key: [("movie_id", .int)], values: [("reason", .text)])
    static let movieTranslations = Table(
        "movie_translations",
        key: [("movie_id", .int), ("language", .text)],
        values: [("title", .text), ("title_norm", .text), ("overview", .text)]
    )
    static let movieTranslationDetails = Table(
        "movie_translation_details",
        key: [("movie_id", .int), ("language", .text)],
        values: [("tagline", .text), ("homepage", .text), ("poster_path", .text)]
    )
    static let genres = Table("genres", key: [("genre_id", .int), ("language", .text)], values: [("name", .text)])
    static let reviews = Table(
        "reviews",
        key: [("review_id", .text)],
        values: [
            ("movie_id", .int), ("author", .text), ("author_name", .text), ("username", .text),
            ("avatar_url", .text), ("rating", .real), ("content", .text), ("url", .text), ("created_at", .text),
            ("updated_at", .text), ("language", .text),
        ]
    )
    static let koficMovies = Table(
        "kofic_movies",
        key: [("movie_cd", .text)],
        values: [
            ("title", .text), ("title_norm", .text), ("title_en", .text), ("title_en_norm", .text),
            ("title_original", .text), ("production_year", .int), ("open_date", .date), ("year", .int),
            ("runtime", .int), ("production_status", .text), ("type", .text), ("nations", .json),
            ("genres", .json), ("directors", .json), ("actors", .json), ("actor_count", .int),
            ("show_types", .json), ("companies", .json), ("audits", .json),
        ]
    )
    static let koficCatalogue = Table(
        "kofic_catalogue",
        key: [("movie_cd", .text)],
        values: [
            ("title", .text), ("title_norm", .text), ("title_en", .text), ("production_year", .int),
            ("open_date", .date), ("year", .int), ("type", .text), ("production_status", .text), ("nation", .text),
            ("genre", .text), ("nations", .json), ("genres", .json), ("directors", .json), ("companies", .json),
        ]
    )
    static let tmdbAccounts = Table(
        "tmdb_accounts",
        key: [("account", .text)],
        values: [
            ("account_id", .int), ("account_object_id", .text), ("username", .text), ("name", .text),
            ("language", .text), ("region", .text), ("include_adult", .bool),
        ]
    )
    static let accountRatings = Table(
        "account_ratings",
        key: [("account", .text), ("movie_id", .int)],
        values: [
            ("account_id", .int), ("account_object_id", .text), ("rating", .real), ("rated_at", .text),
            ("title", .text), ("original_title", .text), ("release_date", .date), ("as_of", .int),
        ]
    )
    static let accountLists = Table(
        "account_lists",
        key: [("account", .text), ("list", .text), ("movie_id", .int)],
        values: [
            ("account_id", .int), ("account_object_id", .text), ("title", .text), ("original_title", .text),
            ("release_date", .date), ("as_of", .int),
        ]
    )
    static let accountListRefreshes = Table(
        "account_list_refreshes",
        key: [("account", .text), ("list", .text), ("as_of", .int)],
        values: [("total", .int)]
    )
    static let boxOffice = Table(
        "box_office",
        key: [("period", .text), ("period_key", .text), ("rank", .int)],
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
        "books",
        key: [("book_key", .text)],
        values: [
            ("work_id", .text), ("edition_id", .text), ("title", .text), ("title_norm", .text),
            ("cover_id", .int), ("subjects", .json),
        ]
    )
    static let bookSearchFacts = Table(
        "book_search_facts",
        key: [("book_key", .text)],
        values: [("first_publish_year", .int), ("isbn", .json), ("languages", .json), ("edition_count", .int)]
    )
    static let bookAuthors = Table(
        "book_authors",
        key: [("book_key", .text), ("position", .int)],
        values: [("author_key", .text), ("name", .text), ("name_norm", .text)],
        gated: false
    )
    static let bookWorkFacts = Table(
        "book_work_facts",
        key: [("book_key", .text)],
        values: [("description", .text), ("first_publish_date", .text), ("author_keys", .json), ("covers", .json)]
    )
    static let authors = Table(
        "authors",
        key: [("author_key", .text)],
        values: [("name", .text), ("name_norm", .text)]
    )
    static let images = Table(
        "images",
        key: [("sha256", .text)],
        values: [
            ("format", .text), ("width", .int), ("height", .int), ("bytes", .int), ("dominant_color", .text),
            ("blurhash", .text),
        ]
    )
    static let imageVariants = Table(
        "image_variants",
        key: [("sha256", .text), ("width", .int), ("format", .text)],
        values: [("height", .int), ("bytes", .int), ("store_key", .text), ("url", .text)],
        gated: false
    )
    static let entityImages = Table(
        "entity_images",
        key: [("owner", .text), ("role", .text)],
        values: [("sha256", .text), ("source_url", .text), ("downloaded_url", .text), ("rendition", .text)]
    )
    /// One row per job: its latest outcome, with `spawned` and `outputs` accumulated over all its runs. A job
    /// handled twice (redelivered before its commit) may spawn less the second time (a 304 spawns nothing): the
    /// lineage still holds what the first run spawned, so the jobs it sent are expected until they finish.
    static let jobOutcomes = {
        var table = Table(
            "job_outcomes",
            key: [("job_id", .text)],
            values: [
                ("root_id", .text), ("parent_id", .text), ("stage", .text), ("kind", .text), ("attempt", .int),
                ("outcome", .text), ("tier", .int), ("error_kind", .text), ("error", .text), ("outputs", .json),
                ("spawned", .json), ("source", .text),
            ]
        )
        table.accumulating = ["spawned": .arrayUnion, "outputs": .objectMaximum]
        table.keepsFinishedOutcomes = true
        return table
    }()

    /// Gated tables in write order (parents before the tables that name them).
    static let gated: [Table] = [
        movies, movieDetails, movieRefreshes, movieTranslations, movieTranslationDetails, genres, reviews, koficMovies,
        koficCatalogue, boxOffice, tmdbAccounts, accountRatings, accountLists, accountListRefreshes,
        books, bookSearchFacts, bookWorkFacts, authors, images, entityImages, jobOutcomes,
    ]
}
