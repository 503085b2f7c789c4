import MarqueeCore
import Testing

@testable import MarqueeSources

@Suite struct KakaoAdapterTests {
    let job = FetchJob.kakaoPoster(query: "밀수 영화 포스터", movieCode: "20218541")

    @Test func theFirstAllowedImageBecomesThePoster() throws {
        let result = try parse("kakao/image_search_80docs_2023.json", for: self.job)
        #expect(result.records.isEmpty)
        #expect(result.fetchJobs.isEmpty)
        #expect(
            result.imageJobs == [
                ImageJob(
                    url: "https://t1.daumcdn.net/cafeattach/1IHuH/f7f31ed51da240282d463ad00ef2c274d167de7a",
                    owner: "kofic:movie:20218541",
                    role: .poster
                )
            ]
        )
    }

    @Test func refusedHostsArePassedOver() throws {
        let adapters = SourceAdapters(configuration: testConfiguration, imageHostAllowed: { $0 == "blog.kakaocdn.net" })
        let result = try adapters.parse(
            try Fixtures.response("kakao/image_search_80docs_2023.json"),
            for: self.job,
            fetchedAt: testFetchedAt
        )
        #expect(
            result.imageJobs.map(\.url) == [
                "https://blog.kakaocdn.net/dn/lFc7z/btsmZfuSq5D/MoH5E18dspEhKaxJ29KilK/img.png"
            ]
        )
    }

    @Test func thumbnailsAreTheFallback() throws {
        let adapters = SourceAdapters(
            configuration: testConfiguration,
            imageHostAllowed: { $0.hasSuffix(".kakaocdn.net") && $0 != "blog.kakaocdn.net" }
        )
        let result = try adapters.parse(
            try Fixtures.response("kakao/image_search_3docs_2023.json"),
            for: self.job,
            fetchedAt: testFetchedAt
        )
        #expect(result.imageJobs.map(\.url) == ["https://search2.kakaocdn.net/argon/130x130_85_c/IH35BPGO7Sr"])
    }

    @Test func noAllowedDocumentMeansNoImageJobAndNoError() throws {
        let adapters = SourceAdapters(configuration: testConfiguration, imageHostAllowed: { _ in false })
        let result = try adapters.parse(
            try Fixtures.response("kakao/image_search_3docs_2023.json"),
            for: self.job,
            fetchedAt: testFetchedAt
        )
        #expect(result == SourceResult())
    }

    @Test func withoutAMovieCodeThereIsNoOwner() throws {
        let result = try parse("kakao/image_search_3docs_2023.json", for: .kakaoPoster(query: "드림", movieCode: nil))
        #expect(result.imageJobs.isEmpty)
        #expect(result.skipped.count == 1)
    }

    @Test func errorTypeBodiesAreBadRequests() throws {
        let error = parseError(try Fixtures.response("kakao/error_page_more_than_max.json", status: 400), for: self.job)
        #expect(error?.code == .badRequest)
        #expect(error?.reason.contains("page is more than max") == true)
        #expect(error?.isRetriable == false)
        let unauthorized = parseError(
            response(401, #"{"errorType":"AccessDeniedError","message":"wrong appKey format"}"#),
            for: self.job
        )
        #expect(unauthorized?.code == .unauthorized(.kakao))
    }

    @Test(arguments: [
        "kakao/image_search_29docs_2018.json", "kakao/image_search_accuracy_2018.json",
        "kakao/image_search_nsdictionary_dump.txt",
    ])
    func suspectBodiesAreMalformed(fixture: String) throws {
        let error = parseError(try Fixtures.response(fixture), for: self.job)
        #expect(error?.code == .malformed)
        #expect(error?.isRetriable == true)
    }
}
