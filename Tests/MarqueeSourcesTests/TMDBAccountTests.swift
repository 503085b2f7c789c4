import Foundation
import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

/// `tmdb.account` and `tmdb.account.list`: a signed-in user's details, ratings, favourites and watchlist, read
/// with the session the configuration holds for the job's account label.
@Suite struct TMDBAccountTests {
    static let session = "c5e1f2a9-session-SECRET-77"

    static let configuration: SourceConfiguration = {
        var configuration = testConfiguration
        configuration.tmdbSessions = ["default": Secret(Self.session)]
        return configuration
    }()

    static let adapters = SourceAdapters(configuration: Self.configuration)

    /// A body written from TMDB's documentation (Tests/Fixtures/MANIFEST.md, "written/").
    static func written(_ name: String) throws -> SourceResponse {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // MarqueeSourcesTests
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Fixtures/written/tmdb/\(name)")
        let data = try #require(FileManager.default.contents(atPath: url.path), "missing \(url.path)")
        return SourceResponse(
            status: 200,
            headers: [("content-type", "application/json;charset=utf-8")],
            body: Array(data)
        )
    }

    static func list(_ list: FetchJob.TMDBAccountList, page: Int64 = 1, asOf: Int64 = 0) -> FetchJob {
        .tmdbAccountList(account: "default", accountID: 548, list: list, page: page, asOf: asOf)
    }

    static func parse(_ response: SourceResponse, for job: FetchJob) throws -> SourceResult {
        try Self.adapters.parse(response, for: job, fetchedAt: testFetchedAt)
    }

    static func page(_ ids: [Int64], page: Int64 = 1, totalPages: Int64 = 1) -> SourceResponse {
        let items = ids.map {
            #"{"id":\#($0),"title":"Movie \#($0)","account_rating":{"created_at":"2024-01-02T03:04:05.000Z","value":7.5}}"#
        }
        return response(
            200,
            #"{"page":\#(page),"results":[\#(items.joined(separator: ","))],"total_pages":\#(totalPages),"total_results":\#(ids.count)}"#
        )
    }

