public import MarqueeKafka

import struct Foundation.Date
import struct MarqueeCore.Envelope
import struct MarqueePipeline.StageTopics

/// A consumer group to watch and the topics it consumes.
public struct LagTarget: Sendable, Hashable {
    /// A topic of the target; `tier` is its retry tier (1-based), `nil` for a main topic.
    public struct Topic: Sendable, Hashable {
        /// The topic's name.
        public var name: String
        /// Its retry tier (1-based), or `nil` for a main topic.
        public var tier: Int?

        /// A topic of a target.
        public init(name: String, tier: Int? = nil) {
            self.name = name
            self.tier = tier
        }
    }

    /// The stage's name (the key of its history in a ``LagWindow``).
    public var stage: String
    /// The consumer group whose offsets count.
    public var group: String
    /// The topics it consumes: the main topic and the retry tiers.
    public var topics: [Topic]

    /// Any group over any topics.
    public init(stage: String, group: String, topics: [Topic]) {
        self.stage = stage
        self.group = group
        self.topics = topics
    }

    /// A stage of the pipeline: its group (or `group`), its main topic and its retry tiers. Dead letters are
    /// nobody's lag.
    public init(stage: PipelineLayout.Stage, group: String? = nil) {
        self.init(
            stage: stage.name,
            group: group ?? stage.group,
            topics: stage.topics.consumed.map { Topic(name: $0, tier: stage.topics.tier(of: $0)) }
        )
    }
}

/// Takes observations of consumer groups from the cluster: membership, committed and end offsets, the timestamp
/// of each partition's first unconsumed message, and for retry tiers the `marquee-not-before` of the
/// unconsumed messages.
///
/// Messages are read without joining any group (``KafkaReader``), so sampling never moves anyone's offsets.
/// What was read is kept between rounds (a message never changes), so a round reads only the messages that
/// arrived since, and a retry tier's backlog is read once however long it is watched. Each round asks for the
/// committed offsets before the end offsets, so a healthy group never shows more committed than written.
public struct LagSampler: Sendable {
    /// The groups and topics sampled.
    public var targets: [LagTarget]
    /// Unconsumed messages read per retry-tier partition for their not-before; the rest are reported as
    /// unscanned. Default: 10,000.
    public var scanLimit: Int
    /// How long reading messages may take in a round before it is given up (the offsets stand; the timestamps
    /// are missing and a note says why). Default: 10 seconds.
    public var readTimeout: Duration

    private let admin: KafkaAdmin
    private let reader: KafkaReader
    private var records: [KafkaTopicPartition: ReadRecords] = [:]
    /// The other consumers found per group with no member and lag.
    private var otherConsumers = OtherConsumersCache()

    /// - Parameters:
    ///   - admin: Asks for groups, committed and end offsets.
    ///   - reader: Reads messages (timestamps and headers).
    ///   - targets: The groups to sample.
    public init(
        admin: KafkaAdmin,
        reader: KafkaReader,
        targets: [LagTarget],
        scanLimit: Int = 10_000,
        readTimeout: Duration = .seconds(10)
    ) {
        precondition(scanLimit >= 1, "the scan limit is at least 1 message, not \(scanLimit)")
        self.admin = admin
        self.reader = reader
        self.targets = targets
        self.scanLimit = scanLimit
        self.readTimeout = readTimeout
    }

