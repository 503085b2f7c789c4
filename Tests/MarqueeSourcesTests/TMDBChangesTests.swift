import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

/// `GET /movie/changes`: ids become detail refreshes in each language, page 1 queues the rest of the feed up to
/// its 1,000-page bound, and a body without `results` is malformed.
@Suite struct TMDBChangesTests {
    static func job(page: Int64 = 1, languages: [String] = ["en-US", "ko-KR"], follow: Follow = .none) -> FetchJob {
        .tmdbChanges(startDate: "2026-11-26", endDate: "2026-11-26", page: page, languages: languages, follow: follow)
    }

    /// A page shaped as TMDB documents the feed (no recorded body of this endpoint is among the shared
    /// fixtures): `results` of `{id, adult}`, then `page`, `total_pages`, `total_results`.
    static func body(ids: [(Int64, Bool?)], page: Int64 = 1, totalPages: Int64 = 1) -> String {
        let items = ids.map { id, adult in
            adult.map { #"{"id":\#(id),"adult":\#($0)}"# } ?? #"{"id":\#(id)}"#
        }
        return #"{"results":[\#(items.joined(separator: ","))],"page":\#(page),"total_pages":\#(totalPages),"#
            + #""total_results":\#(ids.count)}"#
    }

    static func parsed(_ body: String, for job: FetchJob) throws -> SourceResult {
        try testAdapters.parse(response(200, body), for: job, fetchedAt: testFetchedAt)
    }

    @Test func eachChangedIdIsRefreshedInEachLanguageWithTheJobsFollowFlags() throws {
        let follow = Follow(pages: 5, details: true, reviews: true, images: true)
        let body = Self.body(ids: [(1_120_293, false), (550, nil), (99, true), (0, false)])
        let result = try Self.parsed(body, for: Self.job(follow: follow))
        #expect(result.records.isEmpty)
        #expect(result.imageJobs.isEmpty)
        // Details are what the feed queues, so they follow reviews and images but never further details; the
        // adult title (99) and the id 0 are left out.
        let detailFollow = Follow(reviews: true, images: true)
        #expect(
            result.fetchJobs == [
                .tmdbMovie(id: 1_120_293, language: "en-US", follow: detailFollow),
                .tmdbMovie(id: 1_120_293, language: "ko-KR", follow: detailFollow),
                .tmdbMovie(id: 550, language: "en-US", follow: detailFollow),
                .tmdbMovie(id: 550, language: "ko-KR", follow: detailFollow),
            ]
        )
    }

    @Test func anEmptyPageIsAnEmptyDay() throws {
        let result = try Self.parsed(#"{"results":[],"page":1,"total_pages":0,"total_results":0}"#, for: Self.job())
        #expect(result.records.isEmpty)
        #expect(result.fetchJobs.isEmpty)
        #expect(result.imageJobs.isEmpty)
    }

    @Test func pageOneQueuesTheOtherPagesWithTheSameWindowAndLanguages() throws {
        let result = try Self.parsed(Self.body(ids: [(7, false)], totalPages: 3), for: Self.job())
        let pages = result.fetchJobs.filter { $0.kind == "tmdb.changes" }
        #expect(pages == [Self.job(page: 2), Self.job(page: 3)])
        // A later page queues no pages (page 1 queued them all).
        let later = try Self.parsed(Self.body(ids: [(7, false)], page: 2, totalPages: 3), for: Self.job(page: 2))
        #expect(later.fetchJobs.allSatisfy { $0.kind == "tmdb.movie" })
    }

    @Test func theFeedIsReadUpToItsThousandthPage() throws {
        let result = try Self.parsed(Self.body(ids: [], totalPages: 4_321), for: Self.job(languages: ["en-US"]))
        let pages = result.fetchJobs.compactMap { job -> Int64? in
            guard case .tmdbChanges(_, _, let page, _, _) = job else { return nil }
            return page
        }
        #expect(pages == Array(2...1000))
        // The thousandth page itself queues nothing and is a valid job.
        let last = try Self.parsed(
            Self.body(ids: [(5, false)], page: 1000, totalPages: 4_321),
            for: Self.job(page: 1000)
        )
        #expect(last.fetchJobs.allSatisfy { $0.kind == "tmdb.movie" })
        #expect(try Self.job(page: 1000).checked() == Self.job(page: 1000))
    }

    @Test(arguments: [
        #"{"page":1,"total_pages":1}"#, #"{"results":{"id":5},"page":1}"#, "[1,2,3]", "not json", "",
    ])
    func aBodyWithoutResultsIsMalformed(body: String) {
        let error = parseError(response(200, body), for: Self.job())
        #expect(error?.code == .malformed, "\(body): \(String(describing: error))")
        #expect(error.map { "\($0)".contains("tmdb-SECRET") } == false)
    }

    @Test func tmdbsRefusalOfALongWindowIsABadRequest() {
        // TMDB answers a window over 14 days with 422 and its status_code 20.
        let body =
            #"{"success":false,"status_code":20,"#
            + #""status_message":"Invalid date range: Should be a range no longer than 14 days."}"#
        let error = parseError(response(422, body), for: Self.job())
        #expect(error?.code == .badRequest)
        #expect(error?.isRetriable == false)
        #expect(error.map { "\($0)".contains("no longer than 14 days") } == true)
    }
}
