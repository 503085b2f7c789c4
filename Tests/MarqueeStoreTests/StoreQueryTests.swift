import Foundation
import Logging
import MarqueeCore
import MarqueeJSON
import MarqueeSources
import MarqueeTestSupport
import Testing

@testable import MarqueeStore

// MARK: - The catalogue the tests query

/// What the query tests write: recorded upstream responses (`Tests/Fixtures`) parsed by the real adapters, plus a
/// few hand-made records the fixtures cannot give (Korean and Japanese localized titles, a KOFIC movie and box
/// office that link to a TMDB movie, images).
enum QueryCatalogue {
    /// 2024-03-01T12:00:00Z.
    static let fetchedAt: Int64 = 1_709_294_400_000

    /// The fixture, the job it answers.
    static let fixtures: [(String, FetchJob)] = [
        (
            "tmdb/movie_top_rated_2023.json",
            .tmdbList(list: .topRated, page: 1, language: "en-US", region: nil, follow: .none)
        ),
        (
            "tmdb/movie_now_playing_2022-06.json",
            .tmdbList(list: .nowPlaying, page: 1, language: "en-US", region: nil, follow: .none)
        ),
        ("tmdb/movie_271110_details.json", .tmdbMovie(id: 271110, language: "en-US", follow: .none)),
        ("tmdb/movie_278_reviews.json", .tmdbReviews(id: 278, page: 1, language: "en-US", follow: .none)),
        ("tmdb/genre_movie_list.json", .tmdbGenres(language: "en")),
        ("kofic/daily_20230426.json", .koficDailyBoxOffice(date: "20230426", follow: .none)),
        ("kofic/movieinfo_20218541.json", .koficMovie(code: "20218541", follow: .none)),
        (
            "openlibrary/search_q_apple_limit2.json",
            .openLibrarySearch(query: "apple", page: 1, limit: 2, follow: .none)
        ),
        (
            "openlibrary/search_q_denver_co.json",
            .openLibrarySearch(query: "denver,co", page: 1, limit: 20, follow: .none)
        ),
    ]

