public import MarqueeCore

// The read model of `marquee query ratings` (Store's query below). Codable with snake_case keys, part of
// docs/query.md's contract.

/// What the store holds of one signed-in TMDB account (``Store/accountMovies(account:list:limit:)``): its details
/// and the movies of one of its lists.
public struct AccountMovies: Codable, Hashable, Sendable {
    /// The account's label, as the fetch worker's settings name it.
    public var account: String
    /// TMDB's numeric id of the account (signed in by a session); `nil` when its details were not fetched yet, or
    /// for an account signed in by an access token.
    @ExplicitNull public var accountID: Int64?
    /// The account's v4 object id (signed in by an access token; v4 has no username or name); `nil` otherwise.
    @ExplicitNull public var accountObjectID: String?
    @ExplicitNull public var username: String?
    @ExplicitNull public var name: String?
    /// When the account's details were last fetched (epoch ms).
    @ExplicitNull public var fetchedAt: Int64?
    /// `rated`, `favorite` or `watchlist`.
    public var list: String
    /// The latest refresh of the list read whole (epoch ms of its details answer): the movies shown are the ones
    /// it, or a later refresh, listed. `nil` when no refresh was read whole yet: every movie stored is shown.
    @ExplicitNull public var refreshedAt: Int64?
    /// Rated: the latest rated first; the other lists: by title.
    public var movies: [AccountMovie]

    enum CodingKeys: String, CodingKey {
        case account
        case accountID = "account_id"
        case accountObjectID = "account_object_id"
        case username, name
        case fetchedAt = "fetched_at"
        case list
        case refreshedAt = "refreshed_at"
        case movies
    }
}

/// One movie of an account's list.
public struct AccountMovie: Codable, Hashable, Sendable {
    public var movieID: Int64
    @ExplicitNull public var title: String?
    @ExplicitNull public var originalTitle: String?
    /// `YYYY-MM-DD`.
    @ExplicitNull public var releaseDate: String?
    /// The user's rating, 0.5…10 (rated list only).
    @ExplicitNull public var rating: Double?
    /// When the user rated it, as TMDB wrote it (ISO 8601); `nil` when TMDB did not say.
    @ExplicitNull public var ratedAt: String?
    /// When the refresh that last listed it ran (epoch ms).
    public var fetchedAt: Int64

    enum CodingKeys: String, CodingKey {
        case movieID = "movie_id"
        case title
        case originalTitle = "original_title"
        case releaseDate = "release_date"
        case rating
        case ratedAt = "rated_at"
        case fetchedAt = "fetched_at"
    }
}

extension Store {
    /// A signed-in account's details and the movies of one of its lists.
    ///
    /// A movie the user removed upstream stays stored with the refresh that last listed it (`as_of`); once a later
    /// refresh of the list is stored whole (at least as many entries as its page 1 said the list held), the
    /// movies only older refreshes listed are left out.
    ///
    /// - Parameters:
    ///   - account: The account's label.
    ///   - list: Which list: rated (with the ratings), favorite or watchlist.
    ///   - limit: The most movies returned (1…500).
    /// - Returns: `nil` when the store knows nothing of the account (no details, no entry or refresh of the list).
    /// - Throws: ``StoreError`` `invalidQuery` for a malformed label or an out-of-range limit.
    public func accountMovies(
        account: String,
        list: FetchJob.TMDBAccountList = .rated,
        limit: Int = 100
    ) async throws -> AccountMovies? {
        guard FetchJob.isTMDBAccountLabel(account) else {
            throw StoreError(
                .invalidQuery,
                "'\(account.prefix(80))' is not an account label (a-z, 0-9, '.', '_', '-', as TMDB_ACCOUNT names it)"
            )
        }
        try Self.check(limit: limit)
        let details = try await self.query(
            "SELECT account_id, username, name, fetched_at, account_object_id FROM tmdb_accounts WHERE account = ?",
            [.text(account)]
        ).first
        // The latest refresh with every entry stored: entries of that refresh or a later one (a movie listed by
        // both carries the later refresh) number at least its total.
        let (table, sameList) = list == .rated ? ("account_ratings", "") : ("account_lists", " AND t.list = r.list")
        let refreshedAt = try await self.query(
            """
            SELECT MAX(r.as_of) FROM account_list_refreshes r
             WHERE r.account = ? AND r.list = ?
               AND r.total <= (SELECT COUNT(*) FROM \(table) t WHERE t.account = r.account\(sameList) AND t.as_of >= r.as_of)
            """,
            [.text(account), .text(list.rawValue)]
        ).first?.first?.int
        let since = refreshedAt ?? 0
        let rows: [[SQLValue]]
        if list == .rated {
            rows = try await self.query(
                """
                SELECT movie_id, title, original_title, CAST(release_date AS TEXT), rating, rated_at, fetched_at
                  FROM account_ratings WHERE account = ? AND as_of >= ?
                 ORDER BY rated_at IS NULL, rated_at DESC, movie_id LIMIT ?
                """,
                [.text(account), .int(since), .int(Int64(limit))]
            )
        } else {
            rows = try await self.query(
                """
                SELECT movie_id, title, original_title, CAST(release_date AS TEXT), NULL, NULL, fetched_at
                  FROM account_lists WHERE account = ? AND list = ? AND as_of >= ?
                 ORDER BY title, movie_id LIMIT ?
                """,
                [.text(account), .text(list.rawValue), .int(since), .int(Int64(limit))]
            )
        }
        guard details != nil || !rows.isEmpty || refreshedAt != nil else { return nil }
        return AccountMovies(
            account: account,
            accountID: details?[0].int,
            accountObjectID: details?[4].text,
            username: details?[1].text,
            name: details?[2].text,
            fetchedAt: details?[3].int,
            list: list.rawValue,
            refreshedAt: refreshedAt,
            movies: rows.map { row in
                AccountMovie(
                    movieID: row[0].int ?? 0,
                    title: row[1].text,
                    originalTitle: row[2].text,
                    releaseDate: row[3].text.map { String($0.prefix(10)) },
                    rating: row[4].real,
                    ratedAt: row[5].text,
                    fetchedAt: row[6].int ?? 0
                )
            }
        )
    }
}
