import Foundation
import MarqueeCore
import MarqueeJSON

// The read side of the store: what `marquee query` and the dashboard show. The same SQL runs on both
// engines: `?` placeholders (``SQLDialect/placeholders(_:)``), dates read as `CAST(x AS TEXT)`, JSON columns read
// as text, booleans read as integers, and no `NULLS LAST` (`x IS NULL, x DESC` sorts the same on both).
//
// The read models are `Codable` with snake_case keys that are part of the contract (docs/query.md): they encode
// every key, with `null` for an unknown value, so a script sees the same shape for every row. They are in
// MovieQueryResults.swift, BoxOfficeQueryResults.swift, BookQueryResults.swift and StoreCounts.swift.

// MARK: - Store + Queries

extension Store {
    /// The most rows a list query returns.
    public static let maximumLimit = 500

    /// The version of the store's schema, or `nil` when the store has none yet (nothing was ever indexed).
    ///
    /// Reads only: unlike ``migrate()``, it never creates a table.
    public func schemaVersion() async throws -> Int? {
        let tableCount: String
        switch self.engine.dialect {
        case .postgres:
            tableCount = """
                SELECT COUNT(*) FROM information_schema.tables
                 WHERE table_schema = current_schema() AND table_name = 'schema_migrations'
                """
        case .sqlite:
            tableCount = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        }
        guard try await self.engine.read(tableCount, []).first?.first?.int ?? 0 > 0 else { return nil }
        return try await self.engine.read("SELECT MAX(version) FROM schema_migrations", []).first?.first?.int.map {
            Int($0)
        }
    }

    /// TMDB movies whose original title or a localized title contains `query`, most popular first.
    ///
    /// Titles are compared folded (``TitleMatching/fold(_:)``: case, width and punctuation ignored), so `기생`
    /// finds `기생충`, `君の名` finds `君の名は。` and `spider man` finds `Spider-Man`.
    ///
    /// - Parameters:
    ///   - query: Part of a title, in any language.
    ///   - language: The language to show titles in (`ko-KR`, or `ko` for any Korean); `nil` for any.
    ///   - limit: At most this many movies (1 to ``maximumLimit``).
    /// - Throws: ``StoreError`` `invalidQuery` when `query` has no letter or digit or `limit` is out of range;
    ///   `unavailable` when the store cannot be read.
    public func movies(
        titleContaining query: String,
        language: String? = nil,
        limit: Int = 20
    ) async throws
        -> [MovieSummary]
    {
        let pattern = try Self.pattern(query, what: "a title")
        try Self.check(limit: limit)
        let rows = try await self.query(
            """
            SELECT ids.movie_id, m.original_title, CAST(m.release_date AS TEXT), m.popularity, m.vote_average
              FROM (SELECT movie_id FROM movies WHERE original_title_norm LIKE ?
                    UNION
                    SELECT movie_id FROM movie_translations WHERE title_norm LIKE ?) ids
              LEFT JOIN movies m ON m.movie_id = ids.movie_id
             ORDER BY m.popularity IS NULL, m.popularity DESC, ids.movie_id
             LIMIT ?
            """,
            [.text(pattern), .text(pattern), .int(Int64(limit))]
        )
        let ids = rows.compactMap { $0[0].int }
        let translations = try await self.translatedTitles(of: ids)
        return rows.compactMap { row in
            guard let id = row[0].int else { return nil }
            let titles = translations[id] ?? []
            let display = Self.displayTitle(titles, original: row[1].text, language: language)
            return MovieSummary(
                movieID: id,
                title: display.title,
                titleLanguage: display.language,
                originalTitle: row[1].text,
                releaseDate: row[2].text,
                popularity: row[3].real,
                voteAverage: row[4].real,
                languages: titles.map(\.language)
            )
        }
    }

