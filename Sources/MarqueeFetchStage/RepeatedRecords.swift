public import MarqueeCore
import MarqueeJSON
import Synchronization

/// Records a worker delivered a moment ago with the same data, so it need not send them again: the genre records
/// every movie details answer carries ("genre records for free", TMDBParser) repeat a handful of genres in every
/// movie of a crawl, and a backfill sent two or three of them with each detail — two fifths of the indexer's
/// records, every one an unchanged row.
///
/// A record counts as a repeat when one with the same kind, key and data was delivered (confirmed by the broker:
/// ``StageJob/whenDelivered(_:)``) less than ``maxAge`` ago. A changed name is new data and goes at once; a
/// repeat goes again once ``maxAge`` has passed, so a store that lost the row gets it back. At most
/// ``capacity`` records are remembered; past it the memory starts over (everything goes once more).
public final class RepeatedRecords: Sendable {
    /// How long a delivered record stands for its repeats. Default: 1 hour.
    public let maxAge: Duration
    /// The most records remembered. Default: 10,000.
    public let capacity: Int
    private let delivered: Mutex<[String: (data: JSONObject, at: ContinuousClock.Instant)]>

    public init(maxAge: Duration = .seconds(3600), capacity: Int = 10_000) {
        self.maxAge = maxAge
        self.capacity = capacity
        self.delivered = Mutex([:])
    }

    /// Whether `record` repeats one delivered less than ``maxAge`` before `now`.
    public func isRepeat(_ record: Record, now: ContinuousClock.Instant = .now) -> Bool {
        let key = record.dedupeKey
        guard let last = self.delivered.withLock({ $0[key] }), now - last.at < self.maxAge else { return false }
        // Read only for a key delivered lately: a record made by a parser is its bytes until then.
        return last.data == record.data
    }

    /// Remembers `records` as delivered at `at`.
    public func remember(_ records: [Record], at: ContinuousClock.Instant = .now) {
        let entries = records.map { ($0.dedupeKey, $0.data) }
        self.delivered.withLock { delivered in
            if delivered.count + entries.count > self.capacity { delivered.removeAll(keepingCapacity: true) }
            for (key, data) in entries { delivered[key] = (data, at) }
        }
    }

    /// How many records are remembered.
    public var count: Int { self.delivered.withLock { $0.count } }
}
