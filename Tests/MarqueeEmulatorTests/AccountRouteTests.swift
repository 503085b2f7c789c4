import MarqueeEmulator
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import class Foundation.JSONSerialization
import struct Foundation.URL

/// `GET /3/account` and the account's lists: TMDB's shapes (against the bodies written from TMDB's documentation),
/// the same account for the same session on every run, paging, and TMDB's refusals of a missing, unknown, revoked
/// or foreign session.
@Suite(.timeLimit(.minutes(2)))
struct AccountRouteTests {
    let key = Harness.key
    static let session = EmulatorSettings.defaultSession

    /// A body written from TMDB's documentation (Tests/Fixtures/MANIFEST.md, "written/").
    static func written(_ name: String) throws -> Any {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/written/tmdb/\(name)").path
        let data = try #require(FileManager.default.contents(atPath: path), "missing \(path)")
        return try JSONSerialization.jsonObject(with: data)
    }

    func accountID(_ harness: Harness, session: String = Self.session) async throws -> Int {
        let reply = try await harness.get("/tmdb/3/account?api_key=\(key)&session_id=\(session)")
        #expect(reply.status == 200)
        return try #require(try reply.object()["id"] as? Int)
    }

    func list(
        _ harness: Harness,
        _ id: Int,
        _ list: String,
        page: Int = 1,
        session: String = Self.session
    )
        async throws -> Harness.Reply
    {
        try await harness.get(
            "/tmdb/3/account/\(id)/\(list)/movies?api_key=\(key)&session_id=\(session)&page=\(page)&sort_by=created_at.asc"
        )
    }

    @Test func theDetailsAndEachListHaveTMDBsShape() async throws {
        try await Harness.with { harness in
            let details = try await harness.get("/tmdb/3/account?api_key=\(key)&session_id=\(Self.session)")
            #expect(details.status == 200)
            #expect(Shape.problems(try details.json(), try Self.written("account_details.json")) == [])
            let id = try #require(try details.object()["id"] as? Int)
            // The same answer by id.
            let byID = try await harness.get("/tmdb/3/account/\(id)?api_key=\(key)&session_id=\(Self.session)")
            #expect(byID.body == details.body)
            for (list, fixture) in [
                ("rated", "account_rated_movies_page1.json"), ("favorite", "account_favorite_movies_page1.json"),
                ("watchlist", "account_watchlist_movies_page1.json"),
            ] {
                let reply = try await self.list(harness, id, list)
                #expect(reply.status == 200)
                let problems = Shape.problems(try reply.json(), try Self.written(fixture))
                #expect(problems == [], "\(list): \(problems)")
                let results = try #require(try reply.object()["results"] as? [[String: Any]])
                #expect(!results.isEmpty, "\(list)")
                #expect(results.allSatisfy { $0["adult"] as? Bool == false })
                if list == "rated" {
                    for item in results {
                        let rating = try #require(item["account_rating"] as? [String: Any])
                        let value = try #require(rating["value"] as? Double)
                        #expect((0.5...10).contains(value) && (value * 2).rounded() == value * 2)
                        #expect((rating["created_at"] as? String)?.hasSuffix("Z") == true)
                    }
                } else {
                    #expect(results.allSatisfy { $0["account_rating"] == nil })
                }
            }
        }
    }

    @Test func theRatedListPagesTwentyAMovieOnceEachOldestFirst() async throws {
        try await Harness.with { harness in
            let id = try await self.accountID(harness)
            let first = try await self.list(harness, id, "rated").object()
            let total = try #require(first["total_results"] as? Int)
            let pages = try #require(first["total_pages"] as? Int)
            #expect((25...64).contains(total))
            #expect(pages == (total + 19) / 20)
            var ids: [Int] = []
            var times: [String] = []
            for page in 1...pages {
                let results = try #require(
                    try await self.list(harness, id, "rated", page: page).object()["results"] as? [[String: Any]]
                )
                #expect(results.count == (page < pages ? 20 : total - 20 * (pages - 1)))
                ids += results.compactMap { $0["id"] as? Int }
                times += results.compactMap { ($0["account_rating"] as? [String: Any])?["created_at"] as? String }
            }
            #expect(ids.count == total && Set(ids).count == total)
            #expect(times == times.sorted())
            // Past the end: an empty page; past 500: TMDB's refusal.
            let past = try await self.list(harness, id, "rated", page: pages + 1).object()
            #expect((past["results"] as? [Any])?.isEmpty == true)
            let refused = try await self.list(harness, id, "rated", page: 501)
            #expect(refused.status == 400)
            #expect(try refused.object()["status_code"] as? Int == 22)
        }
    }

    @Test func theSameSessionIsTheSameAccountAndAnotherSessionAnother() async throws {
        var settings = EmulatorSettings()
        settings.tmdbSessions = ["one", "two"]
        let first = try await Harness.with(settings: settings) { harness in
            (try await self.accountID(harness, session: "one"), try await self.accountID(harness, session: "two"))
        }
        let again = try await Harness.with(settings: settings) { harness in
            (try await self.accountID(harness, session: "one"), try await self.accountID(harness, session: "two"))
        }
        #expect(first == again)
        #expect(first.0 != first.1)
    }

    @Test func refusedSessionsAnswerTMDBsBodies() async throws {
        var settings = EmulatorSettings()
        settings.tmdbSessions = ["good"]
        settings.tmdbRevokedSessions = ["revoked"]
        try await Harness.with(settings: settings) { harness in
            let id = try await self.accountID(harness, session: "good")
            let cases: [(String, Int)] = [
                ("/tmdb/3/account?api_key=\(key)&session_id=revoked", 17),
                ("/tmdb/3/account?api_key=\(key)&session_id=unknown", 3),
                ("/tmdb/3/account?api_key=\(key)", 3),
                ("/tmdb/3/account/\(id + 1)/rated/movies?api_key=\(key)&session_id=good", 3),
                ("/tmdb/3/account/\(id)/watchlist/movies?api_key=\(key)&session_id=revoked", 17),
            ]
            for (path, code) in cases {
                let reply = try await harness.get(path)
                #expect(reply.status == 401, "\(path)")
                let body = try reply.object()
                #expect(body["status_code"] as? Int == code, "\(path)")
                #expect(body["success"] as? Bool == false)
                let message =
                    code == 17
                    ? "Session denied."
                    : "Authentication failed: You do not have permissions to access the service."
                #expect(body["status_message"] as? String == message)
            }
            // The key is checked first.
            let badKey = try await harness.get("/tmdb/3/account?api_key=wrong&session_id=good")
            #expect(try badKey.object()["status_code"] as? Int == 7)
            // A session revoked through /_control is refused from the next request on.
            try await harness.control(["tmdbRevokedSessions": ["good"]])
            let now = try await harness.get("/tmdb/3/account?api_key=\(key)&session_id=good")
            #expect(try now.object()["status_code"] as? Int == 17)
        }
    }
}
