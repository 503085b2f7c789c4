public import MarqueeKafka

/// One observation of one partition for one consumer group: where the group stands, where the partition ends,
/// and how old the first message the group has not consumed is.
///
/// Samples are plain values: ``LagSampler`` takes them from the cluster, and the status rules
/// (``LagEvaluation``) judge a window of them, so tests and the dashboard can drive the rules with samples of
/// their own.
public struct LagSample: Sendable, Hashable {
    /// The topic and partition observed.
    public var partition: KafkaTopicPartition
    /// The retry tier the topic is (1-based), or `nil` for the stage's main topic.
    public var tier: Int?
    /// When the offsets were read, in epoch milliseconds.
    public var time: Int64
    /// The group's committed offset (the next offset it will consume), or `nil` if it never committed here.
    public var committed: Int64?
    /// The first offset the partition still holds.
    public var start: Int64
    /// The end offset (high watermark): the offset the next message will get.
    public var end: Int64
    /// The timestamp (epoch ms) of the first unconsumed message, when one waits and it could be read.
    public var oldestUnconsumedTimestamp: Int64?
    /// For a retry tier: which unconsumed messages are due (`nil` for a main topic, or when they could not be
    /// read).
    public var retry: RetryBacklog?

    /// A sample, as ``LagSampler`` takes them or a test makes them up.
    public init(
        partition: KafkaTopicPartition,
        tier: Int? = nil,
        time: Int64,
        committed: Int64?,
        start: Int64 = 0,
        end: Int64,
        oldestUnconsumedTimestamp: Int64? = nil,
        retry: RetryBacklog? = nil
    ) {
        self.partition = partition
        self.tier = tier
        self.time = time
        self.committed = committed
        self.start = start
        self.end = end
        self.oldestUnconsumedTimestamp = oldestUnconsumedTimestamp
        self.retry = retry
    }

    /// Whether the topic is a retry tier.
    public var isRetryTier: Bool { self.tier != nil }

    /// Where the group resumes: its committed offset, or the partition's first offset when it committed none
    /// (or committed one that retention already deleted).
    public var position: Int64 { max(self.committed ?? self.start, self.start) }

    /// Messages the group has not consumed: end offset minus ``position``, and 0 where the end reads below the
    /// position (``isEndBelowPosition``), so that no sum over partitions is ever pulled below what waits.
    public var lag: Int64 { max(0, self.end - self.position) }

    /// Whether the broker reported an end offset below where the group resumes, which the test broker does after
    /// batched produce (its ListOffsets answer is wrong): ``lag`` counts the partition as 0, and the evaluation
    /// says why in a note.
    public var isEndBelowPosition: Bool { self.end < self.position }

    /// Messages the group is expected to run now: the whole lag on a main topic, the overdue messages on a retry
    /// tier (those not yet due wait for their time by design, and messages past the scan limit are unknown).
    public var dueLag: Int64 {
        guard self.isRetryTier else { return self.lag }
        return self.retry?.overdue ?? 0
    }

    /// Whether the group should be moving on this partition: a main topic with lag, or a retry tier whose first
    /// unconsumed message is due (a retry tier waiting for its first message's time is not stuck).
    public var hasDueWork: Bool {
        guard self.lag > 0 else { return false }
        guard self.isRetryTier else { return true }
        return self.retry?.isHeadDue ?? false
    }
}

/// What waits in a retry tier's partition, split by the `marquee-not-before` header of each message against
/// the time of the sample.
public struct RetryBacklog: Sendable, Hashable {
    /// Unconsumed messages whose not-before is still ahead.
    public var notYetDue: Int64
    /// Unconsumed messages whose not-before has passed, or that carry none (the stage runs those at once).
    public var overdue: Int64
    /// Unconsumed messages past the scan limit, whose not-before was not read: neither due nor overdue.
    public var unscanned: Int64
    /// The not-before (epoch ms) of the first unconsumed message, if it has one.
    public var headNotBefore: Int64?
    /// Whether the first unconsumed message was due at the time of the sample.
    public var isHeadDue: Bool

    /// A backlog of known counts.
    public init(notYetDue: Int64, overdue: Int64, unscanned: Int64, headNotBefore: Int64?, isHeadDue: Bool) {
        self.notYetDue = notYetDue
        self.overdue = overdue
        self.unscanned = unscanned
        self.headNotBefore = headNotBefore
        self.isHeadDue = isHeadDue
    }

    /// The split of the unconsumed messages that were read.
    ///
    /// - Parameters:
    ///   - notBefores: The not-before of each unconsumed message read, in offset order from the group's
    ///     position (`nil`: the message has no readable `marquee-not-before`, so it is due at once).
    ///   - unscanned: Unconsumed messages past the scan limit.
    ///   - now: Epoch milliseconds to compare with; a message whose not-before equals it is due.
    public init(notBefores: [Int64?], unscanned: Int64, now: Int64) {
        var notYetDue: Int64 = 0
        var overdue: Int64 = 0
        for notBefore in notBefores {
            if let notBefore, notBefore > now { notYetDue += 1 } else { overdue += 1 }
        }
        let head = notBefores.first
        self.init(
            notYetDue: notYetDue,
            overdue: overdue,
            unscanned: unscanned,
            headNotBefore: head ?? nil,
            isHeadDue: head.map { ($0 ?? now) <= now } ?? false
        )
    }
}

/// Everything observed of one consumer group at one moment: its members and each partition of its topics.
public struct GroupObservation: Sendable, Hashable {
    /// The stage the group consumes for (or the group's name when it is not a stage's).
    public var stage: String
    /// The consumer group observed.
    public var group: String
    /// When the observation was taken, in epoch milliseconds.
    public var time: Int64
    /// Members of the group at that time.
    public var members: Int
    /// The coordinator's state of the group.
    public var state: KafkaConsumerGroupState
    /// One sample per partition of the stage's existing topics.
    public var partitions: [LagSample]
    /// Topics of the stage that do not exist (yet): they count as no lag.
    public var missingTopics: [String]
    /// What could not be read without spoiling the offsets (message timestamps, not-before headers).
    public var notes: [String]
    /// When the group has no member and lag: the other groups with members that consume its topics
    /// (``UnreadGroup/consumers(of:except:admin:)``); empty otherwise.
    public var otherConsumers: [String]

    /// An observation, as ``LagSampler`` takes them or a test makes them up.
    public init(
        stage: String,
        group: String,
        time: Int64,
        members: Int,
        state: KafkaConsumerGroupState = .stable,
        partitions: [LagSample],
        missingTopics: [String] = [],
        notes: [String] = [],
        otherConsumers: [String] = []
    ) {
        self.stage = stage
        self.group = group
        self.time = time
        self.members = members
        self.state = state
        self.partitions = partitions
        self.missingTopics = missingTopics
        self.notes = notes
        self.otherConsumers = otherConsumers
    }
}
