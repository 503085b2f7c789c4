import MarqueeEmulator
import Testing

import class Foundation.JSONSerialization
import class Foundation.NSNull

@Suite(.timeLimit(.minutes(3)))
struct UpstreamOutageTests {
    let key = Harness.key
    var tmdbList: String { "/tmdb/3/movie/popular?api_key=\(self.key)" }
    var koficDaily: String {
        "/kofic/kobisopenapi/webservice/rest/boxoffice/searchDailyBoxOfficeList.json?key=\(self.key)&targetDt=20240105"
    }

    /// A `POST /_control` body starting an outage.
    static func outage(_ upstream: String, seconds: Double) -> [String: Any] {
        ["outage": ["upstream": upstream, "seconds": seconds] as [String: Any]]
    }

    @Test func anOutageAnswers503ForItsUpstreamOnlyUntilEndedWithNull() async throws {
        try await Harness.with { harness in
            try await harness.control(Self.outage("tmdb", seconds: 60))
            let down = try await harness.get(self.tmdbList)
            #expect(down.status == 503)
            #expect(try down.object()["status_code"] as? Int == 9, "TMDB's own 503 body")
            #expect(down.header("Retry-After") == "1")
            // Keys are not checked by a service that is down.
            #expect(try await harness.get("/tmdb/3/movie/popular?api_key=wrong").status == 503)
            let kofic = try await harness.get(self.koficDaily)
            #expect(kofic.status == 200)
            #expect(try kofic.object()["boxOfficeResult"] != nil)

            let control = try await harness.get("/_control").object()
            let outage = try #require(control["outage"] as? [String: Any])
            #expect(outage["upstream"] as? String == "tmdb")
            let left = try #require(outage["secondsLeft"] as? Double)
            #expect(left > 0 && left <= 60)
            #expect(control["fault5xx"] as? Double == 0, "the settings are still there")

            let stats = try await harness.stats()
            #expect(stats["outage"] as? [String: Int] == ["tmdb": 2])
            #expect((stats["statuses"] as? [String: Int])?["503"] == 2)
            #expect((stats["routeStatuses"] as? [String: [String: Int]])?["tmdb.list"]?["503"] == 2)

            try await harness.control(["outage": NSNull()])
            #expect(try await harness.get(self.tmdbList).status == 200)
            #expect(try await harness.get("/_control").object()["outage"] is NSNull)
        }
    }

    @Test func anOutageEndsByItself() async throws {
        try await Harness.with { harness in
            let clock = ContinuousClock()
            let start = clock.now
            try await harness.control(Self.outage("tmdb", seconds: 3))
            let first = try await harness.get(self.tmdbList).status
            // A machine too loaded to ask within the outage's 3 s says nothing about it; otherwise it was down.
            let askedInTime = clock.now - start < .seconds(3)
            if askedInTime { #expect(first == 503) }
            // Poll until the outage is over, with a bound far above its seconds.
            var status = first
            while status == 503, clock.now - start < .seconds(30) {
                try await Task.sleep(for: .milliseconds(50))
                status = try await harness.get(self.tmdbList).status
            }
            #expect(status == 200)
            #expect(clock.now - start >= .seconds(3), "not before its seconds passed")
            #expect(try await harness.get("/_control").object()["outage"] is NSNull)
            let outages = try #require(try await harness.stats()["outage"] as? [String: Int])
            if askedInTime { #expect((outages["tmdb"] ?? 0) >= 1) }
        }
    }

    @Test func zeroSecondsEndsAnOutageAtOnce() async throws {
        try await Harness.with { harness in
            try await harness.control(Self.outage("tmdb", seconds: 600))
            #expect(try await harness.get(self.tmdbList).status == 503)
            try await harness.control(Self.outage("tmdb", seconds: 0))
            #expect(try await harness.get(self.tmdbList).status == 200)
        }
    }

    @Test func allTakesDownEveryUpstreamButTheEmulatorsOwnEndpoints() async throws {
        try await Harness.with { harness in
            try await harness.control(Self.outage("all", seconds: 60))
            #expect(try await harness.get(self.tmdbList).status == 503)
            let kofic = try await harness.get(self.koficDaily)
            #expect(kofic.status == 503)
            #expect(try kofic.object()["error"] as? String == "Service Unavailable")
            #expect(try await harness.get("/openlibrary/search.json?q=a").status == 503)
            #expect(try await harness.get("/_stats").status == 200)
            let control = try await harness.get("/_control").object()
            #expect((control["outage"] as? [String: Any])?["upstream"] as? String == "all")
            let outages = try #require(try await harness.stats()["outage"] as? [String: Int])
            #expect(outages == ["tmdb": 1, "kofic": 1, "openlibrary": 1])
        }
    }

    @Test(arguments: [
        (#"{"outage": {"upstream": "imdb", "seconds": 5}}"#, "one of all, tmdb, tmdb-images, kofic, kakao"),
        (#"{"outage": {"upstream": "emulator", "seconds": 5}}"#, "unknown upstream 'emulator'"),
        (#"{"outage": {"upstream": "tmdb"}}"#, "outage.seconds must be a number"),
        (#"{"outage": {"upstream": "tmdb", "seconds": -1}}"#, "outage.seconds must be a number"),
        (#"{"outage": {"upstream": "tmdb", "seconds": 5, "until": 9}}"#, "unknown field outage.until"),
        (#"{"outage": {"seconds": 5}}"#, "outage.upstream must be one of"),
        (#"{"outage": "tmdb"}"#, "outage must be null or"),
        (#"{"outage": {"upstream": "tmdb", "seconds": 5}, "fault5xx": 2}"#, "fault5xx must be a number"),
    ])
    func aMalformedOutageIsRefusedAndChangesNothing(body: String, reason: String) async throws {
        try await Harness.with { harness in
            let reply = try await harness.get("/_control", method: "POST", body: Array(#"{"fault429": 0.25}"#.utf8))
            #expect(reply.status == 200)
            let refused = try await harness.get("/_control", method: "POST", body: Array(body.utf8))
            #expect(refused.status == 400)
            let error = try #require(try refused.object()["error"] as? String)
            #expect(error.contains(reason), "\(error)")
            let control = try await harness.get("/_control").object()
            #expect(control["outage"] is NSNull)
            #expect(control["fault429"] as? Double == 0.25)
            #expect(control["fault5xx"] as? Double == 0)
        }
    }
}
