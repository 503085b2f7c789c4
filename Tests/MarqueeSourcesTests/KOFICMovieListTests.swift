import Foundation
import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

/// `kofic.movies`: KOFIC's catalogue (`movie/searchMovieList.json`), paged to the end of the list.
@Suite struct KOFICMovieListTests {
    /// The body written from KOFIC's documentation (Tests/Fixtures/MANIFEST.md, "written/").
    static let written = "kofic/movielist_open2020-2024_page1.json"

    static func writtenResponse() throws -> SourceResponse {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // MarqueeSourcesTests
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Fixtures/written/\(Self.written)")
        let data = try #require(FileManager.default.contents(atPath: url.path), "missing \(url.path)")
        return SourceResponse(
            status: 200,
            headers: [(name: "content-type", value: "application/json")],
            body: Array(data)
        )
    }

    static let query = FetchJob.KOFICMovieQuery(openFrom: 2020, openTo: 2024, perPage: 10)

    static func parse(
        _ response: SourceResponse,
        page: Int64 = 1,
        query: FetchJob.KOFICMovieQuery = Self.query,
        follow: Follow = .none
    )
        throws -> SourceResult
    {
        try testAdapters.parse(
            response,
            for: .koficMovies(query: query, page: page, follow: follow),
            fetchedAt: testFetchedAt
        )
    }

    static func body(total: Int, movies: [String] = []) -> SourceResponse {
        response(
            200,
            #"{"movieListResult":{"totCnt":\#(total),"source":"영화진흥위원회","movieList":[\#(movies.joined(separator: ","))]}}"#
        )
    }