    static func fixtureRecords() throws -> [Record] {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // MarqueeStoreTests
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Fixtures")
        let adapters = SourceAdapters(configuration: SourceConfiguration())
        return try self.fixtures.flatMap { path, job in
            let data = try #require(
                FileManager.default.contents(atPath: root.appendingPathComponent(path).path),
                "fixture \(path)"
            )
            let response = SourceResponse(
                status: 200,
                headers: [(name: "content-type", value: "application/json")],
                body: Array(data)
            )
            return try adapters.parse(response, for: job, fetchedAt: self.fetchedAt).records
        }
    }

    static let parasiteCode = "20183782"
    static let posterHash = String(repeating: "ab", count: 32)
    static let coverHash = String(repeating: "c0", count: 32)

    static func handMadeRecords() -> [Record] {
        func record(_ kind: Record.Kind, _ key: String, _ data: JSONObject) -> Record {
            Record(kind: kind, key: key, fetchedAt: self.fetchedAt, data: data)
        }
        func localized(_ id: Int64, _ language: String, _ title: String, tagline: String? = nil) -> Record {
            var data: JSONObject = [
                "movie_id": .integer(id), "language": .string(language), "title": .string(title), "overview": .null,
            ]
            if let tagline {
                data["tagline"] = .string(tagline)
                data["homepage"] = .null
                data["poster_path"] = .null
            }
            return record(.movieLocalized, "tmdb:movie:\(id):\(language)", data)
        }
        func boxOffice(
            _ period: String,
            _ key: String,
            rank: Int64,
            code: String,
            name: String,
            range: (String, String),
            isNew: Bool,
            audience: Int64
        ) -> Record {
            record(
                .boxOfficeEntry,
                "kofic:\(period):\(key):\(rank)",
                [
                    "period": .string(period), "date": .string(range.0),
                    "year_week": period == "daily" ? .null : .string(key),
                    "show_range": .string("\(range.0.replacing("-", with: ""))~\(range.1.replacing("-", with: ""))"),
                    "show_range_start": .string(range.0), "show_range_end": .string(range.1), "rank": .integer(rank),
                    "rank_change": .integer(isNew ? 0 : -1), "is_new": .bool(isNew), "movie_cd": .string(code),
                    "movie_name": .string(name), "open_date": .string("2019-05-30"),
                    "sales_amount": .integer(audience * 9_000), "sales_share": .number(41.5),
                    "sales_change": .null, "sales_change_rate": .null, "sales_accumulated": .integer(audience * 9_000),
                    "audience_count": .integer(audience), "audience_change": .null, "audience_change_rate": .null,
                    "audience_accumulated": .integer(audience * 3), "screen_count": .integer(1_500),
                    "show_count": .integer(7_000),
                ]
            )
        }
        func image(_ owner: String, _ role: String, sha256: String, widths: [Int64]) -> Record {
            record(
                .image,
                "\(owner):\(role)",
                [
                    "owner": .string(owner), "role": .string(role), "sha256": .string(sha256),
                    "source_url": .string("https://images.example/\(role).jpg"),
                    "downloaded_url": .string("https://images.example/w500/\(role).jpg"), "rendition": .string("w500"),
                    "original": .object([
                        "format": .string("jpeg"), "width": .integer(500), "height": .integer(750),
                        "bytes": .integer(81_234),
                    ]),
                    "variants": .array(
                        widths.map { width in
                            .object([
                                "width": .integer(width), "height": .integer(width * 3 / 2), "format": .string("webp"),
                                "bytes": .integer(width * 40),
                                "key": .string("\(sha256.prefix(2))/\(sha256)/\(width).webp"),
                                "url": .string("https://cdn.example/\(sha256)/\(width).webp"),
                            ])
                        }
                    ),
                    "dominant_color": .string("#1a2b3c"), "blurhash": .string("LEHV6nWB2yk8pyo0adR*.7kCMdnj"),
                ]
            )
        }
        return [
            localized(496243, "ko-KR", "기생충", tagline: "상상도 못한 전개"),
            localized(129, "ko-KR", "센과 치히로의 행방불명"),
            localized(278, "ja-JP", "ショーシャンクの空に"),
            record(
                .genre,
                "tmdb:genre:18:ko-KR",
                ["genre_id": .integer(18), "language": .string("ko-KR"), "name": .string("드라마")]
            ),
            record(
                .genre,
                "tmdb:genre:53:ko-KR",
                ["genre_id": .integer(53), "language": .string("ko-KR"), "name": .string("스릴러")]
            ),
            record(
                .koficMovie,
                "kofic:movie:\(self.parasiteCode)",
                [
                    "movie_cd": .string(self.parasiteCode), "title": .string("기생충"), "title_en": .string("PARASITE"),
                    "title_original": .null, "production_year": .integer(2019), "open_date": .string("2019-05-30"),
                    "runtime": .integer(131), "production_status": .string("개봉"), "type": .string("장편"),
                    "nations": .array([.string("한국")]), "genres": .array([.string("드라마")]),
                    "directors": .array([.object(["name": .string("봉준호"), "name_en": .string("BONG Joon-ho")])]),
                    "actors": .array([]), "actor_count": .integer(0), "show_types": .array([]), "companies": .array([]),
                    "audits": .array([]),
                ]
            ),
            boxOffice(
                "daily",
                "20190530",
                rank: 1,
                code: self.parasiteCode,
                name: "기생충",
                range: ("2019-05-30", "2019-05-30"),
                isNew: true,
                audience: 563_000
            ),
            boxOffice(
                "daily",
                "20190530",
                rank: 2,
                code: "20192014",
                name: "알라딘",
                range: ("2019-05-30", "2019-05-30"),
                isNew: false,
                audience: 101_000
            ),
            boxOffice(
                "week",
                "201922",
                rank: 1,
                code: self.parasiteCode,
                name: "기생충",
                range: ("2019-05-27", "2019-06-02"),
                isNew: true,
                audience: 3_363_000
            ),
            boxOffice(
                "weekend",
                "201922",
                rank: 1,
                code: self.parasiteCode,
                name: "기생충",
                range: ("2019-05-31", "2019-06-02"),
                isNew: true,
                audience: 2_400_000
            ),
            image("tmdb:movie:496243", "poster", sha256: self.posterHash, widths: [342, 185]),
            image("openlibrary:work:OL8998077W", "cover", sha256: self.coverHash, widths: [180]),
        ]
    }
}

// MARK: - Engines

/// The engines the tests run on: SQLite always, PostgreSQL when `MARQUEE_INTEGRATION=1`.
enum QueryEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    static var enabled: [QueryEngine] { TestEnvironment.isIntegrationEnabled ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { self.rawValue }

    /// The local stack's PostgreSQL (`POSTGRES_HOST`, `POSTGRES_PORT`, `POSTGRES_USER`, `POSTGRES_PASSWORD`,
    /// `POSTGRES_DB`; default `postgres://marquee@127.0.0.1:15432/marquee`).
    static func postgres(database: String? = nil) throws -> StoreLocation {
        let environment = ProcessInfo.processInfo.environment
        let password = environment["POSTGRES_PASSWORD"].map { ":\($0)" } ?? ""
        return try StoreLocation(
            parsing: "postgres://\(environment["POSTGRES_USER"] ?? "marquee")\(password)@"
                + "\(environment["POSTGRES_HOST"] ?? "127.0.0.1"):\(environment["POSTGRES_PORT"] ?? "15432")/"
                + "\(database ?? environment["POSTGRES_DB"] ?? "marquee")?sslmode=disable"
        )
    }