    /// One round: an observation of every target.
    ///
    /// A topic that does not exist is listed in ``GroupObservation/missingTopics`` and has no lag.
    ///
    /// - Throws: A ``KafkaError`` when no broker answered, or the broker refused to describe a group or give
    ///   offsets. A failure to read messages is not thrown: the observation says so in its notes.
    public mutating func sample() async throws(KafkaError) -> [GroupObservation] {
        let topics = Dictionary(
            try await self.admin.listTopics().map { ($0.name, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        let groups = try await self.admin.describeGroups(self.targets.map(\.group))

        var committed: [Int: [KafkaTopicPartition: Int64?]] = [:]
        var allPartitions: Set<KafkaTopicPartition> = []
        for (index, target) in self.targets.enumerated() {
            let partitions = Self.partitions(of: target, in: topics)
            allPartitions.formUnion(partitions)
            committed[index] = try await self.admin.committedOffsets(group: target.group, partitions: partitions)
        }
        // After the committed offsets: a healthy group's committed offset never exceeds the end read later.
        let watermarks = try await self.admin.watermarks(partitions: allPartitions.sorted())
        let time = Self.nowMilliseconds()

        var observations: [GroupObservation] = []
        for (index, target) in self.targets.enumerated() {
            var samples: [LagSample] = []
            var missing: [String] = []
            for topic in target.topics {
                guard let metadata = topics[topic.name], metadata.error == nil, !metadata.partitions.isEmpty else {
                    missing.append(topic.name)
                    continue
                }
                for id in metadata.partitions {
                    let partition = KafkaTopicPartition(topic: topic.name, partition: id)
                    guard let marks = watermarks[partition] else { continue }
                    samples.append(
                        LagSample(
                            partition: partition,
                            tier: topic.tier,
                            time: time,
                            committed: committed[index]?[partition] ?? nil,
                            start: marks.start,
                            end: marks.end
                        )
                    )
                }
            }
            let description = groups[target.group]
            observations.append(
                GroupObservation(
                    stage: target.stage,
                    group: target.group,
                    time: time,
                    members: description?.members.count ?? 0,
                    state: description?.state ?? .unknown,
                    partitions: samples,
                    missingTopics: missing
                )
            )
        }
        await self.readUnconsumed(into: &observations, at: time)
        await self.findOtherConsumers(of: &observations, at: time)
        return observations
    }

    /// For each group with no member and lag, the other groups that consume its topics: asked at most every
    /// 15 seconds per group, and only while the group is in that state.
    private mutating func findOtherConsumers(of observations: inout [GroupObservation], at time: Int64) async {
        for index in observations.indices {
            let observation = observations[index]
            let lag = observation.partitions.map(\.lag).reduce(0, +)
            guard observation.members == 0, lag > 0,
                let target = self.targets.first(where: {
                    $0.stage == observation.stage && $0.group == observation.group
                })
            else {
                self.otherConsumers.forget(observation.group)
                continue
            }
            observations[index].otherConsumers = await self.otherConsumers.consumers(
                of: target.topics.map(\.name),
                except: target.group,
                admin: self.admin,
                now: time
            )
        }
    }

    /// Fills in each sample's oldest unconsumed timestamp and each retry tier's backlog, reading only what was
    /// not read in an earlier round.
    private mutating func readUnconsumed(into observations: inout [GroupObservation], at time: Int64) async {
        // The offsets each partition needs known: from the lowest position of any group to the scan limit.
        var needed: [KafkaTopicPartition: Range<Int64>] = [:]
        for observation in observations {
            for sample in observation.partitions where sample.lag > 0 {
                let upper = min(sample.end, sample.position + (sample.isRetryTier ? Int64(self.scanLimit) : 1))
                let range = sample.position..<upper
                if let known = needed[sample.partition] {
                    needed[sample.partition] =
                        min(known.lowerBound, range.lowerBound)..<max(known.upperBound, range.upperBound)
                } else {
                    needed[sample.partition] = range
                }
            }
        }
        var toRead: [KafkaTopicPartition: Range<Int64>] = [:]
        for (partition, range) in needed {
            var known = self.records[partition] ?? ReadRecords(from: range.lowerBound)
            known.keep(from: range.lowerBound)
            if known.through < range.upperBound { toRead[partition] = known.through..<range.upperBound }
            self.records[partition] = known
        }
        // Forget partitions nobody lags on.
        for partition in self.records.keys where needed[partition] == nil { self.records[partition] = nil }

        var failure: String?
        if !toRead.isEmpty {
            do {
                let read = try await self.reader.read(toRead, timeout: self.readTimeout)
                for record in read {
                    self.records[record.partition]?.facts[record.offset] = RecordFacts(record)
                }
                for (partition, range) in toRead { self.records[partition]?.through = range.upperBound }
            } catch {
                failure =
                    "could not read the unconsumed messages (lag age and retry due times are unknown): \(error.reason)"
            }
        }

        for index in observations.indices {
            if let failure { observations[index].notes.append(failure) }
            for sampleIndex in observations[index].partitions.indices {
                let sample = observations[index].partitions[sampleIndex]
                guard sample.lag > 0, let known = self.records[sample.partition], known.covers(sample.position) else {
                    continue
                }
                observations[index].partitions[sampleIndex].oldestUnconsumedTimestamp =
                    known.facts[sample.position]?.timestamp
                if sample.isRetryTier {
                    let upper = min(sample.end, sample.position + Int64(self.scanLimit))
                    guard known.through >= upper else { continue }
                    let notBefores = (sample.position..<upper).compactMap { known.facts[$0] }.map(\.notBefore)
                    observations[index].partitions[sampleIndex].retry = RetryBacklog(
                        notBefores: notBefores,
                        unscanned: sample.end - upper,
                        now: time
                    )
                }
            }
        }
    }

    private static func partitions(
        of target: LagTarget,
        in topics: [String: KafkaTopicMetadata]
    ) -> [KafkaTopicPartition] {
        target.topics.flatMap { topic -> [KafkaTopicPartition] in
            guard let metadata = topics[topic.name], metadata.error == nil else { return [] }
            return metadata.partitions.map { KafkaTopicPartition(topic: topic.name, partition: $0) }
        }
    }

    static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}

/// What was read of one partition: every offset in `from..<through` was read, and `facts` holds the records
/// found there (offsets may have gaps).
struct ReadRecords: Sendable, Hashable {
    var from: Int64
    var through: Int64
    var facts: [Int64: RecordFacts] = [:]

    init(from: Int64) {
        self.from = from
        self.through = from
    }

    /// Drops what lies before `offset`; starts over when `offset` is outside what was read.
    mutating func keep(from offset: Int64) {
        guard offset >= self.from, offset <= self.through else {
            self = ReadRecords(from: offset)
            return
        }
        if offset > self.from {
            self.facts = self.facts.filter { $0.key >= offset }
            self.from = offset
        }
    }

    func covers(_ offset: Int64) -> Bool { offset >= self.from && offset < self.through }
}

/// What the sampler needs of a message.
struct RecordFacts: Sendable, Hashable {
    var timestamp: Int64?
    /// `nil`: no readable `marquee-not-before` (the stage runs it at once).
    var notBefore: Int64?

    init(_ record: KafkaRecord) {
        self.timestamp = record.timestamp
        self.notBefore = record.headers.last { $0.key == Envelope.Header.notBefore }?.stringValue.flatMap { Int64($0) }
    }
}
