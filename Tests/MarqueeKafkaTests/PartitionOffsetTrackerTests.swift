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

extension PartitionOffsetTrackerTests {
    @Test func gapsSplitRunsAndOutOfOrderWorkAcrossThem() {
        var tracker = PartitionOffsetTracker()
        for offset: Int64 in [0, 1, 2, 5, 6, 9] { tracker.fetched(offset) }
        #expect(tracker.outstandingCount == 6)
        #expect(!advance(&tracker, 3))  // in a gap: not a message, ignored
        #expect(!advance(&tracker, 6))
        #expect(!advance(&tracker, 1))
        #expect(!advance(&tracker, 2))
        #expect(advance(&tracker, 0))
        #expect(tracker.committableOffset == 3)  // 5 is still in flight
        #expect(advance(&tracker, 5))
        #expect(tracker.committableOffset == 7)  // 6 was already done
        #expect(tracker.outstandingCount == 1)
        #expect(advance(&tracker, 9))
        #expect(tracker.committableOffset == 10)
        #expect(tracker.outstandingCount == 0)
        // A later fetch starts a new first run.
        tracker.fetched(12)
        #expect(advance(&tracker, 12))
        #expect(tracker.committableOffset == 13)
    }

    @Test func droppingCutsRunsAndForgetsTheirProcessedOffsets() {
        var tracker = PartitionOffsetTracker()
        for offset: Int64 in [0, 1, 2, 5, 6, 7, 10, 11] { tracker.fetched(offset) }
        #expect(!advance(&tracker, 6))
        #expect(!advance(&tracker, 10))
        tracker.dropFetched(from: 6)  // keeps 0...2 and 5
        #expect(tracker.outstandingCount == 4)
        tracker.fetched(6)
        tracker.fetched(7)
        for offset: Int64 in [0, 1, 2, 5] { tracker.processed(offset) }
        #expect(tracker.committableOffset == 6)  // 6 was dropped and fetched again: not processed yet
        #expect(advance(&tracker, 6))
        #expect(tracker.committableOffset == 7)
        tracker.dropFetched(from: 0)  // everything outstanding
        #expect(tracker.outstandingCount == 0)
        #expect(!advance(&tracker, 7))
        tracker.fetched(7)
        #expect(advance(&tracker, 7))
        #expect(tracker.committableOffset == 8)
    }
}

/// Marks an offset processed outside `#expect` (which cannot take a mutating call).
private func advance(_ tracker: inout PartitionOffsetTracker, _ offset: Int64) -> Bool {
    tracker.processed(offset)
}
