import Logging
import MarqueeHTTP
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(2)))
struct HTTPFetcherTests {
    // MARK: - Basics

    @Test func fetchesABodyAndSendsTheUserAgentAndCallerHeaders() async throws {
        try await withFetcher { fetcher, server in
            let request = FetchRequest(
                url: server.baseURL + "/echo",
                headers: [HTTPHeader(name: "Authorization", value: "KakaoAK test-key")]
            )
            let response = try await fetcher.fetch(request)
            #expect(response.status == 200)
            #expect(response.httpVersion == "1.1")
            let echoed = String(decoding: response.body, as: UTF8.self)
            #expect(echoed.contains("user-agent: Marquee/0.1 (+https://github.com/marquee)"))
            #expect(echoed.contains("authorization: KakaoAK test-key"))
            #expect(
                response.header("Content-Length") == "\(response.body.count)",
                "names are matched case-insensitively"
            )
            #expect(response.headers.allSatisfy { $0.name == $0.name.lowercased() })
        }
    }

    @Test func errorStatusesAreResponses() async throws {
        try await withFetcher { fetcher, server in
            let notFound = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/nothing-here"))
            #expect(notFound.status == 404)
            let failing = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/status?code=500"))
            #expect(failing.status == 500)
            #expect(fetcher.statistics.responsesByStatus == [404: 1, 500: 1])
        }
    }

    @Test func decodesGzip() async throws {
        try await withFetcher { fetcher, server in
            let response = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/gzip"))
            #expect(response.header("content-encoding") == "gzip")
            #expect(response.body == TestHTTPServer.gzipPlain)
            #expect(response.downloadedBytes < TestHTTPServer.gzipPlain.count, "the wire carried the compressed form")
            let accepted = server.snapshot.lastHeaders["/gzip"]?.first { $0.0 == "accept-encoding" }?.1
            #expect(accepted?.contains("gzip") == true)
        }
    }

    // MARK: - Concurrency and connections

    @Test func twoHundredFetchesInFlightAllComplete() async throws {
        let configuration = testConfiguration { $0.maxConnectionsPerHost = 50 }
        try await withFetcher(configuration) { fetcher, server in
            let clock = ContinuousClock()
            let start = clock.now
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        try await fetcher.fetch(FetchRequest(url: server.baseURL + "/delay?ms=200")).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let elapsed = clock.now - start
            #expect(statuses.count == 200)
            #expect(statuses.allSatisfy { $0 == 200 })
            let snapshot = server.snapshot
            #expect(snapshot.peakInFlight > 1, "requests overlapped")
            #expect(snapshot.peakInFlight <= 50, "maxConnectionsPerHost bounds the connections (HTTP/1.1)")
            #expect(snapshot.connectionsOpened <= 50)
            #expect(elapsed < .seconds(200 * 0.2 / 2), "far faster than one at a time (40 s)")
        }
    }

    @Test func reusesConnectionsAcrossFetches() async throws {
        try await withFetcher { fetcher, server in
            var newConnections = 0
            for _ in 0..<30 {
                let response = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=100"))
                #expect(response.status == 200)
                newConnections += response.newConnections
            }
            #expect(newConnections == 1, "CURLINFO_NUM_CONNECTS summed over 30 sequential fetches")
            #expect(server.snapshot.connectionsOpened == 1)
            #expect(server.snapshot.requests["/bytes"] == 30)
            #expect(fetcher.statistics.connectionsOpened == 1)
        }
    }

    // MARK: - Conditional requests

    @Test func notModifiedRoundTripThroughTheValidatorCache() async throws {
        let cache = InMemoryValidatorCache()
        try await withFetcher(validatorCache: cache) { fetcher, server in
            let url = server.baseURL + "/etag?api_key=SECRET"
            let first = try await fetcher.fetch(FetchRequest(url: url))
            #expect(first.status == 200)
            #expect(first.validators == HTTPValidators(etag: "\"v1\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"))
            #expect(cache.validators(for: server.baseURL + "/etag?api_key=REDACTED") == first.validators)
            #expect(cache.validators(for: url) == nil, "keyed by the redacted URL")

            let second = try await fetcher.fetch(FetchRequest(url: url))
            #expect(second.isNotModified)
            #expect(second.body.isEmpty)
            let sent = server.snapshot.lastHeaders["/etag"] ?? []
            #expect(sent.contains { $0 == ("if-none-match", "\"v1\"") })
            #expect(sent.contains { $0 == ("if-modified-since", "Wed, 21 Oct 2015 07:28:00 GMT") })
            #expect(server.snapshot.notModified == 1)

            var unconditional = FetchRequest(url: url)
            unconditional.isConditional = false
            #expect(try await fetcher.fetch(unconditional).status == 200)
            #expect(fetcher.statistics.conditionalRequests == 1)
            #expect(fetcher.statistics.notModified == 1)
        }
    }

    // MARK: - Caps and redirects

    @Test func bodyCapRejectsALargeContentLengthEarly() async throws {
        try await withFetcher { fetcher, server in
            var request = FetchRequest(url: server.baseURL + "/bytes?n=2000")
            request.maxBodyBytes = 1000
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(request) }
            )
            #expect(error.code == .tooLarge)
            #expect(error.reason.contains("Content-Length 2000"))
            #expect(!error.isRetriable)

            request.url = server.baseURL + "/bytes?n=1000"
            #expect(try await fetcher.fetch(request).body.count == 1000, "a body of exactly the cap is accepted")
        }
    }

    @Test func bodyCapStopsAChunkedBodyWhileDownloading() async throws {
        let configuration = testConfiguration { $0.maxBodyBytes = 3000 }
        try await withFetcher(configuration) { fetcher, server in
            let request = FetchRequest(url: server.baseURL + "/bytes?n=50000&chunked=1")
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(request) }
            )
            #expect(error.code == .tooLarge)
            #expect(error.reason.contains("while downloading"))

            let small = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=2500&chunked=1"))
            #expect(small.body == (0..<2500).map { UInt8($0 % 251) })
        }
    }

    @Test func followsRedirectsUpToTheLimit() async throws {
        let configuration = testConfiguration { $0.maxRedirects = 3 }
        try await withFetcher(configuration) { fetcher, server in
            let response = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/redirect?n=3"))
            #expect(response.status == 200)
            #expect(response.redirectCount == 3)
            #expect(response.effectiveURL == server.baseURL + "/redirect?n=0")
            #expect(String(decoding: response.body, as: UTF8.self) == "done")

            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in
                    try await fetcher.fetch(FetchRequest(url: server.baseURL + "/redirect?n=4"))
                }
            )
            #expect(error.code == .tooManyRedirects)
            #expect(server.snapshot.requests["/redirect"] == 4 + 4, "stopped after the 4th redirect response")
        }
    }

    @Test func dropsCallerHeadersWhenARedirectLeavesTheOrigin() async throws {
        try await withFetcher { fetcher, server in
            let target = "http://localhost:\(server.port)/echo"
            let request = FetchRequest(
                url: server.baseURL + "/redirect-to?url="
                    + target.replacing(":", with: "%3A").replacing("/", with: "%2F"),
                headers: [HTTPHeader(name: "Authorization", value: "KakaoAK secret-key")]
            )
            let response = try await fetcher.fetch(request)
            #expect(response.status == 200)
            let echoed = String(decoding: response.body, as: UTF8.self)
            #expect(echoed.contains("user-agent: Marquee"))
            #expect(!echoed.contains("secret-key"), "credentials stay with the original origin")
        }
    }

    // MARK: - Failures

    @Test func connectTimeoutEndsWithinItsBound() async throws {
        let blackhole = try BlackholePort()
        let configuration = testConfiguration { $0.connectTimeout = .milliseconds(500) }
        try await withFetcher(configuration) { fetcher, _ in
            let clock = ContinuousClock()
            let start = clock.now
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in
                    try await fetcher.fetch(FetchRequest(url: "http://127.0.0.1:\(blackhole.port)/"))
                }
            )
            let elapsed = clock.now - start
            #expect(error.code == .timeout)
            #expect(error.isRetriable)
            #expect(elapsed >= .milliseconds(450))
            #expect(elapsed < .seconds(5))
        }
    }

    @Test func closedPortIsAConnectFailure() async throws {
        let port = try closedPort()
        try await withFetcher { fetcher, _ in
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in
                    try await fetcher.fetch(FetchRequest(url: "http://127.0.0.1:\(port)/"))
                }
            )
            #expect(error.code == .connectFailed)
            #expect(error.isRetriable)
            #expect(error.description.contains("127.0.0.1:\(port)"))
        }
    }

    @Test func totalTimeoutStopsASlowServer() async throws {
        let configuration = testConfiguration {
            $0.totalTimeout = .seconds(1)
            $0.lowSpeedLimit = 0
        }
        try await withFetcher(configuration) { fetcher, server in
            let clock = ContinuousClock()
            let start = clock.now
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in
                    try await fetcher.fetch(FetchRequest(url: server.baseURL + "/slow"))
                }
            )
            let elapsed = clock.now - start
            #expect(error.code == .timeout)
            #expect(elapsed >= .milliseconds(950))
            #expect(elapsed < .seconds(6))
        }
    }

    @Test func lowSpeedLimitStopsATrickle() async throws {
        let configuration = testConfiguration {
            $0.lowSpeedLimit = 1024
            $0.lowSpeedTime = .seconds(1)
        }
        try await withFetcher(configuration) { fetcher, server in
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in
                    try await fetcher.fetch(FetchRequest(url: server.baseURL + "/slow"))
                }
            )
            #expect(error.code == .timeout)
        }
    }

    @Test func connectionResetIsRetriable() async throws {
        try await withFetcher { fetcher, server in
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in
                    try await fetcher.fetch(FetchRequest(url: server.baseURL + "/reset"))
                }
            )
            #expect(error.code == .connectionReset || error.code == .transfer)
            #expect(error.isRetriable)
        }
    }

    @Test func invalidURLsAreRejected() async throws {
        try await withFetcher { fetcher, _ in
            for url in ["not a url", "ftp://example.org/file", "file:///etc/passwd"] {
                let error = try #require(
                    await expectFetchError { () async throws(HTTPFetchError) in
                        try await fetcher.fetch(FetchRequest(url: url))
                    }
                )
                #expect(error.code == .invalidURL, "\(url)")
                #expect(!error.isRetriable)
            }
        }
    }

    // MARK: - Cancellation and shutdown

    @Test func cancellationRemovesTheTransferAndClosesItsConnection() async throws {
        try await withFetcher { fetcher, server in
            let task = Task { () async throws -> FetchResponse in
                try await fetcher.fetch(FetchRequest(url: server.baseURL + "/hang"))
            }
            await server.wait { $0.requests["/hang"] == 1 }
            task.cancel()
            let error = try #require(await expectTaskError(task))
            #expect(error.code == .cancelled)
            await server.wait { $0.connectionsClosed == 1 }
            #expect(server.snapshot.connectionsClosed == 1, "the hanging connection was closed by the client")

            // The fetcher still works afterwards.
            #expect(try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=10")).status == 200)
        }
    }

    @Test func shutdownFailsQueuedAndInFlightFetches() async throws {
        let server = try await TestHTTPServer.start()
        let configuration = testConfiguration {
            $0.hostLimits = ["held": HostLimit(requestsPerSecond: .infinity, burst: 1, maxConcurrent: 2)]
        }
        let fetcher = try HTTPFetcher(configuration: configuration, logger: .marqueeHTTPTest)
        let tasks = (0..<3).map { _ in
            Task { () async throws -> FetchResponse in
                try await fetcher.fetch(FetchRequest(url: server.baseURL + "/hang", limitKey: "held"))
            }
        }
        await server.wait { $0.requests["/hang"] == 2 }  // the third waits for a place in its bucket
        await fetcher.shutdown()
        for task in tasks {
            let error = try #require(await expectTaskError(task))
            #expect(error.code == .shutdown)
        }
        let after = try #require(
            await expectFetchError { () async throws(HTTPFetchError) in
                try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=1"))
            }
        )
        #expect(after.code == .shutdown)
        #expect(server.snapshot.requests["/hang"] == 2)
        try await server.close()
    }

    // MARK: - Image policy

    @Test func imageHostsOffTheAllowlistAreRefusedBeforeConnecting() async throws {
        let configuration = testConfiguration { $0.imageHostAllowlist = ["image.tmdb.org", "*.kakaocdn.net"] }
        try await withFetcher(configuration) { fetcher, server in
            let request = FetchRequest(url: server.baseURL + "/bytes?n=10", purpose: .image)
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(request) }
            )
            #expect(error.code == .hostNotAllowed)
            #expect(error.reason.contains("127.0.0.1"), "the reason names the host")
            #expect(!error.isRetriable)
            #expect(server.snapshot.connectionsOpened == 0)

            // The same URL as an API call is fetched.
            #expect(try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=10")).status == 200)
        }
    }

    @Test func imageRedirectsToHostsOffTheAllowlistAreRefused() async throws {
        try await withFetcher { fetcher, server in
            let target = "http%3A%2F%2Flocalhost%3A\(server.port)%2Fbytes%3Fn%3D10"
            let request = FetchRequest(url: server.baseURL + "/redirect-to?url=" + target, purpose: .image)
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(request) }
            )
            #expect(error.code == .hostNotAllowed)
            #expect(
                error.reason
                    == "redirect from \(server.baseURL)/redirect-to?url=\(target) to http://localhost:\(server.port)/bytes?n=10 "
                    + "refused: image host localhost is not on the image host allowlist",
                "the reason says it was a redirect, from where to where"
            )
            #expect(error.url == "http://localhost:\(server.port)/bytes?n=10", "the hop refused")
            #expect(server.snapshot.requests["/bytes"] == nil)
        }
    }

    @Test func redirectsToASchemeOtherThanHTTPAreRefusedAsRedirects() async throws {
        try await withFetcher { fetcher, server in
            for target in ["ftp://127.0.0.1/file", "file:///etc/passwd", "gopher://127.0.0.1:70/"] {
                let encoded = target.replacing(":", with: "%3A").replacing("/", with: "%2F")
                let request = FetchRequest(url: server.baseURL + "/redirect-to?url=" + encoded)
                let error = try #require(
                    await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(request) }
                )
                #expect(error.code == .invalidURL, "\(target)")
                #expect(
                    error.reason.hasPrefix(
                        "redirect from \(server.baseURL)/redirect-to?url=\(encoded) to \(target) refused: "
                    ),
                    "\(error.reason)"
                )
                #expect(!error.isRetriable)
            }
        }
    }

    @Test func aRefusedRedirectNamesBothHopsWithoutSecrets() async throws {
        try await withFetcher { fetcher, server in
            // The origin carries a key; the target the server redirects to carries it back, with a password.
            let target = "http%3A%2F%2Fuser%3ASECRET%40localhost%3A\(server.port)%2Fimg%3Fapi_key%3DSECRET"
            let request = FetchRequest(
                url: server.baseURL + "/redirect-to?api_key=SECRET&url=" + target,
                purpose: .image
            )
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(request) }
            )
            #expect(error.code == .hostNotAllowed)
            #expect(
                error.reason.hasPrefix("redirect from \(server.baseURL)/redirect-to?api_key=REDACTED&url="),
                "\(error.reason)"
            )
            #expect(
                error.reason.contains("localhost:\(server.port)/img?api_key=REDACTED refused: image host localhost"),
                "\(error.reason)"
            )
            for text in [error.reason, error.description, String(reflecting: error)] {
                #expect(!text.contains("SECRET"), "\(text)")
            }
        }
    }

    @Test func privateAddressesAreRefusedForImagesUnlessAllowed() async throws {
        let strict = testConfiguration {
            $0.allowsPrivateAddresses = false
            $0.imageHostAllowlist = ["127.0.0.1", "localhost"]
        }
        try await withFetcher(strict) { fetcher, server in
            for host in ["127.0.0.1", "localhost"] {
                let request = FetchRequest(url: "http://\(host):\(server.port)/bytes?n=10", purpose: .image)
                let error = try #require(
                    await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(request) }
                )
                #expect(error.code == .addressNotAllowed, "\(host)")
                #expect(error.reason.contains("127.0.0.1") || error.reason.contains("::1"), "\(error.reason)")
                #expect(!error.isRetriable)
            }
            #expect(server.snapshot.connectionsOpened == 0, "refused before connecting")

            // An API request opens a connection to the server; an image request must not ride on it.
            #expect(try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=1")).status == 200)
            let reuse = FetchRequest(url: server.baseURL + "/bytes?n=10", purpose: .image)
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(reuse) }
            )
            #expect(error.code == .addressNotAllowed)
            #expect(server.snapshot.requests["/bytes"] == 1)
        }
        let permissive = testConfiguration { $0.allowsPrivateAddresses = true }
        try await withFetcher(permissive) { fetcher, server in
            let request = FetchRequest(url: server.baseURL + "/bytes?n=10", purpose: .image)
            let response = try await fetcher.fetch(request)
            #expect(response.body.count == 10)
        }
    }

    // MARK: - Secrets

    @Test func errorsAndLogsNeverContainSecrets() async throws {
        let port = try closedPort()
        let store = CapturingLogHandler.Lines()
        let logger = Logger(label: "capture") { _ in CapturingLogHandler(store: store) }
        try await withFetcher(logger: logger) { fetcher, server in
            let failing = FetchRequest(
                url: "http://127.0.0.1:\(port)/movie?api_key=SECRET&language=ko-KR",
                headers: [HTTPHeader(name: "Authorization", value: "KakaoAK HEADERSECRET")]
            )
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(failing) }
            )
            #expect(!error.description.contains("SECRET"))
            #expect(!String(reflecting: error).contains("SECRET"))
            #expect(error.description.contains("api_key=REDACTED&language=ko-KR"))

            let succeeding = FetchRequest(
                url: server.baseURL + "/redirect?n=1&serviceKey=SECRET",
                headers: [HTTPHeader(name: "Authorization", value: "KakaoAK HEADERSECRET")]
            )
            #expect(try await fetcher.fetch(succeeding).status == 200)
        }
        let lines = store.lines.withLock { $0 }
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { !$0.contains("SECRET") }, "\(lines)")
        #expect(lines.contains { $0.contains("api_key=REDACTED") })
    }
}
