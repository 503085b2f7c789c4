import MarqueePipeline
import Testing

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(delays: [.seconds(10), .seconds(60), .seconds(600)], jitter: 0.1)

    @Test func eachFailureMovesOneTierOn() {
        #expect(
            self.policy.decide(currentTier: 0, minimumWait: nil, nowMilliseconds: 0, random: 0.5)
                == .retry(tier: 1, notBefore: 10_000)
        )
        #expect(
            self.policy.decide(currentTier: 1, minimumWait: nil, nowMilliseconds: 0, random: 0.5)
                == .retry(tier: 2, notBefore: 60_000)
        )
        #expect(
            self.policy.decide(currentTier: 2, minimumWait: nil, nowMilliseconds: 0, random: 0.5)
                == .retry(tier: 3, notBefore: 600_000)
        )
        #expect(self.policy.decide(currentTier: 3, minimumWait: nil, nowMilliseconds: 0, random: 0.5) == .deadLetter)
    }

    @Test func jitterStaysWithinItsFraction() {
        #expect(
            self.policy.decide(currentTier: 0, minimumWait: nil, nowMilliseconds: 1000, random: 0)
                == .retry(tier: 1, notBefore: 10_000)
        )
        #expect(
            self.policy.decide(currentTier: 0, minimumWait: nil, nowMilliseconds: 1000, random: 0.999_999)
                == .retry(tier: 1, notBefore: 12_000)
        )
    }

    @Test func aMinimumWaitPicksTheFirstTierThatCoversIt() {
        // Retry-After: 30 s → the 1-minute tier.
        #expect(
            self.policy.decide(currentTier: 0, minimumWait: .seconds(30), nowMilliseconds: 0, random: 0.5)
                == .retry(tier: 2, notBefore: 60_000)
        )
        // A quota reset in 2 hours: the last tier, but never before the reset.
        #expect(
            self.policy.decide(currentTier: 0, minimumWait: .seconds(7200), nowMilliseconds: 0, random: 0)
                == .retry(tier: 3, notBefore: 7_200_000)
        )
        // Jitter never makes it earlier than the minimum.
        #expect(
            self.policy.decide(currentTier: 0, minimumWait: .seconds(10), nowMilliseconds: 0, random: 0)
                == .retry(tier: 1, notBefore: 10_000)
        )
    }

    @Test func aHeldJobWaitsInTheTierThatCoversItsWaitButNoLongerThanThatTier() {
        // A probe in 5 s: the 10-second tier, due in 5 s.
        #expect(self.policy.hold(wait: .seconds(5), nowMilliseconds: 1000)! == (1, 6000))
        // 30 s: the 1-minute tier, due in 30 s.
        #expect(self.policy.hold(wait: .seconds(30), nowMilliseconds: 0)! == (2, 30_000))
        // A budget reset in 2 hours: the last tier, one 10-minute hop at a time (its partitions are not held up).
        #expect(self.policy.hold(wait: .seconds(7200), nowMilliseconds: 0)! == (3, 600_000))
        #expect(RetryPolicy(delays: []).hold(wait: .seconds(5), nowMilliseconds: 0) == nil, "no tiers: nowhere to hold")
    }

    @Test func topicsNameTiersAndDeadLetters() {
        let topics = StageTopics(stage: "fetch", prefix: "marquee.", tiers: 3)
        #expect(
            topics.consumed == [
                "marquee.fetch", "marquee.fetch.retry.1", "marquee.fetch.retry.2", "marquee.fetch.retry.3",
            ]
        )
        #expect(topics.dlq == "marquee.fetch.dlq")
        #expect(topics.tier(of: "marquee.fetch.retry.2") == 2)
        #expect(topics.tier(of: "marquee.fetch") == nil)
        #expect(topics.tier(of: "marquee.fetch.retry.4") == nil)
        #expect(topics.topic(ofStage: "records") == "marquee.records")
    }
}
