import Foundation
import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeStore

/// `movie_refreshes`: when each movie was last refreshed and why, on both engines.
@Suite(.timeLimit(.minutes(5)))
struct MovieRefreshStoreTests {
    /// A `movie` record of `id` fetched at `time` (epoch ms).
    static func movie(_ id: Int64, at time: Int64, title: String = "Title") -> Record {
        Record(
            kind: .movie,
            key: "tmdb:movie:\(id)",
            fetchedAt: time,
            data: JSONObject(["movie_id": .integer(id), "original_title": .string(title), "genre_ids": .array([])])
        )
    }

    static func write(_ store: Store, _ records: [(Record, RefreshReason?)]) async throws {
        _ = try await store.write(try records.map { record, reason in try Store.prepare(record, refresh: reason) })
    }

    @Test(arguments: QueryEngine.enabled)
    func theNewestRefreshWinsAndARecordWithoutAReasonLeavesItAlone(engine: QueryEngine) async throws {
        try await engine.withEmptyStore { store in
            _ = try await store.migrate()
            #expect((try await store.schemaVersion() ?? 0) >= 5, "movie_refreshes is migration 5")
            try await Self.write(store, [(Self.movie(1, at: 2_000), .list), (Self.movie(2, at: 2_000), nil)])
            #expect(
                try await store.movie(id: 1)?.refresh == MovieRefresh(reason: "list", refreshedAtMilliseconds: 2_000)
            )
            // Stored without a reason (a fetch worker older than the header): the movie, no refresh.
            #expect(try await store.movie(id: 2)?.originalTitle == "Title")
            #expect(try await store.movie(id: 2)?.refresh == nil)

            // A newer refresh replaces it; an older one, in a later batch, changes nothing.
            try await Self.write(store, [(Self.movie(1, at: 3_000), .change)])
            try await Self.write(store, [(Self.movie(1, at: 2_500), .backfill)])
            #expect(
                try await store.movie(id: 1)?.refresh == MovieRefresh(reason: "change", refreshedAtMilliseconds: 3_000)
            )

            // A newer record without a reason updates the movie and keeps the last known refresh.
            try await Self.write(store, [(Self.movie(1, at: 4_000, title: "Renamed"), nil)])
            let movie = try #require(try await store.movie(id: 1))
            #expect(movie.originalTitle == "Renamed")
            #expect(movie.refresh == MovieRefresh(reason: "change", refreshedAtMilliseconds: 3_000))

            // Within one batch, the newest of the movie's refreshes wins whatever the order.
            try await Self.write(
                store,
                [(Self.movie(1, at: 6_000), .schedule), (Self.movie(1, at: 5_000), .search)]
            )
            #expect(
                try await store.movie(id: 1)?.refresh
                    == MovieRefresh(reason: "schedule", refreshedAtMilliseconds: 6_000)
            )
        }
    }

    @Test func onlyMovieRecordsCarryTheRefresh() throws {
        let movie = try RecordRows.rows(for: Self.movie(7, at: 1_000), refresh: .request)
        let refresh = try #require(movie.first { $0.table.name == "movie_refreshes" })
        #expect(refresh.values["reason"] == .string("request"))
        #expect(refresh.values["movie_id"] == .integer(7))
        #expect(refresh.fetchedAt == 1_000)
        #expect(try RecordRows.rows(for: Self.movie(7, at: 1_000)).allSatisfy { $0.table.name != "movie_refreshes" })
        let localized = Record(
            kind: .movieLocalized,
            key: "tmdb:movie:7:en-US",
            fetchedAt: 1_000,
            data: JSONObject(["movie_id": .integer(7), "language": .string("en-US"), "title": .string("T")])
        )
        #expect(
            try RecordRows.rows(for: localized, refresh: .change).allSatisfy { $0.table.name != "movie_refreshes" }
        )
    }

    @Test func theQueryAnswerCarriesTheRefreshInBothForms() throws {
        let refresh = MovieRefresh(reason: "change", refreshedAtMilliseconds: 1_709_294_400_123)
        let json = String(decoding: try JSONEncoder().encode(refresh), as: UTF8.self)
        #expect(json.contains(#""refreshed_at":"2024-03-01T12:00:00.123Z""#))
        #expect(json.contains(#""refreshed_at_ms":1709294400123"#))
        #expect(try JSONDecoder().decode(MovieRefresh.self, from: Data(json.utf8)) == refresh)
    }
}
