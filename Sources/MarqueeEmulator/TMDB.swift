/// TMDB v3 responses: lists, search, details (with `append_to_response`), reviews, genres, configuration; the
/// change feed is ``ChangeFeed``.
struct TMDB: Sendable {
    let catalogue: Catalogue
    /// The daily id exports of the files host.
    let exports: TMDBExportFile

    init(catalogue: Catalogue) {
        self.catalogue = catalogue
        self.exports = TMDBExportFile(catalogue: catalogue)
    }

    static let pageSize = 20

    static func error(_ status: Int, code: Int, message: String) -> EmulatorResponse {
        .json(
            .object([("status_code", .int(code)), ("status_message", .string(message)), ("success", .bool(false))]),
            status: status
        )
    }

    static let invalidKey = Self.error(
        401,
        code: 7,
        message: "Invalid API key: You must be granted a valid key."
    )
    static let notFound = Self.error(
        404,
        code: 34,
        message: "The resource you requested could not be found."
    )

    static func errors(_ messages: [String], status: Int = 422) -> EmulatorResponse {
        .json(.object([("errors", JSON.strings(messages)), ("success", .bool(false))]), status: status)
    }

    /// Validates `page` (1 … 500, as TMDB does).
    private func page(_ request: EmulatorRequest) -> Result<Int, Rejection> {
        guard let text = request.query["page"] else { return .success(1) }
        guard let page = Int(text) else { return .failure(Rejection(Self.errors(["page must be a number"]))) }
        guard page >= 1 else { return .failure(Rejection(Self.errors(["page must be greater than 0"]))) }
        guard page <= 500 else {
            return .failure(Rejection(Self.errors(["page must be less than or equal to 500"])))
        }
        return .success(page)
    }

    private func paged(
        _ indices: [Int],
        page: Int,
        language: Language,
        extra: [(String, JSON)] = [],
        cap: Bool
    ) -> JSON {
        let total = cap ? min(indices.count, 10_000) : indices.count
        let pages = (total + Self.pageSize - 1) / Self.pageSize
        let start = (page - 1) * Self.pageSize
        let slice = start < total ? indices[start..<min(start + Self.pageSize, total)] : []
        let results = slice.map { self.catalogue.movie(at: $0).listEntry(language) }
        return .object(
            extra + [
                ("page", .int(page)),
                ("results", .array(results)),
                ("total_pages", .int(cap ? min(pages, 500) : pages)),
                ("total_results", .int(total)),
            ]
        )
    }

    /// `movie/{now_playing|popular|top_rated|upcoming}`.
    func list(_ name: String, _ request: EmulatorRequest) -> EmulatorResponse {
        let page: Int
        switch self.page(request) {
        case .success(let value): page = value
        case .failure(let rejection): return rejection.response
        }
        let language = Language(parameter: request.query["language"])
        let catalogue = self.catalogue
        let reference = catalogue.referenceDay
        let lastModified = reference.epochSeconds
        switch name {
        case "popular":
            return .json(
                self.paged(catalogue.byPopularity.map(Int.init), page: page, language: language, cap: true),
                lastModified: lastModified
            )
        case "top_rated":
            return .json(
                self.paged(catalogue.byRating.map(Int.init), page: page, language: language, cap: true),
                lastModified: lastModified
            )
        case "now_playing", "upcoming":
            let window =
                name == "now_playing"
                ? (reference.adding(-42), reference.adding(3)) : (reference.adding(4), reference.adding(45))
            let indices = catalogue.byRelease.lazy.map(Int.init).filter {
                let day = catalogue.cores[$0].release!
                return day >= window.0 && day <= window.1
            }.sorted { catalogue.cores[$0].popularity > catalogue.cores[$1].popularity }
            let dates: JSON = .object([("maximum", .string(window.1.iso)), ("minimum", .string(window.0.iso))])
            return .json(
                self.paged(indices, page: page, language: language, extra: [("dates", dates)], cap: true),
                lastModified: lastModified
            )
        default:
            return Self.notFound
        }
    }

    /// `search/movie`.
    func search(_ request: EmulatorRequest) -> EmulatorResponse {
        guard let query = request.query["query"], !query.trimmingSpaces.isEmpty else {
            return Self.errors(["query must be provided"])
        }
        let page: Int
        switch self.page(request) {
        case .success(let value): page = value
        case .failure(let rejection): return rejection.response
        }
        let year = request.int("year") ?? request.int("primary_release_year")
        let matches = self.catalogue.searchMovies(
            String(query.trimmingSpaces),
            year: year,
            includeAdult: request.query["include_adult"] == "true"
        )
        return .json(
            self.paged(matches, page: page, language: Language(parameter: request.query["language"]), cap: false),
            lastModified: self.catalogue.referenceDay.epochSeconds
        )
    }

