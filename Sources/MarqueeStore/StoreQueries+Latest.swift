// MARK: - Store + latest ingested items

/// An entity the indexer stored recently, with its poster or cover (``Store/latestItems(limit:language:)``).
public struct IngestedItem: Codable, Hashable, Sendable {
    /// `movie` (TMDB) or `book` (Open Library).
    public var kind: String
    /// The entity's key: `tmdb:movie:<id>` or the book key (`openlibrary:work:OL…W`).
    public var key: String
    /// The display title (a localized title for movies, as ``MovieSummary/title``).
    @ExplicitNull public var title: String?
    /// When the stored row was fetched (epoch ms).
    public var fetchedAt: Int64
    /// The entity's poster (movies) or cover (books), when one was stored.
    @ExplicitNull public var image: StoredImage?

    enum CodingKeys: String, CodingKey {
        case kind, key, title
        case fetchedAt = "fetched_at"
        case image
    }

    /// An item as ``Store/latestItems(limit:language:)`` returns it.
    public init(kind: String, key: String, title: String?, fetchedAt: Int64, image: StoredImage?) {
        self.kind = kind
        self.key = key
        self.title = title
        self.fetchedAt = fetchedAt
        self.image = image
    }

}

extension Store {
    /// The movies and books stored most recently (by `fetched_at`), newest first, each with its poster or cover.
    ///
    /// Reads only. What the dashboard shows as "latest ingested".
    ///
    /// - Parameters:
    ///   - limit: The most items of each kind (1 to ``maximumLimit``).
    ///   - language: The preferred language of movie titles (`nil`: any stored translation, else the original).
    /// - Returns: Movies and books together, newest first (at most `2 × limit`).
    /// - Throws: A ``StoreError`` for a bad limit; the engine's error when the store cannot be read.
    public func latestItems(limit: Int, language: String? = nil) async throws -> [IngestedItem] {
        try Self.check(limit: limit)
        let movieRows = try await self.query(
            "SELECT movie_id, fetched_at FROM movies ORDER BY fetched_at DESC, movie_id DESC LIMIT ?",
            [.int(Int64(limit))]
        )
        let movieIDs = movieRows.compactMap { $0[0].int }
        let titles = try await self.displayTitles(of: movieIDs, language: language)
        let posters = try await self.storedImages(owners: movieIDs.map { "tmdb:movie:\($0)" }, role: "poster")
        var items: [IngestedItem] = movieRows.compactMap { row in
            guard let id = row[0].int, let fetchedAt = row[1].int else { return nil }
            return IngestedItem(
                kind: "movie",
                key: "tmdb:movie:\(id)",
                title: titles[id] ?? nil,
                fetchedAt: fetchedAt,
                image: posters["tmdb:movie:\(id)"]?.first
            )
        }
        let bookRows = try await self.query(
            "SELECT book_key, title, fetched_at FROM books ORDER BY fetched_at DESC, book_key DESC LIMIT ?",
            [.int(Int64(limit))]
        )
        let covers = try await self.storedImages(owners: bookRows.compactMap { $0[0].text }, role: "cover")
        items += bookRows.compactMap { row in
            guard let key = row[0].text, let fetchedAt = row[2].int else { return nil }
            return IngestedItem(
                kind: "book",
                key: key,
                title: row[1].text,
                fetchedAt: fetchedAt,
                image: covers[key]?.first
            )
        }
        return items.sorted { ($0.fetchedAt, $0.key) > ($1.fetchedAt, $1.key) }
    }
}