    /// Everything the store has about a TMDB movie, or `nil` when it has nothing.
    ///
    /// - Parameters:
    ///   - id: TMDB's movie id.
    ///   - language: The language for the display title and genre names (`ko-KR`, or `ko`); `nil` for any.
    ///     Names fall back to another language, genres to their bare id.
    public func movie(id: Int64, language: String? = nil) async throws -> MovieDetails? {
        let binds: [SQLValue] = [.int(id)]
        let movieRows = try await self.query(
            """
            SELECT original_title, original_language, CAST(release_date AS TEXT), adult, video, popularity,
                   vote_average, vote_count, poster_path, backdrop_path, CAST(genre_ids AS TEXT)
              FROM movies WHERE movie_id = ?
            """,
            binds
        )
        let localizedRows = try await self.query(
            """
            SELECT t.language, t.title, t.overview, d.tagline, d.homepage, d.poster_path
              FROM movie_translations t
              LEFT JOIN movie_translation_details d ON d.movie_id = t.movie_id AND d.language = t.language
             WHERE t.movie_id = ?
             ORDER BY t.language
            """,
            binds
        )
        guard !movieRows.isEmpty || !localizedRows.isEmpty else { return nil }
        let movie = movieRows.first ?? Array(repeating: .null, count: 11)
        let localized = localizedRows.compactMap { row -> LocalizedMovie? in
            guard let language = row[0].text else { return nil }
            return LocalizedMovie(
                language: language,
                title: row[1].text,
                overview: row[2].text,
                tagline: row[3].text,
                homepage: row[4].text,
                posterPath: row[5].text
            )
        }
        let display = Self.displayTitle(
            localized.map { ($0.language, $0.title) },
            original: movie[0].text,
            language: language
        )
        var details = MovieDetails(
            movieID: id,
            title: display.title,
            titleLanguage: display.language,
            originalTitle: movie[0].text,
            originalLanguage: movie[1].text,
            releaseDate: movie[2].text,
            isAdult: movie[3].bool,
            isVideo: movie[4].bool,
            popularity: movie[5].real,
            voteAverage: movie[6].real,
            voteCount: movie[7].int.map { Int($0) },
            posterPath: movie[8].text,
            backdropPath: movie[9].text,
            facts: nil,
            localized: localized,
            genres: [],
            reviews: [],
            images: [],
            koficLinks: [],
            refresh: nil
        )

        details.refresh = try await self.query(
            "SELECT reason, fetched_at FROM movie_refreshes WHERE movie_id = ?",
            binds
        ).first.flatMap { row in
            guard let reason = row[0].text, let time = row[1].int else { return nil }
            return MovieRefresh(reason: reason, refreshedAtMilliseconds: time)
        }

        details.facts = try await self.query(
            """
            SELECT runtime, budget, revenue, imdb_id, status, collection_id, CAST(production_countries AS TEXT),
                   CAST(spoken_languages AS TEXT), CAST(origin_country AS TEXT)
              FROM movie_details WHERE movie_id = ?
            """,
            binds
        ).first.map { row in
            MovieFacts(
                runtime: row[0].int.map { Int($0) },
                budget: row[1].int.map { Int($0) },
                revenue: row[2].int.map { Int($0) },
                imdbID: row[3].text,
                status: row[4].text,
                collectionID: row[5].int,
                productionCountries: Self.strings(json: row[6].text),
                spokenLanguages: Self.strings(json: row[7].text),
                originCountry: Self.strings(json: row[8].text)
            )
        }

        details.genres = try await self.genres(Self.integers(json: movie[10].text), language: language)

        details.reviews = try await self.query(
            """
            SELECT review_id, author_name, author, username, rating, created_at, content, url
              FROM reviews WHERE movie_id = ?
             ORDER BY created_at IS NULL, created_at DESC, review_id
            """,
            binds
        ).compactMap { row in
            guard let reviewID = row[0].text else { return nil }
            return ReviewExcerpt(
                reviewID: reviewID,
                author: row[1].text ?? row[2].text ?? row[3].text,
                rating: row[4].real,
                createdAt: row[5].text,
                excerpt: Self.excerpt(row[6].text),
                url: row[7].text
            )
        }

        details.images = try await self.storedImages(owners: ["tmdb:movie:\(id)"])["tmdb:movie:\(id)"] ?? []

        details.koficLinks = try await self.query(
            """
            SELECT l.movie_cd, k.title, k.title_en, CAST(k.open_date AS TEXT), l.method
              FROM movie_links l
              LEFT JOIN kofic_movies k ON k.movie_cd = l.movie_cd
             WHERE l.movie_id = ?
             ORDER BY l.movie_cd
            """,
            binds
        ).compactMap { row in
            guard let code = row[0].text, let method = row[4].text else { return nil }
            return KOFICLink(
                movieCd: code,
                title: row[1].text,
                titleEnglish: row[2].text,
                openDate: row[3].text,
                method: method
            )
        }
        return details
    }