    /// `movie/{id}` with `append_to_response` (reviews, images) and `include_image_language`.
    ///
    /// - Parameters:
    ///   - paddedOverview: When set, the overview is this many bytes long (``EmulatorSettings/paddedMovie``).
    ///   - today: The emulated day (``EmulatorSettings/today``): the details are the movie's revision of that day
    ///     in the change feed (``ChangeFeed``).
    func details(
        _ id: Int,
        _ request: EmulatorRequest,
        paddedOverview: Int? = nil,
        today: Day? = nil
    ) -> EmulatorResponse {
        guard let index = self.catalogue.movieIndex(id: id) else { return Self.notFound }
        let movie = self.catalogue.movie(at: index)
        let language = Language(parameter: request.query["language"])
        var members = self.detailMembers(movie, language: language)
        var lastModified = movie.lastModified
        if let today {
            let revision = ChangeFeed(catalogue: self.catalogue).revision(of: index, through: today)
            if let changed = revision.last {
                // A change adds votes and moves the popularity, and dates the answer to its day.
                for place in members.indices {
                    switch members[place] {
                    case ("vote_count", .int(let count)): members[place].1 = .int(count + 7 * revision.count)
                    case ("popularity", .double(let popularity)):
                        members[place].1 = .double(
                            ((popularity + 1.5 * Double(revision.count)) * 1000).rounded() / 1000
                        )
                    default: break
                    }
                }
                lastModified = max(lastModified, changed.epochSeconds + 3600)
            }
        }
        if let paddedOverview, let place = members.firstIndex(where: { $0.0 == "overview" }) {
            let sentence = movie.overview(language) + " "
            var text = String(repeating: sentence, count: paddedOverview / max(1, sentence.utf8.count) + 1)
            text = String(decoding: text.utf8.prefix(paddedOverview), as: UTF8.self)
            members[place].1 = .string(text)
        }
        let appended = (request.query["append_to_response"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: " ")
        }
        if appended.contains("images") {
            let filter = request.query["include_image_language"].map {
                Set($0.split(separator: ",").map { String($0.trimmingCharacters(in: " ")) })
            }
            members.append(("images", self.images(movie, filter: filter)))
        }
        if appended.contains("reviews") {
            members.append(("reviews", self.reviewsPage(movie, page: 1, includeID: false)))
        }
        return .json(.object(members), lastModified: lastModified)
    }

    /// `movie/{id}/reviews`.
    func reviews(_ id: Int, _ request: EmulatorRequest) -> EmulatorResponse {
        guard let index = self.catalogue.movieIndex(id: id) else { return Self.notFound }
        let page: Int
        switch self.page(request) {
        case .success(let value): page = value
        case .failure(let rejection): return rejection.response
        }
        let movie = self.catalogue.movie(at: index)
        return .json(self.reviewsPage(movie, page: page, includeID: true), lastModified: movie.lastModified)
    }

    /// `genre/movie/list`.
    func genres(_ request: EmulatorRequest) -> EmulatorResponse {
        let language = Language(parameter: request.query["language"])
        let genres = Genres.all.map { genre in
            JSON.object([("id", .int(genre.id)), ("name", .string(Genres.name(genre, language: language)))])
        }
        return .json(
            .object([("genres", .array(genres))]),
            lastModified: Day(year: 2022, month: 8, day: 10).epochSeconds
        )
    }

    /// `configuration`, with the image base URLs pointing at this emulator's image CDN.
    func configuration(host: String) -> EmulatorResponse {
        let base = "http://\(host)/tmdb-images/t/p/"
        return .json(
            .object([
                (
                    "images",
                    .object([
                        ("base_url", .string(base)),
                        ("secure_base_url", .string(base)),
                        ("backdrop_sizes", JSON.strings(["w300", "w780", "w1280", "original"])),
                        ("logo_sizes", JSON.strings(["w45", "w92", "w154", "w185", "w300", "w500", "original"])),
                        (
                            "poster_sizes",
                            JSON.strings(["w92", "w154", "w185", "w342", "w500", "w780", "original"])
                        ),
                        ("profile_sizes", JSON.strings(["w45", "w185", "h632", "original"])),
                        ("still_sizes", JSON.strings(["w92", "w185", "w300", "original"])),
                    ])
                ),
                (
                    "change_keys",
                    JSON.strings([
                        "adult", "budget", "genres", "homepage", "images", "imdb_id", "original_title", "overview",
                        "poster_path", "production_companies", "release_dates", "revenue", "runtime",
                        "spoken_languages", "status", "tagline", "title", "translations", "video", "videos",
                    ])
                ),
            ]),
            lastModified: Day(year: 2022, month: 8, day: 10).epochSeconds
        )
    }

