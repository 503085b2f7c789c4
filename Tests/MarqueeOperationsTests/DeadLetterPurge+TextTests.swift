import MarqueeOperations
import Testing

@Suite struct DeadLetterPurgeTextTests {
    @Test func aPurgeSaysWhatItHidByStageAndWhereEachPartitionNowStarts() {
        let purge = DeadLetterPurgeTests.purge(
            starts: [DeadLetterPurgeTests.zero: 3, DeadLetterPurgeTests.one: 0],
            [(0, 3, true), (0, 4, true), (0, 5, false), (0, 6, true), (1, 0, true)]
        )
        #expect(
            purge.text(alreadyPurged: 1, verb: "purged") == """
                3 dead letters purged (fetch 3)
                  marquee.fetch.dlq/0: purged up to offset 5 (was 3)
                  marquee.fetch.dlq/1: purged up to offset 1 (was 0)
                1 already purged
                """
        )
        #expect(
            purge.blockedReason
                == "1 selected letter could not be hidden: each comes after a letter of its partition that was not "
                + "selected, and a purge never hides those (fetch/0/6)"
        )
    }

    @Test func aPurgeOfNothingSaysSoAndHidesEverySelectedLetter() {
        let purge = DeadLetterPurgeTests.purge(starts: [DeadLetterPurgeTests.zero: 0], [])
        #expect(
            purge.text(alreadyPurged: 0, verb: "would be purged (dry run)")
                == "0 dead letters would be purged (dry run)"
        )
        #expect(purge.blockedReason == nil)
    }
}
