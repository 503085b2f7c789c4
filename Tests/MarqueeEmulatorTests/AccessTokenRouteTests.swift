import MarqueeCore
import MarqueeEmulator
import Testing

import class Foundation.JSONSerialization
import class Foundation.NSNull

/// TMDB's v4 account API under `/tmdb/4`, read with a v4 user access token: the account's lists and its rated,
/// favourite and watchlist movies in TMDB's shapes, the same account for the same subject on every emulator with
/// the same seed, paging and order, TMDB's refusals, `/_control` and the rate limit.
@Suite(.timeLimit(.minutes(2)))
struct AccessTokenRouteTests {
    static let subject = EmulatorSettings.defaultAccountObjectID
    static let token = EmulatorSettings.defaultAccessToken

    /// The keys of one of the account's lists, as TMDB v4 writes them.
    static let listKeys: Set<String> = [
        "account_object_id", "average_rating", "backdrop_path", "created_at", "description", "featured", "id",
        "iso_3166_1", "iso_639_1", "name", "number_of_items", "poster_path", "public", "revenue", "runtime",
        "sort_by", "updated_at",
    ]

    static func get(
        _ harness: Harness,
        _ path: String,
        token: String? = Self.token
    ) async throws -> Harness.Reply {
        try await harness.get(path, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    static func movies(
        _ harness: Harness,
        _ list: String,
        subject: String = Self.subject,
        token: String = Self.token,
        query: String = ""
    ) async throws -> Harness.Reply {
        try await Self.get(harness, "/tmdb/4/account/\(subject)/movie/\(list)\(query)", token: token)
    }

    /// Every page of a movie list in `order`: the ids, the rating times, and `total_results` of page 1.
    static func allPages(
        _ harness: Harness,
        _ list: String,
        order: String
    ) async throws -> (ids: [Int], times: [String], total: Int) {
        let first = try await Self.movies(harness, list, query: "?page=1&sort_by=\(order)").object()
        let total = try #require(first["total_results"] as? Int)
        let pages = try #require(first["total_pages"] as? Int)
        #expect(pages == (total + 19) / 20)
        var ids: [Int] = []
        var times: [String] = []
        for page in 1...max(pages, 1) {
            let body = try await Self.movies(harness, list, query: "?page=\(page)&sort_by=\(order)").object()
            #expect(body["page"] as? Int == page)
            #expect(body["total_results"] as? Int == total)
            let results = try #require(body["results"] as? [[String: Any]])
            #expect(results.count == (page < pages ? 20 : total - 20 * (pages - 1)), "page \(page)")
            ids += results.compactMap { $0["id"] as? Int }
            times += results.compactMap { ($0["account_rating"] as? [String: Any])?["created_at"] as? String }
        }
        return (ids, times, total)
    }

    @Test func theDefaultTokenNamesTheDefaultAccountAndIsFixed() {
        #expect(TMDBAccessToken.accountObjectID(in: Self.token) == "6565a8f1c2d3e4f5a6b7c8d9")
        #expect(EmulatorSettings().tmdbAccessTokens == [Self.token])
        #expect(EmulatorSettings().tmdbRevokedAccessTokens == [])
        #expect(EmulatorSettings.accessToken(subject: Self.subject) == Self.token)
        // Pinned: the same in every process and every build, so it can be written down elsewhere.
        let header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
        let payload =
            "eyJhdWQiOiIzZjZjMWQyZTlhOGI3YzZkNWU0ZjNhMmIxYzBkOWU4ZiIsImp0aSI6IjQ4MTUxNjIiLCJuYmYiOjE3MDExNTg0MDAsInNj"
            + "b3BlcyI6WyJhcGlfcmVhZCIsImFwaV93cml0ZSJdLCJzdWIiOiI2NTY1YThmMWMyZDNlNGY1YTZiN2M4ZDkiLCJ2ZXJzaW9uIjoxfQ"
        let signature = "Wn-kye4TOF2Cp8zxFjtgharP9Bk-Y4it0vccQWaLsNU"
        #expect(Self.token == [header, payload, signature].joined(separator: "."))
    }

    @Test func theListsHaveTMDBsShape() async throws {
        let subjects = (0..<12).map { "5f0e0d0c0b0a09080706050\($0 % 10)\($0 / 10)" }
        var settings = EmulatorSettings()
        settings.tmdbAccessTokens = subjects.map { EmulatorSettings.accessToken(subject: $0) }
        try await Harness.with(settings: settings) { harness in
            var counts: [Int] = []
            for subject in subjects {
                let reply = try await Self.get(
                    harness,
                    "/tmdb/4/account/\(subject)/lists?page=1",
                    token: EmulatorSettings.accessToken(subject: subject)
                )
                #expect(reply.status == 200)
                let body = try reply.object()
                #expect(Set(body.keys) == ["page", "results", "total_pages", "total_results"])
                #expect(body["page"] as? Int == 1)
                let results = try #require(body["results"] as? [[String: Any]])
                #expect((0...3).contains(results.count))
                #expect(body["total_results"] as? Int == results.count)
                #expect(body["total_pages"] as? Int == (results.isEmpty ? 0 : 1))
                counts.append(results.count)
                for list in results {
                    #expect(Set(list.keys) == Self.listKeys)
                    #expect(list["account_object_id"] as? String == subject)
                    #expect(list["id"] is Int)
                    #expect(!((list["name"] as? String) ?? "").isEmpty)
                    #expect(list["description"] is String)
                    #expect((list["number_of_items"] as? Int).map { $0 >= 0 } == true)
                    #expect(list["average_rating"] is Double)
                    #expect(list["public"] as? Int == 1)
                    #expect(list["iso_639_1"] as? String == "en")
                    #expect(list["iso_3166_1"] as? String == "US")
                    for name in ["poster_path", "backdrop_path"] { #expect(list[name] is NSNull) }
                    for (name, value) in [("sort_by", 1), ("featured", 0), ("revenue", 0), ("runtime", 0)] {
                        #expect(list[name] as? Int == value, "\(name)")
                    }
                    let created = try #require(list["created_at"] as? String)
                    let updated = try #require(list["updated_at"] as? String)
                    for time in [created, updated] {
                        #expect(Self.isTimestamp(time), "\(time)")
                    }
                    #expect(created <= updated)
                }
                // Past the only page: no lists, the same totals.
                let past = try await Self.get(
                    harness,
                    "/tmdb/4/account/\(subject)/lists?page=2",
                    token: EmulatorSettings.accessToken(subject: subject)
                ).object()
                #expect((past["results"] as? [Any])?.isEmpty == true)
                #expect(past["total_results"] as? Int == results.count)
            }
            // Accounts differ: not every account has the same number of lists, and some have lists.
            #expect(Set(counts).count > 1, "\(counts)")
            #expect(counts.contains { $0 > 0 })
        }
    }

    /// `2024-01-02 10:00:00 UTC`.
    static func isTimestamp(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 23, text.hasSuffix(" UTC") else { return false }
        for (index, byte) in bytes.prefix(19).enumerated() {
            let expected: UInt8? =
                switch index {
                case 4, 7: UInt8(ascii: "-")
                case 10: UInt8(ascii: " ")
                case 13, 16: UInt8(ascii: ":")
                default: nil
                }
            if let expected {
                guard byte == expected else { return false }
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return false }
            }
        }
        return true
    }

    @Test func eachMovieListHasTheV3ListsShape() async throws {
        try await Harness.with { harness in
            for (list, fixture, sizes) in [
                ("rated", "account_rated_movies_page1.json", 25...64),
                ("favorites", "account_favorite_movies_page1.json", 5...24),
                ("watchlist", "account_watchlist_movies_page1.json", 10...49),
            ] {
                let reply = try await Self.movies(harness, list, query: "?language=en-US")
                #expect(reply.status == 200, "\(list)")
                let problems = Shape.problems(try reply.json(), try AccountRouteTests.written(fixture))
                #expect(problems == [], "\(list): \(problems)")
                let body = try reply.object()
                #expect(body["page"] as? Int == 1)
                let total = try #require(body["total_results"] as? Int)
                #expect(sizes.contains(total), "\(list): \(total)")
                let results = try #require(body["results"] as? [[String: Any]])
                #expect(results.count == min(total, 20))
                #expect(results.allSatisfy { $0["adult"] as? Bool == false })
                if list == "rated" {
                    for item in results {
                        let rating = try #require(item["account_rating"] as? [String: Any])
                        #expect(Set(rating.keys) == ["created_at", "value"])
                        let value = try #require(rating["value"] as? Double)
                        #expect((0.5...10).contains(value) && (value * 2).rounded() == value * 2)
                        #expect((rating["created_at"] as? String)?.hasSuffix("Z") == true)
                    }
                } else {
                    #expect(results.allSatisfy { $0["account_rating"] == nil }, "\(list)")
                }
            }
        }
    }

    @Test func eachV4ListIsTheV3ListOfTheSameOwner() async throws {
        // A v3 session spelled like the token's subject is the same owner, so the same movies: this pins the v4
        // names (`favorites`) to the v3 lists (`favorite`).
        var settings = EmulatorSettings()
        settings.tmdbSessions = [Self.subject]
        try await Harness.with(settings: settings) { harness in
            let details = try await harness.get(
                "/tmdb/3/account?api_key=\(Harness.key)&session_id=\(Self.subject)"
            )
            let id = try #require(try details.object()["id"] as? Int)
            for (v4, v3) in [("rated", "rated"), ("favorites", "favorite"), ("watchlist", "watchlist")] {
                let query = "page=1&sort_by=created_at.desc&language=ko-KR"
                let ours = try await Self.movies(harness, v4, query: "?" + query)
                let theirs = try await harness.get(
                    "/tmdb/3/account/\(id)/\(v3)/movies?api_key=\(Harness.key)&session_id=\(Self.subject)&" + query
                )
                #expect(ours.status == 200 && theirs.status == 200)
                #expect(ours.body == theirs.body, "\(v4)")
            }
        }
    }

    @Test func theRatedListPagesToTheEndInBothOrders() async throws {
        try await Harness.with { harness in
            let ascending = try await Self.allPages(harness, "rated", order: "created_at.asc")
            #expect(ascending.ids.count == ascending.total)
            #expect(Set(ascending.ids).count == ascending.total)
            #expect(ascending.times.count == ascending.total)
            #expect(ascending.times == ascending.times.sorted())
            #expect(Set(ascending.times).count > 1)
            let descending = try await Self.allPages(harness, "rated", order: "created_at.desc")
            #expect(descending.total == ascending.total)
            #expect(descending.ids == Array(ascending.ids.reversed()))
            #expect(descending.times == descending.times.sorted(by: >))
            // No sort_by is the ascending order.
            let unsorted = try await Self.movies(harness, "rated").object()
            let first = try #require(unsorted["results"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
            #expect(first == Array(ascending.ids.prefix(20)))
            // The other lists page the same way.
            for list in ["favorites", "watchlist"] {
                let pages = try await Self.allPages(harness, list, order: "created_at.asc")
                #expect(pages.ids.count == pages.total && Set(pages.ids).count == pages.total, "\(list)")
            }
            // Past the end: an empty page with the same totals.
            let pages = (ascending.total + 19) / 20
            let past = try await Self.movies(harness, "rated", query: "?page=\(pages + 1)").object()
            #expect((past["results"] as? [Any])?.isEmpty == true)
            #expect(past["total_results"] as? Int == ascending.total)
        }
    }

    @Test func theSameSubjectIsTheSameAccountOnEveryEmulatorWithTheSameSeed() async throws {
        let other = "0a1b2c3d4e5f60718293a4b5"
        var settings = EmulatorSettings()
        settings.tmdbAccessTokens = [Self.token, EmulatorSettings.accessToken(subject: other)]
        let paths = ["lists", "movie/rated?page=2", "movie/favorites", "movie/watchlist?sort_by=created_at.desc"]
        func bodies(seed: UInt64) async throws -> [[UInt8]] {
            try await Harness.with(seed: seed, settings: settings) { harness in
                var bodies: [[UInt8]] = []
                for subject in [Self.subject, other] {
                    for path in paths {
                        let reply = try await Self.get(
                            harness,
                            "/tmdb/4/account/\(subject)/\(path)",
                            token: EmulatorSettings.accessToken(subject: subject)
                        )
                        #expect(reply.status == 200, "\(subject)/\(path)")
                        bodies.append(reply.body)
                    }
                }
                return bodies
            }
        }
        let first = try await bodies(seed: 7)
        let again = try await bodies(seed: 7)
        #expect(first == again)
        // Another subject is another account, and another seed another catalogue.
        #expect(first[1..<4] != first[5..<8])
        let reseeded = try await bodies(seed: 8)
        #expect(first[1..<4] != reseeded[1..<4])
    }

    @Test func refusedTokensAnswerTMDBsBodies() async throws {
        let revoked = EmulatorSettings.accessToken(subject: "aaaabbbbccccddddeeeeffff")
        let both = EmulatorSettings.accessToken(subject: "111122223333444455556666")
        let other = "0a1b2c3d4e5f60718293a4b5"
        var settings = EmulatorSettings()
        settings.tmdbAccessTokens = [Self.token, both, EmulatorSettings.accessToken(subject: other)]
        settings.tmdbRevokedAccessTokens = [revoked, both]
        let invalidKey = "Invalid API key: You must be granted a valid key."
        let denied = "Authentication failed: You do not have permissions to access the service."
        try await Harness.with(settings: settings) { harness in
            let unknown = EmulatorSettings.accessToken(subject: "999988887777666655554444")
            let cases: [(String, String?, [String: String], Int, String)] = [
                ("/tmdb/4/account/\(Self.subject)/lists", nil, [:], 7, invalidKey),
                ("/tmdb/4/account/\(Self.subject)/movie/rated", nil, [:], 7, invalidKey),
                ("/tmdb/4/account/999988887777666655554444/lists", unknown, [:], 7, invalidKey),
                // The v3 key is no v4 token, as a bearer or as api_key.
                ("/tmdb/4/account/\(Self.subject)/movie/watchlist", Harness.key, [:], 7, invalidKey),
                ("/tmdb/4/account/\(Self.subject)/movie/watchlist?api_key=\(Harness.key)", nil, [:], 7, invalidKey),
                ("/tmdb/4/account/\(Self.subject)/lists", nil, ["Authorization": "Bearer "], 7, invalidKey),
                ("/tmdb/4/account/\(Self.subject)/lists", nil, ["Authorization": Self.token], 7, invalidKey),
                ("/tmdb/4/account/aaaabbbbccccddddeeeeffff/movie/favorites", revoked, [:], 3, denied),
                ("/tmdb/4/account/aaaabbbbccccddddeeeeffff/lists", revoked, [:], 3, denied),
                ("/tmdb/4/account/111122223333444455556666/movie/rated", both, [:], 3, denied),
                // An accepted token, another account's object id.
                ("/tmdb/4/account/\(other)/movie/rated", Self.token, [:], 3, denied),
                ("/tmdb/4/account/\(other)/lists", Self.token, [:], 3, denied),
            ]
            for (path, token, headers, code, message) in cases {
                var headers = headers
                if let token { headers["Authorization"] = "Bearer \(token)" }
                let reply = try await harness.get(path, headers: headers)
                #expect(reply.status == 401, "\(path)")
                let body = try reply.object()
                #expect(body["status_code"] as? Int == code, "\(path)")
                #expect(body["status_message"] as? String == message, "\(path)")
                #expect(body["success"] as? Bool == false, "\(path)")
                #expect(Set(body.keys) == ["status_code", "status_message", "success"])
            }
            // A page out of 1…500 is TMDB's 400, on both routes.
            for path in ["lists", "movie/rated", "movie/favorites"] {
                for page in ["0", "501", "two"] {
                    let reply = try await Self.get(harness, "/tmdb/4/account/\(Self.subject)/\(path)?page=\(page)")
                    #expect(reply.status == 400, "\(path) page \(page)")
                    #expect(try reply.object()["status_code"] as? Int == 22, "\(path) page \(page)")
                }
            }
            // Unknown v4 paths, the v3 list names among them, are 404s.
            for path in [
                "/tmdb/4/account/\(Self.subject)/movie/favorite", "/tmdb/4/account/\(Self.subject)/tv/rated",
                "/tmdb/4/account/\(Self.subject)/movie", "/tmdb/4/account/\(Self.subject)", "/tmdb/4/list/1",
                "/tmdb/4/account/\(Self.subject)/movie/rated/movies",
            ] {
                let reply = try await Self.get(harness, path)
                #expect(reply.status == 404, "\(path)")
            }
            let stats = try await harness.stats()
            let routes = try #require(stats["routes"] as? [String: Int])
            // Every request counts under its route, refused or not: six refusals and three bad pages of the lists,
            // six refusals and six bad pages of the movie lists.
            #expect(routes["tmdb.v4.account.lists"] == 9)
            #expect(routes["tmdb.v4.account.list"] == 12)
        }
    }

    @Test func controlSetsAndRevokesTokensAndNeverShowsThem() async throws {
        let next = EmulatorSettings.accessToken(subject: "0a1b2c3d4e5f60718293a4b5")
        try await Harness.with { harness in
            let path = "/tmdb/4/account/0a1b2c3d4e5f60718293a4b5/movie/rated"
            #expect(try await Self.get(harness, path, token: next).status == 401)
            // One token as a string: it replaces the default.
            let set = try await harness.get(
                "/_control",
                method: "POST",
                body: Array(try JSONSerialization.data(withJSONObject: ["tmdbAccessToken": next]))
            )
            #expect(set.status == 200)
            #expect(try set.object()["tmdbAccessTokens"] as? Int == 1)
            #expect(try await Self.get(harness, path, token: next).status == 200)
            let old = try await Self.movies(harness, "rated")
            #expect(try old.object()["status_code"] as? Int == 7)
            // Several as an array; then revoked ones.
            try await harness.control(["tmdbAccessTokens": [next, Self.token]])
            #expect(try await Self.movies(harness, "rated").status == 200)
            try await harness.control(["tmdbRevokedAccessToken": next])
            let revoked = try await Self.get(harness, path, token: next)
            #expect(try revoked.object()["status_code"] as? Int == 3)
            try await harness.control(["tmdbRevokedAccessTokens": [next, Self.token]])
            #expect(try await Self.movies(harness, "rated").object()["status_code"] as? Int == 3)
            // Neither answer of /_control holds a token, only how many there are.
            let shown = try await harness.get("/_control")
            let text = String(decoding: shown.body, as: UTF8.self)
            let lastSet = String(decoding: set.body, as: UTF8.self)
            for token in [next, Self.token] {
                #expect(!text.contains(token))
                #expect(!lastSet.contains(token))
                // Not even the payload (which holds the subject) nor the signature.
                for part in token.split(separator: ".").dropFirst() { #expect(!text.contains(part)) }
            }
            let body = try shown.object()
            #expect(body["tmdbAccessTokens"] as? Int == 2)
            #expect(body["tmdbRevokedAccessTokens"] as? Int == 2)
            // A wrong type is refused and changes nothing.
            let wrong = try await harness.get(
                "/_control",
                method: "POST",
                body: Array(try JSONSerialization.data(withJSONObject: ["tmdbAccessTokens": 5]))
            )
            #expect(wrong.status == 400)
            #expect(try await harness.get("/_control").object()["tmdbAccessTokens"] as? Int == 2)
        }
    }

    @Test func theRateLimitAppliesPerToken() async throws {
        let other = EmulatorSettings.accessToken(subject: "0a1b2c3d4e5f60718293a4b5")
        var settings = EmulatorSettings()
        settings.rateLimit = 5
        settings.tmdbAccessTokens = [Self.token, other]
        try await Harness.with(settings: settings) { harness in
            // Twelve at once, so they arrive within the bucket's second however slow the machine is.
            let replies = try await withThrowingTaskGroup(of: Harness.Reply.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        index % 2 == 0
                            ? try await Self.movies(harness, "watchlist")
                            : try await Self.get(harness, "/tmdb/4/account/\(Self.subject)/lists")
                    }
                }
                var replies: [Harness.Reply] = []
                for try await reply in group { replies.append(reply) }
                return replies
            }
            let statuses = replies.map(\.status)
            #expect(statuses.filter { $0 == 200 }.count >= 5)
            #expect(statuses.contains(429))
            for reply in replies where reply.status == 429 {
                #expect(try reply.object()["status_code"] as? Int == 25)
                #expect(Int(reply.header("Retry-After") ?? "") ?? 0 >= 1)
            }
            // Another token has its own bucket.
            let fresh = try await Self.get(harness, "/tmdb/4/account/0a1b2c3d4e5f60718293a4b5/lists", token: other)
            #expect(fresh.status == 200)
            let stats = try await harness.stats()
            #expect((stats["rateLimited"] as? [String: Any])?["tmdb"] as? Int ?? 0 >= 1)
        }
    }

    @Test func theEnvironmentNamesTheV4BaseURLAndNoToken() {
        let urls = UpstreamURLs(base: "http://127.0.0.1:8930/")
        #expect(urls.tmdbV4 == "http://127.0.0.1:8930/tmdb/4")
        let environment = urls.environment(settings: EmulatorSettings())
        let names = environment.map(\.0)
        let index = names.firstIndex(of: "TMDB_BASE_URL")
        #expect(index.map { names[$0 + 1] } == "TMDB_V4_BASE_URL")
        #expect(environment.first { $0.0 == "TMDB_V4_BASE_URL" }?.1 == "http://127.0.0.1:8930/tmdb/4")
        #expect(!names.contains("TMDB_ACCESS_TOKEN"))
        #expect(!environment.contains { $0.1.contains(EmulatorSettings.defaultAccessToken) })
    }
}
