import MarqueeCore
import MarqueeJSON
import Testing

@Suite struct FetchJobTests {
    static let everyKind: [FetchJob] = [
        .tmdbList(
            list: .popular,
            page: 3,
            language: "ko-KR",
            region: "KR",
            follow: Follow(pages: 5, details: true, images: true)
        ),
        .tmdbSearch(query: "기생충", page: 2, language: "ko-KR", year: 2019, follow: .none),
        .tmdbMovie(id: 550, language: "ja-JP", follow: Follow(reviews: true, images: true, backdrops: true)),
        .tmdbReviews(id: 550, page: 1, language: "en-US", follow: Follow(pages: 3)),
        .tmdbGenres(language: "en"),
        .koficDailyBoxOffice(date: "20240229", follow: Follow(details: true)),
        .koficWeeklyBoxOffice(date: "20240107", week: .weekend, follow: .none),
        .koficMovie(code: "20124079", follow: .none),
        .koficMovies(
            query: .init(openFrom: 2020, openTo: 2024, director: "봉준호", perPage: 50, lastPage: 30),
            page: 2,
            follow: Follow(details: true, images: true)
        ),
        .kakaoPoster(query: "광해, 왕이 된 남자 2012", movieCode: "20124079"),
        .openLibrarySearch(query: "swift programming", page: 1, limit: 50, follow: Follow(details: true)),
        .openLibraryWork(id: "OL45804W", follow: Follow(images: true)),
        .tmdbChanges(
            startDate: "2026-11-26",
            endDate: "2026-11-26",
            page: 2,
            languages: ["en-US", "ko-KR"],
            follow: Follow(reviews: true, images: true)
        ),
        .tmdbAccount(account: "default"),
        .tmdbAccountList(account: "family", accountID: 548, list: .rated, page: 2),
    ]

    @Test func checkedIsDecodeOfTheJobsJSON() {
        // SourceResult checks follow-ups with checked() rather than decode(json: job.json) (make bench-fetch): the
        // same jobs pass, and the others fail with the same error, valid or not in every field that can fail.
        let follows = [
            Follow.none, Follow(pages: 3, details: true), Follow(pages: 0), Follow(pages: 501, images: true),
        ]
        let languages = [
            "en-US", "ko", "", " ", "EN-us", "en-USA", "en_US", "\u{1}", String(repeating: "a", count: 11),
        ]
        let texts = [
            "기생충", "", "  ", "a\u{0}b", "\u{85}", String(repeating: "q", count: 500),
            String(repeating: "q", count: 501),
        ]
        let numbers: [Int64] = [1, 0, -1, 500, 501, Int64(Int32.max), Int64(Int32.max) + 1, Int64.min]
        var jobs = Self.everyKind + [.tmdbGenres(language: "x"), .koficMovie(code: "1", follow: .none)]
        for follow in follows {
            for language in languages {
                for number in numbers {
                    jobs += [
                        .tmdbMovie(id: number, language: language, follow: follow),
                        .tmdbReviews(id: number, page: number, language: language, follow: follow),
                        .tmdbReviews(id: 550, page: number, language: language, follow: follow),
                        .tmdbList(list: .upcoming, page: number, language: language, region: nil, follow: follow),
                    ]
                }
                for region in ["KR", "kr", "", "KOR", "\u{C5}X"] {
                    jobs.append(.tmdbList(list: .popular, page: 2, language: language, region: region, follow: follow))
                }
                for text in texts {
                    for year in [nil, 1870, 1869, 2200, 2201] as [Int64?] {
                        jobs.append(.tmdbSearch(query: text, page: 1, language: language, year: year, follow: follow))
                    }
                }
            }
        }
        for follow in follows {
            for (start, end) in [
                ("2026-11-01", "2026-11-14"), ("2026-11-01", "2026-11-15"), ("2026-11-02", "2026-11-01"),
                ("2026-02-30", "2026-03-01"), ("2026-1-1", "2026-01-02"), ("", "2026-01-01"), ("2026-01-01", " "),
                ("2026-01-01T00", "2026-01-01"), ("2024-02-29", "2024-02-29"),
            ] {
                for page: Int64 in [1, 0, 1000, 1001] {
                    for languages in [["en-US"], [], ["en-US", "en-US"], ["ko-KR", "x"], (0..<11).map { "l\($0)" }] {
                        jobs.append(
                            .tmdbChanges(
                                startDate: start,
                                endDate: end,
                                page: page,
                                languages: languages,
                                follow: follow
                            )
                        )
                    }
                }
            }
        }
        for job in jobs {
            let decoded = Result { () throws(PayloadError) in try FetchJob.decode(json: job.json) }
            let checked = Result { () throws(PayloadError) in try job.checked() }
            switch (decoded, checked) {
            case (.success(let a), .success(let b)): #expect(a == b && b == job)
            case (.failure(let a), .failure(let b)):
                #expect(a.code == b.code && a.field == b.field && "\(a)" == "\(b)", "\(job): \(a) vs \(b)")
            default: Issue.record("\(job): \(decoded) vs \(checked)")
            }
        }
    }

