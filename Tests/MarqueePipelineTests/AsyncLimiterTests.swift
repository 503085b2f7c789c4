import MarqueePipeline
import Testing

@Suite struct AsyncLimiterTests {
    @Test func closingReleasesWhoeverWaitsForAPlace() async {
        let limiter = AsyncLimiter(limit: 1)
        #expect(await limiter.acquire())
        async let waiting = limiter.acquire()  // no place: waits
        limiter.close()
        #expect(await waiting == false, "the waiter was let go without a place")
        #expect(await limiter.acquire() == false, "closed: nothing is admitted")
        #expect(limiter.inUse == 1, "the holder keeps its place")
        limiter.release()
        #expect(limiter.inUse == 0)
    }

    @Test func placesPassToWaitersInOrder() async {
        let limiter = AsyncLimiter(limit: 1)
        #expect(await limiter.acquire())
        async let second = limiter.acquire()
        limiter.release()
        #expect(await second)
        #expect(limiter.inUse == 1)
    }
}