    /// A KOFIC box-office list: the daily list of a day, or the weekly list (of `period`) of the week that
    /// contains the day.
    ///
    /// - Parameters:
    ///   - period: Daily, or one of the three weekly lists.
    ///   - date: A day, `YYYY-MM-DD`; `nil` for the latest list of `period` the store has.
    ///   - language: The language for the linked TMDB titles; `nil` for any.
    /// - Returns: `nil` when the store has no such list.
    /// - Throws: ``StoreError`` `invalidQuery` when `date` is not a calendar day.
    public func boxOffice(
        period: BoxOfficePeriod = .daily,
        date: String? = nil,
        language: String? = nil
    )
        async throws -> BoxOfficeChart?
    {
        let key: String?
        switch (period, date) {
        case (_, nil):
            key = try await self.query(
                "SELECT MAX(period_key) FROM box_office WHERE period = ?",
                [.text(period.rawValue)]
            ).first?.first?.text
        case (.daily, let date?):
            try Self.check(day: date)
            key = date.replacingOccurrences(of: "-", with: "")
        case (_, let date?):
            try Self.check(day: date)
            // Dates compared as ISO text: a text parameter against a DATE column would need a cast that SQLite
            // reads as a number.
            key = try await self.query(
                """
                SELECT MAX(period_key) FROM box_office
                 WHERE period = ? AND ? BETWEEN CAST(show_range_start AS TEXT) AND CAST(show_range_end AS TEXT)
                """,
                [.text(period.rawValue), .text(date)]
            ).first?.first?.text
        }
        guard let key else { return nil }
        return try await self.chart(period, key: key, language: language)
    }

    /// A weekly KOFIC box-office list by KOFIC's week number.
    ///
    /// - Parameters:
    ///   - period: `week`, `weekend` or `weekdays`.
    ///   - yearWeek: KOFIC's `yearWeekTime`: the year and the week, `YYYYWW` (`202401`).
    ///   - language: The language for the linked TMDB titles; `nil` for any.
    /// - Returns: `nil` when the store has no such list.
    /// - Throws: ``StoreError`` `invalidQuery` for `daily` or a malformed week.
    public func boxOffice(
        period: BoxOfficePeriod,
        yearWeek: String,
        language: String? = nil
    ) async throws
        -> BoxOfficeChart?
    {
        guard period != .daily else {
            throw StoreError(.invalidQuery, "a daily box office has no week number: ask for a date")
        }
        let digits = yearWeek.utf8
        guard digits.count == 6, digits.allSatisfy({ (48...57).contains($0) }), let week = Int(yearWeek.suffix(2)),
            (1...53).contains(week)
        else {
            throw StoreError(.invalidQuery, "'\(yearWeek.prefix(20))' is not a week: use YYYYWW, e.g. 202401")
        }
        return try await self.chart(period, key: yearWeek, language: language)
    }

