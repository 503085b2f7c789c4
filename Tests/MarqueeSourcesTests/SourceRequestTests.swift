import MarqueeCore
import Testing

@testable import MarqueeSources

@Suite struct SourceRequestTests {
    static let secrets = ["tmdb-SECRET-0123", "kofic-SECRET-4567", "kakao-SECRET-89ab", "session-SECRET-cdef"]

    /// One job of every kind and the URL it must be requested with (keys shown as REDACTED).
    static let cases: [(job: FetchJob, redactedURL: String)] = [
        (
            .tmdbList(list: .nowPlaying, page: 2, language: "ko-KR", region: "KR", follow: .none),
            "https://api.themoviedb.org/3/movie/now_playing?api_key=REDACTED&language=ko-KR&page=2&region=KR"
        ),
        (
            .tmdbList(list: .topRated, page: 1, language: "en-US", region: nil, follow: .none),
            "https://api.themoviedb.org/3/movie/top_rated?api_key=REDACTED&language=en-US&page=1"
        ),
        (
            .tmdbSearch(query: "기생충", page: 1, language: "ko-KR", year: 2019, follow: .none),
            "https://api.themoviedb.org/3/search/movie?api_key=REDACTED&query=%EA%B8%B0%EC%83%9D%EC%B6%A9&language=ko-KR&page=1&year=2019&include_adult=false"
        ),
        (
            .tmdbSearch(query: "Fast & Furious + 7", page: 3, language: "en-US", year: nil, follow: .none),
            "https://api.themoviedb.org/3/search/movie?api_key=REDACTED&query=Fast%20%26%20Furious%20%2B%207&language=en-US&page=3&include_adult=false"
        ),
        (
            .tmdbMovie(id: 550, language: "en-US", follow: .none),
            "https://api.themoviedb.org/3/movie/550?api_key=REDACTED&language=en-US"
        ),
        (
            .tmdbChanges(
                startDate: "2026-11-20",
                endDate: "2026-11-26",
                page: 3,
                languages: ["en-US", "ko-KR"],
                follow: Follow(reviews: true)
            ),
            "https://api.themoviedb.org/3/movie/changes?api_key=REDACTED&start_date=2026-11-20&end_date=2026-11-26&page=3"
        ),
        (
            .tmdbMovie(id: 550, language: "ja-JP", follow: Follow(reviews: true, images: true)),
            "https://api.themoviedb.org/3/movie/550?api_key=REDACTED&language=ja-JP&append_to_response=reviews%2Cimages&include_image_language=ja%2Cnull"
        ),
        (
            .tmdbMovie(id: 550, language: "ko-KR", follow: Follow(reviews: true)),
            "https://api.themoviedb.org/3/movie/550?api_key=REDACTED&language=ko-KR&append_to_response=reviews"
        ),
        (
            .tmdbReviews(id: 278, page: 2, language: "en-US", follow: .none),
            "https://api.themoviedb.org/3/movie/278/reviews?api_key=REDACTED&language=en-US&page=2"
        ),
        (.tmdbGenres(language: "ko"), "https://api.themoviedb.org/3/genre/movie/list?api_key=REDACTED&language=ko"),
        (.tmdbAccount(account: "default"), "https://api.themoviedb.org/3/account?api_key=REDACTED&session_id=REDACTED"),
        (
            .tmdbAccountList(account: "default", accountID: 548, list: .favorite, page: 2),
            "https://api.themoviedb.org/3/account/548/favorite/movies?api_key=REDACTED&session_id=REDACTED&page=2&sort_by=created_at.asc"
        ),
        (
            .koficDailyBoxOffice(date: "20230426", follow: .none),
            "https://www.kobis.or.kr/kobisopenapi/webservice/rest/boxoffice/searchDailyBoxOfficeList.json?key=REDACTED&targetDt=20230426"
        ),
        (
            .koficWeeklyBoxOffice(date: "20120107", week: .weekdays, follow: .none),
            "https://www.kobis.or.kr/kobisopenapi/webservice/rest/boxoffice/searchWeeklyBoxOfficeList.json?key=REDACTED&targetDt=20120107&weekGb=2"
        ),
        (
            .koficMovie(code: "20124079", follow: .none),
            "https://www.kobis.or.kr/kobisopenapi/webservice/rest/movie/searchMovieInfo.json?key=REDACTED&movieCd=20124079"
        ),
        (
            .koficMovies(query: .init(openFrom: 2020, openTo: 2024), page: 2, follow: .none),
            "https://www.kobis.or.kr/kobisopenapi/webservice/rest/movie/searchMovieList.json?key=REDACTED&curPage=2&itemPerPage=100&openStartDt=2020&openEndDt=2024"
        ),
        (
            .kakaoPoster(query: "밀수 영화 포스터", movieCode: "20218541"),
            "https://dapi.kakao.com/v2/search/image?query=%EB%B0%80%EC%88%98%20%EC%98%81%ED%99%94%20%ED%8F%AC%EC%8A%A4%ED%84%B0&sort=accuracy&page=1&size=10"
        ),
        (
            .openLibrarySearch(query: "the lord of the rings", page: 2, limit: 50, follow: .none),
            "https://openlibrary.org/search.json?q=the%20lord%20of%20the%20rings&page=2&limit=50&fields=key%2Ctitle%2Cauthor_name%2Cauthor_key%2Cfirst_publish_year%2Ccover_i%2Cisbn%2Clanguage%2Csubject%2Cedition_count"
        ),
        (.openLibraryWork(id: "OL45804W", follow: .none), "https://openlibrary.org/works/OL45804W.json"),
    ]

