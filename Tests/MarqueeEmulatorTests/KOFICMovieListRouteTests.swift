import MarqueeEmulator
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import class Foundation.JSONSerialization
import struct Foundation.URL

/// `movie/searchMovieList.json`: KOFIC's catalogue, with its filters and paging.
@Suite(.timeLimit(.minutes(2)))
struct KOFICMovieListRouteTests {
    let key = Harness.key
    let base = "/kofic/kobisopenapi/webservice/rest/movie/searchMovieList.json"

    /// The movie-list body written from KOFIC's documentation (Tests/Fixtures/MANIFEST.md, "written/").
    static func writtenFixture() throws -> Any {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/written/kofic/movielist_open2020-2024_page1.json").path
        let data = try #require(FileManager.default.contents(atPath: path), "missing \(path)")
        return try JSONSerialization.jsonObject(with: data)
    }

    private func list(_ harness: Harness, _ query: String) async throws -> (total: Int, movies: [[String: Any]]) {
        let reply = try await harness.get("\(self.base)?key=\(self.key)&\(query)")
        #expect(reply.status == 200)
        let result = try #require(try reply.object()["movieListResult"] as? [String: Any], "\(query)")
        let total = try #require(result["totCnt"] as? Int)
        return (total, try #require(result["movieList"] as? [[String: Any]]))
    }

    @Test func theListHasTheShapeOfKOFICsDocumentedBody() async throws {
        try await Harness.with { harness in
            let reply = try await harness.get("\(self.base)?key=\(self.key)&itemPerPage=100")
            #expect(reply.status == 200)
            let body = try reply.json()
            let problems = Shape.problems(body, try Self.writtenFixture())
            #expect(problems.isEmpty, "\(problems.prefix(10))")
            let result = try #require((body as? [String: Any])?["movieListResult"] as? [String: Any])
            #expect(result["source"] as? String == "영화진흥위원회")
            let movies = try #require(result["movieList"] as? [[String: Any]])
            #expect(movies.count == min(100, try #require(result["totCnt"] as? Int)))
            // KOFIC's numbers are strings, its list of companies present once a film is released.
            #expect(movies.allSatisfy { ($0["movieCd"] as? String)?.count == 8 && $0["prdtYear"] is String })
            #expect(movies.contains { !(($0["companys"] as? [Any]) ?? []).isEmpty })
        }
    }

    @Test func pagesCoverTheListOnceAndEndEmpty() async throws {
        try await Harness.with { harness in
            let first = try await self.list(harness, "itemPerPage=7&curPage=1")
            #expect(first.total > 14)
            var codes: [String] = []
            let pages = (first.total + 6) / 7
            for page in 1...pages {
                let answer = try await self.list(harness, "itemPerPage=7&curPage=\(page)")
                #expect(answer.total == first.total)
                #expect(answer.movies.count == (page < pages ? 7 : first.total - 7 * (pages - 1)))
                codes += answer.movies.compactMap { $0["movieCd"] as? String }
            }
            #expect(codes.count == first.total)
            #expect(Set(codes).count == first.total)
            let past = try await self.list(harness, "itemPerPage=7&curPage=\(pages + 1)")
            #expect(past.movies.isEmpty)
            #expect(past.total == first.total)
            // Without itemPerPage: KOFIC's default of 10.
            #expect(try await self.list(harness, "curPage=1").movies.count == 10)
        }
    }

    @Test func filtersNarrowTheList() async throws {
        try await Harness.with { harness in
            let all = try await self.list(harness, "itemPerPage=100")
            let years = all.movies.compactMap { ($0["openDt"] as? String).flatMap { Int($0.prefix(4)) } }
            let year = try #require(years.first)
            let opened = try await self.list(harness, "itemPerPage=100&openStartDt=\(year)&openEndDt=\(year)")
            #expect(opened.total > 0 && opened.total < all.total)
            #expect(opened.movies.allSatisfy { ($0["openDt"] as? String)?.hasPrefix(String(year)) == true })
            let produced = try await self.list(harness, "itemPerPage=100&prdtStartYear=\(year)&prdtEndYear=\(year)")
            #expect(produced.total > 0)
            #expect(produced.movies.allSatisfy { $0["prdtYear"] as? String == String(year) })
            // By director: the first listed movie's director finds it.
            let movie = try #require(all.movies.first)
            let director = try #require(((movie["directors"] as? [[String: Any]])?.first)?["peopleNm"] as? String)
            let encoded = try #require(director.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let byDirector = try await self.list(harness, "itemPerPage=100&directorNm=\(encoded)")
            #expect(byDirector.movies.contains { $0["movieCd"] as? String == movie["movieCd"] as? String })
            #expect(byDirector.total < all.total)
            // By title.
            let title = try #require(movie["movieNm"] as? String)
            let byTitle = try await self.list(
                harness,
                "itemPerPage=100&movieNm=\(try #require(title.addingPercentEncoding(withAllowedCharacters: .alphanumerics)))"
            )
            #expect(byTitle.movies.contains { $0["movieCd"] as? String == movie["movieCd"] as? String })
            // The list shows what the movie's info shows.
            let code = try #require(movie["movieCd"] as? String)
            let info = try await harness.get(
                "/kofic/kobisopenapi/webservice/rest/movie/searchMovieInfo.json?key=\(self.key)&movieCd=\(code)"
            ).object()
            let details = try #require((info["movieInfoResult"] as? [String: Any])?["movieInfo"] as? [String: Any])
            #expect(details["prdtYear"] as? String == movie["prdtYear"] as? String)
            #expect(((details["directors"] as? [[String: Any]])?.first)?["peopleNm"] as? String == director)
        }
    }

    @Test(arguments: [
        "curPage=0", "curPage=x", "itemPerPage=101", "itemPerPage=0", "openStartDt=20", "prdtEndYear=abcd",
    ])
    func aBadParameterIsKOFICsFault(query: String) async throws {
        try await Harness.with { harness in
            let reply = try await harness.get("\(self.base)?key=\(self.key)&\(query)")
            #expect(reply.status == 200)
            let fault = try #require(try reply.object()["faultInfo"] as? [String: Any])
            #expect(fault["errorCode"] as? String == "320105")
            let name = String(query.prefix { $0 != "=" })
            #expect((fault["message"] as? String)?.hasPrefix(name) == true)
        }
    }

    @Test func aWrongKeyIsKOFICsKeyFaultAndCallsCountAgainstTheQuota() async throws {
        var settings = EmulatorSettings()
        settings.koficDailyQuota = 2
        try await Harness.with(settings: settings) { harness in
            let wrong = try await harness.get("\(self.base)?key=wrong&curPage=1")
            #expect(wrong.status == 200)
            #expect((try wrong.object()["faultInfo"] as? [String: Any])?["errorCode"] as? String == "320010")
            for _ in 0..<2 { _ = try await self.list(harness, "curPage=1") }
            let spent = try await harness.get("\(self.base)?key=\(self.key)&curPage=3")
            #expect((try spent.object()["faultInfo"] as? [String: Any])?["errorCode"] as? String == "320011")
            #expect((try await harness.stats()["routes"] as? [String: Any])?["kofic.movieList"] as? Int == 4)
        }
    }
}
