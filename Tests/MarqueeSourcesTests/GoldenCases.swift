import Foundation
import MarqueeCore
import MarqueeSources

/// The cases of ``GoldenOutputTests``: every recorded fixture (as ``FixtureSweepTests`` maps them to jobs) and a
/// few synthetic bodies with hostile values, each parsed under several follow settings, rendered as the fetch
/// worker puts them on the wire (records, image jobs and follow-up jobs: `stage key payload`), plus the skipped
/// follow-ups and errors. Plain Swift (no test framework), so the same rendering can be run against an older
/// build of MarqueeCore and MarqueeSources to write the goldens.
enum GoldenCases {
    /// The job each fixture answers.
    static let fixtures: [(String, FetchJob)] = [
        ("tmdb/configuration.json", .tmdbGenres(language: "en")),
        ("tmdb/genre_movie_list.json", .tmdbGenres(language: "en")),
        ("tmdb/movie_15_reviews.json", .tmdbReviews(id: 15, page: 1, language: "en-US", follow: .none)),
        ("tmdb/movie_271110_details.json", .tmdbMovie(id: 271110, language: "en-US", follow: .none)),
        ("tmdb/movie_278_reviews.json", .tmdbReviews(id: 278, page: 1, language: "en-US", follow: .none)),
        ("tmdb/movie_497_reviews_empty.json", .tmdbReviews(id: 497, page: 1, language: "en-US", follow: .none)),
        ("tmdb/movie_51888_details.json", .tmdbMovie(id: 51888, language: "en-US", follow: .none)),
        (
            "tmdb/movie_now_playing_2022-06.json",
            .tmdbList(list: .nowPlaying, page: 1, language: "en-US", region: nil, follow: .none)
        ),
        (
            "tmdb/movie_popular_2016.json",
            .tmdbList(list: .popular, page: 1, language: "en-US", region: nil, follow: .none)
        ),
        (
            "tmdb/movie_popular_2020-07.json",
            .tmdbList(list: .popular, page: 1, language: "en-US", region: nil, follow: .none)
        ),
        (
            "tmdb/movie_top_rated_2023.json",
            .tmdbList(list: .topRated, page: 1, language: "en-US", region: nil, follow: .none)
        ),
        ("tmdb/search_movie_empty.json", .tmdbSearch(query: "x", page: 1, language: "en-US", year: nil, follow: .none)),
        (
            "tmdb/search_movie_error_no_query.json",
            .tmdbSearch(query: "x", page: 1, language: "en-US", year: nil, follow: .none)
        ),
        (
            "tmdb/search_movie_fast.json",
            .tmdbSearch(query: "fast", page: 1, language: "en-US", year: nil, follow: .none)
        ),
        (
            "tmdb/search_movie_river.json",
            .tmdbSearch(query: "river", page: 1, language: "en-US", year: nil, follow: .none)
        ),
        ("kofic/daily_20120101.json", .koficDailyBoxOffice(date: "20120101", follow: .none)),
        ("kofic/daily_20220105.json", .koficDailyBoxOffice(date: "20220105", follow: .none)),
        ("kofic/daily_20220315.json", .koficDailyBoxOffice(date: "20220315", follow: .none)),
        ("kofic/daily_20221214.json", .koficDailyBoxOffice(date: "20221214", follow: .none)),
        ("kofic/daily_20221221.json", .koficDailyBoxOffice(date: "20221221", follow: .none)),
        ("kofic/daily_20230423.json", .koficDailyBoxOffice(date: "20230423", follow: .none)),
        ("kofic/daily_20230426.json", .koficDailyBoxOffice(date: "20230426", follow: .none)),
        ("kofic/movieinfo_20124079.json", .koficMovie(code: "20124079", follow: .none)),
        ("kofic/movieinfo_20194376.json", .koficMovie(code: "20194376", follow: .none)),
        ("kofic/movieinfo_20199882.json", .koficMovie(code: "20199882", follow: .none)),
        ("kofic/movieinfo_20218541.json", .koficMovie(code: "20218541", follow: .none)),
        ("kakao/error_page_more_than_max.json", .kakaoPoster(query: "x", movieCode: "20218541")),
        ("kakao/image_search_29docs_2018.json", .kakaoPoster(query: "x", movieCode: "20218541")),
        ("kakao/image_search_3docs_2023.json", .kakaoPoster(query: "x", movieCode: "20218541")),
        ("kakao/image_search_80docs_2023.json", .kakaoPoster(query: "x", movieCode: "20218541")),
        ("kakao/image_search_accuracy_2018.json", .kakaoPoster(query: "x", movieCode: "20218541")),
        ("kakao/image_search_nsdictionary_dump.txt", .kakaoPoster(query: "x", movieCode: "20218541")),
        ("openlibrary/books_api_isbn_0385472579_jscmd_data.json", .openLibraryWork(id: "OL1W", follow: .none)),
        (
            "openlibrary/search_q_apple_limit2.json",
            .openLibrarySearch(query: "apple", page: 1, limit: 2, follow: .none)
        ),
        (
            "openlibrary/search_q_denver_co.json",
            .openLibrarySearch(query: "denver,co", page: 1, limit: 20, follow: .none)
        ),
        ("openlibrary/subjects_denver.json", .openLibrarySearch(query: "denver", page: 1, limit: 20, follow: .none)),
    ]