    @Test func everyKindHasItsURL() throws {
        #expect(Set(Self.cases.map(\.job.kind)) == Set(FetchJob.kinds))
        for (job, expected) in Self.cases {
            let request = try testAdapters.request(for: job)
            #expect(request.redactedURL == expected, "\(job.kind)")
            #expect(request.source == testAdapters.source(of: job))
            #expect(request.method == "GET")
            #expect(request.description == "GET \(expected)")
            for secret in Self.secrets {
                #expect(!request.redactedURL.contains(secret))
                #expect(!request.description.contains(secret))
                #expect(!request.redactedHeaders.contains { $0.value.contains(secret) })
            }
            #expect(request.headers.contains { $0.name == "User-Agent" && $0.value == testConfiguration.userAgent })
        }
    }

    @Test func keysAreInTheURLOrHeaderOnly() throws {
        let tmdb = try testAdapters.request(for: .tmdbGenres(language: "en"))
        #expect(tmdb.url == "https://api.themoviedb.org/3/genre/movie/list?api_key=tmdb-SECRET-0123&language=en")
        let kofic = try testAdapters.request(for: .koficMovie(code: "20124079", follow: .none))
        #expect(kofic.url.contains("key=kofic-SECRET-4567&"))
        let kakao = try testAdapters.request(for: .kakaoPoster(query: "드림", movieCode: nil))
        #expect(!kakao.url.contains("SECRET"))
        #expect(kakao.headers.contains { $0.name == "Authorization" && $0.value == "KakaoAK kakao-SECRET-89ab" })
        #expect(kakao.redactedHeaders.contains { $0.name == "Authorization" && $0.value == "REDACTED" })
        let openLibrary = try testAdapters.request(for: .openLibraryWork(id: "OL1W", follow: .none))
        #expect(openLibrary.url == openLibrary.redactedURL)
    }

    @Test func keysNeedingSpecialCharactersAreEncodedAndStillRedacted() throws {
        var configuration = testConfiguration
        configuration.tmdbAPIKey = Secret("a+b&c=d")
        let request = try SourceAdapters(configuration: configuration).request(for: .tmdbGenres(language: "en"))
        #expect(request.url.contains("api_key=a%2Bb%26c%3Dd&"))
        #expect(request.redactedURL.contains("api_key=REDACTED&"))
    }

    @Test func missingKeys() {
        let adapters = SourceAdapters(configuration: SourceConfiguration())
        let expectations: [(FetchJob, Source)] = [
            (.tmdbGenres(language: "en"), .tmdb), (.koficMovie(code: "20124079", follow: .none), .kofic),
            (.kakaoPoster(query: "x", movieCode: nil), .kakao),
        ]
        for (job, source) in expectations {
            do {
                _ = try adapters.request(for: job)
                Issue.record("expected missingKey for \(source)")
            } catch {
                #expect(error.code == .missingKey(source))
                #expect(error.isRetriable == false)
            }
        }
        // Open Library needs no key.
        #expect(throws: Never.self) { try adapters.request(for: .openLibraryWork(id: "OL1W", follow: .none)) }
    }