    // MARK: - Details

    private static let countries: [String: (iso: String, name: String, language: String, native: String)] = [
        "en": ("US", "United States of America", "English", "English"),
        "ko": ("KR", "South Korea", "Korean", "한국어/조선말"),
        "ja": ("JP", "Japan", "Japanese", "日本語"),
        "fr": ("FR", "France", "French", "Français"),
        "es": ("ES", "Spain", "Spanish", "Español"),
        "hi": ("IN", "India", "Hindi", "हिन्दी"),
        "it": ("IT", "Italy", "Italian", "Italiano"),
        "zh": ("CN", "China", "Mandarin", "普通话"),
        "de": ("DE", "Germany", "German", "Deutsch"),
    ]

    private func detailMembers(_ movie: Movie, language: Language) -> [(String, JSON)] {
        var random = SeededRandom(movie.seed, 0xDE7A, UInt64(movie.index))
        let core = movie.core
        let country = Self.countries[core.originalLanguage] ?? Self.countries["en"]!
        let collection: JSON
        if random.chance(0.2) {
            let collectionID = 10_000 + movie.index * 3 + 1
            collection = .object([
                ("id", .int(collectionID)),
                ("name", .string("\(movie.title(language)) Collection")),
                ("poster_path", .optional(movie.posterPath)),
                ("backdrop_path", .optional(movie.backdropPath)),
            ])
        } else {
            collection = .null
        }
        let budget = random.chance(0.4) ? 0 : random.int(1...200) * 1_000_000
        let revenue = budget == 0 || random.chance(0.2) ? 0 : budget * random.int(1...6) + random.int(0...999_999)
        let companies: [JSON] = (0..<random.int(0...3)).map { n in
            .object([
                ("id", .int(1000 + (movie.index * 7 + n * 131) % 90_000)),
                (
                    "logo_path",
                    random.chance(0.5)
                        ? .string(ImagePathCodec.encode(seed: movie.seed, kind: .logo, index: movie.index, variant: n))
                        : .null
                ),
                ("name", .string("\(TextGenerator.englishTitle(&random)) Pictures")),
                ("origin_country", .string(random.chance(0.15) ? "" : country.iso)),
            ])
        }
        let status: String
        if let release = core.release, release <= self.catalogue.referenceDay {
            status = "Released"
        } else {
            status = random.pick(["Post Production", "In Production", "Planned"])
        }
        let tagline = random.chance(0.3) ? "" : "\(random.pick(TextGenerator.adjectives)) is only the beginning."
        return [
            ("adult", .bool(core.isAdult)),
            ("backdrop_path", .optional(movie.backdropPath)),
            ("belongs_to_collection", collection),
            ("budget", .int(budget)),
            (
                "genres",
                .array(
                    movie.genreIDs.compactMap { id in
                        Genres.all.first { $0.id == id }.map {
                            .object([("id", .int($0.id)), ("name", .string(Genres.name($0, language: language)))])
                        }
                    }
                )
            ),
            ("homepage", .string(random.chance(0.4) ? "" : "https://www.example.com/movies/\(movie.id)")),
            ("id", .int(movie.id)),
            ("imdb_id", random.chance(0.05) ? .null : .string("tt\(Day.pad(100_000 + movie.index * 37, 7))")),
            ("original_language", .string(core.originalLanguage)),
            ("original_title", .string(movie.originalTitle)),
            ("overview", .string(movie.overview(language))),
            ("popularity", .double(core.popularity)),
            ("poster_path", .optional(movie.posterPath)),
            ("production_companies", .array(companies)),
            (
                "production_countries",
                .array([.object([("iso_3166_1", .string(country.iso)), ("name", .string(country.name))])])
            ),
            ("release_date", .string(core.release?.iso ?? "")),
            ("revenue", .int(revenue)),
            ("runtime", .int(random.chance(0.03) ? 0 : random.int(75...175))),
            (
                "spoken_languages",
                .array([
                    .object([
                        ("english_name", .string(country.language)),
                        ("iso_639_1", .string(core.originalLanguage)),
                        ("name", .string(country.native)),
                    ])
                ])
            ),
            ("status", .string(status)),
            ("tagline", .string(tagline)),
            ("title", .string(movie.title(language))),
            ("video", .bool(false)),
            ("vote_average", movie.voteAverageJSON),
            ("vote_count", .int(core.voteCount)),
        ]
    }

