import MarqueeCore
import MarqueeJSON

/// Builds the records and follow-ups of TMDB responses (docs/records.md).
struct TMDBParser {
    let configuration: SourceConfiguration
    let fetchedAt: Int64
    var result = SourceResult()

    init(configuration: SourceConfiguration, fetchedAt: Int64) {
        self.configuration = configuration
        self.fetchedAt = fetchedAt
    }

    // MARK: - Lists and search

    /// `movie` and `movie.localized` records of list or search results, and each movie's follow-ups.
    mutating func movies(_ results: some Sequence<some LenientJSON>, language: String, follow: Follow) {
        for item in results {
            guard let id = Self.id(item) else { continue }
            self.movieRecords(item, id: id, language: language, fromDetails: false)
            if follow.details {
                // The detail job queues the images, so they are not queued twice.
                self.result.add(.tmdbMovie(id: id, language: language, follow: FanOut.detailFollow(follow)))
            } else if follow.images || follow.backdrops {
                self.images(item, id: id, follow: follow)
            }
        }
    }

    // MARK: - Details

    /// The records of `GET /movie/{id}` and of what was appended to it (reviews, images).
    mutating func details(_ json: some LenientJSON, language: String, follow: Follow) {
        guard let id = Self.id(json) else { return }
        self.movieRecords(json, id: id, language: language, fromDetails: true)
        // The genres of a details answer are named in the job's language: genre records for free.
        if let genres = json["genres"]?.arrayValue { self.genres(genres, language: language) }
        if let reviews = json["reviews"], let results = reviews["results"]?.arrayValue {
            self.reviews(results, movieID: id)
            if follow.reviews {
                let pages = FanOut.pages(
                    page: 1,
                    follow: follow,
                    totalPages: reviews["total_pages"]?.int,
                    maxPage: TMDBAdapter.maxPage
                )
                for page in pages {
                    self.result.add(.tmdbReviews(id: id, page: page, language: language, follow: .none))
                }
            }
        } else if follow.reviews {
            // Reviews were asked for but not appended (an upstream that ignores append_to_response).
            self.result.add(.tmdbReviews(id: id, page: 1, language: language, follow: Follow(pages: follow.pages)))
        }
        self.images(json, id: id, follow: follow)
    }

    // MARK: - Changes

    /// A `tmdb.movie` job in each language for each id of a page of the change feed (no records: the feed names
    /// ids only). Adult titles are left out, as search leaves them out (`include_adult=false`); an item without a
    /// positive id is skipped.
    mutating func changes(_ results: some Sequence<some LenientJSON>, languages: [String], follow: Follow) {
        let detailFollow = FanOut.detailFollow(follow)
        for item in results {
            guard let id = Self.id(item), item["adult"]?.bool != true else { continue }
            for language in languages {
                self.result.add(.tmdbMovie(id: id, language: language, follow: detailFollow))
            }
        }
    }

    // MARK: - Reviews

    /// `review` records of a page of reviews.
    mutating func reviews(_ results: some Sequence<some LenientJSON>, movieID: Int64) {
        for item in results {
            guard let reviewID = item["id"]?.trimmedText else { continue }
            let details = item["author_details"]
            // Keys in ascending order (JSONWriter): the record's bytes are written once, here.
            var data = JSONWriter.object(capacity: 512)
            data.writeTrimmedText("author", item["author"])
            data.writeTrimmedText("author_name", details?["name"])
            data.write("avatar_url", self.avatarURL(details?["avatar_path"]?.trimmedText))
            data.writeText("content", item["content"])
            data.writeTrimmedText("created_at", item["created_at"])
            if let language = item["iso_639_1"]?.trimmedText { data.write("language", language) }
            data.write("movie_id", movieID)
            data.write("rating", details?["rating"]?.double)
            data.write("review_id", reviewID)
            data.writeTrimmedText("updated_at", item["updated_at"])
            data.writeTrimmedText("url", item["url"])
            data.writeTrimmedText("username", details?["username"])
            self.result.records.append(
                Record(kind: .review, key: "tmdb:review:\(reviewID)", fetchedAt: self.fetchedAt, writtenData: data)
            )
        }
    }

    /// TMDB's avatar paths come as `/abc.jpg` (an image path) or `/https://www.gravatar.com/…` (a full URL with a
    /// stray slash in front).
    private func avatarURL(_ path: String?) -> String? {
        guard let path else { return nil }
        if path.hasPrefix("/http://") || path.hasPrefix("/https://") { return String(path.dropFirst()) }
        if path.hasPrefix("/") { return "\(self.configuration.tmdbImageBaseURL)/original\(path)" }
        return nil
    }

    // MARK: - Genres

    /// `genre` records of a genre list.
    mutating func genres(_ genres: some Sequence<some LenientJSON>, language: String) {
        for genre in genres {
            guard let id = Self.id(genre) else { continue }
            var data = JSONWriter.object(capacity: 64)
            data.write("genre_id", id)
            data.write("language", language)
            data.writeTrimmedText("name", genre["name"])
            self.result.records.append(
                Record(kind: .genre, key: "tmdb:genre:\(id):\(language)", fetchedAt: self.fetchedAt, writtenData: data)
            )
        }
    }

    // MARK: - Movies

