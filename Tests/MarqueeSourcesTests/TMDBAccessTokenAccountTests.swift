import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

/// `tmdb.account` and `tmdb.account.list` for an account signed in by a TMDB v4 user access token: read from v4's
/// `/account/{account_object_id}/…` paths with the token alone, its refusals the account's.
@Suite struct TMDBAccessTokenAccountTests {
    static let objectID = "5b8f7e2c0e0a2656f0008e3a"
    static let token = TMDBAccessToken.make(
        subject: Self.objectID,
        claims: ["aud": .string("app-key-SECRET"), "scopes": .array([.string("api_read")]), "version": .integer(1)],
        signature: Array("token-signature-SECRET".utf8)
    )

    static let configuration: SourceConfiguration = {
        var configuration = testConfiguration
        configuration.tmdbAccessTokens = ["family": Secret(Self.token)]
        return configuration
    }()

    static let adapters = SourceAdapters(configuration: Self.configuration)

    static func list(_ list: FetchJob.TMDBAccountList, page: Int64 = 1, asOf: Int64 = 0) -> FetchJob {
        .tmdbAccountList(account: "family", accountID: .object(Self.objectID), list: list, page: page, asOf: asOf)
    }

    static func parse(_ response: SourceResponse, for job: FetchJob) throws -> SourceResult {
        try Self.adapters.parse(response, for: job, fetchedAt: testFetchedAt)
    }