    private func images(_ movie: Movie, filter: Set<String>?) -> JSON {
        func entry(_ path: String, width: Int, height: Int, language: String?, votes: Int) -> JSON {
            .object([
                ("aspect_ratio", .double((Double(width) / Double(height) * 1000).rounded() / 1000)),
                ("height", .int(height)),
                ("iso_639_1", .optional(language)),
                ("file_path", .string(path)),
                ("vote_average", .double(Double(5000 + votes * 37 % 600) / 1000)),
                ("vote_count", .int(votes)),
                ("width", .int(width)),
            ])
        }
        func allowed(_ language: String?) -> Bool {
            guard let filter else { return true }
            return filter.contains(language ?? "null")
        }
        var posters: [JSON] = []
        if let poster = movie.posterPath {
            let languages: [String?] = [movie.core.originalLanguage, "en", "ko", nil]
            for variant in 0...movie.extraPosters where allowed(languages[variant]) {
                let path =
                    variant == 0
                    ? poster
                    : ImagePathCodec.encode(seed: movie.seed, kind: .poster, index: movie.index, variant: variant)
                posters.append(entry(path, width: 2000, height: 3000, language: languages[variant], votes: 4 - variant))
            }
        }
        var backdrops: [JSON] = []
        if let backdrop = movie.backdropPath, allowed(nil) {
            backdrops.append(entry(backdrop, width: 1920, height: 1080, language: nil, votes: 3))
        }
        return .object([("backdrops", .array(backdrops)), ("logos", .array([])), ("posters", .array(posters))])
    }

    // MARK: - Reviews

    private func reviewsPage(_ movie: Movie, page: Int, includeID: Bool) -> JSON {
        let total = movie.reviewCount
        let pages = (total + Self.pageSize - 1) / Self.pageSize
        let start = (page - 1) * Self.pageSize
        let results: [JSON] =
            start < total ? (start..<min(total, start + Self.pageSize)).map { self.review(movie, $0) } : []
        var members: [(String, JSON)] = includeID ? [("id", .int(movie.id))] : []
        members += [
            ("page", .int(page)),
            ("results", .array(results)),
            ("total_pages", .int(pages)),
            ("total_results", .int(total)),
        ]
        return .object(members)
    }

    private func review(_ movie: Movie, _ number: Int) -> JSON {
        var random = SeededRandom(movie.seed, 0x4E71E, UInt64(movie.index), UInt64(number))
        let username = "\(random.pick(TextGenerator.firstNames).lowercased())\(random.int(1...9999))"
        let name = random.chance(0.6) ? "" : TextGenerator.englishName(&random)
        let avatar: JSON
        switch random.int(0...2) {
        case 0: avatar = .null
        case 1:
            avatar = .string(
                ImagePathCodec.encode(seed: movie.seed, kind: .avatar, index: movie.index, variant: number % 16)
            )
        default:
            avatar = .string(
                "/https://www.gravatar.com/avatar/\(StableHash.hex(random.next(), width: 16))\(StableHash.hex(random.next(), width: 16)).jpg"
            )
        }
        let rating: JSON = random.chance(0.2) ? .null : .double(Double(random.int(1...10)))
        let id = StableHash.hex(random.next(), width: 16).prefix(8) + StableHash.hex(random.next(), width: 16)
        let released = movie.core.release ?? self.catalogue.referenceDay.adding(-400)
        // Upcoming movies get reviews from before the reference day too (TMDB has reviews of unreleased films).
        let created = min(
            max(released.value, self.catalogue.referenceDay.value - 3000),
            self.catalogue.referenceDay.value - 1
        )
        let createdDay = Day(random.int(created...max(created, self.catalogue.referenceDay.value - 1)))
        let updatedDay = Day(random.int(createdDay.value...self.catalogue.referenceDay.value))
        func timestamp(_ day: Day) -> String {
            "\(day.iso)T\(Day.pad(random.int(0...23), 2)):\(Day.pad(random.int(0...59), 2)):"
                + "\(Day.pad(random.int(0...59), 2)).\(Day.pad(random.int(0...999), 3))Z"
        }
        var content = TextGenerator.englishOverview(&random)
        if random.chance(0.3) { content += "\r\n\r\n**\(random.int(1...10))/10** \(movie.title(.ko))" }
        return .object([
            ("author", .string(name.isEmpty ? username : name)),
            (
                "author_details",
                .object([
                    ("name", .string(name)),
                    ("username", .string(username)),
                    ("avatar_path", avatar),
                    ("rating", rating),
                ])
            ),
            ("content", .string(content)),
            ("created_at", .string(timestamp(createdDay))),
            ("id", .string(String(id))),
            ("updated_at", .string(timestamp(updatedDay))),
            ("url", .string("https://www.themoviedb.org/review/\(id)")),
        ])
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> Substring {
        var text = self
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return text
    }
}

/// A response that ends a route early (bad parameter), carried through `Result`.
struct Rejection: Error {
    let response: EmulatorResponse

    init(_ response: EmulatorResponse) { self.response = response }
}