    /// The `movie` and `movie.localized` records of a list, search or details item. Their keys are written in
    /// ascending order (JSONWriter), those only details have in their places.
    private mutating func movieRecords(_ item: some LenientJSON, id: Int64, language: String, fromDetails: Bool) {
        var movie = JSONWriter.object(capacity: 512)
        movie.write("adult", item["adult"]?.bool)
        movie.write("backdrop_path", Self.imagePath(item["backdrop_path"]))
        if fromDetails {
            movie.write("budget", Self.positive(item["budget"]?.int))
            movie.write("collection_id", item["belongs_to_collection"].flatMap { Self.id($0) })
            movie.write("genre_ids", item["genres"]?.arrayValue?.compactMap { Self.id($0) } ?? [])
            movie.writeTrimmedText("imdb_id", item["imdb_id"])
        } else {
            movie.write("genre_ids", item["genre_ids"]?.arrayValue?.compactMap(\.int) ?? [])
        }
        movie.write("movie_id", id)
        if fromDetails {
            movie.write("origin_country", item["origin_country"]?.arrayValue?.compactMap(\.trimmedText) ?? [])
        }
        movie.writeTrimmedText("original_language", item["original_language"])
        movie.writeTrimmedText("original_title", item["original_title"])
        movie.write("popularity", item["popularity"]?.double)
        movie.write("poster_path", Self.imagePath(item["poster_path"]))
        if fromDetails {
            movie.write("production_countries", Self.codes(item["production_countries"], field: "iso_3166_1"))
        }
        movie.write("release_date", item["release_date"]?.isoDate)
        if fromDetails {
            movie.write("revenue", Self.positive(item["revenue"]?.int))
            movie.write("runtime", Self.positive(item["runtime"]?.int))
            movie.write("spoken_languages", Self.codes(item["spoken_languages"], field: "iso_639_1"))
            movie.writeTrimmedText("status", item["status"])
        }
        movie.write("video", item["video"]?.bool)
        movie.write("vote_average", item["vote_average"]?.double)
        movie.write("vote_count", item["vote_count"]?.int)
        self.result.records.append(
            Record(kind: .movie, key: "tmdb:movie:\(id)", fetchedAt: self.fetchedAt, writtenData: movie)
        )

        var localized = JSONWriter.object(capacity: 512)
        if fromDetails { localized.writeTrimmedText("homepage", item["homepage"]) }
        localized.write("language", language)
        localized.write("movie_id", id)
        localized.writeText("overview", item["overview"])
        if fromDetails, let images = item["images"] {
            localized.write("poster_path", Self.localizedPoster(images, language: language))
        }
        if fromDetails { localized.writeText("tagline", item["tagline"]) }
        localized.writeTrimmedText("title", item["title"])
        self.result.records.append(
            Record(
                kind: .movieLocalized,
                key: "tmdb:movie:\(id):\(language)",
                fetchedAt: self.fetchedAt,
                writtenData: localized
            )
        )
    }

    /// Poster (`follow.images`) and backdrop (`follow.backdrops`) image jobs at the original size (the image
    /// worker picks the rendition it downloads and makes the variants).
    private mutating func images(_ item: some LenientJSON, id: Int64, follow: Follow) {
        let base = self.configuration.tmdbImageBaseURL
        if follow.images, let poster = Self.imagePath(item["poster_path"]) {
            self.result.add(ImageJob(url: "\(base)/original\(poster)", owner: "tmdb:movie:\(id)", role: .poster))
        }
        if follow.backdrops, let backdrop = Self.imagePath(item["backdrop_path"]) {
            self.result.add(ImageJob(url: "\(base)/original\(backdrop)", owner: "tmdb:movie:\(id)", role: .backdrop))
        }
    }

    /// The best poster in the job's language among appended `images.posters` (TMDB ranks them by votes).
    private static func localizedPoster(_ images: some LenientJSON, language: String) -> String? {
        let prefix = String(language.prefix(while: { $0 != "-" }))
        return images["posters"]?.arrayValue?.first(where: { $0["iso_639_1"]?.trimmedText == prefix }).flatMap {
            self.imagePath($0["file_path"])
        }
    }

    // MARK: - Values

    /// A positive integer `id`.
    static func id(_ item: some LenientJSON) -> Int64? {
        guard let id = item["id"]?.int, id > 0 else { return nil }
        return id
    }

    /// An image path such as `/abc.jpg`; anything not starting with `/` or holding spaces is no path.
    static func imagePath<Value: LenientJSON>(_ value: Value?) -> String? {
        guard let path = value?.trimmedText else { return nil }
        // The paths TMDB sends are ASCII, where each byte is a character ("\r\n", the one ASCII character of two
        // scalars, is whitespace either way) and the whitespace characters are tab to carriage return and space:
        // checked byte by byte, without the Unicode property lookups of `Character.isWhitespace` (a tenth of a
        // page's parse; make bench-fetch). Anything else takes the character-wise check.
        let utf8 = path.utf8
        if utf8.allSatisfy({ $0 < 0x80 }) {
            let isRefused = { (byte: UInt8) in
                byte == 0x20 || (0x09...0x0D).contains(byte) || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
            }
            guard utf8.first == UInt8(ascii: "/"), utf8.count > 1, !utf8.contains(where: isRefused) else { return nil }
            return path
        }
        return self.characterwiseImagePath(path)
    }

    /// ``imagePath(_:)``'s check of a trimmed path, character by character.
    static func characterwiseImagePath(_ path: String) -> String? {
        guard path.hasPrefix("/"), path.count > 1,
            !path.contains(where: { $0.isWhitespace || $0 == "?" || $0 == "#" })
        else { return nil }
        return path
    }

    /// TMDB writes 0 for an unknown runtime, budget or revenue.
    static func positive(_ value: Int64?) -> Int64? {
        guard let value, value > 0 else { return nil }
        return value
    }

    static func codes<Value: LenientJSON>(_ value: Value?, field: String) -> [String] {
        value?.arrayValue?.compactMap { $0[field]?.trimmedText } ?? []
    }
}