    @Test func theRequestsGoToV4WithTheTokenInTheAuthorizationHeaderAlone() throws {
        let details = try Self.adapters.request(for: .tmdbAccount(account: "family"))
        #expect(details.redactedURL == "https://api.themoviedb.org/4/account/\(Self.objectID)/lists?page=1")
        #expect(details.url == details.redactedURL)
        #expect(details.headers.contains { $0.name == "Authorization" && $0.value == "Bearer \(Self.token)" })
        #expect(details.redactedHeaders.contains { $0.name == "Authorization" && $0.value == "REDACTED" })
        #expect(!details.isConditionalAllowed)
        let expected: [(FetchJob.TMDBAccountList, String)] = [
            (.rated, "rated"), (.favorite, "favorites"), (.watchlist, "watchlist"),
        ]
        for (list, path) in expected {
            let request = try Self.adapters.request(for: Self.list(list, page: 2))
            #expect(
                request.url
                    == "https://api.themoviedb.org/4/account/\(Self.objectID)/movie/\(path)?page=2&sort_by=created_at.asc"
            )
            #expect(!request.url.contains("api_key"))
            #expect(!request.description.contains(Self.token))
            #expect(!request.isConditionalAllowed)
        }
    }

    @Test func theV4BaseFollowsTheV3BaseOrItsOwnSetting() throws {
        var configuration = Self.configuration
        configuration.tmdbBaseURL = "http://127.0.0.1:9/tmdb/3"
        var request = try SourceAdapters(configuration: configuration).request(for: Self.list(.rated))
        #expect(request.url.hasPrefix("http://127.0.0.1:9/tmdb/4/account/"))
        configuration.tmdbV4BaseURL = "http://127.0.0.1:9/v4"
        request = try SourceAdapters(configuration: configuration).request(for: Self.list(.rated))
        #expect(request.url.hasPrefix("http://127.0.0.1:9/v4/account/"))
        configuration.tmdbV4BaseURL = nil
        configuration.tmdbBaseURL = "http://127.0.0.1:9/proxy"
        #expect(throws: SourceError.self) { try configuration.validate() }
    }

    @Test func theListsAnswerBecomesAnAccountRecordNamingTheObjectIDAndQueuesTheThreeLists() throws {
        let result = try Self.parse(
            try TMDBAccountTests.written("v4_account_lists_page1.json"),
            for: .tmdbAccount(account: "family")
        )
        let record = try #require(result.record("tmdb:account:family"))
        #expect(record.kind == .tmdbAccount)
        #expect(record.data["account_object_id"].string == Self.objectID)
        #expect(record.data["account_id"] == nil)
        #expect(record.data["username"] == nil)
        #expect(result.fetchJobs == [.rated, .favorite, .watchlist].map { Self.list($0, asOf: testFetchedAt) })
        // An answer that is not a page of lists is malformed, not an empty account.
        let error = try #require(
            parseError(response(200, #"{"id":548}"#), for: .tmdbAccount(account: "family"), adapters: Self.adapters)
        )
        #expect(error.code == .malformed)
    }

    @Test func theWrittenV4RatedPageKeepsEachRatingUnderTheObjectID() throws {
        let asOf: Int64 = 1_709_290_000_000
        let result = try Self.parse(
            try TMDBAccountTests.written("v4_account_rated_movies_page1.json"),
            for: Self.list(.rated, asOf: asOf)
        )
        let movies = result.records(.tmdbAccountMovie)
        #expect(movies.map(\.key) == [550, 496243, 13].map { "tmdb:account:family:rated:\($0)" })
        let parasite = try #require(result.record("tmdb:account:family:rated:496243"))
        #expect(parasite.data["rating"] == .number(10))
        #expect(parasite.data["rated_at"].string == "2024-02-03T21:07:11.000Z")
        #expect(parasite.data["account_object_id"].string == Self.objectID)
        #expect(parasite.data["account_id"] == nil)
        #expect(result.record("tmdb:account:family:rated:refresh:\(asOf)")?.data["total"] == .integer(3))
        #expect(result.fetchJobs.isEmpty)
        for record in result.records {
            #expect(!String(decoding: record.encoded(), as: UTF8.self).contains(Self.token))
        }
    }

    @Test func pagesFollowWithTheObjectIDUpToTMDBsLastPage() throws {
        let result = try Self.parse(TMDBAccountTests.page([1], totalPages: 1000), for: Self.list(.favorite))
        #expect(result.fetchJobs.count == 499)
        #expect(result.fetchJobs.first == Self.list(.favorite, page: 2))
        #expect(result.fetchJobs.last == Self.list(.favorite, page: 500))
    }

    @Test(arguments: [
        (#"{"status_code":7,"status_message":"Invalid API key: You must be granted a valid key.","success":false}"#, 7),
        (
            #"{"status_code":3,"status_message":"Authentication failed: You do not have permissions to access the service.","success":false}"#,
            3
        ),
        (#"{"success":false,"status_code":17,"status_message":"Session denied."}"#, 17),
    ])
    func everyRefusalOfATokenIsTheAccountsNotTheKeys(body: String, code: Int) throws {
        for job in [FetchJob.tmdbAccount(account: "family"), Self.list(.watchlist)] {
            let error = try #require(parseError(response(401, body), for: job, adapters: Self.adapters))
            #expect(error.code == .sessionRefused)
            #expect(error.reason.hasPrefix("the access token was refused"))
            #expect(error.reason.contains("status_code \(code)"))
        }
        let bare = try #require(parseError(response(401, ""), for: Self.list(.rated), adapters: Self.adapters))
        #expect(bare.code == .sessionRefused)
        // A 404 is not a refusal.
        let missing = #"{"status_code":34,"status_message":"The resource you requested could not be found."}"#
        let notFound = try #require(parseError(response(404, missing), for: Self.list(.rated), adapters: Self.adapters))
        #expect(notFound.code == .notFound)
    }

    @Test func aTokenEchoedInAnErrorIsScrubbed() throws {
        let body = #"{"status_code":7,"status_message":"Invalid token \#(Self.token)","success":false}"#
        let error = try #require(parseError(response(401, body), for: Self.list(.rated), adapters: Self.adapters))
        #expect(!error.description.contains(Self.token))
    }

    @Test func aJobQueuedForTheOtherSignInIsRefusedNamingWhatToDo() throws {
        var configuration = Self.configuration
        configuration.tmdbSessions = ["default": Secret("a-session-SECRET")]
        let adapters = SourceAdapters(configuration: configuration)
        let cases: [FetchJob] = [
            .tmdbAccountList(account: "family", accountID: 548, list: .rated, page: 1),
            .tmdbAccountList(account: "family", accountID: .object("0123abcd"), list: .rated, page: 1),
            .tmdbAccountList(account: "default", accountID: .object(Self.objectID), list: .rated, page: 1),
        ]
        for job in cases {
            do {
                _ = try adapters.request(for: job)
                Issue.record("\(job) was requested")
            } catch {
                #expect(error.code == .badRequest)
                #expect(error.reason.contains("enqueue tmdb-account"))
                #expect(!error.reason.contains(Self.token))
            }
        }
    }
}
