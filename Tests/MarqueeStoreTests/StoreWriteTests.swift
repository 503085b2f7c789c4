import MarqueeCore
import MarqueeJSON
import MarqueeTestSupport
import Testing

@testable import MarqueeStore

/// Records as the fetch stage writes them (docs/records.md), small enough to read in a test.
enum Sample {
    static func movie(
        _ id: Int64,
        at fetchedAt: Int64,
        popularity: Double = 10,
        genres: [Int64] = [18],
        details: Bool = false,
        released: String = "2019-05-30"
    )
        -> Record
    {
        var data: JSONObject = [
            "movie_id": .integer(id), "original_title": .string("Original \(id)"), "original_language": .string("en"),
            "release_date": .string(released), "adult": .bool(false), "video": .bool(false),
            "popularity": .number(popularity), "vote_average": .integer(8), "vote_count": .integer(1000),
            "genre_ids": .array(genres.map { .integer($0) }), "poster_path": .string("/p\(id).jpg"),
            "backdrop_path": .null,
        ]
        if details {
            let more: JSONObject = [
                "runtime": .integer(132), "budget": .integer(11_400_000), "revenue": .null,
                "imdb_id": .string("tt6751668"),
                "status": .string("Released"), "collection_id": .null, "production_countries": .array([.string("KR")]),
                "spoken_languages": .array([.string("ko")]), "origin_country": .array([.string("KR")]),
            ]
            for (key, value) in more { data[key] = value }
        }
        return Record(kind: .movie, key: "tmdb:movie:\(id)", fetchedAt: fetchedAt, data: data)
    }

    static func localized(_ id: Int64, _ language: String, _ title: String, at fetchedAt: Int64) -> Record {
        Record(
            kind: .movieLocalized,
            key: "tmdb:movie:\(id):\(language)",
            fetchedAt: fetchedAt,
            data: ["movie_id": .integer(id), "language": .string(language), "title": .string(title), "overview": .null]
        )
    }

    static func koficMovie(_ code: String, _ title: String, openDate: String, at fetchedAt: Int64) -> Record {
        Record(
            kind: .koficMovie,
            key: "kofic:movie:\(code)",
            fetchedAt: fetchedAt,
            data: [
                "movie_cd": .string(code), "title": .string(title), "title_en": .string("Parasite"),
                "title_original": .null,
                "production_year": .integer(2019), "open_date": .string(openDate), "runtime": .integer(131),
                "production_status": .string("개봉"), "type": .string("장편"), "nations": .array([.string("한국")]),
                "genres": .array([.string("드라마")]), "directors": .array([.object(["name": .string("봉준호")])]),
                "actors": .array([]), "actor_count": .integer(0), "show_types": .array([]), "companies": .array([]),
                "audits": .array([]),
            ]
        )
    }
}