    @Test func customBaseURLsAreUsed() throws {
        let configuration = try SourceConfiguration.fromEnvironment([
            "TMDB_BASE_URL": "http://127.0.0.1:8080/tmdb/3/", "TMDB_API_KEY": "k",
            "OPENLIBRARY_BASE_URL": "http://localhost:9000/ol",
        ])
        let adapters = SourceAdapters(configuration: configuration)
        #expect(
            try adapters.request(for: .tmdbGenres(language: "en")).url
                == "http://127.0.0.1:8080/tmdb/3/genre/movie/list?api_key=k&language=en"
        )
        #expect(
            try adapters.request(for: .openLibraryWork(id: "OL1W", follow: .none)).url
                == "http://localhost:9000/ol/works/OL1W.json"
        )
    }

    @Test func aJobForAnotherSourceIsRefused() {
        #expect(throws: SourceError.self) {
            try testAdapters.tmdb.request(for: .koficMovie(code: "20124079", follow: .none))
        }
        #expect(throws: SourceError.self) { try testAdapters.kakao.request(for: .tmdbGenres(language: "en")) }
    }

    @Test func percentEncoding() {
        #expect(
            URLBuilder.percentEncoded("ドラゴンボール") == "%E3%83%89%E3%83%A9%E3%82%B4%E3%83%B3%E3%83%9C%E3%83%BC%E3%83%AB"
        )
        #expect(URLBuilder.percentEncoded("a b&c+d=e/f?g#h%") == "a%20b%26c%2Bd%3De%2Ff%3Fg%23h%25")
        #expect(URLBuilder.percentEncoded("Az09-._~") == "Az09-._~")
    }

    @Test func theByteBuiltURLsEqualTheConcatenatedOnes() {
        // URLBuilder writes request URLs as bytes (make bench-fetch): the same URLs as the string concatenation.
        let texts = [
            "", "a", "ドラゴンボール", "a b&c+d=e/f?g#h%", "Az09-._~", "caf\u{E9}", "e\u{301}", "\r\n", "💥/💥",
        ]
        for base in ["http://127.0.0.1:8080/tmdb/3", "https://api.themoviedb.org/3", ""] {
            for path in [[], ["movie", "550"], texts] {
                for query in [
                    [], [QueryItem("api_key", "s3cr&t", isSecret: true)],
                    texts.enumerated().map { QueryItem($1, texts.reversed()[$0], isSecret: $0 % 3 == 0) },
                ] {
                    let built = URLBuilder.build(base: base, path: path, query: query)
                    let concatenated = URLBuilder.characterwiseBuild(base: base, path: path, query: query)
                    #expect(Array(built.url.utf8) == Array(concatenated.url.utf8))
                    #expect(Array(built.redactedURL.utf8) == Array(concatenated.redactedURL.utf8))
                }
            }
        }
        for text in texts {
            let encoded = URLBuilder.percentEncoded(text)
            #expect(Array(encoded.utf8) == Array(URLBuilder.characterwisePercentEncoded(text).utf8))
        }
    }

    @Test func hosts() {
        #expect(URLBuilder.host(of: "https://T1.daumcdn.net/cafeattach/x") == "t1.daumcdn.net")
        #expect(URLBuilder.host(of: "http://user@example.com:8080/x?y") == "example.com")
        #expect(
            URLBuilder.host(of: "https://dthumb-phinf.pstatic.net/?src=%22http%3A%2F%2Fa%22")
                == "dthumb-phinf.pstatic.net"
        )
        #expect(URLBuilder.host(of: "ftp://example.com/x") == nil)
        #expect(URLBuilder.host(of: "/relative") == nil)
    }
}

/// The former string-concatenating builder: the oracle `theByteBuiltURLsEqualTheConcatenatedOnes` compares the
/// byte-built URLs with.
extension URLBuilder {
    /// ``build(base:path:query:)`` through string concatenation, as it was written before.
    fileprivate static func characterwiseBuild(
        base: String,
        path: [String],
        query: [QueryItem]
    ) -> (url: String, redactedURL: String) {
        let encoded = Self.characterwisePercentEncoded
        var prefix = base
        for segment in path { prefix += "/" + encoded(segment) }
        guard !query.isEmpty else { return (prefix, prefix) }
        let plain = query.map { "\(encoded($0.name))=\(encoded($0.value))" }
        let redacted = query.map { "\(encoded($0.name))=\($0.isSecret ? "REDACTED" : encoded($0.value))" }
        return (prefix + "?" + plain.joined(separator: "&"), prefix + "?" + redacted.joined(separator: "&"))
    }

    /// ``percentEncoded(_:)`` scalar by scalar, as it was written before.
    fileprivate static func characterwisePercentEncoded(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(hex[Int(byte >> 4)])
                result.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return result
    }
}
