internal import DequeModule

/// Tracks which fetched messages of one partition were processed, and the offset that may be committed.
///
/// Messages may finish out of order; only the highest *contiguous* processed offset is committable, so a crash
/// never skips a message that was still in flight. Offsets are tracked in fetch order, not by arithmetic:
/// compacted topics and transaction markers leave gaps.
///
/// The pending offsets are kept as runs of consecutive offsets. A partition's offsets are almost always
/// consecutive, so fetching and processing in order (what a consumer does for every message) is arithmetic on
/// the first run, without touching a collection.
struct PartitionOffsetTracker: Sendable {
    /// The first run of fetched offsets not yet below the commit frontier; empty when nothing is pending.
    private var first: Range<Int64> = 0..<0
    /// The runs after `first`, in fetch order (separated by gaps). Empty whenever `first` is.
    private var later: Deque<Range<Int64>> = []
    /// Processed offsets that are not yet at the front of the pending ones.
    private var processedAhead: Set<Int64> = []

    /// The offset to commit: one past the last contiguous processed message, or `nil` before the first.
    private(set) var committableOffset: Int64?

    init() {}

    /// How many fetched messages are not yet processed (or are processed behind an unprocessed one).
    var outstandingCount: Int { self.later.reduce(self.first.count) { $0 + $1.count } }

    /// Records a message handed out (or about to be), in fetch order.
    mutating func fetched(_ offset: Int64) {
        if let last = self.later.last {
            precondition(offset >= last.upperBound, "offsets must be fetched in ascending order")
            if offset == last.upperBound {
                self.later[self.later.count - 1] = last.lowerBound..<(offset + 1)
            } else {
                self.later.append(offset..<(offset + 1))
            }
        } else if self.first.isEmpty {
            self.first = offset..<(offset + 1)
        } else {
            precondition(offset >= self.first.upperBound, "offsets must be fetched in ascending order")
            if offset == self.first.upperBound {
                self.first = self.first.lowerBound..<(offset + 1)
            } else {
                self.later.append(offset..<(offset + 1))
            }
        }
    }

    /// Records a processed message.
    ///
    /// - Returns: Whether ``committableOffset`` moved forward.
    @discardableResult
    mutating func processed(_ offset: Int64) -> Bool {
        guard offset == self.first.lowerBound, !self.first.isEmpty else {
            // Ahead of the frontier, or not outstanding (already committed, dropped before it was handed out, or
            // an offset that does not exist).
            if offset > self.first.lowerBound, self.isPending(offset) { self.processedAhead.insert(offset) }
            return false
        }
        var frontier = offset + 1
        self.removeFirstPending()
        // In-order processing (the common case) leaves nothing ahead: no hashing then.
        while !self.processedAhead.isEmpty, !self.first.isEmpty,
            self.processedAhead.remove(self.first.lowerBound) != nil
        {
            frontier = self.first.lowerBound + 1
            self.removeFirstPending()
        }
        self.committableOffset = frontier
        return true
    }

    /// Forgets fetched messages at `offset` and after: they were dropped before being handed out and will be
    /// fetched again.
    mutating func dropFetched(from offset: Int64) {
        while let last = self.later.last, last.upperBound > offset {
            if last.lowerBound >= offset {
                self.later.removeLast()
            } else {
                self.later[self.later.count - 1] = last.lowerBound..<offset
                break
            }
        }
        if self.later.isEmpty, self.first.upperBound > offset {
            self.first = self.first.lowerBound..<max(self.first.lowerBound, offset)
        }
        if !self.processedAhead.isEmpty { self.processedAhead = self.processedAhead.filter { $0 < offset } }
    }

    private func isPending(_ offset: Int64) -> Bool {
        self.first.contains(offset) || self.later.contains { $0.contains(offset) }
    }

    /// Removes the first pending offset.
    private mutating func removeFirstPending() {
        self.first = (self.first.lowerBound + 1)..<self.first.upperBound
        if self.first.isEmpty, let next = self.later.popFirst() { self.first = next }
    }
}
