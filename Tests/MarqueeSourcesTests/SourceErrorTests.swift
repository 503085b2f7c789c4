import MarqueeCore
import Testing

@testable import MarqueeSources

@Suite struct SourceErrorTests {
    static let tmdbJob = FetchJob.tmdbMovie(id: 550, language: "en-US", follow: .none)
    static let koficJob = FetchJob.koficDailyBoxOffice(date: "20230426", follow: .none)
    static let kakaoJob = FetchJob.kakaoPoster(query: "드림", movieCode: "20198482")
    static let openLibraryJob = FetchJob.openLibrarySearch(query: "apple", page: 1, limit: 10, follow: .none)
    static let everyJob = [tmdbJob, koficJob, kakaoJob, openLibraryJob]

    @Test(arguments: everyJob)
    func tooManyRequestsIsRateLimitedWithRetryAfterSeconds(job: FetchJob) throws {
        let error = try #require(parseError(response(429, "", headers: [(name: "retry-after", value: "30")]), for: job))
        #expect(error.code == .rateLimited)
        #expect(error.retryAfter == .seconds(30))
        #expect(error.isRetriable)
        #expect(error.status == 429)
        #expect(error.source == testAdapters.source(of: job))
    }

    @Test func retryAfterAsAnHTTPDate() throws {
        // testFetchedAt is Fri, 01 Mar 2024 12:00:00 GMT.
        let later = response(429, "{}", headers: [(name: "Retry-After", value: "Fri, 01 Mar 2024 12:02:00 GMT")])
        #expect(parseError(later, for: Self.tmdbJob)?.retryAfter == .seconds(120))
        let past = response(429, "{}", headers: [(name: "retry-after", value: "Thu, 29 Feb 2024 12:00:00 GMT")])
        #expect(parseError(past, for: Self.tmdbJob)?.retryAfter == .zero)
        let garbage = response(429, "{}", headers: [(name: "retry-after", value: "soon")])
        #expect(parseError(garbage, for: Self.tmdbJob)?.retryAfter == nil)
        #expect(RetryAfter.httpDate("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
    }

    @Test(arguments: everyJob)
    func serverErrorsAreUnavailable(job: FetchJob) throws {
        for status in [500, 502, 503, 504] {
            let error = try #require(parseError(response(status, "<html>Bad Gateway</html>"), for: job))
            #expect(error.code == .unavailable)
            #expect(error.isRetriable)
        }
    }

    @Test(arguments: everyJob)
    func truncatedBodiesAreMalformed(job: FetchJob) throws {
        for body in ["", "{\"results\": [", "<html></html>", "[]", "{}"] {
            let error = try #require(parseError(response(200, body), for: job), "body \(body)")
            #expect(error.code == .malformed, "body \(body)")
            #expect(error.isRetriable)
        }
    }

    @Test(arguments: everyJob)
    func clientErrorsByStatus(job: FetchJob) throws {
        #expect(parseError(response(401, "{}"), for: job)?.code == .unauthorized(testAdapters.source(of: job)))
        #expect(parseError(response(403, ""), for: job)?.code == .unauthorized(testAdapters.source(of: job)))
        #expect(parseError(response(404, "not found"), for: job)?.code == .notFound)
        #expect(parseError(response(400, "{}"), for: job)?.code == .badRequest)
        #expect(parseError(response(422, "{}"), for: job)?.isRetriable == false)
        #expect(parseError(response(304, ""), for: job)?.code == .unavailable)
    }

    // MARK: - TMDB bodies

    @Test func tmdbInvalidKey() throws {
        let body =
            #"{"status_code":7,"status_message":"Invalid API key: You must be granted a valid key.","success":false}"#
        let error = try #require(parseError(response(401, body), for: Self.tmdbJob))
        #expect(error.code == .unauthorized(.tmdb))
        #expect(error.reason.contains("Invalid API key"))
        #expect(error.isRetriable == false)
        // The same body with a 200 (some proxies) is still unauthorized; so is status_code 10.
        #expect(parseError(response(200, body), for: Self.tmdbJob)?.code == .unauthorized(.tmdb))
        let suspended = #"{"status_code":10,"status_message":"Suspended API key","success":false}"#
        #expect(parseError(response(401, suspended), for: Self.tmdbJob)?.code == .unauthorized(.tmdb))
    }

    @Test func tmdbNotFound() {
        let body =
            #"{"success":false,"status_code":34,"status_message":"The resource you requested could not be found."}"#
        #expect(parseError(response(404, body), for: Self.tmdbJob)?.code == .notFound)
    }