@Suite("Store writes")
struct StoreWriteTests {
    @Test("the same record twice, then an older version: one row with the newest data", arguments: TestEngine.enabled)
    func newerWins(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let first = try await store.write([Sample.movie(496243, at: 2_000, popularity: 50)])
            #expect(first.rowsWritten == 1)
            let again = try await store.write([Sample.movie(496243, at: 2_000, popularity: 50)])
            #expect(again.rowsWritten == 0)
            #expect(again.rowsUnchanged == 1)
            let older = try await store.write([Sample.movie(496243, at: 1_000, popularity: 1)])
            #expect(older.rowsWritten == 0)
            let rows = try await store.engine.read("SELECT popularity, fetched_at FROM movies", [])
            #expect(rows == [[.real(50), .int(2_000)]])
            let newer = try await store.write([Sample.movie(496243, at: 3_000, popularity: 70, genres: [35, 18])])
            #expect(newer.rowsWritten == 1)
            let after = try await store.engine.read("SELECT popularity, fetched_at FROM movies", [])
            #expect(after == [[.real(70), .int(3_000)]])
            let genres = try await store.engine.read("SELECT genre_id FROM movie_genres ORDER BY genre_id", [])
            #expect(genres == [[.int(18)], [.int(35)]])
        }
    }

    @Test(
        "details facts survive a later list record, and an older details record still lands",
        arguments: TestEngine.enabled
    )
    func detailsAndListsDoNotEraseEachOther(engine: TestEngine) async throws {
        try await engine.withStore { store in
            _ = try await store.write([Sample.movie(496243, at: 2_000, details: true)])
            _ = try await store.write([Sample.movie(496243, at: 3_000, popularity: 99)])
            #expect(
                try await store.engine.read("SELECT runtime, imdb_id FROM movie_details", []) == [
                    [.int(132), .text("tt6751668")]
                ]
            )
            #expect(try await store.engine.read("SELECT popularity FROM movies", []) == [[.real(99)]])

            // Details fetched before a list record that was indexed first: the details facts still land.
            _ = try await store.write([Sample.movie(1, at: 5_000)])
            let summary = try await store.write([Sample.movie(1, at: 4_000, popularity: 1, details: true)])
            #expect(summary.rowsWritten == 1)  // movie_details only
            #expect(
                try await store.engine.read("SELECT runtime FROM movie_details WHERE movie_id = 1", []) == [[.int(132)]]
            )
            #expect(
                try await store.engine.read("SELECT popularity FROM movies WHERE movie_id = 1", []) == [[.real(10)]]
            )
        }
    }

    @Test(
        "one batch holding two versions of a row keeps the newest, whatever their order",
        arguments: TestEngine.enabled
    )
    func duplicatesInOneBatch(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let summary = try await store.write([
                Sample.movie(7, at: 2_000, popularity: 2, genres: [1, 2]), Sample.movie(7, at: 1_000, popularity: 1),
                Sample.movie(8, at: 1_000, popularity: 1), Sample.movie(8, at: 2_000, popularity: 2, genres: []),
            ])
            #expect(summary.rowsWritten == 2)
            #expect(summary.rowsUnchanged == 2)
            let rows = try await store.engine.read("SELECT movie_id, popularity FROM movies ORDER BY movie_id", [])
            #expect(rows == [[.int(7), .real(2)], [.int(8), .real(2)]])
            #expect(
                try await store.engine.read("SELECT movie_id, genre_id FROM movie_genres ORDER BY 1, 2", []) == [
                    [.int(7), .int(1)], [.int(7), .int(2)],
                ]
            )
        }
    }

    @Test(
        "a KOFIC movie is linked to the TMDB movie with the same title and year, either arriving first",
        arguments: TestEngine.enabled
    )
    func koficLinks(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let kofic = try await store.write([Sample.koficMovie("20183782", "기생충", openDate: "2019-05-30", at: 1_000)])
            #expect(kofic.links == 0)
            let tmdb = try await store.write([
                Sample.movie(496243, at: 1_000), Sample.localized(496243, "ko-KR", "기생충", at: 1_000),
            ])
            #expect(tmdb.links == 1)
            // A film of another year with the same title is not linked; neither is a different title.
            _ = try await store.write([
                Sample.movie(9, at: 1_000, released: "1990-01-01"), Sample.localized(9, "ko-KR", "기생충", at: 1_000),
                Sample.koficMovie("20000001", "괴물", openDate: "2006-07-27", at: 1_000),
            ])
            let links = try await store.engine.read(
                "SELECT movie_cd, movie_id, method FROM movie_links ORDER BY 1, 2",
                []
            )
            #expect(links.contains([.text("20183782"), .int(496243), .text("title+year")]))
            #expect(!links.contains { $0[0] == .text("20000001") })
            #expect(!links.contains { $0[1] == .int(9) })
        }
    }

    @Test(
        "a TMDB movie stored before any KOFIC movie is linked when the KOFIC movie arrives, and in one batch with it",
        arguments: TestEngine.enabled
    )
    func koficLinksTMDBFirst(engine: TestEngine) async throws {
        func parasite(_ id: Int64) -> Record {
            var movie = Sample.movie(id, at: 1_000)
            movie.data["original_title"] = .string("Parasite")
            return movie
        }
        try await engine.withStore { store in
            let tmdb = try await store.write([
                Sample.movie(496243, at: 1_000), Sample.localized(496243, "ko-KR", "기생충", at: 1_000), parasite(7001),
            ])
            #expect(tmdb.links == 0)
            // Matched by the batch's KOFIC code: by title, and by original title.
            let kofic = try await store.write([Sample.koficMovie("20183782", "기생충", openDate: "2019-05-30", at: 1_000)])
            #expect(kofic.links == 2)
            // Matched by the batch's TMDB id, by original title.
            #expect(try await store.write([parasite(7002)]).links == 1)
            // Both sides in one batch, with a KOFIC movie already stored.
            let both = try await store.write([
                Sample.movie(1255, at: 1_000, released: "2006-07-27"), Sample.localized(1255, "ko-KR", "괴물", at: 1_000),
                Sample.koficMovie("20050155", "괴물", openDate: "2006-07-27", at: 1_000),
            ])
            #expect(both.links == 1)
            let links = try await store.engine.read(
                "SELECT movie_cd, movie_id, method FROM movie_links ORDER BY 1, 2",
                []
            )
            #expect(
                links == [
                    [.text("20050155"), .int(1255), .text("title+year")],
                    [.text("20183782"), .int(7001), .text("original-title+year")],
                    [.text("20183782"), .int(7002), .text("original-title+year")],
                    [.text("20183782"), .int(496243), .text("title+year")],
                ]
            )
        }
    }

    /// Children are replaced by deleting those of the batch's parents. On a table PostgreSQL has not analyzed yet
    /// (a first crawl or backfill into an empty store) an `IN (SELECT …)` of the keys was planned as a scan of
    /// the whole child table, on every batch.
    @Test(
        "PostgreSQL deletes a batch's children through the key index on a table it has not analyzed",
        .enabled(if: TestEnvironment.isIntegrationEnabled)
    )
    func childrenDeletedThroughTheIndex() async throws {
        try await TestEngine.postgres.withStore { store in
            _ = try await store.write([Sample.movie(1, at: 1_000)])  // migrates
            try await store.engine.transaction {
                try await $0.execute("ALTER TABLE movie_genres SET (autovacuum_enabled = false)", [])
            }
            _ = try await store.write((2...1_000).map { Sample.movie($0, at: 1_000, genres: [18, 35]) })
            let delete = SQLDialect.postgres.deleteChildren(Tables.movieGenres, parentKey: Tables.movies.key)
            let plan = try await store.engine.read(
                "EXPLAIN \(delete)",
                [Store.json([["movie_id": .integer(7)]], columns: Tables.movies.key)]
            )
            .compactMap { $0.first?.text }
            #expect(plan.contains { $0.contains("Index") && $0.contains("movie_genres") }, "\(plan)")
            #expect(!plan.contains { $0.contains("Seq Scan on movie_genres") }, "\(plan)")
        }
    }

    @Test(
        "an invalid record is refused with the field at fault, and nothing of its batch is written",
        arguments: TestEngine.enabled
    )
    func invalidRecords(engine: TestEngine) async throws {
        try await engine.withStore { store in
            var wrongType = Sample.movie(1, at: 1_000)
            wrongType.data["vote_count"] = .string("many")
            #expect { try Store.validate(wrongType) } throws: { ($0 as? StoreError)?.code == .invalidRecord }
            do {
                _ = try await store.write([Sample.movie(2, at: 1_000), wrongType])
                Issue.record("an invalid record was written")
            } catch let error as StoreError {
                #expect(error.code == .invalidRecord)
                #expect(error.field == "vote_count")
                #expect(error.description.contains("expected an integer, got a string"))
            }
            #expect(try await store.engine.read("SELECT COUNT(*) FROM movies", []) == [[.int(0)]])

            var wrongKey = Sample.movie(3, at: 1_000)
            wrongKey.key = "tmdb:movie:4"
            #expect { try Store.validate(wrongKey) } throws: { ($0 as? StoreError)?.code == .invalidRecord }
            var badDate = Sample.movie(3, at: 1_000)
            badDate.data["release_date"] = .string("2023-02-30")
            #expect { try Store.validate(badDate) } throws: { ($0 as? StoreError)?.code == .invalidRecord }
        }
    }

    @Test("text with NUL characters and emoji is stored (without the NULs)", arguments: TestEngine.enabled)
    func hostileText(engine: TestEngine) async throws {
        try await engine.withStore { store in
            _ = try await store.write([Sample.localized(5, "ja-JP", "千と\u{0}千尋の神隠し 🎬 '; DROP TABLE movies; --", at: 1)])
            let rows = try await store.engine.read("SELECT title FROM movie_translations", [])
            #expect(rows == [[.text("千と千尋の神隠し 🎬 '; DROP TABLE movies; --")]])
        }
    }

    @Test("migrations apply on an empty store and do nothing on an up-to-date one", arguments: TestEngine.enabled)
    func migrations(engine: TestEngine) async throws {
        let store = try Store.open(
            try await engine.freshLocation(),
            timeout: TestEngine.patientTimeout,
            logger: .marqueeTest
        )
        let first = try await store.migrate()
        #expect(first.applied == Schema.migrations.map(\.version))
        #expect(first.version == Schema.latestVersion)
        let again = try await store.migrate()
        #expect(again.applied.isEmpty)
        #expect(again.version == Schema.latestVersion)
        // Concurrent starts (several indexers) wait for each other instead of failing.
        async let a = store.migrate()
        async let b = store.migrate()
        let (reportA, reportB) = try await (a, b)
        #expect(reportA.applied.isEmpty && reportB.applied.isEmpty)
        // A store from a newer Marquee is refused with a clear message.
        try await store.engine.transaction { session in
            try await session.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)",
                []
            )
        }
        do {
            _ = try await store.migrate()
            Issue.record("a newer schema was accepted")
        } catch let error as StoreError {
            #expect(error.code == .migration)
            #expect(error.message.contains("version 999"))
        }
        await store.close()
    }

    @Test("concurrent batches sharing rows neither deadlock nor lose the newest version", arguments: TestEngine.enabled)
    func concurrentBatches(engine: TestEngine) async throws {
        try await engine.withStore { store in
            // Eight batches over the same 40 movies, each with its own fetched_at, in shuffled order.
            let stamps = (1...8).map { Int64($0) * 1_000 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for stamp in stamps.shuffled() {
                    let batch = (1...40).shuffled().flatMap { id in
                        [
                            Sample.movie(Int64(id), at: stamp, popularity: Double(stamp), genres: [stamp / 1_000]),
                            Sample.localized(Int64(id), "ko-KR", "영화 \(id) \(stamp)", at: stamp),
                        ]
                    }
                    group.addTask { _ = try await store.write(batch) }
                }
                try await group.waitForAll()
            }
            let rows = try await store.engine.read("SELECT DISTINCT popularity, fetched_at FROM movies", [])
            #expect(rows == [[.real(8_000), .int(8_000)]])
            #expect(
                try await store.engine.read("SELECT COUNT(*) FROM movie_translations WHERE fetched_at = 8000", []) == [
                    [.int(40)]
                ]
            )
            #expect(try await store.engine.read("SELECT DISTINCT genre_id FROM movie_genres", []) == [[.int(8)]])
        }
    }
}
