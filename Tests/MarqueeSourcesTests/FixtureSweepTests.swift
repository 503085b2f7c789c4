import Foundation
import MarqueeCore
import Testing

@testable import MarqueeSources

/// Every recorded response in ../shared/fixtures goes through the adapter of its endpoint: strict-JSON files parse
/// into records, the SUSPECT non-JSON files are malformed, none crashes.
@Suite struct FixtureSweepTests {
    /// The job each fixture answers, and how many records it must yield (`nil`: an error is expected).
    static let expectations: [String: (job: FetchJob, records: Int?)] = [
        "tmdb/configuration.json": (.tmdbGenres(language: "en"), nil),
        "tmdb/genre_movie_list.json": (.tmdbGenres(language: "en"), 19),
        "tmdb/movie_15_reviews.json": (.tmdbReviews(id: 15, page: 1, language: "en-US", follow: .none), 7),
        "tmdb/movie_271110_details.json": (.tmdbMovie(id: 271110, language: "en-US", follow: .none), 2 + 3),
        "tmdb/movie_278_reviews.json": (.tmdbReviews(id: 278, page: 1, language: "en-US", follow: .none), 7),
        "tmdb/movie_497_reviews_empty.json": (.tmdbReviews(id: 497, page: 1, language: "en-US", follow: .none), 0),
        "tmdb/movie_51888_details.json": (.tmdbMovie(id: 51888, language: "en-US", follow: .none), 2 + 4),
        "tmdb/movie_now_playing_2022-06.json": (
            .tmdbList(list: .nowPlaying, page: 1, language: "en-US", region: nil, follow: .none), 40
        ),
        "tmdb/movie_popular_2016.json": (
            .tmdbList(list: .popular, page: 1, language: "en-US", region: nil, follow: .none), 40
        ),
        "tmdb/movie_popular_2020-07.json": (
            .tmdbList(list: .popular, page: 1, language: "en-US", region: nil, follow: .none), 40
        ),
        "tmdb/movie_top_rated_2023.json": (
            .tmdbList(list: .topRated, page: 1, language: "en-US", region: nil, follow: .none), 40
        ),
        "tmdb/search_movie_empty.json": (
            .tmdbSearch(query: "x", page: 1, language: "en-US", year: nil, follow: .none), 0
        ),
        "tmdb/search_movie_error_no_query.json": (
            .tmdbSearch(query: "x", page: 1, language: "en-US", year: nil, follow: .none), nil
        ),
        "tmdb/search_movie_fast.json": (
            .tmdbSearch(query: "fast", page: 1, language: "en-US", year: nil, follow: .none), 40
        ),
        "tmdb/search_movie_river.json": (
            .tmdbSearch(query: "river", page: 1, language: "en-US", year: nil, follow: .none), 40
        ),
        "kofic/daily_20120101.json": (.koficDailyBoxOffice(date: "20120101", follow: .none), 10),
        "kofic/daily_20220105.json": (.koficDailyBoxOffice(date: "20220105", follow: .none), 10),
        "kofic/daily_20220315.json": (.koficDailyBoxOffice(date: "20220315", follow: .none), 10),
        "kofic/daily_20221214.json": (.koficDailyBoxOffice(date: "20221214", follow: .none), 10),
        "kofic/daily_20221221.json": (.koficDailyBoxOffice(date: "20221221", follow: .none), 10),
        "kofic/daily_20230423.json": (.koficDailyBoxOffice(date: "20230423", follow: .none), 10),
        "kofic/daily_20230426.json": (.koficDailyBoxOffice(date: "20230426", follow: .none), 10),
        "kofic/movieinfo_20124079.json": (.koficMovie(code: "20124079", follow: .none), 1),
        "kofic/movieinfo_20194376.json": (.koficMovie(code: "20194376", follow: .none), 1),
        "kofic/movieinfo_20199882.json": (.koficMovie(code: "20199882", follow: .none), 1),
        "kofic/movieinfo_20218541.json": (.koficMovie(code: "20218541", follow: .none), 1),
        "kakao/error_page_more_than_max.json": (.kakaoPoster(query: "x", movieCode: "20218541"), nil),
        "kakao/image_search_29docs_2018.json": (.kakaoPoster(query: "x", movieCode: "20218541"), nil),
        "kakao/image_search_3docs_2023.json": (.kakaoPoster(query: "x", movieCode: "20218541"), 0),
        "kakao/image_search_80docs_2023.json": (.kakaoPoster(query: "x", movieCode: "20218541"), 0),
        "kakao/image_search_accuracy_2018.json": (.kakaoPoster(query: "x", movieCode: "20218541"), nil),
        "kakao/image_search_nsdictionary_dump.txt": (.kakaoPoster(query: "x", movieCode: "20218541"), nil),
        "openlibrary/books_api_isbn_0385472579_jscmd_data.json": (.openLibraryWork(id: "OL1W", follow: .none), nil),
        "openlibrary/search_q_apple_limit2.json": (
            .openLibrarySearch(query: "apple", page: 1, limit: 2, follow: .none), 2
        ),
        "openlibrary/search_q_denver_co.json": (
            .openLibrarySearch(query: "denver,co", page: 1, limit: 20, follow: .none), 20
        ),
        "openlibrary/subjects_denver.json": (
            .openLibrarySearch(query: "denver", page: 1, limit: 20, follow: .none), nil
        ),
    ]

    /// The files MANIFEST.md marks SUSPECT / NOT STRICT JSON.
    static let suspect: Set<String> = [
        "kakao/image_search_29docs_2018.json", "kakao/image_search_accuracy_2018.json",
        "kakao/image_search_nsdictionary_dump.txt",
    ]

    @Test func everyFixtureIsCovered() throws {
        var files: [String] = []
        for directory in ["tmdb", "kofic", "kakao", "openlibrary"] { files += try Fixtures.files(in: directory) }
        #expect(files.count >= 30, "the fixture directory looks incomplete: \(Fixtures.root.path)")
        #expect(Set(files) == Set(Self.expectations.keys))
    }

    @Test(arguments: expectations.keys.sorted())
    func fixtureParses(fixture: String) throws {
        let (job, records) = try #require(Self.expectations[fixture])
        let response = try Fixtures.response(fixture)
        let isSuspect = Self.suspect.contains(fixture)
        do {
            let result = try testAdapters.parse(response, for: job, fetchedAt: testFetchedAt)
            #expect(result.records.count == records, "\(fixture)")
            #expect(result.records.allSatisfy { $0.fetchedAt == testFetchedAt })
            // Every record survives the records stage's own decoding.
            // Every record survives the records stage's own decoding (compared as bytes: an integral number such
            // as a vote average of 6.0 comes back as the integer 6, the same JSON).
            for record in result.records {
                #expect((try? Record.decode(record.encoded()))?.encoded() == record.encoded())
            }
            #expect(!isSuspect, "\(fixture) is not strict JSON but parsed")
        } catch {
            #expect(records == nil, "\(fixture): \(error)")
            if isSuspect { #expect(error.code == .malformed, "\(fixture) is not JSON: \(error)") }
        }
    }
}
