import DequeModule
import Synchronization

/// A bounded in-process ``ValidatorCache`` that evicts the least recently used key.
///
/// Lookups and stores are amortised O(1): recency is tracked with a queue of (key, stamp) entries whose stale
/// entries are skipped at eviction and compacted when they outnumber the live ones.
///
/// A lock, not an actor: every fetch reads it before its request and writes it after its outputs are delivered,
/// and an actor made each of those a switch to its executor and back (make bench-fetch). Nothing is awaited
/// while the lock is held.
public final class InMemoryValidatorCache: ValidatorCache {
    private struct Entry {
        var validators: HTTPValidators
        var stamp: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var recency: Deque<(key: String, stamp: UInt64)> = []
        var nextStamp: UInt64 = 0

        mutating func touch(_ key: String) -> UInt64 {
            self.nextStamp += 1
            self.recency.append((key, self.nextStamp))
            if self.recency.count > 2 * max(self.entries.count, 64) {
                // Drop the stale recency entries: keep each key's latest stamp, in order.
                let entries = self.entries
                let latest = self.nextStamp
                self.recency = Deque(self.recency.filter { entries[$0.key]?.stamp == $0.stamp || $0.stamp == latest })
            }
            return self.nextStamp
        }
    }

    /// The most keys kept; storing one more evicts the least recently used.
    public let capacity: Int
    private let state = Mutex(State())

    /// Creates an empty cache.
    ///
    /// - Parameter capacity: The most keys kept. Default: 100_000.
    public init(capacity: Int = 100_000) {
        precondition(capacity > 0, "InMemoryValidatorCache capacity must be positive, got \(capacity)")
        self.capacity = capacity
    }

    /// The number of keys held.
    public var count: Int { self.state.withLock { $0.entries.count } }

    public func validators(for key: String) -> HTTPValidators? {
        self.state.withLock { state in
            guard var entry = state.entries[key] else { return nil }
            entry.stamp = state.touch(key)
            state.entries[key] = entry
            return entry.validators
        }
    }

    public func store(_ validators: HTTPValidators, for key: String) {
        let capacity = self.capacity
        self.state.withLock { state in
            let stamp = state.touch(key)
            state.entries[key] = Entry(validators: validators, stamp: stamp)
            while state.entries.count > capacity, let oldest = state.recency.popFirst() {
                if state.entries[oldest.key]?.stamp == oldest.stamp {
                    state.entries[oldest.key] = nil
                }
            }
        }
    }
}