    @Test func tmdbErrorsArrayIsABadRequest() throws {
        let job = FetchJob.tmdbSearch(query: "x", page: 1, language: "en-US", year: nil, follow: .none)
        for status in [200, 422] {
            let error = try #require(
                parseError(try Fixtures.response("tmdb/search_movie_error_no_query.json", status: status), for: job)
            )
            #expect(error.code == .badRequest)
            #expect(error.reason == "query must be provided")
        }
    }

    // MARK: - KOFIC bodies

    @Test func koficInvalidKey() throws {
        let body = #"{"faultInfo":{"message":"유효하지않은 키값입니다.","errorCode":"320010"}}"#
        let error = try #require(parseError(response(200, body), for: Self.koficJob))
        #expect(error.code == .unauthorized(.kofic))
        #expect(error.reason.contains("유효하지않은 키값입니다."))
    }

    @Test func koficQuota() throws {
        let body = #"{"faultInfo":{"message":"일일 사용량을 초과하였습니다.","errorCode":"320011"}}"#
        let error = try #require(parseError(response(200, body), for: Self.koficJob))
        #expect(error.code == .quotaExhausted)
        #expect(error.isRetriable)
        #expect(error.retryAfter == .seconds(3 * 3600))
        let byMessage = #"{"faultInfo":{"message":"키 사용량 초과","errorCode":"320999"}}"#
        #expect(parseError(response(200, byMessage), for: Self.koficJob)?.code == .quotaExhausted)
    }

    @Test func koficOtherFaults() {
        let body = #"{"faultInfo":{"message":"날짜 형식이 올바르지 않습니다.","errorCode":"320105"}}"#
        #expect(parseError(response(200, body), for: Self.koficJob)?.code == .badRequest)
    }

    @Test func koficEmptyMovieInfoIsNotFound() {
        let job = FetchJob.koficMovie(code: "99999999", follow: .none)
        #expect(
            parseError(response(200, #"{"movieInfoResult":{"movieInfo":{},"source":"영화진흥위원회"}}"#), for: job)?.code
                == .notFound
        )
        #expect(parseError(response(200, #"{"movieInfoResult":{"source":"영화진흥위원회"}}"#), for: job)?.code == .notFound)
        #expect(parseError(response(200, #"{"boxOfficeResult":{}}"#), for: job)?.code == .malformed)
    }

    // MARK: - Secrets

    @Test func noErrorDescriptionContainsAKey() throws {
        let secrets = ["tmdb-SECRET-0123", "kofic-SECRET-4567", "kakao-SECRET-89ab"]
        // Upstreams that echo the key back.
        let bodies: [(FetchJob, SourceResponse)] = [
            (
                Self.tmdbJob,
                response(401, #"{"status_code":7,"status_message":"Invalid API key tmdb-SECRET-0123","success":false}"#)
            ),
            (
                Self.koficJob,
                response(200, #"{"faultInfo":{"message":"bad key kofic-SECRET-4567","errorCode":"320010"}}"#)
            ),
            (
                Self.kakaoJob,
                response(401, #"{"errorType":"AccessDeniedError","message":"KakaoAK kakao-SECRET-89ab is wrong"}"#)
            ),
            (Self.tmdbJob, response(500, #"{"status_message":"oops tmdb-SECRET-0123"}"#)),
            (Self.openLibraryJob, response(400, #"{"error":"kakao-SECRET-89ab"}"#)),
        ]
        for (job, response) in bodies {
            let error = try #require(parseError(response, for: job))
            for secret in secrets {
                #expect(!error.description.contains(secret), "\(error)")
                #expect(!String(reflecting: error).contains(secret))
            }
            #expect(error.description.contains("REDACTED"))
        }
        #expect(throws: SourceError.self) {
            try SourceAdapters(configuration: SourceConfiguration()).request(for: Self.tmdbJob)
        }
    }

    @Test func secretsNeverPrint() {
        let secret = Secret("hunter2")
        #expect("\(secret)" == "<redacted>")
        #expect(String(reflecting: secret) == "<redacted>")
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("hunter2"))
        var configurationDump = ""
        dump(testConfiguration, to: &configurationDump)
        #expect(!configurationDump.contains("SECRET"))
        #expect(secret.revealed == "hunter2")
    }

    @Test func descriptionNamesSourceCodeAndStatus() {
        let error = SourceError(.rateLimited, source: .tmdb, "rate limited", status: 429, retryAfter: .seconds(5))
        #expect(error.description == "tmdb rateLimited: rate limited (HTTP 429) (retry after 5 s)")
        #expect(SourceError.Code.unauthorized(.kofic).description == "unauthorized(kofic)")
        #expect(SourceError.Code.unauthorized(.kofic).isSameKind(as: .unauthorized(.tmdb)))
        #expect(SourceError.Code.unauthorized(.kofic) != .unauthorized(.tmdb))
    }
}
