import MarqueeEmulator
import Testing

/// Every route answers with the shape of the matching real response (Tests/Fixtures).
@Suite(.timeLimit(.minutes(2)))
struct RouteShapeTests {
    let key = Harness.key

    private func check(
        _ path: String,
        against fixture: String,
        headers: [String: String] = [:],
        allowExtra: Set<String> = [],
        harness: Harness
    ) async throws {
        let reply = try await harness.get(path, headers: headers)
        #expect(reply.status == 200, "\(path): \(String(decoding: reply.body, as: UTF8.self).prefix(300))")
        let problems = Shape.problems(try reply.json(), try Fixtures.json(fixture), allowExtra: allowExtra)
        #expect(problems.isEmpty, "\(path) vs \(fixture): \(problems.prefix(10))")
    }

    @Test func tmdbRoutesHaveTheFixtureShapes() async throws {
        try await Harness.with { harness in
            let popular = try await harness.get("/tmdb/3/movie/popular?api_key=\(key)").object()
            let results = try #require(popular["results"] as? [[String: Any]])
            #expect(results.count == 20)
            let id = try #require(results.first?["id"] as? Int)
            try await check(
                "/tmdb/3/movie/popular?api_key=\(key)&page=2",
                against: "tmdb/movie_popular_2020-07.json",
                harness: harness
            )
            try await check(
                "/tmdb/3/movie/top_rated?api_key=\(key)",
                against: "tmdb/movie_top_rated_2023.json",
                harness: harness
            )
            try await check(
                "/tmdb/3/movie/now_playing?api_key=\(key)",
                against: "tmdb/movie_now_playing_2022-06.json",
                harness: harness
            )
            try await check(
                "/tmdb/3/movie/upcoming?api_key=\(key)",
                against: "tmdb/movie_now_playing_2022-06.json",
                harness: harness
            )
            try await check(
                "/tmdb/3/search/movie?api_key=\(key)&query=a",
                against: "tmdb/search_movie_fast.json",
                harness: harness
            )
            try await check(
                "/tmdb/3/movie/\(id)?api_key=\(key)",
                against: "tmdb/movie_271110_details.json",
                harness: harness
            )
            try await check(
                "/tmdb/3/genre/movie/list?api_key=\(key)",
                against: "tmdb/genre_movie_list.json",
                harness: harness
            )
            try await check(
                "/tmdb/3/configuration?api_key=\(key)",
                against: "tmdb/configuration.json",
                harness: harness
            )
            // Reviews: find a movie with some.
            var reviewed = false
            for result in results {
                let movie = try #require(result["id"] as? Int)
                let reply = try await harness.get(
                    "/tmdb/3/movie/\(movie)/reviews",
                    headers: ["Authorization": "Bearer \(key)"]
                )
                let object = try reply.object()
                guard (object["total_results"] as? Int ?? 0) > 0 else { continue }
                let problems = Shape.problems(object, try Fixtures.json("tmdb/movie_278_reviews.json"))
                #expect(problems.isEmpty, "reviews: \(problems.prefix(10))")
                reviewed = true
                break
            }
            #expect(reviewed, "no movie among the popular ones has reviews")
            // Search without a query: the fixture's error body.
            let noQuery = try await harness.get("/tmdb/3/search/movie?api_key=\(key)")
            #expect(noQuery.status == 422)
            #expect(
                Shape.problems(try noQuery.json(), try Fixtures.json("tmdb/search_movie_error_no_query.json")).isEmpty
            )
            // Unknown movie.
            let missing = try await harness.get("/tmdb/3/movie/1?api_key=\(key)").object()
            #expect(missing["status_code"] as? Int == 34)
            // Details with images and reviews appended.
            let details = try await harness.get("/tmdb/3/movie/\(id)?api_key=\(key)&append_to_response=reviews,images")
                .object()
            #expect(details["images"] is [String: Any])
            #expect(details["reviews"] is [String: Any])
        }
    }

    @Test func koficKakaoAndOpenLibraryHaveTheFixtureShapes() async throws {
        try await Harness.with { harness in
            let base = "/kofic/kobisopenapi/webservice/rest"
            let daily = try await harness.get(
                "\(base)/boxoffice/searchDailyBoxOfficeList.json?key=\(key)&targetDt=20240110"
            )
            let dailyObject = try daily.object()
            let list = try #require(
                (dailyObject["boxOfficeResult"] as? [String: Any])?["dailyBoxOfficeList"] as? [[String: Any]]
            )
            #expect(list.count == 10)
            #expect(Shape.problems(dailyObject, try Fixtures.json("kofic/daily_20230426.json")).isEmpty)
            let code = try #require(list.first?["movieCd"] as? String)
            #expect(code.count == 8)
            try await check(
                "\(base)/movie/searchMovieInfo.json?key=\(key)&movieCd=\(code)",
                against: "kofic/movieinfo_20124079.json",
                harness: harness
            )
            let weekly = try await harness.get(
                "\(base)/boxoffice/searchWeeklyBoxOfficeList.json?key=\(key)&targetDt=20240110&weekGb=0"
            ).object()
            let weeklyResult = try #require(weekly["boxOfficeResult"] as? [String: Any])
            #expect(weeklyResult["boxofficeType"] as? String == "주간 박스오피스")
            #expect(weeklyResult["yearWeekTime"] as? String == "202402")
            #expect((weeklyResult["weeklyBoxOfficeList"] as? [Any])?.isEmpty == false)
            try await check(
                "/kakao/v2/search/image?query=%EC%98%81%ED%99%94&size=5",
                against: "kakao/image_search_80docs_2023.json",
                headers: ["Authorization": "KakaoAK \(key)"],
                harness: harness
            )
            let tooFar = try await harness.get(
                "/kakao/v2/search/image?query=x&page=51",
                headers: ["Authorization": "KakaoAK \(key)"]
            )
            #expect(tooFar.status == 400)
            #expect(Shape.problems(try tooFar.json(), try Fixtures.json("kakao/error_page_more_than_max.json")).isEmpty)
            // Open Library documents carry `subject`, which the recorded search did not ask for.
            try await check(
                "/openlibrary/search.json?q=the&limit=5",
                against: "openlibrary/search_q_denver_co.json",
                allowExtra: ["subject", "title_sort"],
                harness: harness
            )
        }
    }
}
