public import MarqueeKafka
import MarqueePipeline

/// The dead-letter topics of a pipeline, read without joining any consumer group: what `marquee dlq` and a
/// dashboard show.
///
/// **Purged** letters are those before the committed offset of a consumer group that only operator tools use
/// (``readerGroup``, default `<prefix>dlq-reader`) on each dead-letter partition. Purging moves that offset
/// forward (``commit(_:)``); nothing is ever deleted, so ``DeadLetterFilter/includesPurged`` shows every letter the
/// topic still holds.
public struct DeadLetterQueue: Sendable {
    /// The consumer group whose committed offsets mark letters as purged, unless configured otherwise: named
    /// after the topic prefix, as the workers' groups are.
    public static func defaultReaderGroup(prefix: String) -> String { "\(prefix)dlq-reader" }

    /// The pipeline's stages and topic names.
    public let layout: PipelineLayout
    /// The consumer group whose committed offsets mark letters as purged. Nothing ever consumes in it.
    public let readerGroup: String
    private let admin: KafkaAdmin
    private let reader: KafkaReader
    /// How long one read may wait for the broker. Default: 10 seconds.
    public var readTimeout: Duration = .seconds(10)
    /// Records read per round (memory stays bounded by this, plus what the caller keeps). Default: 5,000.
    public var recordsPerRead = 5000

    /// - Parameters:
    ///   - layout: The pipeline's stages and topic names.
    ///   - admin: Reads watermarks and the reader group's offsets, and commits them when purging.
    ///   - reader: Reads the dead-letter records by offset.
    ///   - readerGroup: The group whose committed offsets mark letters as purged; `nil` or empty:
    ///     ``defaultReaderGroup(prefix:)``.
    public init(layout: PipelineLayout, admin: KafkaAdmin, reader: KafkaReader, readerGroup: String? = nil) {
        self.layout = layout
        self.admin = admin
        self.reader = reader
        self.readerGroup =
            readerGroup.flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultReaderGroup(prefix: layout.prefix)
    }

    /// One partition of a stage's dead-letter topic and the positions that matter in it.
    public struct Partition: Sendable, Hashable {
        /// The stage whose dead letters it holds.
        public var stage: String
        /// The topic and partition.
        public var partition: KafkaTopicPartition
        /// The first offset the topic still holds.
        public var start: Int64
        /// The end offset as the broker lists it (the test broker may list it too low; reading goes to the true
        /// end regardless).
        public var end: Int64
        /// The reader group's committed offset, if it has one.
        public var committed: Int64?

        /// Letters before this offset are purged: the committed offset, never before ``start``.
        public var purgedUpTo: Int64 { max(self.committed ?? self.start, self.start) }
    }

    /// The dead-letter partitions of the given stages (every stage when empty) with their positions. A stage
    /// whose dead-letter topic does not exist has none.
    ///
    /// - Throws: A ``KafkaError`` when no broker answered.
    public func partitions(stages: Set<String> = []) async throws(KafkaError) -> [Partition] {
        let existing = Set(try await self.admin.listTopics().map(\.name))
        let stages = self.layout.stages.filter {
            (stages.isEmpty || stages.contains($0.name)) && existing.contains($0.topics.dlq)
        }
        guard !stages.isEmpty else { return [] }
        let committed = try await self.admin.committedOffsets(group: self.readerGroup, topics: stages.map(\.topics.dlq))
        var partitions: [Partition] = []
        for stage in stages {
            for (partition, watermarks) in try await self.admin.watermarks(topic: stage.topics.dlq) {
                partitions.append(
                    Partition(
                        stage: stage.name,
                        partition: partition,
                        start: watermarks.start,
                        end: watermarks.end,
                        committed: committed[partition] ?? nil
                    )
                )
            }
        }
        return partitions.sorted {
            DeadLetterID(stage: $0.stage, partition: $0.partition.partition, offset: 0)
                < DeadLetterID(stage: $1.stage, partition: $1.partition.partition, offset: 0)
        }
    }

