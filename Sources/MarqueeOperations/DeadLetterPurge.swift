public import MarqueeKafka

/// How far a purge can move the reader group's committed offset in each dead-letter partition.
///
/// A committed offset is one number per partition: everything before it is purged. So a purge advances each
/// partition over the selected letters **up to, not past, the first letter that is not selected**; selected
/// letters after that one stay visible (``blocked``), and the letter that is not selected is never hidden.
/// Nothing is deleted either way.
///
/// Feed it the unpurged letters of each partition in offset order (``consider(_:selected:)``), as
/// ``DeadLetterQueue/scan(_:visit:)`` reads them.
public struct DeadLetterPurge: Sendable, Hashable {
    /// The committed offset each partition had before (its first retained offset where the group had none).
    public let starts: [KafkaTopicPartition: Int64]
    /// The committed offset each partition will have.
    public private(set) var positions: [KafkaTopicPartition: Int64]
    /// Selected letters the purge hides.
    public private(set) var hidden: [DeadLetterID] = []
    /// Selected letters it cannot hide: each lies after a letter of its partition that was not selected.
    public private(set) var blocked: [DeadLetterID] = []
    /// Partitions where a letter that is not selected stopped the purge.
    private var stopped: Set<KafkaTopicPartition> = []

    /// - Parameter starts: The current purge position of each partition (see ``DeadLetterQueue/positions(stages:)``).
    public init(starts: [KafkaTopicPartition: Int64]) {
        self.starts = starts
        self.positions = starts
    }

    /// Takes the next letter of its partition into account.
    ///
    /// - Parameters:
    ///   - letter: The next letter of its partition, in offset order. Letters before the partition's start
    ///     (already purged) are ignored.
    ///   - selected: Whether the operator asked to purge it.
    public mutating func consider(_ letter: DeadLetter, selected: Bool) {
        let partition = letter.record.partition
        guard letter.offset >= self.starts[partition] ?? 0 else { return }
        if self.stopped.contains(partition) {
            if selected { self.blocked.append(letter.id) }
        } else if selected {
            self.positions[partition] = letter.offset + 1
            self.hidden.append(letter.id)
        } else {
            self.stopped.insert(partition)
        }
    }

    /// The offsets to commit: the partitions whose position moved forward.
    public var commits: [KafkaTopicPartition: Int64] {
        self.positions.filter { partition, position in position > (self.starts[partition] ?? 0) }
    }
}
