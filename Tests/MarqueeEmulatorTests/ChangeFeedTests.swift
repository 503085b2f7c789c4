import MarqueeEmulator
import Testing

import class Foundation.NSNull

/// `GET /3/movie/changes`: TMDB's shape and limits, a deterministic set of changed movies a day, and details that
/// differ from the day a movie changes (200 to a conditional request), and not for the others (304).
@Suite(.timeLimit(.minutes(2)))
struct ChangeFeedTests {
    let key = Harness.key

    static func reference(seed: UInt64 = 7, movies: Int = 300) -> Day {
        Catalogue(CatalogueConfiguration(seed: seed, movies: movies, books: 10)).referenceDay
    }

    func feed(_ harness: Harness, _ start: Day, _ end: Day, page: Int = 1) async throws -> Harness.Reply {
        try await harness.get(
            "/tmdb/3/movie/changes?api_key=\(key)&start_date=\(start.iso)&end_date=\(end.iso)&page=\(page)"
        )
    }

    func ids(_ reply: Harness.Reply) throws -> [Int] {
        let results = try #require(try reply.object()["results"] as? [[String: Any]])
        return try results.map { try #require($0["id"] as? Int) }
    }

    @Test func aPageHasTMDBsShapeAndTheSameDaysGiveTheSameIDs() async throws {
        let today = Self.reference()
        let first = try await Harness.with { harness in
            let reply = try await self.feed(harness, today.adding(-2), today)
            #expect(reply.status == 200)
            let object = try reply.object()
            #expect(Set(object.keys) == ["results", "page", "total_pages", "total_results"])
            let results = try #require(object["results"] as? [[String: Any]])
            #expect(results.allSatisfy { Set($0.keys) == ["id", "adult"] && $0["adult"] is Bool })
            let ids = try self.ids(reply)
            #expect(!ids.isEmpty, "three days of 300 movies change some")
            #expect(ids == ids.sorted() && Set(ids).count == ids.count)
            #expect(object["total_results"] as? Int == ids.count)
            #expect(object["total_pages"] as? Int == 1)
            // Each day's ids are part of the window's, and the days together are the window.
            var union = Set<Int>()
            for offset in -2...0 {
                let day = today.adding(offset)
                union.formUnion(try self.ids(try await self.feed(harness, day, day)))
            }
            #expect(union == Set(ids))
            // Every id is a movie with details.
            let details = try await harness.get("/tmdb/3/movie/\(ids[0])?api_key=\(key)")
            #expect(details.status == 200)
            return ids
        }
        let again = try await Harness.with { try self.ids(try await self.feed($0, today.adding(-2), today)) }
        #expect(again == first)
    }

    @Test func theFeedPagesAHundredIDsAPage() async throws {
        let today = Self.reference(movies: 5000)
        try await Harness.with(movies: 5000) { harness in
            let first = try await self.feed(harness, today.adding(-13), today)
            let object = try first.object()
            let total = try #require(object["total_results"] as? Int)
            let pages = try #require(object["total_pages"] as? Int)
            #expect(total > 100, "14 days of 5,000 movies fill more than a page")
            #expect(pages == (total + 99) / 100)
            var all = try self.ids(first)
            #expect(all.count == 100)
            for page in 2...pages {
                all += try self.ids(try await self.feed(harness, today.adding(-13), today, page: page))
            }
            #expect(all.count == total && Set(all).count == total)
            #expect(try self.ids(try await self.feed(harness, today.adding(-13), today, page: pages + 1)).isEmpty)
        }
    }

    @Test func windowsOverFourteenDaysBadDatesAndPagesAreRefused() async throws {
        let today = Self.reference()
        try await Harness.with { harness in
            let long = try await self.feed(harness, today.adding(-14), today)
            #expect(long.status == 422)
            #expect(try long.object()["status_code"] as? Int == 20)
            let backwards = try await self.feed(harness, today, today.adding(-1))
            #expect(backwards.status == 422)
            let badDate = try await harness.get("/tmdb/3/movie/changes?api_key=\(key)&start_date=2024-13-01")
            #expect(badDate.status == 422)
            #expect(try badDate.object()["status_code"] as? Int == 23)
            let badPage = try await self.feed(harness, today, today, page: 1001)
            #expect(badPage.status == 422)
            let noKey = try await harness.get("/tmdb/3/movie/changes")
            #expect(noKey.status == 401)
        }
    }

    @Test func changedMoviesAnswerNewDetailsAndTheOthersNotModified() async throws {
        let today = Self.reference()
        let tomorrow = today.adding(1)
        try await Harness.with { harness in
            // Days after the emulated day have no changes yet.
            #expect(try self.ids(try await self.feed(harness, tomorrow, tomorrow)).isEmpty)
            try await harness.control(["today": tomorrow.iso])
            let changed = Set(try self.ids(try await self.feed(harness, tomorrow, tomorrow)))
            #expect(!changed.isEmpty)
            // The validators of the day before: the changed movies and a page of others.
            try await harness.control(["today": NSNull()])
            let popular = try await harness.get("/tmdb/3/movie/popular?api_key=\(key)").object()
            let listed = try #require(popular["results"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
            var etags: [Int: String] = [:]
            for id in changed.union(listed) {
                let reply = try await harness.get("/tmdb/3/movie/\(id)?api_key=\(key)")
                let etag = reply.header("etag")
                #expect(etag != nil, "movie \(id) has an ETag")
                etags[id] = etag
            }
            try await harness.control(["today": tomorrow.iso])
            for (id, etag) in etags {
                let reply = try await harness.get(
                    "/tmdb/3/movie/\(id)?api_key=\(key)",
                    headers: ["If-None-Match": etag]
                )
                #expect(reply.status == (changed.contains(id) ? 200 : 304), "movie \(id)")
            }
            #expect(!Set(listed).subtracting(changed).isEmpty, "some listed movies did not change")
        }
    }

    @Test func theEmulatedDayIsSetAndShownByControl() async throws {
        try await Harness.with { harness in
            #expect(try await harness.get("/_control").object()["today"] is NSNull)
            try await harness.control(["today": "2026-11-27"])
            #expect(try await harness.get("/_control").object()["today"] as? String == "2026-11-27")
            for bad in ["2026-11-31", "27.11.2026", "2026-1-1"] {
                let reply = try await harness.get(
                    "/_control",
                    method: "POST",
                    body: Array(#"{"today":"\#(bad)"}"#.utf8)
                )
                #expect(reply.status == 400, "\(bad)")
                #expect(String(decoding: reply.body, as: UTF8.self).contains("today must be a day as YYYY-MM-DD"))
            }
            #expect(try await harness.get("/_control").object()["today"] as? String == "2026-11-27")
        }
    }
}
