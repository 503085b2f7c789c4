import CMarqueeVips
import Cvips
import MarqueeEmulator
import MarqueeTestSupport
import Testing

@Suite(.timeLimit(.minutes(3)))
struct EmulatorBehaviourTests {
    let key = Harness.key

    @Test func catalogueIsDeterministicPerSeedAndDiffersAcrossSeeds() async throws {
        let first = try await Harness.with(seed: 42) { harness in
            try await harness.get("/tmdb/3/movie/popular?api_key=\(key)&language=ko-KR&page=3").body
        }
        let again = try await Harness.with(seed: 42) { harness in
            try await harness.get("/tmdb/3/movie/popular?api_key=\(key)&language=ko-KR&page=3").body
        }
        let other = try await Harness.with(seed: 43) { harness in
            try await harness.get("/tmdb/3/movie/popular?api_key=\(key)&language=ko-KR&page=3").body
        }
        #expect(first == again)
        #expect(first != other)
        #expect(first.count > 1000)
    }

    @Test func koreanAndJapaneseTitlesForKoAndJa() async throws {
        try await Harness.with { harness in
            func titles(_ language: String) async throws -> [String] {
                let object = try await harness.get("/tmdb/3/movie/popular?api_key=\(key)&language=\(language)").object()
                return try #require(object["results"] as? [[String: Any]]).compactMap { $0["title"] as? String }
            }
            let korean = try await titles("ko-KR")
            let japanese = try await titles("ja-JP")
            let english = try await titles("en-US")
            #expect(korean.allSatisfy { $0.unicodeScalars.contains { (0xAC00...0xD7A3).contains($0.value) } })
            #expect(
                japanese.allSatisfy {
                    $0.unicodeScalars.contains {
                        (0x3040...0x30FF).contains($0.value) || (0x4E00...0x9FFF).contains($0.value)
                    }
                }
            )
            #expect(english.allSatisfy { $0.unicodeScalars.allSatisfy(\.isASCII) })
            let genres = try await harness.get("/tmdb/3/genre/movie/list?api_key=\(key)&language=ko").object()
            #expect((genres["genres"] as? [[String: Any]])?.contains { $0["name"] as? String == "액션" } == true)
        }
    }

    @Test func wrongKeysAreRejectedInEachUpstreamsWay() async throws {
        try await Harness.with { harness in
            let tmdb = try await harness.get("/tmdb/3/movie/popular?api_key=wrong")
            #expect(tmdb.status == 401)
            #expect(try tmdb.object()["status_code"] as? Int == 7)
            let kofic = try await harness.get(
                "/kofic/kobisopenapi/webservice/rest/boxoffice/searchDailyBoxOfficeList.json?key=wrong&targetDt=20240101"
            )
            #expect(kofic.status == 200)
            #expect((try kofic.object()["faultInfo"] as? [String: Any])?["errorCode"] as? String == "320010")
            let kakao = try await harness.get(
                "/kakao/v2/search/image?query=x",
                headers: ["Authorization": "KakaoAK wrong"]
            )
            #expect(kakao.status == 401)
            #expect(try kakao.object()["errorType"] as? String == "AccessDeniedError")
            // A key made wrong and right again at run time.
            try await harness.control(["tmdbKey": "rotated"])
            #expect(try await harness.get("/tmdb/3/movie/popular?api_key=\(key)").status == 401)
            #expect(try await harness.get("/tmdb/3/movie/popular?api_key=rotated").status == 200)
            let control = try await harness.get("/_control")
            #expect(!String(decoding: control.body, as: UTF8.self).contains("rotated"))
        }
    }

    @Test func conditionalRequestsAnswer304() async throws {
        try await Harness.with { harness in
            let path = "/tmdb/3/movie/popular?api_key=\(key)"
            let first = try await harness.get(path)
            let etag = try #require(first.header("ETag"))
            let lastModified = try #require(first.header("Last-Modified"))
            #expect(etag.hasPrefix("\"") && etag.count > 10)
            let revalidated = try await harness.get(path, headers: ["If-None-Match": etag])
            #expect(revalidated.status == 304)
            #expect(revalidated.body.isEmpty)
            let since = try await harness.get(path, headers: ["If-Modified-Since": lastModified])
            #expect(since.status == 304)
            let changed = try await harness.get(path, headers: ["If-None-Match": "\"other\""])
            #expect(changed.status == 200)
            #expect(try await harness.stats()["notModified"] as? Int == 2)
        }
    }

    @Test func rateLimitAnswers429WithRetryAfter() async throws {
        var settings = EmulatorSettings()
        settings.rateLimit = 5
        try await Harness.with(settings: settings) { harness in
            // Twelve at once, so they arrive within the bucket's second however slow the machine is.
            let replies = try await withThrowingTaskGroup(of: Harness.Reply.self) { group in
                for _ in 0..<12 { group.addTask { try await harness.get("/tmdb/3/genre/movie/list?api_key=\(key)") } }
                var replies: [Harness.Reply] = []
                for try await reply in group { replies.append(reply) }
                return replies
            }
            let statuses = replies.map(\.status)
            var retryAfter: String?
            for reply in replies where reply.status == 429 {
                retryAfter = reply.header("Retry-After")
                #expect(try reply.object()["status_code"] as? Int == 25)
            }
            #expect(statuses.filter { $0 == 200 }.count >= 5)
            #expect(statuses.contains(429))
            #expect(Int(retryAfter ?? "") ?? 0 >= 1)
            let stats = try await harness.stats()
            #expect((stats["rateLimited"] as? [String: Any])?["tmdb"] as? Int ?? 0 >= 1)
            #expect((stats["maxRequestsPerSecondByUpstream"] as? [String: Any])?["tmdb"] as? Int ?? 0 >= 6)
        }
    }

    @Test func koficQuotaAnswers320011() async throws {
        var settings = EmulatorSettings()
        settings.koficDailyQuota = 3
        try await Harness.with(settings: settings) { harness in
            let path =
                "/kofic/kobisopenapi/webservice/rest/boxoffice/searchDailyBoxOfficeList.json?key=\(key)&targetDt=20240105"
            for _ in 0..<3 {
                #expect(try await harness.get(path).object()["boxOfficeResult"] != nil)
            }
            let spent = try await harness.get(path)
            #expect(spent.status == 200)
            #expect((try spent.object()["faultInfo"] as? [String: Any])?["errorCode"] as? String == "320011")
            try await harness.control(["resetQuota": true])
            #expect(try await harness.get(path).object()["boxOfficeResult"] != nil)
        }
    }

    @Test func boxOfficeRanksAreConsistentWithThePreviousDay() async throws {
        try await Harness.with(movies: 2000) { harness in
            let base =
                "/kofic/kobisopenapi/webservice/rest/boxoffice/searchDailyBoxOfficeList.json?key=\(key)&targetDt="
            func chart(_ day: String) async throws -> [[String: Any]] {
                let object = try await harness.get(base + day).object()
                return try #require(
                    (object["boxOfficeResult"] as? [String: Any])?["dailyBoxOfficeList"] as? [[String: Any]]
                )
            }
            let yesterday = try await chart("20240220")
            let today = try await chart("20240221")
            let yesterdayCodes = yesterday.compactMap { $0["movieCd"] as? String }
            for entry in today {
                let code = try #require(entry["movieCd"] as? String)
                let isNew = entry["rankOldAndNew"] as? String == "NEW"
                #expect(isNew == !yesterdayCodes.contains(code), "\(code) NEW/OLD disagrees with yesterday")
                if !isNew, let previous = yesterdayCodes.firstIndex(of: code),
                    let rank = Int(entry["rank"] as? String ?? "")
                {
                    #expect(entry["rankInten"] as? String == String(previous + 1 - rank))
                }
            }
        }
    }

    @Test func faultsOccurAtAboutTheirRates() async throws {
        var settings = EmulatorSettings()
        settings.fault5xx = 0.2
        settings.faultReset = 0.1
        settings.faultTimeout = 0.1
        settings.faultMalformed = 0.3
        try await Harness.with(settings: settings) { harness in
            let total = 120
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for n in 0..<total {
                    group.addTask {
                        do {
                            let reply = try await harness.get("/tmdb/3/genre/movie/list?api_key=\(key)&n=\(n)")
                            if reply.status >= 500 { return "5xx" }
                            return (try? reply.json()) == nil ? "malformed" : "ok"
                        } catch {
                            return "error"
                        }
                    }
                }
                var outcomes: [String: Int] = [:]
                for try await outcome in group { outcomes[outcome, default: 0] += 1 }
                return outcomes
            }
            let stats = try await harness.stats()
            let faults = try #require(stats["faults"] as? [String: Int])
            // Expected: 5xx 24, reset 12, timeout 12, malformed 0.3 × 72 ≈ 22.
            #expect((12...40).contains(faults["5xx"] ?? 0), "\(faults)")
            #expect((4...22).contains(faults["reset"] ?? 0), "\(faults)")
            #expect((4...22).contains(faults["timeout"] ?? 0), "\(faults)")
            #expect((10...36).contains(faults["malformed"] ?? 0), "\(faults)")
            #expect(outcomes["5xx"] == faults["5xx"])
            #expect(outcomes["malformed"] == faults["malformed"])
            // Every timeout is a client error; a reset on a reused connection may be retried by libcurl (its
            // "connection died, retrying" rule), so resets can be fewer errors than injected faults.
            let errors = outcomes["error"] ?? 0
            #expect(errors >= faults["timeout"] ?? 0)
            #expect(errors <= (faults["reset"] ?? 0) + (faults["timeout"] ?? 0))
            #expect(errors > faults["timeout"] ?? 0, "no reset reached the client")
        }
    }

    @Test func truncatedImagesAndLatency() async throws {
        var settings = EmulatorSettings()
        settings.faultTruncatedImage = 1
        try await Harness.with(settings: settings) { harness in
            let object = try await harness.get("/tmdb/3/movie/popular?api_key=\(key)").object()
            let results = try #require(object["results"] as? [[String: Any]])
            let poster = try #require(results.compactMap { $0["poster_path"] as? String }.first)
            await #expect(throws: (any Error).self) { try await harness.get("/tmdb-images/t/p/w92\(poster)") }
            #expect((try await harness.stats()["faults"] as? [String: Int])?["truncatedImage"] == 1)
            try await harness.control(["faultTruncatedImage": 0, "latencyMs": 300])
            let clock = ContinuousClock()
            let start = clock.now
            #expect(try await harness.get("/tmdb-images/t/p/w92\(poster)").status == 200)
            #expect(clock.now - start >= .milliseconds(300))
        }
    }

    @Test func imagesAreRealJPEGsWithExifOrientationWhereExpected() async throws {
        try await Harness.with(movies: 400) { harness in
            let emulator = harness.server.emulator
            var checkedRotated = false
            var checkedUpright = false
            for page in 1...5 where !(checkedRotated && checkedUpright) {
                let object = try await harness.get("/tmdb/3/movie/popular?api_key=\(key)&page=\(page)").object()
                for result in try #require(object["results"] as? [[String: Any]]) {
                    guard let poster = result["poster_path"] as? String,
                        let spec = emulator.tmdbImage(size: "w185", file: poster)
                    else { continue }
                    let rotated = spec.orientation != 1
                    if rotated ? checkedRotated : checkedUpright { continue }
                    let reply = try await harness.get("/tmdb-images/t/p/w185\(poster)")
                    #expect(reply.status == 200)
                    #expect(reply.header("Content-Type") == "image/jpeg")
                    #expect(Array(reply.body.prefix(3)) == [0xFF, 0xD8, 0xFF])
                    let header = try #require(ImageHeader(reply.body))
                    if rotated {
                        #expect(header.orientation == spec.orientation)
                        #expect(header.width == 278 && header.height == 185)  // stored turned
                        checkedRotated = true
                    } else {
                        #expect(header.orientation == 1)
                        #expect(header.width == 185 && header.height == 278)
                        checkedUpright = true
                    }
                }
            }
            #expect(checkedRotated && checkedUpright)
            // Covers: sizes S/M/L, truthful Content-Type, 404 for an unknown one.
            let search = try await harness.get("/openlibrary/search.json?q=e&limit=50").object()
            let cover = try #require((search["docs"] as? [[String: Any]])?.compactMap { $0["cover_i"] as? Int }.first)
            let medium = try await harness.get("/covers/b/id/\(cover)-M.jpg")
            #expect(medium.status == 200)
            #expect(try #require(ImageHeader(medium.body)).width == 180)
            #expect(["image/jpeg", "image/png"].contains(medium.header("Content-Type") ?? ""))
            #expect(try await harness.get("/covers/b/id/1-M.jpg").status == 404)
        }
    }

    @Test func statsCountRoutesAndStatuses() async throws {
        try await Harness.with { harness in
            _ = try await harness.get("/tmdb/3/movie/popular?api_key=\(key)")
            _ = try await harness.get("/tmdb/3/movie/popular?api_key=wrong")
            _ = try await harness.get("/openlibrary/search.json?q=a")
            let stats = try await harness.stats()
            #expect((stats["routes"] as? [String: Int])?["tmdb.list"] == 2)
            #expect((stats["routes"] as? [String: Int])?["openlibrary.search"] == 1)
            #expect((stats["routeStatuses"] as? [String: [String: Int]])?["tmdb.list"]?["401"] == 1)
            _ = try await harness.get("/_stats/reset", method: "POST")
            #expect((try await harness.stats()["routes"] as? [String: Int])?["tmdb.list"] == nil)
        }
    }

    @Test func statsTimeEachUpstreamsFirstAndLastArrival() async throws {
        try await Harness.with { harness in
            func timing(_ stats: [String: Any]) throws -> [String: [String: Any]] {
                try #require(stats["timing"] as? [String: [String: Any]])
            }
            let clock = ContinuousClock()
            let start = clock.now
            for page in 1...3 { _ = try await harness.get("/tmdb/3/movie/popular?api_key=\(key)&page=\(page)") }
            let elapsed = clock.now - start
            _ = try await harness.get("/openlibrary/search.json?q=a")
            let stats = try timing(try await harness.stats())
            #expect(Set(stats.keys) == ["tmdb", "openlibrary"], "the emulator's own endpoints are not timed")
            let tmdb = try #require(stats["tmdb"])
            #expect(tmdb["requests"] as? Int == 3)
            let first = try #require(tmdb["first"] as? Double)
            let last = try #require(tmdb["last"] as? Double)
            #expect(first > 0 && last > first)
            // Arrival times: inside the span the client measured around the three requests.
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            #expect(last - first <= seconds + 1e-5)
            #expect(abs((first * 1e6).rounded() - first * 1e6) < 1e-3, "microsecond precision")
            let openLibrary = try #require(stats["openlibrary"])
            #expect(openLibrary["requests"] as? Int == 1)
            #expect(openLibrary["first"] as? Double == openLibrary["last"] as? Double)
            #expect(try #require(openLibrary["first"] as? Double) >= last)

            _ = try await harness.get("/_stats/reset", method: "POST")
            #expect(try timing(try await harness.stats()).isEmpty)
            _ = try await harness.get("/tmdb/3/movie/popular?api_key=\(key)")
            let again = try #require(try timing(try await harness.stats())["tmdb"])
            #expect(again["requests"] as? Int == 1)
            #expect(try #require(again["first"] as? Double) > last, "seconds since the emulator started, not the reset")
        }
    }

    @Test func launcherStartsTheBinaryAndControlsIt() async throws {
        let upstream = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "3", "--movies", "50", "--books", "20",
        ])
        defer { upstream.terminate() }
        #expect(upstream.tmdbBaseURL.hasPrefix("http://127.0.0.1:"))
        #expect(upstream.koficBaseURL.hasSuffix("/kofic/kobisopenapi/webservice/rest"))
        let settings = try await upstream.control(["fault5xx": 0.5])
        #expect(settings["fault5xx"] as? Double == 0.5)
        let down = try await upstream.outage("kofic", seconds: 30)
        #expect((down["outage"] as? [String: Any])?["upstream"] as? String == "kofic")
        let stats = try await upstream.stats()
        #expect((stats["routes"] as? [String: Int])?["control"] == 2)
    }
}

/// Width, height and EXIF orientation from libvips' header read (no pixel decode).
struct ImageHeader {
    let width: Int
    let height: Int
    let orientation: Int

    init?(_ bytes: [UInt8]) {
        _ = try? ImageRenderer.render(
            ImageSpec(seed: 0, width: 8, height: 8, format: .jpeg, orientation: 1, quality: 50)
        )  // vips_init
        guard
            let image = bytes.withUnsafeBytes({ CMarqueeVips_image_new_from_buffer($0.baseAddress!, $0.count, nil, 1) })
        else { return nil }
        defer { g_object_unref(image) }
        self.width = Int(vips_image_get_width(image))
        self.height = Int(vips_image_get_height(image))
        var orientation: Int32 = 1
        if vips_image_get_typeof(image, "orientation") != 0 { vips_image_get_int(image, "orientation", &orientation) }
        self.orientation = Int(orientation)
    }
}