    @Test func theWrittenBytesAreTheEncodedJSON() {
        // FetchJob.encoded() writes the TMDB kinds member by member (make bench-fetch): byte for byte what
        // json.encoded() writes, for every kind and the optional fields and follow settings.
        let follows = [
            Follow.none, Follow(pages: 3), Follow(details: true), Follow(reviews: true, images: true),
            Follow(pages: 500, details: true, reviews: true, images: true, backdrops: true), Follow(backdrops: true),
        ]
        var jobs = Self.everyKind
        for follow in follows {
            for text in ["en-US", "caf\u{E9} \"q\" \\ \u{1}", "", "ドラゴンボール"] {
                jobs += [
                    .tmdbList(list: .popular, page: 2, language: text, region: nil, follow: follow),
                    .tmdbList(list: .nowPlaying, page: 500, language: "ko-KR", region: text, follow: follow),
                    .tmdbSearch(query: text, page: 1, language: "en-US", year: nil, follow: follow),
                    .tmdbSearch(query: text, page: -1, language: text, year: 1999, follow: follow),
                    .tmdbMovie(id: Int64.max, language: text, follow: follow),
                    .tmdbMovie(id: Int64.min, language: "en", follow: follow),
                    .tmdbReviews(id: 550, page: 7, language: text, follow: follow),
                ]
            }
        }
        for job in jobs {
            #expect(job.encoded() == job.json.encoded(), "\(job)")
        }
    }

    @Test(arguments: everyKind)
    func everyKindSurvivesARoundTrip(job: FetchJob) throws {
        let decoded = try FetchJob.decode(job.encoded())
        #expect(decoded == job)
        #expect(FetchJob.kinds.contains(job.kind))
    }

    @Test func everyKindOfTheDesignIsCovered() {
        #expect(Set(Self.everyKind.map(\.kind)) == Set(FetchJob.kinds))
    }

