import Testing

@testable import MarqueeLimits

/// The store's times on this host's clock: the most certain reading is kept, and a late answer does not move it.
@Suite struct StoreClockTests {
    let origin = ContinuousClock.now

    @Test func beforeAnyAnswerThereIsNoMapping() {
        #expect(StoreClock().local(1_000) == nil)
    }

    @Test func theStoresNowIsTakenAtTheMiddleOfTheRoundTrip() {
        var clock = StoreClock()
        clock.observe(storeNow: 5_000_000, sent: self.origin, received: self.origin + .milliseconds(10))
        #expect(clock.local(5_000_000) == self.origin + .milliseconds(5))
        #expect(clock.local(5_025_000) == self.origin + .milliseconds(30))
    }

    @Test func anAnswerReadLateDoesNotShiftTheMappingOfAQuickerOne() {
        var clock = StoreClock()
        // A quick round trip (2 ms) first, then one read 40 ms late by a starved thread: the store's clock ran on by
        // 100 ms between the two, and the local clock by 140 ms.
        clock.observe(storeNow: 1_000_000, sent: self.origin, received: self.origin + .milliseconds(2))
        clock.observe(
            storeNow: 1_100_000,
            sent: self.origin + .milliseconds(100),
            received: self.origin + .milliseconds(142)
        )
        #expect(clock.local(1_200_000) == self.origin + .milliseconds(201))
    }

    @Test func aQuickerAnswerReplacesASlowerOne() {
        var clock = StoreClock()
        clock.observe(storeNow: 1_000_000, sent: self.origin, received: self.origin + .milliseconds(40))
        clock.observe(
            storeNow: 1_100_000,
            sent: self.origin + .milliseconds(100),
            received: self.origin + .milliseconds(102)
        )
        #expect(clock.local(1_100_000) == self.origin + .milliseconds(101))
    }

    @Test func anOldEstimateGivesWayToANewerOneOfSimilarUncertainty() {
        var clock = StoreClock()
        clock.observe(storeNow: 0, sent: self.origin, received: self.origin + .milliseconds(2))
        // 100 s later the old estimate counts 1 ms + 10 ms of aging; a reading with 4 ms of uncertainty wins, and
        // the clocks' drift since (here 3 ms) is taken in.
        clock.observe(
            storeNow: 100_000_000,
            sent: self.origin + .seconds(100),
            received: self.origin + .seconds(100) + .milliseconds(8)
        )
        #expect(clock.local(100_000_000) == self.origin + .seconds(100) + .milliseconds(4))
    }
}
