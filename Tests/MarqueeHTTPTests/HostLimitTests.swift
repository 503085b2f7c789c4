import MarqueeHTTP
import Testing

@Suite(.timeLimit(.minutes(2)))
struct HostLimitTests {
    @Test func rateLimitSpacesRequestsOfABucket() async throws {
        let server = try await TestHTTPServer.start()
        let configuration = testConfiguration {
            $0.hostLimits = [server.hostKey: HostLimit(requestsPerSecond: 20, burst: 2, maxConcurrent: 100)]
        }
        try await withFetcherOn(server, configuration) { fetcher in
            let clock = ContinuousClock()
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<22 {
                    group.addTask { _ = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=1")) }
                }
                try await group.waitForAll()
            }
            let elapsed = clock.now - start
            // 2 start at once (the burst), the other 20 one every 50 ms: at least 1 s.
            #expect(elapsed >= .milliseconds(990), "\(elapsed)")
            #expect(elapsed < .seconds(10))
            #expect(server.snapshot.requests["/bytes"] == 22)
        }
    }

    @Test func bucketsAreIndependent() async throws {
        let server = try await TestHTTPServer.start()
        let configuration = testConfiguration {
            $0.hostLimits = ["slow": HostLimit(requestsPerSecond: 0.05, burst: 1)]
        }
        try await withFetcherOn(server, configuration) { fetcher in
            _ = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=1", limitKey: "slow"))
            // "slow" has no token for twenty seconds (long enough for five fetches on a machine loaded by a
            // parallel test run; five seconds were not); another bucket on the same host is not held back.
            let waiting = Task {
                try await fetcher.fetch(FetchRequest(url: server.baseURL + "/delay?ms=0", limitKey: "slow"))
            }
            for _ in 0..<5 {
                #expect(try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=1")).status == 200)
            }
            #expect(server.snapshot.requests["/delay"] == nil, "the second request of \"slow\" still waits")
            #expect(try await waiting.value.status == 200)
        }
    }

    @Test func maxConcurrentBoundsRequestsInFlight() async throws {
        let server = try await TestHTTPServer.start()
        let configuration = testConfiguration {
            $0.defaultHostLimit = HostLimit(requestsPerSecond: .infinity, burst: 1, maxConcurrent: 3)
        }
        try await withFetcherOn(server, configuration) { fetcher in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await fetcher.fetch(FetchRequest(url: server.baseURL + "/delay?ms=30")).status }
                }
                for try await status in group { #expect(status == 200) }
            }
            #expect(server.snapshot.peakInFlight <= 3, "never more than maxConcurrent in flight")
            #expect(server.snapshot.peakInFlight >= 2, "but they did overlap")
            #expect(server.snapshot.requests["/delay"] == 20)
        }
    }

    @Test func cancellingAWaitingFetchEndsItsWait() async throws {
        let server = try await TestHTTPServer.start()
        let configuration = testConfiguration {
            $0.hostLimits = ["one": HostLimit(requestsPerSecond: .infinity, burst: 1, maxConcurrent: 1)]
        }
        try await withFetcherOn(server, configuration) { fetcher in
            let holder = Task { try await fetcher.fetch(FetchRequest(url: server.baseURL + "/hang", limitKey: "one")) }
            await server.wait { $0.requests["/hang"] == 1 }
            let waiter = Task { () async throws -> FetchResponse in
                try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=1", limitKey: "one"))
            }
            waiter.cancel()
            let error = try #require(await expectTaskError(waiter))
            #expect(error.code == .cancelled)
            #expect(server.snapshot.requests["/bytes"] == nil)
            holder.cancel()
            _ = await holder.result
            // The place is free again.
            #expect(
                try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=1", limitKey: "one")).status == 200
            )
        }
    }

    @Test func retryAfterBlocksTheBucket() async throws {
        let server = try await TestHTTPServer.start()
        try await withFetcherOn(server, testConfiguration()) { fetcher in
            let clock = ContinuousClock()
            // The block runs from when the 429 arrived, which is after this instant and before the fetch returns.
            let start = clock.now
            let limited = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/status?code=429&retry=1"))
            #expect(limited.status == 429)
            #expect(limited.retryAfter == .seconds(1))
            let next = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=1"))
            #expect(next.status == 200)
            #expect(clock.now - start >= .milliseconds(990), "the next request of the bucket waited out Retry-After")

            // A 503 with an HTTP-date in the past blocks nothing; other buckets are never blocked.
            let unavailable = try await fetcher.fetch(
                FetchRequest(url: server.baseURL + "/status?code=503&retry=Wed,%2021%20Oct%202015%2007:28:00%20GMT")
            )
            #expect(unavailable.retryAfter == .zero)
        }
    }

    @Test func retryAfterDoesNotBlockOtherBuckets() async throws {
        let server = try await TestHTTPServer.start()
        try await withFetcherOn(server, testConfiguration()) { fetcher in
            let clock = ContinuousClock()
            let limited = try await fetcher.fetch(
                FetchRequest(url: server.baseURL + "/status?code=429&retry=30", limitKey: "kofic")
            )
            #expect(limited.retryAfter == .seconds(30))
            let blocked = Task { () async throws -> FetchResponse in
                try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=2", limitKey: "kofic"))
            }
            let start = clock.now
            #expect(
                try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=1", limitKey: "tmdb")).status
                    == 200
            )
            #expect(clock.now - start < .seconds(20))
            blocked.cancel()
            let error = try #require(await expectTaskError(blocked))
            #expect(error.code == .cancelled)
            #expect(server.snapshot.requests["/bytes"] == 1, "the blocked bucket sent nothing")
        }
    }

    private func withFetcherOn(
        _ server: TestHTTPServer,
        _ configuration: HTTPFetcherConfiguration,
        _ body: (HTTPFetcher) async throws -> Void
    ) async throws {
        let fetcher = try HTTPFetcher(configuration: configuration, logger: .marqueeHTTPTest)
        do {
            try await body(fetcher)
        } catch {
            await fetcher.shutdown()
            try? await server.close()
            throw error
        }
        await fetcher.shutdown()
        try await server.close()
    }
}