    /// Open Library books whose title contains `title` and that have an author whose name contains `author`
    /// (either may be `nil`, not both), most editions first.
    ///
    /// - Throws: ``StoreError`` `invalidQuery` when neither is given, one has no letter or digit, or `limit` is
    ///   out of range.
    public func books(
        titleContaining title: String? = nil,
        author: String? = nil,
        limit: Int = 20
    ) async throws
        -> [BookSummary]
    {
        guard title != nil || author != nil else {
            throw StoreError(.invalidQuery, "give a title, an author or both to search books")
        }
        try Self.check(limit: limit)
        var conditions: [String] = []
        var binds: [SQLValue] = []
        if let title {
            conditions.append("b.title_norm LIKE ?")
            binds.append(.text(try Self.pattern(title, what: "a title")))
        }
        if let author {
            conditions.append("b.book_key IN (SELECT book_key FROM book_authors WHERE name_norm LIKE ?)")
            binds.append(.text(try Self.pattern(author, what: "an author")))
        }
        binds.append(.int(Int64(limit)))
        let rows = try await self.query(
            """
            SELECT b.book_key, b.work_id, b.edition_id, b.title, b.cover_id, f.first_publish_year, f.edition_count
              FROM books b
              LEFT JOIN book_search_facts f ON f.book_key = b.book_key
             WHERE \(conditions.joined(separator: " AND "))
             ORDER BY f.edition_count IS NULL, f.edition_count DESC, b.title, b.book_key
             LIMIT ?
            """,
            binds
        )
        let keys = rows.compactMap { $0[0].text }
        guard !keys.isEmpty else { return [] }
        var authors: [String: [BookAuthor]] = [:]
        for row in try await self.query(
            """
            SELECT book_key, name, author_key FROM book_authors
             WHERE book_key IN (\(Self.placeholders(keys.count)))
             ORDER BY book_key, position
            """,
            keys.map { .text($0) }
        ) {
            guard let key = row[0].text else { continue }
            authors[key, default: []].append(BookAuthor(name: row[1].text, authorKey: row[2].text))
        }
        let covers = try await self.storedImages(owners: keys, role: "cover")
        return rows.compactMap { row in
            guard let key = row[0].text else { return nil }
            return BookSummary(
                bookKey: key,
                workID: row[1].text,
                editionID: row[2].text,
                title: row[3].text,
                authors: authors[key] ?? [],
                firstPublishYear: row[5].int.map { Int($0) },
                editionCount: row[6].int.map { Int($0) },
                coverID: row[4].int,
                cover: covers[key]?.first
            )
        }
    }

    /// The number of rows in each main table, in one statement (one snapshot).
    public func counts() async throws -> StoreCounts {
        let keys = StoreCounts.CodingKeys.allCases
        let sql = "SELECT " + keys.map { "(\(StoreCounts.counting($0)))" }.joined(separator: ", ")
        let row = try await self.engine.read(sql, []).first ?? []
        var counts = StoreCounts()
        for (index, key) in keys.enumerated() where index < row.count {
            counts[key] = Int(row[index].int ?? 0)
        }
        return counts
    }

