internal import DequeModule

/// Tracks which fetched messages of one partition were processed, and the offset that may be committed.
///
/// Messages may finish out of order; only the highest *contiguous* processed offset is committable, so a crash
/// never skips a message that was still in flight. Offsets are tracked in fetch order, not by arithmetic:
/// compacted topics and transaction markers leave gaps.
struct PartitionOffsetTracker: Sendable {
    /// Fetched offsets not yet below the commit frontier, in fetch order.
    private var pending: Deque<Int64> = []
    /// Processed offsets that are not yet at the front of `pending`.
    private var processedAhead: Set<Int64> = []

    /// The offset to commit: one past the last contiguous processed message, or `nil` before the first.
    private(set) var committableOffset: Int64?

    init() {}

    /// How many fetched messages are not yet processed (or are processed behind an unprocessed one).
    var outstandingCount: Int { self.pending.count }

    /// Records a message handed out (or about to be), in fetch order.
    mutating func fetched(_ offset: Int64) {
        precondition(self.pending.last.map { offset > $0 } ?? true, "offsets must be fetched in ascending order")
        self.pending.append(offset)
    }

    /// Records a processed message.
    ///
    /// - Returns: Whether ``committableOffset`` moved forward.
    @discardableResult
    mutating func processed(_ offset: Int64) -> Bool {
        guard let first = self.pending.first, let last = self.pending.last, offset >= first, offset <= last else {
            return false  // not outstanding: already committed, or dropped before it was handed out
        }
        guard offset == first else {
            self.processedAhead.insert(offset)
            return false
        }
        self.pending.removeFirst()
        var frontier = offset + 1
        // In-order processing (the common case) leaves nothing ahead: no hashing then.
        while !self.processedAhead.isEmpty, let next = self.pending.first, self.processedAhead.remove(next) != nil {
            self.pending.removeFirst()
            frontier = next + 1
        }
        self.committableOffset = frontier
        return true
    }

    /// Forgets fetched messages at `offset` and after: they were dropped before being handed out and will be
    /// fetched again.
    mutating func dropFetched(from offset: Int64) {
        while let last = self.pending.last, last >= offset {
            self.pending.removeLast()
            self.processedAhead.remove(last)
        }
    }
}