    /// Reads every letter of the given partitions, from the purge position (or from the first retained offset
    /// when `includingPurged`) to the end, and hands each one to `visit`, in offset order within each partition.
    ///
    /// Reading goes on until each partition's true end (not the listed end), in rounds of ``recordsPerRead``
    /// records, so a large topic is never held in memory at once.
    ///
    /// - Throws: A ``KafkaError`` when the broker does not answer within ``readTimeout``.
    public func scan(
        _ partitions: [Partition],
        includingPurged: Bool,
        visit: (DeadLetter) -> Void
    )
        async throws(KafkaError)
    {
        let byPartition = Dictionary(uniqueKeysWithValues: partitions.map { ($0.partition, $0) })
        // Empty partitions are skipped: a listed end at the start means nothing was ever written or kept.
        var cursors: [KafkaTopicPartition: Int64] = [:]
        for partition in partitions where partition.end > partition.start {
            cursors[partition.partition] = includingPurged ? partition.start : partition.purgedUpTo
        }
        while !cursors.isEmpty {
            let records = try await self.reader.read(
                cursors.mapValues { $0..<Int64.max },
                limit: self.recordsPerRead,
                timeout: self.readTimeout
            )
            for record in records {
                guard let partition = byPartition[record.partition] else { continue }
                visit(
                    DeadLetter(record: record, stage: partition.stage, isPurged: record.offset < partition.purgedUpTo)
                )
                cursors[record.partition] = record.offset + 1
            }
            // Fewer than asked: every partition reached its end. Otherwise read on from where each one stopped
            // (a partition that had reached its end answers at once with nothing).
            if records.count < self.recordsPerRead { break }
        }
    }

    /// The letters that match a filter, newest last.
    ///
    /// - Parameters:
    ///   - filter: Which letters; purged ones only with ``DeadLetterFilter/includesPurged``.
    ///   - limit: Keep only the newest `limit` matching letters (`nil`: all). The counts cover every match.
    /// - Throws: A ``KafkaError`` when the broker does not answer.
    public func list(_ filter: DeadLetterFilter, limit: Int? = nil) async throws(KafkaError) -> DeadLetterListing {
        let partitions = try await self.partitions(stages: filter.stages)
        var listing = DeadLetterListing(partitions: partitions, limit: limit)
        try await self.scan(partitions, includingPurged: filter.includesPurged) { letter in
            if filter.matches(letter) { listing.add(letter) }
        }
        return listing
    }

    /// The letters with these ids that the topics hold, marked purged or not. An id past its partition's end, of
    /// a partition or dead-letter topic that does not exist, or deleted by retention, has none.
    ///
    /// - Throws: A ``KafkaError`` when the broker does not answer.
    public func letters(_ ids: [DeadLetterID]) async throws(KafkaError) -> [DeadLetterID: DeadLetter] {
        let stages = Set(ids.map(\.stage))
        let partitions = try await self.partitions(stages: stages)
        var states: [DeadLetterID: Partition] = [:]
        for partition in partitions {
            states[DeadLetterID(stage: partition.stage, partition: partition.partition.partition, offset: 0)] =
                partition
        }
        var found: [DeadLetterID: DeadLetter] = [:]
        var wanted: [KafkaTopicPartition: (state: Partition, offsets: Set<Int64>)] = [:]
        for id in Set(ids) {
            guard let state = states[DeadLetterID(stage: id.stage, partition: id.partition, offset: 0)],
                id.offset >= state.start, state.end > state.start
            else { continue }  // deleted by retention, or an empty partition
            wanted[state.partition, default: (state, [])].offsets.insert(id.offset)
        }
        // A read never starts past the listed end: a broker may not answer a fetch beyond its end at all. From
        // the last listed offset it reaches the true end (the listed one may be too low) and stops there.
        var reads: [[KafkaTopicPartition: Range<Int64>]] = []
        for (partition, entry) in wanted {
            let last = entry.state.end - 1
            guard let lowest = entry.offsets.min(), let highest = entry.offsets.max() else { continue }
            if highest - min(lowest, last) < Int64(self.recordsPerRead) {
                reads.append([partition: min(lowest, last)..<(highest + 1)])
            } else {
                reads += entry.offsets.sorted().map { [partition: min($0, last)..<($0 + 1)] }
            }
        }
        for ranges in reads {
            for record in try await self.reader.read(ranges, timeout: self.readTimeout) {
                guard let entry = wanted[record.partition], entry.offsets.contains(record.offset) else { continue }
                let letter = DeadLetter(
                    record: record,
                    stage: entry.state.stage,
                    isPurged: record.offset < entry.state.purgedUpTo
                )
                found[letter.id] = letter
            }
        }
        return found
    }

