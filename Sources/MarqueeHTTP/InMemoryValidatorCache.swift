import DequeModule

/// A bounded in-process ``ValidatorCache`` that evicts the least recently used key.
///
/// Lookups and stores are amortised O(1): recency is tracked with a queue of (key, stamp) entries whose stale
/// entries are skipped at eviction and compacted when they outnumber the live ones.
public actor InMemoryValidatorCache: ValidatorCache {
    private struct Entry {
        var validators: HTTPValidators
        var stamp: UInt64
    }

    /// The most keys kept; storing one more evicts the least recently used.
    public nonisolated let capacity: Int
    private var entries: [String: Entry] = [:]
    private var recency: Deque<(key: String, stamp: UInt64)> = []
    private var nextStamp: UInt64 = 0

    /// Creates an empty cache.
    ///
    /// - Parameter capacity: The most keys kept. Default: 100_000.
    public init(capacity: Int = 100_000) {
        precondition(capacity > 0, "InMemoryValidatorCache capacity must be positive, got \(capacity)")
        self.capacity = capacity
    }

    /// The number of keys held.
    public var count: Int { self.entries.count }

    public func validators(for key: String) -> HTTPValidators? {
        guard var entry = self.entries[key] else { return nil }
        entry.stamp = self.touch(key)
        self.entries[key] = entry
        return entry.validators
    }

    public func store(_ validators: HTTPValidators, for key: String) {
        let stamp = self.touch(key)
        self.entries[key] = Entry(validators: validators, stamp: stamp)
        while self.entries.count > self.capacity, let oldest = self.recency.popFirst() {
            if self.entries[oldest.key]?.stamp == oldest.stamp {
                self.entries[oldest.key] = nil
            }
        }
    }

    private func touch(_ key: String) -> UInt64 {
        self.nextStamp += 1
        self.recency.append((key, self.nextStamp))
        if self.recency.count > 2 * max(self.entries.count, 64) {
            // Drop the stale recency entries: keep each key's latest stamp, in order.
            self.recency = Deque(self.recency.filter { self.entries[$0.key]?.stamp == $0.stamp || $0.stamp == self.nextStamp })
        }
        return self.nextStamp
    }
}