    // MARK: - Parts

    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
        try await self.engine.read(self.engine.dialect.placeholders(sql), binds)
    }

    /// The rows of one list, with the TMDB movies linked to its KOFIC movies.
    private func chart(_ period: BoxOfficePeriod, key: String, language: String?) async throws -> BoxOfficeChart? {
        let rows = try await self.query(
            """
            SELECT rank, rank_change, is_new, movie_cd, movie_name, CAST(open_date AS TEXT), audience_count,
                   audience_accumulated, sales_amount, sales_share, screen_count, show_count,
                   CAST(show_range_start AS TEXT), CAST(show_range_end AS TEXT)
              FROM box_office
             WHERE period = ? AND period_key = ?
             ORDER BY rank
            """,
            [.text(period.rawValue), .text(key)]
        )
        guard !rows.isEmpty else { return nil }
        let codes = Array(Set(rows.compactMap { $0[3].text })).sorted()
        var linked: [String: Int64] = [:]
        if !codes.isEmpty {
            // The most popular TMDB movie when a KOFIC movie has several links (an ambiguous title and year).
            for row in try await self.query(
                """
                SELECT l.movie_cd, l.movie_id
                  FROM movie_links l
                  LEFT JOIN movies m ON m.movie_id = l.movie_id
                 WHERE l.movie_cd IN (\(Self.placeholders(codes.count)))
                 ORDER BY l.movie_cd, m.popularity IS NULL, m.popularity DESC, l.movie_id
                """,
                codes.map { .text($0) }
            ) {
                guard let code = row[0].text, let id = row[1].int, linked[code] == nil else { continue }
                linked[code] = id
            }
        }
        let titles = try await self.displayTitles(of: Array(Set(linked.values)), language: language)
        let entries = rows.map { row in
            let id = row[3].text.flatMap { linked[$0] }
            return BoxOfficeEntry(
                rank: Int(row[0].int ?? 0),
                rankChange: row[1].int.map { Int($0) },
                isNew: row[2].bool,
                movieCd: row[3].text,
                movieName: row[4].text,
                openDate: row[5].text,
                audienceCount: row[6].int.map { Int($0) },
                audienceAccumulated: row[7].int.map { Int($0) },
                salesAmount: row[8].int.map { Int($0) },
                salesShare: row[9].real,
                screenCount: row[10].int.map { Int($0) },
                showCount: row[11].int.map { Int($0) },
                tmdbMovieID: id,
                tmdbTitle: id.flatMap { titles[$0] ?? nil }
            )
        }
        return BoxOfficeChart(
            period: period,
            periodKey: key,
            showRangeStart: rows.lazy.compactMap { $0[12].text }.first,
            showRangeEnd: rows.lazy.compactMap { $0[13].text }.first,
            entries: entries
        )
    }

    /// Each movie's localized titles, sorted by language.
    private func translatedTitles(of ids: [Int64]) async throws -> [Int64: [(language: String, title: String?)]] {
        guard !ids.isEmpty else { return [:] }
        var titles: [Int64: [(language: String, title: String?)]] = [:]
        for row in try await self.query(
            """
            SELECT movie_id, language, title FROM movie_translations
             WHERE movie_id IN (\(Self.placeholders(ids.count)))
             ORDER BY movie_id, language
            """,
            ids.map { .int($0) }
        ) {
            guard let id = row[0].int, let language = row[1].text else { continue }
            titles[id, default: []].append((language, row[2].text))
        }
        return titles
    }

    /// The display title of each movie (``MovieSummary/title``).
    func displayTitles(of ids: [Int64], language: String?) async throws -> [Int64: String?] {
        guard !ids.isEmpty else { return [:] }
        let translations = try await self.translatedTitles(of: ids)
        var originals: [Int64: String] = [:]
        for row in try await self.query(
            "SELECT movie_id, original_title FROM movies WHERE movie_id IN (\(Self.placeholders(ids.count)))",
            ids.map { .int($0) }
        ) {
            if let id = row[0].int, let title = row[1].text { originals[id] = title }
        }
        var titles: [Int64: String?] = [:]
        for id in ids {
            titles[id] = Self.displayTitle(translations[id] ?? [], original: originals[id], language: language).title
        }
        return titles
    }

    /// Genres in the given order, each named in the preferred language.
    private func genres(_ ids: [Int64], language: String?) async throws -> [MovieGenre] {
        guard !ids.isEmpty else { return [] }
        var names: [Int64: [(language: String, title: String?)]] = [:]
        for row in try await self.query(
            """
            SELECT genre_id, language, name FROM genres
             WHERE genre_id IN (\(Self.placeholders(ids.count))) AND name IS NOT NULL
             ORDER BY genre_id, language
            """,
            ids.map { .int($0) }
        ) {
            guard let id = row[0].int, let language = row[1].text else { continue }
            names[id, default: []].append((language, row[2].text))
        }
        var seen = Set<Int64>()
        return ids.filter { seen.insert($0).inserted }.map { id in
            let name = Self.preferred(names[id] ?? [], language: language)
            return MovieGenre(genreID: id, name: name?.title, language: name?.language)
        }
    }

    /// The images of each owner (optionally of one role), with their variants.
    func storedImages(owners: [String], role: String? = nil) async throws -> [String: [StoredImage]] {
        guard !owners.isEmpty else { return [:] }
        var binds: [SQLValue] = owners.map { .text($0) }
        var roleCondition = ""
        if let role {
            roleCondition = " AND e.role = ?"
            binds.append(.text(role))
        }
        let rows = try await self.query(
            """
            SELECT e.owner, e.role, e.sha256, e.source_url, i.format, i.width, i.height, i.bytes, i.dominant_color,
                   i.blurhash
              FROM entity_images e
              JOIN images i ON i.sha256 = e.sha256
             WHERE e.owner IN (\(Self.placeholders(owners.count)))\(roleCondition)
             ORDER BY e.owner, e.role
            """,
            binds
        )
        let hashes = Array(Set(rows.compactMap { $0[2].text })).sorted()
        var variants: [String: [StoredImageVariant]] = [:]
        if !hashes.isEmpty {
            for row in try await self.query(
                """
                SELECT sha256, width, height, format, bytes, store_key, url FROM image_variants
                 WHERE sha256 IN (\(Self.placeholders(hashes.count)))
                 ORDER BY sha256, width, format
                """,
                hashes.map { .text($0) }
            ) {
                guard let sha256 = row[0].text, let width = row[1].int, let height = row[2].int,
                    let format = row[3].text, let bytes = row[4].int, let key = row[5].text
                else { continue }
                variants[sha256, default: []].append(
                    StoredImageVariant(
                        width: Int(width),
                        height: Int(height),
                        format: format,
                        bytes: Int(bytes),
                        storeKey: key,
                        url: row[6].text
                    )
                )
            }
        }
        var images: [String: [StoredImage]] = [:]
        for row in rows {
            guard let owner = row[0].text, let role = row[1].text, let sha256 = row[2].text,
                let sourceURL = row[3].text, let format = row[4].text, let width = row[5].int,
                let height = row[6].int, let bytes = row[7].int
            else { continue }
            images[owner, default: []].append(
                StoredImage(
                    role: role,
                    sha256: sha256,
                    sourceURL: sourceURL,
                    format: format,
                    width: Int(width),
                    height: Int(height),
                    bytes: Int(bytes),
                    dominantColor: row[8].text,
                    blurhash: row[9].text,
                    variants: variants[sha256] ?? []
                )
            )
        }
        return images
    }

    // MARK: - Helpers

    /// `?, ?, ?` for an `IN` list.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// `%<folded>%`: folded text is letters and digits only, so it holds no `%`, `_` or `\` to escape.
    static func pattern(_ text: String, what: String) throws(StoreError) -> String {
        guard let folded = TitleMatching.fold(text) else {
            throw StoreError(
                .invalidQuery,
                "'\(text.prefix(40))' has no letter or digit to search for: give \(what) with at least one"
            )
        }
        return "%\(folded)%"
    }

    static func check(limit: Int) throws(StoreError) {
        guard (1...Self.maximumLimit).contains(limit) else {
            throw StoreError(.invalidQuery, "the limit must be from 1 to \(Self.maximumLimit), not \(limit)")
        }
    }

    static func check(day: String) throws(StoreError) {
        guard Fields.isCalendarDay(day) else {
            throw StoreError(.invalidQuery, "'\(day.prefix(20))' is not a day: use YYYY-MM-DD")
        }
    }

    /// The entry to show for `language`: one in that exact language, else one in the same base language
    /// (`ko` for `ko-KR`), else the first; entries without a text are skipped.
    static func preferred(
        _ entries: [(language: String, title: String?)],
        language: String?
    ) -> (language: String, title: String)? {
        let wanted = language?.lowercased()
        let wantedBase = wanted.map(Self.baseLanguage)
        var best: (rank: Int, language: String, title: String)?
        for entry in entries {
            guard let title = entry.title, !title.isEmpty else { continue }
            let candidate = entry.language.lowercased()
            let rank = candidate == wanted ? 0 : Self.baseLanguage(candidate) == wantedBase ? 1 : 2
            if let current = best, (current.rank, current.language) <= (rank, entry.language) { continue }
            best = (rank, entry.language, title)
        }
        return best.map { ($0.language, $0.title) }
    }

    static func displayTitle(
        _ translations: [(language: String, title: String?)],
        original: String?,
        language: String?
    ) -> (title: String?, language: String?) {
        if let translation = Self.preferred(translations, language: language) {
            return (translation.title, translation.language)
        }
        return (original, nil)
    }

    private static func baseLanguage(_ language: String) -> String {
        String(language.prefix { $0 != "-" && $0 != "_" })
    }

    /// At most `limit` characters of `text` with white space collapsed; a cut text ends with `…`.
    static func excerpt(_ text: String?, limit: Int = 300) -> String? {
        guard let text else { return nil }
        let collapsed = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard !collapsed.isEmpty else { return nil }
        guard collapsed.count > limit else { return collapsed }
        var cut = String(collapsed.prefix(limit - 1))
        while cut.last?.isWhitespace == true { cut.removeLast() }
        return cut + "…"
    }

    /// The strings of a JSON array column (`[]` for anything else).
    static func strings(json text: String?) -> [String] {
        guard let text, case .array(let values)? = try? JSONValue.parse(Array(text.utf8)) else { return [] }
        return values.compactMap {
            if case .string(let value) = $0 { return value }
            return nil
        }
    }

    /// The integers of a JSON array column (`[]` for anything else).
    static func integers(json text: String?) -> [Int64] {
        guard let text, case .array(let values)? = try? JSONValue.parse(Array(text.utf8)) else { return [] }
        return values.compactMap {
            switch $0 {
            case .integer(let value): value
            case .number(let value): Int64(exactly: value)
            default: nil
            }
        }
    }
}
