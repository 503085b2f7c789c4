import MarqueeCore
import MarqueeJSON
import MarqueeTestSupport
import Testing

@testable import MarqueeStore

/// `tmdb.account` and `tmdb.account.movie` records in `tmdb_accounts`, `account_ratings` and `account_lists`, on
/// both engines, and the read model of `marquee query ratings`.
@Suite struct AccountStoreTests {
    static func account(_ label: String, id: Int64, at fetchedAt: Int64) -> Record {
        Record(
            kind: .tmdbAccount,
            key: "tmdb:account:\(label)",
            fetchedAt: fetchedAt,
            data: [
                "account": .string(label), "account_id": .integer(id), "username": .string("travisbell"),
                "name": .string("Travis Bell"), "language": .string("en"), "region": .string("CA"),
                "include_adult": .bool(false),
            ]
        )
    }

    static func movie(
        _ label: String,
        _ list: String,
        _ id: Int64,
        title: String,
        rating: Double? = nil,
        ratedAt: String? = nil,
        asOf: Int64? = nil,
        at fetchedAt: Int64
    ) -> Record {
        var data: JSONObject = [
            "account": .string(label), "account_id": .integer(548), "list": .string(list), "movie_id": .integer(id),
            "title": .string(title), "original_title": .string(title), "release_date": .string("2019-05-30"),
        ]
        if let rating { data["rating"] = .number(rating) }
        if let ratedAt { data["rated_at"] = .string(ratedAt) }
        if let asOf { data["as_of"] = .integer(asOf) }
        return Record(
            kind: .tmdbAccountMovie,
            key: "tmdb:account:\(label):\(list):\(id)",
            fetchedAt: fetchedAt,
            data: data
        )
    }

    @Test("ratings and lists are stored per account, and a newer refresh wins", arguments: TestEngine.enabled)
    func ratingsAndListsAreStoredPerAccount(engine: TestEngine) async throws {
        try await engine.withStore { store in
            _ = try await store.write([
                Self.account("default", id: 548, at: 1_000),
                Self.movie(
                    "default",
                    "rated",
                    496243,
                    title: "Parasite",
                    rating: 10,
                    ratedAt: "2024-02-03T21:07:11.000Z",
                    at: 1_000
                ),
                Self.movie(
                    "default",
                    "rated",
                    550,
                    title: "Fight Club",
                    rating: 9,
                    ratedAt: "2023-06-14T09:52:40.000Z",
                    at: 1_000
                ),
                Self.movie("default", "favorite", 129, title: "Spirited Away", at: 1_000),
                Self.movie("default", "watchlist", 872585, title: "Oppenheimer", at: 1_000),
                Self.movie("family", "rated", 550, title: "Fight Club", rating: 3, at: 1_000),
            ])
            let ratings = try await store.engine.read("SELECT COUNT(*) FROM account_ratings", [])
            #expect(ratings == [[.int(3)]])
            let lists = try await store.engine.read("SELECT COUNT(*) FROM account_lists", [])
            #expect(lists == [[.int(2)]])
            let counts = try await store.counts()
            #expect(counts.accountRatings == 3 && counts.accountLists == 2, "marquee query counts: \(counts)")

            let rated = try #require(try await store.accountMovies(account: "default"))
            #expect(rated.accountID == 548)
            #expect(rated.username == "travisbell")
            #expect(rated.movies.map(\.movieID) == [496243, 550])  // latest rating first
            #expect(rated.movies.first?.rating == 10)
            #expect(rated.movies.first?.ratedAt == "2024-02-03T21:07:11.000Z")
            #expect(rated.movies.first?.releaseDate == "2019-05-30")
            let watchlist = try #require(try await store.accountMovies(account: "default", list: .watchlist))
            #expect(watchlist.movies.map(\.movieID) == [872585])
            #expect(watchlist.movies.first?.rating == nil)
            // An account known only by its ratings (details not fetched yet).
            let family = try #require(try await store.accountMovies(account: "family"))
            #expect(family.accountID == nil)
            #expect(family.movies.map(\.rating) == [3])
            #expect(try await store.accountMovies(account: "nobody") == nil)

            // A rating changed upstream: the newer refresh replaces it, an older one changes nothing.
            _ = try await store.write([
                Self.movie(
                    "default",
                    "rated",
                    550,
                    title: "Fight Club",
                    rating: 4.5,
                    ratedAt: "2025-01-01T00:00:00.000Z",
                    at: 2_000
                )
            ])
            let older = try await store.write([
                Self.movie("default", "rated", 550, title: "Fight Club", rating: 1, at: 500)
            ])
            #expect(older.rowsWritten == 0)
            let after = try #require(try await store.accountMovies(account: "default"))
            #expect(after.movies.map(\.movieID) == [550, 496243])
            #expect(after.movies.first?.rating == 4.5)
        }
    }