    /// Keys that look like the tests' (so redaction shows), the public hosts.
    static let adapters: SourceAdapters = {
        var configuration = SourceConfiguration()
        configuration.tmdbAPIKey = Secret("tmdb-SECRET-0123")
        configuration.koficAPIKey = Secret("kofic-SECRET-4567")
        configuration.kakaoAPIKey = Secret("kakao-SECRET-89ab")
        return SourceAdapters(configuration: configuration)
    }()

    /// 2024-03-01T12:00:00Z in epoch milliseconds.
    static let fetchedAt: Int64 = 1_709_294_400_000

    /// Follow settings each job is parsed under.
    static let follows: [(name: String, follow: Follow)] = [
        ("none", .none),
        ("crawl", Follow(pages: 3, details: true, reviews: true, images: true, backdrops: true)),
        ("images", Follow(pages: 500, images: true)),
        ("reviews", Follow(pages: 2, reviews: true)),
    ]

    /// Synthetic TMDB bodies with the values the fast paths must treat as the old code did: escapes, blank and
    /// padded strings, Unicode whitespace, numbers as strings, odd image paths, duplicate follow-ups, bad ids.
    static let synthetic: [(name: String, job: FetchJob, body: String)] = [
        (
            "synthetic list",
            .tmdbList(list: .popular, page: 499, language: "ko-KR", region: "KR", follow: .none),
            #"""
            {"page": 499, "total_pages": 1000, "results": [
              {"id": 7, "title": "  Padded \u00e9 \"quoted\" \\ back\/slash  ", "original_title": "\u3000Ideographic\u3000",
               "overview": " ", "original_language": "ko", "release_date": "20240102", "adult": "Y", "video": "no",
               "popularity": "1,234.5", "vote_average": 6, "vote_count": 12.0, "genre_ids": [18, "x", 2.0, 35],
               "poster_path": "/a b.jpg", "backdrop_path": "/ok.jpg"},
              {"id": 7, "title": "twice", "poster_path": "/p.jpg", "backdrop_path": "/b?x.jpg"},
              {"id": "8", "title": "\t\n", "poster_path": "/\u00a0x.jpg", "backdrop_path": "/#.jpg"},
              {"id": 9.0, "title": "Nine", "poster_path": "/", "backdrop_path": " /trim.jpg "},
              {"id": -1, "title": "negative"},
              {"id": 10, "title": "\u0085NEL\u2028", "poster_path": "/\u0301combining.jpg", "backdrop_path": "/a\u2009b.jpg"},
              {"id": 11, "title": "e\u0301\ud83c\udfac", "poster_path": "/\u0600 x.jpg", "release_date": "2024-02-30"},
              {"title": "no id"}, 5, null
            ]}
            """#
        ),
        (
            "synthetic details",
            .tmdbMovie(id: 42, language: "en-US", follow: .none),
            #"""
            {"id": 42, "imdb_id": " tt0042 ", "title": "Forty\u0000two", "tagline": "\r\n", "homepage": "",
             "runtime": 0, "budget": -5, "revenue": 9007199254740993, "status": "Released",
             "vote_average": 1e1, "popularity": -0.0, "vote_count": -0,
             "belongs_to_collection": {"id": 3, "name": "c"}, "origin_country": ["US", " ", " FR "],
             "genres": [{"id": 1, "name": " Drama "}, {"id": 0, "name": "zero"}, {"id": 2}],
             "production_countries": [{"iso_3166_1": "US"}, {"iso_3166_1": ""}, {}],
             "spoken_languages": [{"iso_639_1": "en"}, 3],
             "poster_path": "/poster.jpg", "backdrop_path": "/backdrop.jpg",
             "images": {"posters": [{"iso_639_1": "fr", "file_path": "/fr.jpg"}, {"iso_639_1": " en", "file_path": "/en.jpg"}]},
             "reviews": {"page": 1, "total_pages": 4, "results": [
               {"id": "r1", "author": "A", "content": "  keep  spaces \u00e9 ", "url": "u",
                "author_details": {"name": "", "username": "u", "avatar_path": "/https://example.com/a.png", "rating": "7"}},
               {"id": "r2", "author_details": {"avatar_path": "/x.jpg", "rating": null}, "iso_639_1": "ko"},
               {"id": " ", "author": "blank id"}, {"author": "no id"}
             ]}}
            """#
        ),
    ]

    /// Every case: a name, a job and the response.
    static func cases(fixturesRoot: URL) throws -> [(name: String, job: FetchJob, response: SourceResponse)] {
        var cases: [(name: String, job: FetchJob, response: SourceResponse)] = []
        for (fixture, job) in self.fixtures {
            guard let data = FileManager.default.contents(atPath: fixturesRoot.appendingPathComponent(fixture).path)
            else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: fixture]) }
            let response = SourceResponse(
                status: 200,
                headers: [(name: "content-type", value: "application/json")],
                body: Array(data)
            )
            for (name, follow) in self.follows {
                guard let variant = job.with(follow: follow) else { continue }
                cases.append(("\(fixture) \(name)", variant, response))
            }
        }
        for (name, job, body) in self.synthetic {
            for (followName, follow) in self.follows {
                guard let variant = job.with(follow: follow) else { continue }
                cases.append(("\(name) \(followName)", variant, SourceResponse(status: 200, body: Array(body.utf8))))
            }
        }
        return cases
    }

    /// What the worker would produce for a case, one line per output (`stage key payload`), skipped follow-up
    /// or error.
    static func lines(job: FetchJob, response: SourceResponse) -> [String] {
        do {
            let result = try self.adapters.parse(response, for: job, fetchedAt: self.fetchedAt)
            func line(_ stage: String, _ key: String, _ payload: [UInt8]) -> String {
                "\(stage) \(key) \(String(decoding: payload, as: UTF8.self))"
            }
            return result.records.map { line("records", $0.dedupeKey, $0.encoded()) }
                + result.imageJobs.map { line("images", $0.dedupeKey, $0.encoded()) }
                + result.fetchJobs.map { line("fetch", $0.dedupeKey, $0.encoded()) }
                + result.skipped.map { "skipped \($0)" }
        } catch {
            return ["error \(error.code) \(error)"]
        }
    }

    static func render(fixturesRoot: URL) throws -> String {
        var text = ""
        for (name, job, response) in try self.cases(fixturesRoot: fixturesRoot) {
            text += "== \(name) \(String(decoding: job.encoded(), as: UTF8.self))\n"
            for line in self.lines(job: job, response: response) {
                // One output per line: escape the (rare) line breaks of error texts.
                text += line.replacing("\n", with: "\\n") + "\n"
            }
        }
        return text
    }
}

extension FetchJob {
    /// The job with another follow setting; `nil` for kinds without one.
    fileprivate func with(follow: Follow) -> FetchJob? {
        switch self {
        case .tmdbList(let list, let page, let language, let region, _):
            .tmdbList(list: list, page: page, language: language, region: region, follow: follow)
        case .tmdbSearch(let query, let page, let language, let year, _):
            .tmdbSearch(query: query, page: page, language: language, year: year, follow: follow)
        case .tmdbMovie(let id, let language, _): .tmdbMovie(id: id, language: language, follow: follow)
        case .tmdbReviews(let id, let page, let language, _):
            .tmdbReviews(id: id, page: page, language: language, follow: follow)
        case .koficDailyBoxOffice(let date, _): .koficDailyBoxOffice(date: date, follow: follow)
        case .koficWeeklyBoxOffice(let date, let week, _): .koficWeeklyBoxOffice(date: date, week: week, follow: follow)
        case .koficMovie(let code, _): .koficMovie(code: code, follow: follow)
        case .koficMovies(let query, let page, _): .koficMovies(query: query, page: page, follow: follow)
        case .openLibrarySearch(let query, let page, let limit, _):
            .openLibrarySearch(query: query, page: page, limit: limit, follow: follow)
        case .openLibraryWork(let id, _): .openLibraryWork(id: id, follow: follow)
        case .tmdbChanges(let start, let end, let page, let languages, _):
            .tmdbChanges(startDate: start, endDate: end, page: page, languages: languages, follow: follow)
        case .tmdbGenres, .kakaoPoster, .tmdbAccount, .tmdbAccountList: follow == .none ? self : nil
        }
    }
}