    @Test func theRequestNamesThePageAndEveryFilter() throws {
        let job = FetchJob.koficMovies(
            query: .init(
                openFrom: 2020,
                openTo: 2024,
                productionFrom: 2019,
                productionTo: 2023,
                title: "서울의 봄",
                director: "김성수",
                perPage: 50
            ),
            page: 3,
            follow: .none
        )
        let request = try testAdapters.request(for: job)
        #expect(
            request.redactedURL
                == "https://www.kobis.or.kr/kobisopenapi/webservice/rest/movie/searchMovieList.json?key=REDACTED"
                + "&curPage=3&itemPerPage=50&openStartDt=2020&openEndDt=2024&prdtStartYear=2019&prdtEndYear=2023"
                + "&movieNm=%EC%84%9C%EC%9A%B8%EC%9D%98%20%EB%B4%84&directorNm=%EA%B9%80%EC%84%B1%EC%88%98"
        )
        #expect(request.url.contains("key=kofic-SECRET-4567&"))
        // Without filters: the page and its size only.
        let bare = try testAdapters.request(for: .koficMovies(query: .init(), page: 1, follow: .none))
        #expect(bare.redactedURL.hasSuffix("searchMovieList.json?key=REDACTED&curPage=1&itemPerPage=100"))
        #expect(testAdapters.source(of: job) == .kofic)
    }

    @Test func theWrittenBodyBecomesCatalogueEntries() throws {
        let result = try Self.parse(try Self.writtenResponse())
        let entries = result.records(.koficCatalogue)
        #expect(entries.count == 10)
        #expect(result.records.count == 10)
        let escape = try #require(result.record("kofic:catalogue:20248431"))
        #expect(escape.fetchedAt == testFetchedAt)
        #expect(escape.data["movie_cd"] == .string("20248431"))
        #expect(escape.data["title"] == .string("탈주"))
        #expect(escape.data["title_en"] == .string("Escape"))
        #expect(escape.data["production_year"] == .integer(2023))
        #expect(escape.data["open_date"] == .string("2024-07-03"))
        #expect(escape.data["type"] == .string("장편"))
        #expect(escape.data["production_status"] == .string("개봉"))
        #expect(escape.data["nation"] == .string("한국"))
        #expect(escape.data["genre"] == .string("액션"))
        #expect(escape.data["nations"] == .array([.string("한국")]))
        #expect(escape.data["genres"] == .array([.string("액션"), .string("드라마")]))
        #expect(escape.data["directors"] == .array([.object(["name": .string("이종필")])]))
        #expect(
            escape.data["companies"]
                == .array([
                    .object(["company_cd": .string("20122497"), "name": .string("(주)더램프")]),
                    .object(["company_cd": .string("20234417"), "name": .string("주식회사 하이브미디어코프")]),
                ])
        )
        // An empty openDt is no date; empty directors and companies are empty lists.
        let short = try #require(result.record("kofic:catalogue:2024A108"))
        #expect(short.data["open_date"] == .null)
        #expect(short.data["companies"] == .array([]))
        #expect(
            short.data["directors"] == .array([.object(["name": .string("김지민")]), .object(["name": .string("박서윤")])])
        )
        let omnibus = try #require(result.record("kofic:catalogue:20247702"))
        #expect(omnibus.data["nations"] == .array([.string("한국"), .string("프랑스")]))
        #expect((omnibus.data["directors"]?.arrayValue ?? []).count == 3)
        #expect((omnibus.data["companies"]?.arrayValue ?? []).count == 3)
        // Page 1 of 413 (4127 movies, 10 a page) queues pages 2…413, nothing else without follow flags.
        #expect(result.fetchJobs.count == 412)
        #expect(result.fetchJobs.first == .koficMovies(query: Self.query, page: 2, follow: .none))
        #expect(result.fetchJobs.last == .koficMovies(query: Self.query, page: 413, follow: .none))
        #expect(result.imageJobs.isEmpty)
        #expect(result.skipped.isEmpty)
    }

    @Test func detailsFollowEachListedMovieAndImagesGoThroughItsInfo() throws {
        let both = try Self.parse(try Self.writtenResponse(), page: 2, follow: Follow(details: true, images: true))
        // Page 2 queues no pages; each movie's info, which then searches its poster.
        #expect(both.fetchJobs.count == 10)
        #expect(both.fetchJobs.first == .koficMovie(code: "20248431", follow: Follow(images: true)))
        #expect(both.fetchJobs.contains(.koficMovie(code: "2024A108", follow: Follow(images: true))))
        #expect(both.records(.koficCatalogue).count == 10)

        let imagesOnly = try Self.parse(try Self.writtenResponse(), page: 2, follow: Follow(images: true))
        #expect(imagesOnly.fetchJobs.count == 10)
        #expect(imagesOnly.fetchJobs.first == .kakaoPoster(query: "탈주 영화 포스터", movieCode: "20248431"))

        // Page 1 with details: the rest of the list carries the same follow settings.
        let first = try Self.parse(try Self.writtenResponse(), follow: Follow(details: true))
        #expect(first.fetchJobs.count == 412 + 10)
        #expect(first.fetchJobs.contains(.koficMovies(query: Self.query, page: 413, follow: Follow(details: true))))
    }

    @Test func anEmptyPageYieldsNothingAndQueuesNothing() throws {
        let empty = try Self.parse(Self.body(total: 0))
        #expect(empty.records.isEmpty)
        #expect(empty.fetchJobs.isEmpty)
        #expect(empty.skipped.isEmpty)
        // A page past the end (the list shrank since page 1 counted it): empty, and no error.
        let past = try Self.parse(Self.body(total: 25), page: 4, follow: Follow(details: true))
        #expect(past.records.isEmpty && past.fetchJobs.isEmpty)
    }

    @Test func theLastPageQueuesNoFurtherPage() throws {
        let movie =
            #"{"movieCd":"20235974","movieNm":"서울의 봄","movieNmEn":"","prdtYear":"2023","openDt":"20231122","typeNm":"장편","prdtStatNm":"개봉","nationAlt":"한국","genreAlt":"드라마","repNationNm":"한국","repGenreNm":"드라마","directors":[],"companys":[]}"#
        // One page holds the whole list: nothing further.
        let only = try Self.parse(Self.body(total: 1, movies: [movie]))
        #expect(only.records.count == 1)
        #expect(only.fetchJobs.isEmpty)
        #expect(only.record("kofic:catalogue:20235974")?.data["title_en"] == .null)
        // The last of 3 pages queues nothing; neither does a middle page.
        #expect(try Self.parse(Self.body(total: 25, movies: [movie]), page: 3).fetchJobs.isEmpty)
        #expect(try Self.parse(Self.body(total: 25, movies: [movie]), page: 2).fetchJobs.isEmpty)
        // totCnt exactly fills 3 pages; KOFIC may send it as a string.
        let exact = try Self.parse(response(200, #"{"movieListResult":{"totCnt":"30","movieList":[]}}"#))
        #expect(
            exact.fetchJobs.map(\.dedupeKey)
                == [2, 3].map { FetchJob.koficMovies(query: Self.query, page: $0, follow: .none).dedupeKey }
        )
    }

    @Test func pagingStopsAtTheThousandPageBound() throws {
        // KOFIC's whole catalogue at 10 a page is ~10,000 pages: a crawl stops at page 1000.
        let whole = try Self.parse(Self.body(total: 95_043))
        #expect(whole.fetchJobs.count == 999)
        #expect(whole.fetchJobs.last == .koficMovies(query: Self.query, page: 1000, follow: .none))
        // A crawl bounded with last_page stops there.
        var bounded = Self.query
        bounded.lastPage = 5
        let five = try Self.parse(Self.body(total: 95_043), query: bounded)
        #expect(
            five.fetchJobs.map(\.dedupeKey)
                == (2...5).map { FetchJob.koficMovies(query: bounded, page: $0, follow: .none).dedupeKey }
        )
        // A hostile count as large as KOFIC's numbers can be still stops at the bound.
        let hostile = try Self.parse(
            response(200, #"{"movieListResult":{"totCnt":"9223372036854775807","movieList":[]}}"#)
        )
        #expect(hostile.fetchJobs.count == 999)
        // Every page it queues is one the fetch stage accepts.
        for job in whole.fetchJobs { #expect(try FetchJob.decode(job.encoded()) == job) }
    }

    @Test(arguments: [
        (#"{"movieListResult":{"totCnt":3}}"#, "unexpected JSON; expected movieListResult with totCnt and movieList"),
        (
            #"{"movieListResult":{"movieList":[]}}"#,
            "unexpected JSON; expected movieListResult with totCnt and movieList"
        ),
        (
            #"{"movieListResult":{"totCnt":-1,"movieList":[]}}"#,
            "unexpected JSON; expected movieListResult with totCnt and movieList"
        ),
        (
            #"{"movieListResult":{"totCnt":"many","movieList":[]}}"#,
            "unexpected JSON; expected movieListResult with totCnt and movieList"
        ),
        (
            #"{"boxOfficeResult":{"dailyBoxOfficeList":[]}}"#,
            "unexpected JSON; expected movieListResult with totCnt and movieList"
        ),
        ("<html>busy</html>", "the body (17 bytes) is not JSON; expected a KOFIC JSON object"),
    ])
    func aMalformedBodyIsRefusedWithWhatWasExpected(body: String, reason: String) throws {
        let error = try #require(
            parseError(response(200, body), for: .koficMovies(query: Self.query, page: 1, follow: .none))
        )
        // Malformed as for every source: retried a few times (a truncated body may come whole next time), then
        // a dead letter; never records or pages from a body that does not say how long the list is.
        #expect(error.code == .malformed)
        #expect(error.reason.contains(reason), "\(error.reason)")
    }

    @Test func faultsAreClassifiedAsForTheOtherKOFICCalls() throws {
        let job = FetchJob.koficMovies(query: Self.query, page: 1, follow: .none)
        let badKey = parseError(
            response(200, #"{"faultInfo":{"message":"유효하지않은 키값입니다.","errorCode":"320010"}}"#),
            for: job
        )
        #expect(badKey?.code == .unauthorized(.kofic))
        let quota = parseError(
            response(200, #"{"faultInfo":{"message":"키 사용량이 초과되었습니다.","errorCode":"320011"}}"#),
            for: job
        )
        #expect(quota?.code == .quotaExhausted)
        #expect(quota?.isRetriable == true)
        let parameter = parseError(
            response(200, #"{"faultInfo":{"message":"curPage 파라미터가 올바르지 않습니다.","errorCode":"320105"}}"#),
            for: job
        )
        #expect(parameter?.code == .badRequest)
        #expect(parameter?.reason.contains("curPage") == true)
    }

    @Test func anEntryWithoutACodeIsLeftOutAndNoted() throws {
        let result = try Self.parse(
            Self.body(
                total: 2,
                movies: [#"{"movieCd":"","movieNm":"이름만"}"#, #"{"movieCd":"20231866","movieNm":"괴물"}"#]
            )
        )
        #expect(result.records.map(\.key) == ["kofic:catalogue:20231866"])
        #expect(result.skipped == ["a kofic.movies entry without movieCd"])
    }
}