    @Test("a rated movie without a rating, a wrong key or a bad label is refused", arguments: TestEngine.enabled)
    func invalidAccountRecordsAreRefused(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let noRating = Self.movie("default", "rated", 550, title: "Fight Club", at: 1_000)
            #expect { try Store.validate(noRating) } throws: { ($0 as? StoreError)?.code == .invalidRecord }
            var wrongKey = Self.movie("default", "favorite", 550, title: "Fight Club", at: 1_000)
            wrongKey.key = "tmdb:account:default:favorite:551"
            #expect { try Store.validate(wrongKey) } throws: { ($0 as? StoreError)?.code == .invalidRecord }
            let badLabel = Self.account("Default", id: 548, at: 1_000)
            #expect { try Store.validate(badLabel) } throws: { ($0 as? StoreError)?.code == .invalidRecord }
            let outOfRange = Self.movie("default", "rated", 550, title: "Fight Club", rating: 11, at: 1_000)
            #expect { try Store.validate(outOfRange) } throws: { ($0 as? StoreError)?.code == .invalidRecord }
            let rows = try await store.engine.read("SELECT COUNT(*) FROM account_ratings", [])
            #expect(rows == [[.int(0)]])
        }
    }

    static func refresh(_ label: String, _ list: String, asOf: Int64, total: Int64) -> Record {
        Record(
            kind: .tmdbAccountRefresh,
            key: "tmdb:account:\(label):\(list):refresh:\(asOf)",
            fetchedAt: asOf,
            data: ["account": .string(label), "list": .string(list), "as_of": .integer(asOf), "total": .integer(total)]
        )
    }

    @Test("a movie removed upstream is left out once a later refresh is stored whole", arguments: TestEngine.enabled)
    func removedMoviesGoOnceALaterRefreshIsWhole(engine: TestEngine) async throws {
        try await engine.withStore { store in
            // Refresh 1 (as of 1,000): the watchlist holds 3 movies.
            _ = try await store.write(
                [Self.refresh("default", "watchlist", asOf: 1_000, total: 3)]
                    + [1, 2, 3].map { Self.movie("default", "watchlist", $0, title: "M\($0)", asOf: 1_000, at: 1_001) }
            )
            var shown = try #require(try await store.accountMovies(account: "default", list: .watchlist))
            #expect(shown.movies.map(\.movieID) == [1, 2, 3])
            #expect(shown.refreshedAt == 1_000)

            // Refresh 2 (as of 2,000): movie 2 was removed, movie 4 added; page 1 of 2 is stored so far.
            _ = try await store.write([
                Self.refresh("default", "watchlist", asOf: 2_000, total: 3),
                Self.movie("default", "watchlist", 1, title: "M1", asOf: 2_000, at: 2_001),
            ])
            shown = try #require(try await store.accountMovies(account: "default", list: .watchlist))
            // Not whole yet: refresh 1 still stands (its three movies, one of them seen again by refresh 2).
            #expect(shown.movies.map(\.movieID) == [1, 2, 3])
            #expect(shown.refreshedAt == 1_000)

            // The rest of refresh 2: movie 2 is no longer shown.
            _ = try await store.write(
                [3, 4].map { Self.movie("default", "watchlist", $0, title: "M\($0)", asOf: 2_000, at: 2_002) }
            )
            shown = try #require(try await store.accountMovies(account: "default", list: .watchlist))
            #expect(shown.movies.map(\.movieID) == [1, 3, 4])
            #expect(shown.refreshedAt == 2_000)
            // The other lists are their own: the favourites have no refresh yet, so all they hold is shown.
            _ = try await store.write([Self.movie("default", "favorite", 9, title: "M9", asOf: 500, at: 501)])
            let favourites = try #require(try await store.accountMovies(account: "default", list: .favorite))
            #expect(favourites.movies.map(\.movieID) == [9])
            #expect(favourites.refreshedAt == nil)
            // A list emptied upstream: a whole refresh of 0 entries shows none.
            _ = try await store.write([Self.refresh("default", "favorite", asOf: 3_000, total: 0)])
            let emptied = try #require(try await store.accountMovies(account: "default", list: .favorite))
            #expect(emptied.movies.isEmpty)
        }
    }

    static let objectID = "5b8f7e2c0e0a2656f0008e3a"

    /// An account signed in by a v4 access token: its label and object id, no details.
    static func tokenAccount(_ label: String, at fetchedAt: Int64) -> Record {
        Record(
            kind: .tmdbAccount,
            key: "tmdb:account:\(label)",
            fetchedAt: fetchedAt,
            data: ["account": .string(label), "account_object_id": .string(Self.objectID)]
        )
    }

    /// ``movie(_:_:_:title:rating:ratedAt:asOf:at:)`` named by the object id instead of `account_id`.
    static func tokenMovie(_ label: String, _ list: String, _ id: Int64, rating: Double? = nil, at: Int64) -> Record {
        var record = Self.movie(label, list, id, title: "Movie \(id)", rating: rating, at: at)
        record.data["account_id"] = nil
        record.data["account_object_id"] = .string(Self.objectID)
        return record
    }

    @Test("an access-token account is stored by its object id and shown without details", arguments: TestEngine.enabled)
    func accessTokenAccounts(engine: TestEngine) async throws {
        try await engine.withStore { store in
            _ = try await store.write([
                Self.tokenAccount("family", at: 1_000),
                Self.tokenMovie("family", "rated", 550, rating: 8, at: 1_000),
                Self.tokenMovie("family", "watchlist", 13, at: 1_000),
            ])
            let rated = try #require(try await store.accountMovies(account: "family"))
            #expect(rated.accountObjectID == Self.objectID)
            #expect(rated.accountID == nil)
            #expect(rated.username == nil)
            #expect(rated.fetchedAt == 1_000)
            #expect(rated.movies.map(\.movieID) == [550])
            #expect(rated.movies.first?.rating == 8)
            let rows = try await store.engine.read(
                "SELECT account_id, account_object_id FROM account_lists WHERE account = 'family'",
                []
            )
            #expect(rows == [[.null, .text(Self.objectID)]])
            // Signed in anew by a session, the account keeps no stale object id; and back again, no stale number.
            _ = try await store.write([Self.account("family", id: 548, at: 2_000)])
            var details = try await store.engine.read(
                "SELECT account_id, account_object_id, username FROM tmdb_accounts WHERE account = 'family'",
                []
            )
            #expect(details == [[.int(548), .null, .text("travisbell")]])
            _ = try await store.write([Self.tokenAccount("family", at: 3_000)])
            details = try await store.engine.read(
                "SELECT account_id, account_object_id FROM tmdb_accounts WHERE account = 'family'",
                []
            )
            #expect(details == [[.null, .text(Self.objectID)]])
        }
    }

    @Test func aRecordNamesItsAccountByExactlyOneID() {
        var both = Self.tokenMovie("family", "rated", 550, rating: 8, at: 1)
        both.data["account_id"] = .integer(548)
        var neither = Self.tokenMovie("family", "rated", 550, rating: 8, at: 1)
        neither.data["account_object_id"] = nil
        var wrong = Self.tokenAccount("family", at: 1)
        wrong.data["account_object_id"] = .string("../548")
        var zero = Self.account("family", id: 548, at: 1)
        zero.data["account_id"] = .integer(0)
        for (record, field) in [
            (both, "account_object_id"), (neither, "account_id"), (wrong, "account_object_id"), (zero, "account_id"),
        ] {
            do {
                try Store.validate(record)
                Issue.record("accepted \(record.data)")
            } catch {
                #expect(error.code == .invalidRecord)
                #expect(error.field == field, "\(error)")
            }
        }
    }

    @Test("a store of the account tables' first form keeps its rows when migrated", arguments: TestEngine.enabled)
    func migrationKeepsTheRows(engine: TestEngine) async throws {
        let store = try Store.open(
            try await engine.freshLocation(),
            timeout: TestEngine.patientTimeout,
            logger: .marqueeTest
        )
        let dialect = store.engine.dialect
        // The schema as it was before access-token accounts, with a session account's rows.
        try await store.engine.transaction { session in
            try await session.execute(dialect.ddl(Schema.migrationsTable), [])
            for migration in Schema.migrations where migration.version < 7 {
                for statement in Store.statements(dialect.ddl(migration.sql)) {
                    try await session.execute(statement, [])
                }
                try await session.execute(
                    dialect.placeholders("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)"),
                    [.int(Int64(migration.version)), .text(migration.name)]
                )
            }
        }
        // Rows as the first form held them (it has no account_object_id).
        for sql in [
            "INSERT INTO tmdb_accounts (account, account_id, username, fetched_at) VALUES ('default', 548, 'travisbell', 1000)",
            "INSERT INTO account_ratings (account, movie_id, account_id, rating, as_of, fetched_at) VALUES ('default', 550, 548, 9, 0, 1000)",
            "INSERT INTO account_lists (account, list, movie_id, account_id, as_of, fetched_at) VALUES ('default', 'favorite', 129, 548, 0, 1000)",
        ] {
            try await store.engine.transaction { session in try await session.execute(sql, []) }
        }
        let report = try await store.migrate()
        #expect(report.applied == Schema.migrations.map(\.version).filter { $0 >= 7 })
        let rated = try #require(try await store.accountMovies(account: "default"))
        #expect(rated.accountID == 548)
        #expect(rated.accountObjectID == nil)
        #expect(rated.username == "travisbell")
        #expect(rated.movies.map(\.movieID) == [550])
        let favourites = try #require(try await store.accountMovies(account: "default", list: .favorite))
        #expect(favourites.movies.map(\.movieID) == [129])
        // The migrated tables take the new rows.
        _ = try await store.write([
            Self.tokenAccount("family", at: 2_000), Self.tokenMovie("family", "rated", 13, rating: 7, at: 2_000),
        ])
        #expect(try await store.accountMovies(account: "family")?.movies.map(\.movieID) == [13])
        await store.close()
    }
}
