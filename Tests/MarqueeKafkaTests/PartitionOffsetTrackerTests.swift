import Testing

@testable import MarqueeKafka

@Suite struct PartitionOffsetTrackerTests {
    @Test func inOrderProcessingAdvancesTheFrontierEachTime() {
        var tracker = PartitionOffsetTracker()
        for offset in Int64(10)..<15 { tracker.fetched(offset) }
        #expect(tracker.committableOffset == nil)
        #expect(advance(&tracker, 10))
        #expect(tracker.committableOffset == 11)
        #expect(advance(&tracker, 11))
        #expect(tracker.committableOffset == 12)
        #expect(tracker.outstandingCount == 3)
    }

    @Test func outOfOrderProcessingCommitsOnlyTheContiguousPrefix() {
        var tracker = PartitionOffsetTracker()
        for offset in Int64(0)..<6 { tracker.fetched(offset) }
        #expect(!advance(&tracker, 3))
        #expect(!advance(&tracker, 1))
        #expect(tracker.committableOffset == nil)
        #expect(advance(&tracker, 0))
        #expect(tracker.committableOffset == 2)  // 2 is still in flight
        #expect(advance(&tracker, 2))
        #expect(tracker.committableOffset == 4)  // 3 was already done
        #expect(tracker.outstandingCount == 2)
    }

    @Test func gapsInOffsetsDoNotBlockTheFrontier() {
        // Compacted topics and transaction markers leave holes in the offsets.
        var tracker = PartitionOffsetTracker()
        for offset: Int64 in [5, 9, 20] { tracker.fetched(offset) }
        #expect(!advance(&tracker, 9))
        #expect(advance(&tracker, 5))
        #expect(tracker.committableOffset == 10)
        #expect(advance(&tracker, 20))
        #expect(tracker.committableOffset == 21)
    }

    @Test func processingSomethingNotOutstandingChangesNothing() {
        var tracker = PartitionOffsetTracker()
        tracker.fetched(1)
        tracker.fetched(2)
        #expect(advance(&tracker, 1))
        #expect(!advance(&tracker, 1))  // twice
        #expect(!advance(&tracker, 0))  // before the window
        #expect(!advance(&tracker, 7))  // after it
        #expect(tracker.committableOffset == 2)
    }

    @Test func droppedMessagesAreForgottenAndCanBeFetchedAgain() {
        var tracker = PartitionOffsetTracker()
        for offset in Int64(0)..<5 { tracker.fetched(offset) }
        tracker.dropFetched(from: 3)
        #expect(tracker.outstandingCount == 3)
        #expect(!advance(&tracker, 4))  // dropped: ignored
        tracker.fetched(3)
        tracker.fetched(4)
        for offset in Int64(0)..<5 { tracker.processed(offset) }
        #expect(tracker.committableOffset == 5)
        #expect(tracker.outstandingCount == 0)
    }
}

/// Marks an offset processed outside `#expect` (which cannot take a mutating call).
private func advance(_ tracker: inout PartitionOffsetTracker, _ offset: Int64) -> Bool {
    tracker.processed(offset)
}