    /// Works out how far purging the selected letters can move the reader group's offsets (see
    /// ``DeadLetterPurge``), reading the unpurged letters of the given stages. Commits nothing.
    ///
    /// - Parameters:
    ///   - stages: The stages to look at (every stage when empty).
    ///   - isSelected: Whether a letter is to be purged.
    /// - Throws: A ``KafkaError`` when the broker does not answer.
    public func planPurge(
        stages: Set<String> = [],
        selecting isSelected: (DeadLetter) -> Bool
    ) async throws(KafkaError)
        -> DeadLetterPurge
    {
        let partitions = try await self.partitions(stages: stages)
        var purge = DeadLetterPurge(
            starts: Dictionary(uniqueKeysWithValues: partitions.map { ($0.partition, $0.purgedUpTo) })
        )
        try await self.scan(partitions, includingPurged: false) { letter in
            purge.consider(letter, selected: isSelected(letter))
        }
        return purge
    }

    /// Commits a purge's positions as the reader group's offsets: its letters stop showing. The records stay.
    ///
    /// Every partition the purge looked at is committed, moved or not: Apache Kafka drops the offsets of a group
    /// without members `offsets.retention.minutes` (default 7 days) after its last commit, so each purge renews
    /// the earlier ones.
    ///
    /// - Throws: A ``KafkaError`` when the broker refuses or does not answer.
    public func commit(_ purge: DeadLetterPurge) async throws(KafkaError) {
        try await self.admin.commitOffsets(group: self.readerGroup, purge.positions)
    }
}

/// What ``DeadLetterQueue/list(_:limit:)`` found.
public struct DeadLetterListing: Sendable {
    /// How many letters matched in all.
    public private(set) var matched = 0
    /// Matches per stage and error kind.
    public private(set) var counts: [DeadLetterCount: Int] = [:]
    /// The partitions read, with their positions.
    public let partitions: [DeadLetterQueue.Partition]
    /// The most letters kept (`nil`: every one).
    public let limit: Int?
    /// The letters kept so far, in no order; trimmed to the newest `limit` whenever it holds twice that.
    private var kept: [DeadLetter] = []

    /// - Parameters:
    ///   - partitions: The partitions the letters come from.
    ///   - limit: Keep only the newest `limit` letters (`nil`: every one); the counts cover every letter added.
    public init(partitions: [DeadLetterQueue.Partition], limit: Int?) {
        self.partitions = partitions
        self.limit = limit.map { max(0, $0) }
    }

    /// The newest matching letters (at most ``limit``), oldest first.
    public var letters: [DeadLetter] {
        let sorted = self.kept.sorted(by: DeadLetter.isOlder)
        return self.limit.map { Array(sorted.suffix($0)) } ?? sorted
    }

    /// How many letters of the partitions read are purged (hidden unless purged letters are included).
    public var purged: Int64 { self.partitions.reduce(0) { $0 + ($1.purgedUpTo - $1.start) } }

    /// Adds a matching letter.
    public mutating func add(_ letter: DeadLetter) {
        self.matched += 1
        self.counts[DeadLetterCount(stage: letter.id.stage, errorKind: letter.errorKind), default: 0] += 1
        guard self.limit != 0 else { return }
        self.kept.append(letter)
        if let limit, self.kept.count >= 2 * limit {
            self.kept = Array(self.kept.sorted(by: DeadLetter.isOlder).suffix(limit))
        }
    }
}

/// A group of matches in a listing's summary.
public struct DeadLetterCount: Sendable, Hashable, Comparable {
    /// The stage.
    public var stage: String
    /// `transient`, `permanent`, `poison` or `unknown`.
    public var errorKind: String

    /// The group of `stage`'s letters of `errorKind`.
    public init(stage: String, errorKind: String) {
        self.stage = stage
        self.errorKind = errorKind
    }

    /// Pipeline order of the stages, then error kind.
    public static func < (lhs: DeadLetterCount, rhs: DeadLetterCount) -> Bool {
        (DeadLetterID(stage: lhs.stage, partition: 0, offset: 0), lhs.errorKind)
            < (DeadLetterID(stage: rhs.stage, partition: 0, offset: 0), rhs.errorKind)
    }
}