    @Test func theRequestsCarryTheSessionOnlyInTheURLThatIsSent() throws {
        let details = try Self.adapters.request(for: .tmdbAccount(account: "default"))
        #expect(details.redactedURL == "https://api.themoviedb.org/3/account?api_key=REDACTED&session_id=REDACTED")
        #expect(details.url.contains("session_id=\(Self.session)"))
        #expect(!details.isConditionalAllowed)
        let rated = try Self.adapters.request(for: Self.list(.rated, page: 2))
        #expect(
            rated.redactedURL
                == "https://api.themoviedb.org/3/account/548/rated/movies?api_key=REDACTED&session_id=REDACTED&page=2&sort_by=created_at.asc"
        )
        #expect(!rated.description.contains(Self.session))
        #expect(!rated.isConditionalAllowed)
        // The other TMDB requests stay conditional.
        #expect(try Self.adapters.request(for: .tmdbGenres(language: "en-US")).isConditionalAllowed)
    }

    @Test func anAccountWithoutASessionIsAConfigurationErrorNamingTheSettings() {
        #expect(throws: SourceError.self) {
            try SourceAdapters(configuration: SourceConfiguration()).request(for: .tmdbAccount(account: "default"))
        }
        do {
            _ = try Self.adapters.request(for: .tmdbAccount(account: "family"))
            Issue.record("no error")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(error.reason.contains("'family'"))
            #expect(error.reason.contains("TMDB_SESSION_ID"))
        }
    }

    @Test func theWrittenDetailsBecomeAnAccountRecordAndQueueTheThreeLists() throws {
        let result = try Self.parse(try Self.written("account_details.json"), for: .tmdbAccount(account: "default"))
        let record = try #require(result.record("tmdb:account:default"))
        #expect(record.kind == .tmdbAccount)
        #expect(record.data["account"].string == "default")
        #expect(record.data["account_id"] == .integer(548))
        #expect(record.data["username"].string == "travisbell")
        #expect(record.data["name"].string == "Travis Bell")
        #expect(record.data["language"].string == "en")
        #expect(record.data["region"].string == "CA")
        #expect(record.data["include_adult"] == .bool(false))
        // The lists are read as this refresh, named by the time of the details answer.
        #expect(
            result.fetchJobs
                == [.rated, .favorite, .watchlist].map { Self.list($0, asOf: testFetchedAt) }
        )
    }

    @Test func theWrittenRatedPageKeepsEachRatingAndWhenItWasGiven() throws {
        let result = try Self.parse(try Self.written("account_rated_movies_page1.json"), for: Self.list(.rated))
        let records = result.records(.tmdbAccountMovie)
        #expect(records.map(\.key) == [550, 496243, 13, 1011985].map { "tmdb:account:default:rated:\($0)" })
        let parasite = try #require(result.record("tmdb:account:default:rated:496243"))
        #expect(parasite.data["rating"] == .number(10))
        #expect(parasite.data["rated_at"].string == "2024-02-03T21:07:11.000Z")
        #expect(parasite.data["title"].string == "Parasite")
        #expect(parasite.data["original_title"].string == "기생충")
        #expect(parasite.data["release_date"].string == "2019-05-30")
        #expect(parasite.data["list"].string == "rated")
        #expect(parasite.data["account_id"] == .integer(548))
        let panda = try #require(result.record("tmdb:account:default:rated:1011985"))
        #expect(panda.data["rating"] == .number(0.5))
        #expect(panda.data["release_date"] == .null)
        // Page 1 of 3 queues pages 2 and 3.
        #expect(result.fetchJobs == [Self.list(.rated, page: 2), Self.list(.rated, page: 3)])
        // No secret anywhere in what the job produced.
        for record in result.records {
            #expect(!String(decoding: record.encoded(), as: UTF8.self).contains(Self.session))
        }
    }

    @Test func aRefreshsFirstPageRecordsTheListsTotalAndItsPagesCarryTheRefresh() throws {
        let asOf: Int64 = 1_709_290_000_000
        let result = try Self.parse(
            try Self.written("account_rated_movies_page1.json"),
            for: Self.list(.rated, asOf: asOf)
        )
        let refresh = try #require(result.record("tmdb:account:default:rated:refresh:\(asOf)"))
        #expect(refresh.kind == .tmdbAccountRefresh)
        #expect(refresh.data["total"] == .integer(47))
        #expect(refresh.data["as_of"] == .integer(asOf))
        #expect(result.records(.tmdbAccountMovie).allSatisfy { $0.data["as_of"] == .integer(asOf) })
        #expect(result.fetchJobs == [Self.list(.rated, page: 2, asOf: asOf), Self.list(.rated, page: 3, asOf: asOf)])
        // A later page records no total; a page outside a refresh neither.
        let later = try Self.parse(Self.page([7], page: 2, totalPages: 3), for: Self.list(.rated, page: 2, asOf: asOf))
        #expect(later.records(.tmdbAccountRefresh).isEmpty)
        let alone = try Self.parse(Self.page([7]), for: Self.list(.rated))
        #expect(alone.records(.tmdbAccountRefresh).isEmpty)
        #expect(alone.records.first?.data["as_of"] == .integer(0))
    }

    @Test func theWrittenFavouritesAndWatchlistAreListEntriesWithoutARating() throws {
        let favourites = try Self.parse(
            try Self.written("account_favorite_movies_page1.json"),
            for: Self.list(.favorite)
        )
        #expect(favourites.records.map(\.key) == [496243, 129, 1196470].map { "tmdb:account:default:favorite:\($0)" })
        let spirited = try #require(favourites.record("tmdb:account:default:favorite:129"))
        #expect(spirited.data["original_title"].string == "千と千尋の神隠し")
        #expect(spirited.data["rating"] == nil)
        #expect(favourites.fetchJobs.isEmpty)
        let watchlist = try Self.parse(
            try Self.written("account_watchlist_movies_page1.json"),
            for: Self.list(.watchlist)
        )
        #expect(watchlist.records.count == 4)
        #expect(watchlist.records.allSatisfy { $0.data["list"].string == "watchlist" })
    }

    @Test func theOlderRatingMemberIsReadWhenTheAnswerHasNoAccountRating() throws {
        let body =
            #"{"page":1,"results":[{"id":27205,"title":"Inception","rating":8.5},{"id":3,"title":"No rating"}],"total_pages":1,"total_results":2}"#
        let result = try Self.parse(response(200, body), for: Self.list(.rated))
        // The entry without a rating is not a rating: left out.
        #expect(result.records.map(\.key) == ["tmdb:account:default:rated:27205"])
        #expect(result.records.first?.data["rating"] == .number(8.5))
        #expect(result.records.first?.data["rated_at"] == .null)
    }

    @Test func anEmptyPageYieldsNothingAndQueuesNothing() throws {
        let result = try Self.parse(
            response(200, #"{"page":1,"results":[],"total_pages":0,"total_results":0}"#),
            for: Self.list(.rated)
        )
        #expect(result.records.isEmpty)
        #expect(result.fetchJobs.isEmpty)
        #expect(result.imageJobs.isEmpty)
    }

    @Test func pagingStopsAtTMDBsLastPageWhateverTheTotalSays() throws {
        // TMDB serves pages 1…500: a list that claims 1,000 pages is read to page 500.
        let result = try Self.parse(Self.page([1], totalPages: 1000), for: Self.list(.watchlist))
        let pages = result.fetchJobs.compactMap { job -> Int64? in
            guard case .tmdbAccountList(_, _, .watchlist, let page, _) = job else { return nil }
            return page
        }
        #expect(pages == Array(2...500))
        // A later page queues nothing; the last page is a valid job.
        let last = try Self.parse(Self.page([1], page: 500, totalPages: 1000), for: Self.list(.watchlist, page: 500))
        #expect(last.fetchJobs.isEmpty)
        #expect(try Self.list(.watchlist, page: 500).checked() == Self.list(.watchlist, page: 500))
        #expect(throws: PayloadError.self) { try Self.list(.watchlist, page: 501).checked() }
    }

    @Test(arguments: [
        (
            #"{"status_code":3,"status_message":"Authentication failed: You do not have permissions to access the service.","success":false}"#,
            3
        ),
        (#"{"success":false,"status_code":17,"status_message":"Session denied."}"#, 17),
    ])
    func aRefusedSessionIsTheSessionsNotTheKeys(body: String, code: Int) throws {
        let error = try #require(parseError(response(401, body), for: Self.list(.rated), adapters: Self.adapters))
        #expect(error.code == .sessionRefused)
        #expect(error.reason.contains("status_code \(code)"))
        #expect(!error.isRetriable)
        // On a request without a session, the same 401 is not about a session.
        let other = try #require(
            parseError(response(401, body), for: .tmdbGenres(language: "en-US"), adapters: Self.adapters)
        )
        #expect(other.code != .sessionRefused)
    }

    @Test func aRefusedKeyOnAnAccountRequestIsStillTheKeys() throws {
        let body =
            #"{"status_code":7,"status_message":"Invalid API key: You must be granted a valid key.","success":false}"#
        let error = try #require(
            parseError(response(401, body), for: .tmdbAccount(account: "default"), adapters: Self.adapters)
        )
        #expect(error.code == .unauthorized(.tmdb))
    }

    @Test func aSessionEchoedInAnErrorIsScrubbed() throws {
        let body = #"{"status_code":17,"status_message":"Session denied: \#(Self.session)","success":false}"#
        let error = try #require(
            parseError(response(401, body), for: .tmdbAccount(account: "default"), adapters: Self.adapters)
        )
        #expect(!error.description.contains(Self.session))
    }

    @Test func detailsWithoutAnIdAreMalformed() throws {
        let error = try #require(
            parseError(
                response(200, #"{"username":"x"}"#),
                for: .tmdbAccount(account: "default"),
                adapters: Self.adapters
            )
        )
        #expect(error.code == .malformed)
    }
}