    /// Runs `body` with a new, empty store of this engine (a temporary SQLite file, or a new PostgreSQL database),
    /// and removes it afterwards.
    func withEmptyStore<T>(_ body: (Store) async throws -> T) async throws -> T {
        switch self {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                TestEnvironment.uniqueName("marquee-query")
            )
            defer { try? FileManager.default.removeItem(at: folder) }
            let store = try Store.open(
                StoreLocation(engine: .sqlite(path: folder.appendingPathComponent("catalogue.db").path)),
                logger: .marqueeTest
            )
            do {
                let result = try await body(store)
                await store.close()
                return result
            } catch {
                await store.close()
                throw error
            }
        case .postgres:
            let name = TestEnvironment.uniqueName("marquee_query").replacing("-", with: "_")
            let admin = try Store.open(
                try Self.postgres(),
                maximumConnections: 1,
                timeout: TestEngine.patientTimeout,
                logger: .marqueeTest
            )
            _ = try await admin.engine.read("CREATE DATABASE \(name)", [])
            let store = try Store.open(
                try Self.postgres(database: name),
                maximumConnections: 2,
                timeout: TestEngine.patientTimeout,
                logger: .marqueeTest
            )
            let result: Result<T, any Error>
            do {
                result = .success(try await body(store))
            } catch {
                result = .failure(error)
            }
            await store.close()
            _ = try? await admin.engine.read("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", [])
            await admin.close()
            return try result.get()
        }
    }

    /// Runs `body` with a store holding ``QueryCatalogue``.
    func withCatalogue<T>(_ body: (Store) async throws -> T) async throws -> T {
        try await self.withEmptyStore { store in
            _ = try await store.migrate()
            // Two batches, as the indexer would see them: the links are made when the second one arrives.
            _ = try await store.write(try QueryCatalogue.fixtureRecords())
            let summary = try await store.write(QueryCatalogue.handMadeRecords())
            #expect(summary.links == 1)
            return try await body(store)
        }
    }
}

// MARK: - Queries

@Suite(.timeLimit(.minutes(5)))
struct StoreQueryTests {
    @Test(arguments: QueryEngine.enabled)
    func koreanSubstringsFindLocalizedTitles(engine: QueryEngine) async throws {
        try await engine.withCatalogue { store in
            let parasite = try #require(try await store.movies(titleContaining: "기생", language: "ko-KR").first)
            #expect(parasite.movieID == 496243)
            #expect(parasite.title == "기생충")
            #expect(parasite.titleLanguage == "ko-KR")
            #expect(parasite.originalTitle == "기생충")
            #expect(parasite.releaseDate == "2019-05-30")
            #expect(parasite.popularity == 69.319)
            #expect(parasite.voteAverage == 8.5)
            #expect(parasite.languages == ["en-US", "ko-KR"])

            // A Korean translation of a Japanese film, shown in Korean, in English, or in any Korean ("ko").
            let korean = try await store.movies(titleContaining: "치히로", language: "ko-KR")
            #expect(korean.map(\.movieID) == [129])
            #expect(korean.first?.title == "센과 치히로의 행방불명")
            #expect(try await store.movies(titleContaining: "치히로", language: "en-US").first?.title == "Spirited Away")
            #expect(try await store.movies(titleContaining: "치히로", language: "ko").first?.title == "센과 치히로의 행방불명")
            // No language: the first language that has a title (en-US sorts first).
            #expect(try await store.movies(titleContaining: "치히로").first?.titleLanguage == "en-US")
            #expect(try await store.movies(titleContaining: "행방불명 치히로").isEmpty)
        }
    }