    @Test func dedupeKeysNameTheEntity() {
        #expect(FetchJob.tmdbMovie(id: 550, language: "ko-KR", follow: .none).dedupeKey == "tmdb:movie:550:ko-KR")
        #expect(FetchJob.koficDailyBoxOffice(date: "20240101", follow: .none).dedupeKey == "kofic:daily:20240101")
        #expect(FetchJob.openLibraryWork(id: "OL1W", follow: .none).dedupeKey == "openlibrary:work:OL1W")
        #expect(
            FetchJob.tmdbChanges(
                startDate: "2026-11-20",
                endDate: "2026-11-26",
                page: 7,
                languages: ["en"],
                follow: .none
            )
            .dedupeKey == "tmdb:changes:2026-11-20:2026-11-26:7"
        )
        // The follow settings do not change which entity a job is about.
        #expect(
            FetchJob.tmdbMovie(id: 1, language: "en-US", follow: Follow(reviews: true)).dedupeKey
                == FetchJob.tmdbMovie(id: 1, language: "en-US", follow: .none).dedupeKey
        )
    }

    @Test func backdropsAreWrittenOnlyWhenAskedFor() throws {
        let posters = FetchJob.tmdbMovie(id: 550, language: "en-US", follow: Follow(images: true))
        #expect(!String(decoding: posters.encoded(), as: UTF8.self).contains("backdrops"))
        let both = FetchJob.tmdbMovie(id: 550, language: "en-US", follow: Follow(images: true, backdrops: true))
        #expect(String(decoding: both.encoded(), as: UTF8.self).contains(#""backdrops":true"#))
    }

    @Test func defaultsFillOptionalFields() throws {
        let job = try FetchJob.decode(Array(#"{"v":1,"kind":"tmdb.list","list":"upcoming"}"#.utf8))
        #expect(job == .tmdbList(list: .upcoming, page: 1, language: "en-US", region: nil, follow: .none))
    }

    @Test(arguments: [
        (#"{"v":1,"kind":"tmdb.movie","id":550,"idd":3}"#, PayloadError.Code.unknownField, "idd"),
        (#"{"v":1,"kind":"tmdb.movie"}"#, .missingField, "id"),
        (#"{"v":1,"kind":"tmdb.movie","id":"550"}"#, .invalidField, "id"),
        (#"{"v":1,"kind":"tmdb.movie","id":-3}"#, .invalidField, "id"),
        (#"{"v":1,"kind":"tmdb.movie","id":1.5}"#, .invalidField, "id"),
        (#"{"v":1,"kind":"tmdb.list","list":"popular","page":501}"#, .invalidField, "page"),
        (#"{"v":1,"kind":"tmdb.list","list":"best"}"#, .invalidField, "list"),
        (#"{"v":1,"kind":"tmdb.list","list":"popular","language":"korean"}"#, .invalidField, "language"),
        (#"{"v":1,"kind":"tmdb.list","list":"popular","follow":{"pages":0}}"#, .invalidField, "follow.pages"),
        (#"{"v":1,"kind":"tmdb.list","list":"popular","follow":{"deep":true}}"#, .unknownField, "follow.deep"),
        (#"{"v":1,"kind":"tmdb.list","list":"popular","follow":[]}"#, .invalidField, "follow"),
        (#"{"v":1,"kind":"tmdb.search","query":"   "}"#, .invalidField, "query"),
        (#"{"v":1,"kind":"tmdb.search","query":"a\u0000b"}"#, .invalidField, "query"),
        (#"{"v":1,"kind":"kofic.boxoffice.daily","date":"20230230"}"#, .invalidField, "date"),
        (#"{"v":1,"kind":"kofic.boxoffice.daily","date":"2023-01-01"}"#, .invalidField, "date"),
        (#"{"v":1,"kind":"kofic.boxoffice.weekly","date":"20230101","week":3}"#, .invalidField, "week"),
        (#"{"v":1,"kind":"kofic.movie","movie_cd":"2012407x"}"#, .invalidField, "movie_cd"),
        (#"{"v":1,"kind":"kofic.movies","open_from":2024,"open_to":2020}"#, .invalidField, "open_to"),
        (#"{"v":1,"kind":"kofic.movies","per_page":101}"#, .invalidField, "per_page"),
        (#"{"v":1,"kind":"kofic.movies","page":1001}"#, .invalidField, "page"),
        (#"{"v":1,"kind":"kofic.movies","follow":{"pages":3}}"#, .invalidField, "follow.pages"),
        (#"{"v":1,"kind":"openlibrary.work","id":"OL45804M"}"#, .invalidField, "id"),
        (#"{"v":1,"kind":"netflix.list"}"#, .unknownKind, "kind"),
        (#"{"v":2,"kind":"tmdb.genres"}"#, .unsupportedVersion, "v"),
        (#"{"kind":"tmdb.genres"}"#, .missingField, "v"),
    ])
    func invalidPayloadsNameTheirField(payload: String, code: PayloadError.Code, field: String) throws {
        let error = try #require(throws: PayloadError.self) { try FetchJob.decode(Array(payload.utf8)) }
        #expect(error.code == code)
        #expect(error.field == field)
        #expect(error.description.contains(field))
    }

    @Test func rangeErrorsSayWhatWasExpected() throws {
        let error = try #require(throws: PayloadError.self) {
            try FetchJob.decode(Array(#"{"v":1,"kind":"tmdb.list","list":"popular","page":-3}"#.utf8))
        }
        #expect(error.description == "field 'page': expected an integer from 1 to 500, got -3")
    }

    @Test(arguments: [
        (
            #"{"v":1,"kind":"kofic.boxoffice.daily","date":"2023-01-01"}"#,
            "field 'date': longer than 8 characters (expected a date as yyyyMMdd)"
        ),
        (
            #"{"v":1,"kind":"kofic.boxoffice.weekly","date":"   ","week":0}"#,
            "field 'date': must not be empty (expected a date as yyyyMMdd)"
        ),
        (
            #"{"v":1,"kind":"kofic.boxoffice.daily","date":"2023\u0000"}"#,
            "field 'date': contains control characters (expected a date as yyyyMMdd)"
        ),
        (
            #"{"v":1,"kind":"kofic.boxoffice.daily","date":"2023-1-1"}"#,
            "field 'date': expected a date as yyyyMMdd, got '2023-1-1'"
        ),
        (
            #"{"v":1,"kind":"kofic.movie","movie_cd":"201240791"}"#,
            "field 'movie_cd': longer than 8 characters (expected an 8-character KOFIC movie code such as 20183782)"
        ),
    ])
    func stringErrorsNameTheExpectedForm(payload: String, message: String) throws {
        let error = try #require(throws: PayloadError.self) { try FetchJob.decode(Array(payload.utf8)) }
        #expect(error.description == message)
    }

    @Test(arguments: [[UInt8]("not json".utf8), [0xFF, 0xFE, 0x7B], [], Array("[1,2]".utf8), Array("null".utf8)])
    func unreadableBytesAreRefusedAsAWhole(bytes: [UInt8]) throws {
        let error = try #require(throws: PayloadError.self) { try FetchJob.decode(bytes) }
        #expect(error.code == .notJSON || error.code == .invalidField)
        #expect(error.field == nil)
    }
}