    @Test(arguments: QueryEngine.enabled)
    func japaneseSubstringsFindOriginalAndLocalizedTitles(engine: QueryEngine) async throws {
        try await engine.withCatalogue { store in
            #expect(try await store.movies(titleContaining: "君の名").map(\.movieID) == [372058])
            #expect(
                try await store.movies(titleContaining: "千と千尋", language: "ja-JP").first?.originalTitle == "千と千尋の神隠し"
            )
            let shawshank = try await store.movies(titleContaining: "ショーシャンク", language: "ja-JP")
            #expect(shawshank.map(\.movieID) == [278])
            #expect(shawshank.first?.title == "ショーシャンクの空に")
            #expect(shawshank.first?.languages == ["en-US", "ja-JP"])
            // The original title has a full-width colon: folding ignores it, and the half-width query matches.
            #expect(try await store.movies(titleContaining: "超:スーパー").map(\.movieID) == [610150])
            // Latin titles ignore case and punctuation.
            #expect(try await store.movies(titleContaining: "SPIRITED-away").map(\.movieID) == [129])
        }
    }

    @Test(arguments: QueryEngine.enabled)
    func searchOrdersByPopularityAndHonoursTheLimit(engine: QueryEngine) async throws {
        try await engine.withCatalogue { store in
            #expect(try await store.movies(titleContaining: "godfather").map(\.movieID) == [238, 240])
            let three = try await store.movies(titleContaining: "e", limit: 3)
            #expect(three.count == 3)
            let popularity = three.compactMap(\.popularity)
            #expect(popularity.count == 3)
            #expect(popularity == popularity.sorted(by: >))
            // Puss in Boots (5032.178) is the most popular movie with an "e" in a title.
            #expect(three.first?.movieID == 315162)
        }
    }

    @Test(arguments: QueryEngine.enabled)
    func unanswerableQueriesAreRejected(engine: QueryEngine) async throws {
        try await engine.withCatalogue { store in
            for call in [
                { _ = try await store.movies(titleContaining: "!!! ・ ") },
                { _ = try await store.movies(titleContaining: "godfather", limit: 0) },
                { _ = try await store.books() },
                { _ = try await store.books(author: "--") },
                { _ = try await store.boxOffice(period: .daily, date: "2019-02-30") },
                { _ = try await store.boxOffice(period: .daily, yearWeek: "201922") },
                { _ = try await store.boxOffice(period: .week, yearWeek: "201960") },
            ] as [@Sendable () async throws -> Void] {
                let error = await #expect(throws: StoreError.self) { try await call() }
                #expect(error?.code == .invalidQuery)
            }
        }
    }

    @Test(arguments: QueryEngine.enabled)
    func detailsOfALinkedMovieWithAnImage(engine: QueryEngine) async throws {
        try await engine.withCatalogue { store in
            let movie = try #require(try await store.movie(id: 496243, language: "ko-KR"))
            #expect(movie.title == "기생충")
            #expect(movie.originalLanguage == "ko")
            #expect(movie.isAdult == false)
            #expect(movie.isVideo == false)
            #expect(movie.voteCount != nil)
            #expect(movie.facts == nil)  // only list records: no details yet
            #expect(movie.localized.map(\.language) == ["en-US", "ko-KR"])
            #expect(movie.localized.last?.tagline == "상상도 못한 전개")
            #expect(movie.localized.first?.title == "Parasite")
            // TMDB's order; Korean names where the store has them, else English, else the bare id.
            #expect(movie.genres.map(\.genreID) == [35, 53, 18])
            #expect(movie.genres.map(\.name) == ["Comedy", "스릴러", "드라마"])
            #expect(movie.genres.map(\.language) == ["en", "ko-KR", "ko-KR"])
            #expect(
                movie.koficLinks == [
                    KOFICLink(
                        movieCd: QueryCatalogue.parasiteCode,
                        title: "기생충",
                        titleEnglish: "PARASITE",
                        openDate: "2019-05-30",
                        method: "title+year"
                    )
                ]
            )
            let poster = try #require(movie.images.first)
            #expect(movie.images.count == 1)
            #expect(poster.role == "poster")
            #expect(poster.sha256 == QueryCatalogue.posterHash)
            #expect(poster.format == "jpeg")
            #expect([poster.width, poster.height, poster.bytes] as [Int] == [500, 750, 81_234])
            #expect(poster.dominantColor == "#1a2b3c")
            #expect(poster.blurhash == "LEHV6nWB2yk8pyo0adR*.7kCMdnj")
            #expect(poster.variants.map(\.width) == [185, 342])
            #expect(poster.variants.first?.height == 277)
            #expect(poster.variants.first?.bytes == 7_400)
            #expect(poster.variants.first?.storeKey == "ab/\(QueryCatalogue.posterHash)/185.webp")
            #expect(poster.variants.first?.url == "https://cdn.example/\(QueryCatalogue.posterHash)/185.webp")

            #expect(try await store.movie(id: 999_999_999) == nil)
        }
    }

    @Test(arguments: QueryEngine.enabled)
    func detailsWithFactsGenresAndReviews(engine: QueryEngine) async throws {
        try await engine.withCatalogue { store in
            let civilWar = try #require(try await store.movie(id: 271110, language: "en-US"))
            #expect(civilWar.title == "Captain America: Civil War")
            let facts = try #require(civilWar.facts)
            #expect(facts.runtime == 147)
            #expect(facts.budget == 250_000_000)
            #expect(facts.revenue == 1_153_296_293)
            #expect(facts.imdbID == "tt3498820")
            #expect(facts.status == "Released")
            #expect(facts.productionCountries == ["US"])
            #expect(facts.spokenLanguages.contains("ro"))
            #expect(civilWar.localized.first?.tagline == "Divided We Fall")
            // Named by the details answer in en-US, and by the genre list in "en": en-US is the exact match.
            #expect(civilWar.genres.map(\.name) == ["Adventure", "Action", "Science Fiction"])
            #expect(civilWar.genres.map(\.language) == ["en-US", "en-US", "en-US"])

            let shawshank = try #require(try await store.movie(id: 278))
            #expect(shawshank.reviews.count == 7)
            let created = shawshank.reviews.compactMap(\.createdAt)
            #expect(created.count == 7)
            #expect(created == created.sorted(by: >))
            #expect(shawshank.reviews.allSatisfy { ($0.excerpt?.count ?? 0) <= 300 })
            #expect(shawshank.reviews.contains { $0.excerpt?.hasSuffix("…") == true })
            #expect(!shawshank.reviews.contains { $0.excerpt?.contains("\n") == true })
            let unrated = try #require(shawshank.reviews.first { $0.reviewID == "5bc8a200c3a36829c8019817" })
            #expect(unrated.rating == nil)
            #expect(unrated.author == "Andrew Gentry")
            let arabic = try #require(shawshank.reviews.first { $0.reviewID == "5723a329c3a3682e720005db" })
            #expect(arabic.excerpt?.contains("محمد الشعراوى") == true)
            #expect(arabic.url == "https://www.themoviedb.org/review/5723a329c3a3682e720005db")
        }
    }

    @Test(arguments: QueryEngine.enabled)
    func boxOfficeForADayAndAWeekWithTheLink(engine: QueryEngine) async throws {
        try await engine.withCatalogue { store in
            let day = try #require(try await store.boxOffice(period: .daily, date: "2019-05-30", language: "ko-KR"))
            #expect(day.periodKey == "20190530")
            #expect(day.showRangeStart == "2019-05-30")
            #expect(day.entries.map(\.rank) == [1, 2])
            let first = try #require(day.entries.first)
            #expect(first.movieCd == QueryCatalogue.parasiteCode)
            #expect(first.movieName == "기생충")
            #expect(first.isNew == true)
            #expect(first.audienceCount == 563_000)
            #expect(first.audienceAccumulated == 1_689_000)
            #expect(first.salesAmount == 5_067_000_000)
            #expect(first.salesShare == 41.5)
            #expect(first.screenCount == 1_500)
            #expect(first.showCount == 7_000)
            #expect(first.tmdbMovieID == 496243)
            #expect(first.tmdbTitle == "기생충")
            #expect(day.entries.last?.tmdbMovieID == nil)
            #expect(day.entries.last?.rankChange == -1)
            #expect(
                try await store.boxOffice(period: .daily, date: "2019-05-30", language: "en-US")?.entries.first?
                    .tmdbTitle == "Parasite"
            )

            // No date: the latest day stored, the recorded KOFIC answer.
            let latest = try #require(try await store.boxOffice())
            #expect(latest.periodKey == "20230426")
            #expect(latest.entries.count == 10)
            #expect(latest.entries.first?.movieName == "드림")
            #expect(latest.entries.first?.audienceCount == 93416)
            #expect(latest.entries.first?.isNew == true)
            #expect(latest.entries.last?.openDate == nil)  // KOFIC's " "

            // The week containing a day, by date and by KOFIC's week number.
            let week = try #require(try await store.boxOffice(period: .week, date: "2019-05-29"))
            #expect(week.periodKey == "201922")
            #expect(week.showRangeStart == "2019-05-27")
            #expect(week.showRangeEnd == "2019-06-02")
            #expect(week.entries.first?.tmdbMovieID == 496243)
            #expect(try await store.boxOffice(period: .week, date: "2019-06-02")?.periodKey == "201922")
            #expect(try await store.boxOffice(period: .week, date: "2019-06-03") == nil)
            // The weekend list of that week starts on Friday.
            #expect(try await store.boxOffice(period: .weekend, date: "2019-05-29") == nil)
            #expect(
                try await store.boxOffice(period: .weekend, date: "2019-06-01")?.entries.first?.audienceCount
                    == 2_400_000
            )
            #expect(try await store.boxOffice(period: .weekend, yearWeek: "201922")?.showRangeStart == "2019-05-31")
            #expect(try await store.boxOffice(period: .weekdays, yearWeek: "201922") == nil)
            #expect(try await store.boxOffice(period: .daily, date: "2020-01-01") == nil)
        }
    }

    @Test(arguments: QueryEngine.enabled)
    func booksByTitleAndByAuthor(engine: QueryEngine) async throws {
        try await engine.withCatalogue { store in
            let apple = try await store.books(titleContaining: "apple")
            #expect(apple.map(\.bookKey) == ["openlibrary:work:OL8998077W"])
            let cookbook = try #require(apple.first)
            #expect(cookbook.title == "Apple Delights Cookbook")
            #expect(cookbook.authors.map(\.name) == ["Karen Jean Matsko Hood"])
            #expect(cookbook.firstPublishYear == 2004)
            #expect(cookbook.editionCount == 80)
            #expect(cookbook.coverID == 2_955_048)
            #expect(cookbook.cover?.sha256 == QueryCatalogue.coverHash)
            #expect(cookbook.cover?.variants.map(\.width) == [180])

            let lauras = try await store.books(author: "laura")
            #expect(Set(lauras.map(\.bookKey)) == ["openlibrary:work:OL4437736W", "openlibrary:work:OL8415118W"])
            #expect(lauras.allSatisfy { $0.cover == nil })
            let mauck = try #require(lauras.first { $0.bookKey == "openlibrary:work:OL8415118W" })
            #expect(mauck.coverID == 1_371_298)
            #expect(mauck.authors == [BookAuthor(name: "Laura M. Mauck", authorKey: mauck.authors.first?.authorKey)])

            // Both: the title and an author must match.
            let twoAuthors = try await store.books(titleContaining: "denver", author: "sutton")
            #expect(twoAuthors.map(\.bookKey) == ["openlibrary:work:OL27674149W"])
            #expect(twoAuthors.first?.authors.map(\.name) == ["Dave Tasto", "Vanessa Sutton"])
            #expect(try await store.books(titleContaining: "apple", author: "sutton").isEmpty)
            // Most editions first.
            let horticulture = try await store.books(titleContaining: "e", limit: 2)
            #expect(horticulture.map(\.editionCount) == [89, 80])
        }
    }

    @Test(arguments: QueryEngine.enabled)
    func countsMatchTheRecordsWritten(engine: QueryEngine) async throws {
        let records = try QueryCatalogue.fixtureRecords() + QueryCatalogue.handMadeRecords()
        func distinct(_ kind: Record.Kind) -> Int { Set(records.filter { $0.kind == kind }.map(\.key)).count }
        let entries = records.filter { $0.kind == .boxOfficeEntry }
        var expected = StoreCounts()
        expected.movies = distinct(.movie)
        expected.movieTranslations = distinct(.movieLocalized)
        expected.genres = distinct(.genre)
        expected.reviews = distinct(.review)
        expected.koficMovies = distinct(.koficMovie)
        expected.boxOfficeEntries = Set(entries.map(\.key)).count
        // kofic:<period>:<day or week>:<rank> → one list per period and day or week.
        expected.boxOfficeCharts =
            Set(entries.map { $0.key.split(separator: ":").prefix(3).joined(separator: ":") }).count
        expected.books = distinct(.book)
        expected.authors =
            Set(
                records.filter { $0.kind == .book }.flatMap { record -> [String] in
                    guard case .array(let authors)? = record.data["authors"] else { return [] }
                    return authors.compactMap {
                        if case .object(let author) = $0, case .string(let key)? = author["key"] { key } else { nil }
                    }
                }
            ).count
        expected.images = 2
        expected.imageVariants = 3
        expected.movieLinks = 1
        expected.jobOutcomes = 0
        #expect(expected.boxOfficeCharts == 4)  // the recorded day, the hand-made day, week and weekend
        #expect(expected.movies > 30)
        try await engine.withCatalogue { store async throws in
            #expect(try await store.counts() == expected)
            #expect(try await store.schemaVersion() == Schema.latestVersion)
        }
    }

    @Test(arguments: QueryEngine.enabled)
    func anEmptyStoreHasNoSchemaAndCountsNothing(engine: QueryEngine) async throws {
        try await engine.withEmptyStore { store in
            #expect(try await store.schemaVersion() == nil)
            _ = try await store.migrate()
            #expect(try await store.schemaVersion() == Schema.latestVersion)
            #expect(try await store.counts() == StoreCounts())
            #expect(try await store.boxOffice() == nil)
            #expect(try await store.movies(titleContaining: "parasite").isEmpty)
        }
    }

    @Test func readModelsEncodeEveryKeyInSnakeCase() throws {
        let summary = MovieSummary(
            movieID: 1,
            title: nil,
            titleLanguage: nil,
            originalTitle: "Original",
            releaseDate: nil,
            popularity: 2.5,
            voteAverage: nil,
            languages: []
        )
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(summary)) as? [String: Any]
        )
        #expect(
            Set(object.keys)
                == [
                    "movie_id", "title", "title_language", "original_title", "release_date", "popularity",
                    "vote_average", "languages",
                ]
        )
        #expect(object["title"] is NSNull)
        #expect(try JSONDecoder().decode(MovieSummary.self, from: JSONEncoder().encode(summary)) == summary)
        // A document that leaves the absent fields out reads the same.
        let terse = try JSONDecoder().decode(MovieSummary.self, from: Data(#"{"movie_id":1,"languages":[]}"#.utf8))
        #expect(terse.movieID == 1 && terse.title == nil && terse.voteAverage == nil)
        let counts = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(StoreCounts())) as? [String: Any]
        )
        #expect(Set(counts.keys) == Set(StoreCounts().all.map(\.name)))
        #expect(counts.keys.contains("box_office_charts"))
    }

    @Test func excerptsCollapseWhiteSpaceAndStopAt300Characters() throws {
        #expect(Store.excerpt("a\r\n\r\n  b\tc") == "a b c")
        #expect(Store.excerpt("   ") == nil)
        let excerpt = try #require(Store.excerpt(String(repeating: "기생충 ", count: 200)))
        #expect(excerpt.count == 300)
        #expect(excerpt.hasSuffix("충…"))
        #expect(Store.excerpt(String(repeating: "x", count: 300)) == String(repeating: "x", count: 300))
    }
}

// MARK: - marquee query

/// `marquee query` run as a child process (the built `marquee` next to the test bundle) against SQLite stores.
@Suite(.timeLimit(.minutes(5)))
struct StoreQueryCLITests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String

        func json() throws -> Any {
            try JSONSerialization.jsonObject(with: Data(self.stdout.utf8), options: [.fragmentsAllowed])
        }
    }

    /// Runs `marquee query <arguments>` without `MARQUEE_STORE` unless `store` is given, and waits for it to exit.
    static func query(_ arguments: [String], environmentStore: String? = nil) async throws -> Run {
        let run = try await runBuiltExecutable(
            "marquee",
            ["query"] + arguments,
            environment: ["MARQUEE_STORE": environmentStore]
        )
        return Run(status: run.status, stdout: run.standardOutput, stderr: run.standardError)
    }

    /// Runs `body` with the path of an SQLite file holding ``QueryCatalogue`` (the store closed again).
    static func withCatalogueFile(_ body: (String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestEnvironment.uniqueName("marquee-cli-store")
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("catalogue.db").path
        let store = try Store.open(StoreLocation(engine: .sqlite(path: path)), logger: .marqueeTest)
        do {
            _ = try await store.migrate()
            _ = try await store.write(try QueryCatalogue.fixtureRecords())
            _ = try await store.write(QueryCatalogue.handMadeRecords())
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        try await body(path)
    }

    @Test func jsonAnswersCarryTheCatalogue() async throws {
        try await Self.withCatalogueFile { path in
            let store = "sqlite:\(path)"
            let movies = try await Self.query(["movies", "기생", "--language", "ko-KR", "--json", "--store", store])
            #expect(movies.status == 0)
            #expect(movies.stderr == "")
            let movieList = try #require(try movies.json() as? [[String: Any]])
            #expect(movieList.first?["movie_id"] as? Int == 496243)
            #expect(movieList.first?["title"] as? String == "기생충")
            #expect(movieList.first?["title_language"] as? String == "ko-KR")

            let movieRun = try await Self.query(["movie", "496243", "--json", "--store", store])
            #expect(movieRun.stdout.contains("\"reviews\" : [],\n"))
            let movie = try #require(try movieRun.json() as? [String: Any])
            #expect(movie["details"] is NSNull)
            #expect(movie["refresh"] is NSNull)  // its records came without a reason
            let links = try #require(movie["kofic_links"] as? [[String: Any]])
            #expect(links.first?["movie_cd"] as? String == QueryCatalogue.parasiteCode)
            let images = try #require(movie["images"] as? [[String: Any]])
            #expect((images.first?["variants"] as? [[String: Any]])?.compactMap { $0["width"] as? Int } == [185, 342])

            // A movie refreshed from the change feed says so, in both forms.
            let writer = try Store.open(StoreLocation(engine: .sqlite(path: path)), logger: .marqueeTest)
            _ = try await writer.write([
                try Store.prepare(MovieRefreshStoreTests.movie(129, at: 1_764_244_800_250), refresh: .change)
            ])
            await writer.close()
            let refreshed = try #require(
                try await Self.query(["movie", "129", "--json", "--store", store]).json() as? [String: Any]
            )
            let refresh = try #require(refreshed["refresh"] as? [String: Any])
            #expect(refresh["reason"] as? String == "change")
            #expect(refresh["refreshed_at"] as? String == "2025-11-27T12:00:00.250Z")
            #expect(refresh["refreshed_at_ms"] as? Int == 1_764_244_800_250)
            let text = try await Self.query(["movie", "129", "--store", store])
            #expect(text.stdout.contains("refreshed       2025-11-27 12:00:00 UTC (change)\n"), "\(text.stdout)")

            // The store from MARQUEE_STORE; no date: the latest day.
            let latest = try await Self.query(["box-office", "--json"], environmentStore: store)
            #expect(latest.status == 0)
            let chart = try #require(try latest.json() as? [String: Any])
            #expect(chart["period"] as? String == "daily")
            #expect(chart["period_key"] as? String == "20230426")
            #expect((chart["entries"] as? [[String: Any]])?.count == 10)

            let week = try #require(
                try await Self.query(["box-office", "--weekly", "--week", "201922", "--json", "--store", store]).json()
                    as? [String: Any]
            )
            let entry = try #require((week["entries"] as? [[String: Any]])?.first)
            #expect(entry["tmdb_movie_id"] as? Int == 496243)
            #expect(entry["is_new"] as? Bool == true)

            let books = try #require(
                try await Self.query(["books", "--author", "hood", "--json", "--store", store]).json()
                    as? [[String: Any]]
            )
            #expect(books.map { $0["book_key"] as? String } == ["openlibrary:work:OL8998077W"])

            let counts = try #require(
                try await Self.query(["counts", "--json", "--store", store]).json() as? [String: Any]
            )
            #expect(counts["image_variants"] as? Int == 3)
            #expect(counts["movie_links"] as? Int == 1)
        }
    }

    @Test func tablesAlignWideCharactersAndSayWhatIsShown() async throws {
        /// Terminal columns, counting Hangul, kana and CJK ideographs as two.
        func columns(_ text: Substring) -> Int {
            text.unicodeScalars.reduce(0) { width, scalar in
                let wide = [0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFF00...0xFF60]
                    .contains { $0.contains(Int(scalar.value)) }
                return width + (wide ? 2 : 1)
            }
        }
        try await Self.withCatalogueFile { path in
            let run = try await Self.query(["movies", "치히로", "--language", "ko-KR", "--store", "sqlite:\(path)"])
            #expect(run.status == 0)
            let lines = run.stdout.split(separator: "\n")
            #expect(lines.count == 3)
            let header = try #require(lines.first)
            let row = try #require(lines.dropFirst().first)
            #expect(row.contains("센과 치히로의 행방불명"))
            let released = try #require(header.range(of: "RELEASED"))
            let date = try #require(row.range(of: "2002-09-20"))
            #expect(columns(header[..<released.lowerBound]) == columns(row[..<date.lowerBound]))
            #expect(lines.last?.hasPrefix("1 movie whose title contains '치히로'") == true)

            let day = try await Self.query([
                "box-office", "--date", "2019-05-30", "--language", "ko-KR", "--store", "sqlite:\(path)",
            ])
            #expect(day.status == 0)
            #expect(day.stdout.hasPrefix("Daily box office for 2019-05-30\n"))
            #expect(day.stdout.contains("496243 기생충"))
            #expect(day.stdout.hasSuffix("2 entries, 1 linked to a TMDB movie\n"))
            let latest = try await Self.query(["box-office", "--store", "sqlite:\(path)"])
            #expect(latest.stdout.hasPrefix("Daily box office for 2023-04-26, the latest in the store\n"))
            let weekend = try await Self.query([
                "box-office", "--weekend", "--date", "20190601", "--store", "sqlite:\(path)",
            ])
            #expect(weekend.stdout.hasPrefix("Weekend box office for 2019-05-31 – 2019-06-02 (week 201922)\n"))
        }
    }

    @Test func nothingFoundExitsZeroWithAMessage() async throws {
        try await Self.withCatalogueFile { path in
            let store = "sqlite:\(path)"
            let movies = try await Self.query(["movies", "zzqqxx", "--store", store])
            #expect(movies.status == 0)
            #expect(movies.stdout == "")
            #expect(movies.stderr == "no movie title contains 'zzqqxx' in \(store)\n")
            let json = try await Self.query(["movies", "zzqqxx", "--json", "--store", store])
            #expect(json.status == 0)
            #expect(json.stdout == "[]\n")
            #expect(try await Self.query(["movie", "1", "--json", "--store", store]).stdout == "null\n")
            let day = try await Self.query(["box-office", "--date", "2001-01-01", "--store", store])
            #expect(day.status == 0)
            #expect(day.stderr.hasPrefix("no daily box office for 2001-01-01"))
        }
    }

    @Test func storesThatCannotBeReadFailWithOneLine() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestEnvironment.uniqueName("marquee-cli-bad")
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        // A malformed flag is a usage error (64); the same value from the environment is a malformed setting (78).
        // Neither shows the value, which may hold a password.
        let unknown = try await Self.query(["counts", "--store", "mysql://root:secret@db/x"])
        #expect(unknown.status == 64)
        #expect(
            unknown.stderr.contains(
                "MARQUEE_STORE (--store) from the command line: expected sqlite:PATH or postgres://"
            ),
            "\(unknown.stderr)"
        )
        #expect(!unknown.stderr.contains("secret"))
        let unknownSetting = try await Self.query(["counts"], environmentStore: "mysql://root:secret@db/x")
        #expect(unknownSetting.status == 78)
        #expect(
            unknownSetting.stderr
                == "marquee: MARQUEE_STORE (--store) from the environment: expected sqlite:PATH or postgres://user:password@host:port/database\n"
        )

        // A missing file is not created: a query never writes.
        let missing = folder.appendingPathComponent("nothing/here.db").path
        let absent = try await Self.query(["counts", "--store", "sqlite:\(missing)"])
        #expect(absent.status == 66)
        #expect(absent.stderr.contains("the file does not exist"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("nothing").path))

        // A store without a schema.
        let emptyPath = folder.appendingPathComponent("empty.db").path
        await (try Store.open(StoreLocation(engine: .sqlite(path: emptyPath)), logger: .marqueeTest)).close()
        let empty = try await Self.query(["movies", "parasite", "--store", "sqlite:\(emptyPath)"])
        #expect(empty.status == 66)
        #expect(
            empty.stderr
                == "marquee: the store at sqlite:\(emptyPath) is empty: run marquee-index (or make run) first\n"
        )

        // Nothing listens on port 1: connection refused, retried by the pool until --timeout; the password is
        // never shown.
        let unreachable = try await Self.query([
            "counts", "--store", "postgres://marquee:hunter2@127.0.0.1:1/marquee?sslmode=disable", "--timeout", "2",
        ])
        #expect(unreachable.status == 69)
        #expect(unreachable.stderr.hasPrefix("marquee: "))
        #expect(unreachable.stderr.contains("postgres://marquee:***@127.0.0.1:1/marquee"))
        #expect(!unreachable.stderr.contains("hunter2"))
        #expect(unreachable.stderr.split(separator: "\n").count == 1)
    }

    @Test(arguments: [
        ["movies"], ["movies", "!!!"], ["movies", "parasite", "--limit", "0"], ["box-office", "--week", "201922"],
        ["box-office", "--date", "2019-02-30"], ["box-office", "--weekly", "--week", "2019-22"],
        ["box-office", "--daily", "--weekend"], ["books"], ["movie", "parasite"],
    ])
    func badArgumentsAreUsageErrors(arguments: [String]) async throws {
        let run = try await Self.query(arguments + ["--store", "sqlite:/nonexistent/never-opened.db"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("Error:"))
        #expect(run.stdout == "")
    }
}
