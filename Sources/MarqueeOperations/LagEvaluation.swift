public import MarqueeKafka

/// How a consumer group is doing, judged over a window of samples in the manner of LinkedIn's Burrow.
///
/// Ordered by severity: `ok < lagging < stalled < stopped`.
public enum LagStatus: String, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// Nothing due, or the group is keeping up.
    case ok = "OK"
    /// Commits move, but the due lag grew from sample to sample across the window.
    case lagging = "LAGGING"
    /// Messages were due throughout the window and the committed offset did not move.
    case stalled = "STALLED"
    /// The group has no member and messages are due: nobody consumes what waits.
    case stopped = "STOPPED"

    private var severity: Int {
        switch self {
        case .ok: 0
        case .lagging: 1
        case .stalled: 2
        case .stopped: 3
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.severity < rhs.severity }

    public var description: String { self.rawValue }
}

/// One partition judged over the window: the latest sample and what the window says of it.
public struct PartitionLag: Sendable, Hashable {
    /// The latest sample.
    public var sample: LagSample
    /// Age of the first unconsumed message at the time of the sample (`nil` when none waits or its timestamp
    /// could not be read).
    public var lagAge: Duration?
    /// Committed messages per second across the window (`nil` with fewer than two samples, or when the
    /// committed offset went back).
    public var rate: Double?
    /// Due lag over rate; `.zero` when nothing is due, `nil` when the rate is zero or unknown.
    public var drainTime: Duration?
    /// `ok`, `lagging` or `stalled` (a partition is never `stopped`; a group is).
    public var status: LagStatus
    /// Samples of this partition in the window.
    public var samples: Int
    /// The due lag at the window's first sample of this partition.
    public var firstDueLag: Int64
    /// The committed offset at the window's first sample of this partition.
    public var firstCommitted: Int64?
    /// The time (epoch ms) of the window's first sample of this partition.
    public var firstTime: Int64

    /// The partition judged.
    public var partition: KafkaTopicPartition { self.sample.partition }
    /// The latest sample's lag (``LagSample/lag``).
    public var lag: Int64 { self.sample.lag }
    /// The latest sample's due lag (``LagSample/dueLag``).
    public var dueLag: Int64 { self.sample.dueLag }
}

/// Sums over a group's partitions.
public struct LagTotals: Sendable, Hashable {
    /// Every unconsumed message, retry tiers' not-yet-due ones included.
    public var lag: Int64 = 0
    /// What the group is expected to run now: main topics' lag plus retry tiers' overdue messages. This is
    /// what `--max-lag` compares.
    public var dueLag: Int64 = 0
    /// Retry-tier messages not yet due.
    public var notYetDue: Int64 = 0
    /// Retry-tier messages due and not yet run.
    public var overdue: Int64 = 0
    /// Retry-tier messages past the scan limit.
    public var unscanned: Int64 = 0
    /// Age of the oldest message that is due (main topics, and retry tiers whose first message is due).
    public var lagAge: Duration? = nil
    /// Committed messages per second, all partitions together.
    public var rate: Double? = nil
    /// ``dueLag`` over ``rate``.
    public var drainTime: Duration? = nil

    /// Zero totals, to add partitions to.
    public init() {}
}

/// A consumer group judged over its window: the status with its reason, each partition, and the totals.
public struct GroupLag: Sendable, Hashable {
    /// The stage the group consumes for.
    public var stage: String
    /// The consumer group judged.
    public var group: String
    /// The time of the latest observation (epoch ms).
    public var time: Int64
    /// The status by the rules of ``LagEvaluation``.
    public var status: LagStatus
    /// Why, in words for an operator.
    public var reason: String
    /// Members at the latest observation.
    public var members: Int
    /// The coordinator's state of the group at the latest observation.
    public var state: KafkaConsumerGroupState
    /// Observations in the window.
    public var samples: Int
    /// Time from the window's first observation to its last.
    public var window: Duration
    /// Every partition of the stage's existing topics: main topic first, then the retry tiers.
    public var partitions: [PartitionLag]
    /// Sums over ``partitions``.
    public var totals: LagTotals
    /// Topics of the stage that do not exist yet (no lag).
    public var missingTopics: [String]
    /// What could not be read, end offsets below the commit, unscanned retry backlogs: in words for an operator.
    public var notes: [String]
    /// The group has no member and lag while other groups consume its topics: the tool reads another group than
    /// the workers run in.
    public var unread: UnreadGroup?
}

/// The status rules: pure functions of a window of observations.
///
/// With `W` the window of one group's observations, oldest first, and for each partition its samples `s₁ … sₙ`
/// in `W` (a partition that appeared during the window has fewer):
///
/// - **stopped**: the latest observation has no member and messages are due (``LagTotals/dueLag`` above zero). A
///   group without members and nothing due is **ok**: an idle pipeline whose workers were scaled away (or
///   never started) is caught up, not stopped.
/// - **stalled** (a partition): `n ≥ 2`, messages were due in every sample (``LagSample/hasDueWork``: lag on a
///   main topic; on a retry tier, its first unconsumed message past its not-before), and the committed offset
///   of `sₙ` equals that of `s₁`.
/// - **lagging** (a partition): not stalled, `n ≥ 2`, the committed offset moved, the due lag
///   (``LagSample/dueLag``) was above zero in every sample, never fell from one sample to the next, and ended
///   above where it started.
/// - **ok**: anything else — including a single sample, which cannot show movement.
///
/// A group with members takes its worst partition's status. The rate of a partition is its position's
/// progress (``LagSample/position``) from `s₁` to `sₙ` over the time between them; the drain time is the due lag
/// over the rate.
public enum LagEvaluation {
    /// Judges one group over its window.
    ///
    /// - Parameter window: The group's observations, oldest first; not empty.
    public static func evaluate(_ window: [GroupObservation]) -> GroupLag {
        precondition(!window.isEmpty, "a lag window to evaluate holds at least one observation")
        let latest = window[window.count - 1]
        var series: [KafkaTopicPartition: [LagSample]] = [:]
        for observation in window {
            for sample in observation.partitions { series[sample.partition, default: []].append(sample) }
        }
        let partitions = latest.partitions
            .map { self.partition(series[$0.partition] ?? [$0]) }
            .sorted { ($0.sample.tier ?? 0, $0.partition) < ($1.sample.tier ?? 0, $1.partition) }
        let totals = self.totals(partitions)
        let unread =
            latest.members == 0 && totals.lag > 0 && !latest.otherConsumers.isEmpty
            ? UnreadGroup(stage: latest.stage, group: latest.group, lag: totals.lag, consumers: latest.otherConsumers)
            : nil
        let (status, statusReason) = self.status(
            latest: latest,
            samples: window.count,
            partitions: partitions,
            totals: totals
        )
        let reason = unread?.sentence ?? statusReason
        var notes = latest.notes
        if let note = self.endBelowCommitNote(partitions.map(\.sample)) { notes.append(note) }
        for partition in partitions {
            if let retry = partition.sample.retry, retry.unscanned > 0 {
                notes.append(
                    "\(partition.partition): \(retry.unscanned) unconsumed messages past the scan limit were not read "
                        + "for their not-before; they count as neither due nor overdue"
                )
            }
        }
        return GroupLag(
            stage: latest.stage,
            group: latest.group,
            time: latest.time,
            status: status,
            reason: reason,
            members: latest.members,
            state: latest.state,
            samples: window.count,
            window: .milliseconds(latest.time - window[0].time),
            partitions: partitions,
            totals: totals,
            missingTopics: latest.missingTopics,
            notes: notes,
            unread: unread
        )
    }

    /// One note for every partition whose end offset reads below the group's committed offset (counted as lag
    /// 0), or `nil` when there is none.
    public static func endBelowCommitNote(_ samples: [LagSample]) -> String? {
        let below = samples.filter(\.isEndBelowPosition)
        guard !below.isEmpty else { return nil }
        let listed = below.prefix(3).map { "\($0.partition) end \($0.end) < committed \($0.position)" }
        let more = below.count > 3 ? " and \(below.count - 3) more" : ""
        return "\(Self.count(Int64(below.count), "partition")) counted as lag 0 because the end offset reads below "
            + "the committed offset (" + listed.joined(separator: ", ") + more + "): the broker's end offset is "
            + "wrong (the test broker answers so after batched produce)"
    }

    /// Judges one partition over its samples (oldest first; not empty).
    public static func partition(_ series: [LagSample]) -> PartitionLag {
        precondition(!series.isEmpty, "a partition to evaluate has at least one sample")
        let first = series[0]
        let last = series[series.count - 1]
        let rate = self.rate(series)
        var status = LagStatus.ok
        if series.count >= 2 {
            let moved = first.committed != last.committed
            if !moved, series.allSatisfy(\.hasDueWork) {
                status = .stalled
            } else if moved, series.allSatisfy({ $0.dueLag > 0 }), last.dueLag > first.dueLag,
                zip(series, series.dropFirst()).allSatisfy({ $1.dueLag >= $0.dueLag })
            {
                status = .lagging
            }
        }
        var lagAge: Duration?
        if last.lag > 0, let timestamp = last.oldestUnconsumedTimestamp {
            lagAge = .milliseconds(max(0, last.time - timestamp))
        }
        return PartitionLag(
            sample: last,
            lagAge: lagAge,
            rate: rate,
            drainTime: self.drainTime(dueLag: last.dueLag, rate: rate),
            status: status,
            samples: series.count,
            firstDueLag: first.dueLag,
            firstCommitted: first.committed,
            firstTime: first.time
        )
    }

    /// Committed messages per second from the first sample to the last: `nil` with fewer than two samples, no
    /// time between them, or a position that went back (the group's offsets were reset).
    public static func rate(_ series: [LagSample]) -> Double? {
        guard let first = series.first, let last = series.last, last.time > first.time else { return nil }
        let progress = last.position - first.position
        guard progress >= 0 else { return nil }
        return Double(progress) * 1000 / Double(last.time - first.time)
    }

    /// How long the due lag takes at this rate: `.zero` when nothing is due, `nil` when the rate is zero or
    /// unknown (it never drains at this pace).
    public static func drainTime(dueLag: Int64, rate: Double?) -> Duration? {
        guard dueLag > 0 else { return .zero }
        guard let rate, rate > 0 else { return nil }
        return .milliseconds(Int64((Double(dueLag) / rate * 1000).rounded(.up)))
    }

    static func totals(_ partitions: [PartitionLag]) -> LagTotals {
        var totals = LagTotals()
        for partition in partitions {
            totals.lag += partition.lag
            totals.dueLag += partition.dueLag
            if let retry = partition.sample.retry {
                totals.notYetDue += retry.notYetDue
                totals.overdue += retry.overdue
                totals.unscanned += retry.unscanned
            }
            if partition.sample.hasDueWork, let age = partition.lagAge {
                totals.lagAge = max(totals.lagAge ?? .zero, age)
            }
            if let rate = partition.rate { totals.rate = (totals.rate ?? 0) + rate }
        }
        totals.drainTime = self.drainTime(dueLag: totals.dueLag, rate: totals.rate)
        return totals
    }

    static func status(
        latest: GroupObservation,
        samples: Int,
        partitions: [PartitionLag],
        totals: LagTotals
    ) -> (LagStatus, String) {
        let notYetDue = totals.notYetDue > 0 ? " (\(totals.notYetDue) more not yet due)" : ""
        if latest.members == 0 {
            guard totals.dueLag > 0 else { return (.ok, "no member in group \(latest.group); nothing due\(notYetDue)") }
            return (
                .stopped, "no member in group \(latest.group); \(Self.count(totals.dueLag, "message")) due\(notYetDue)"
            )
        }
        let worst = partitions.map(\.status).max() ?? .ok
        switch worst {
        case .stalled:
            let stalled = partitions.filter { $0.status == .stalled }
            let span = Self.seconds(.milliseconds(latest.time - Self.firstTime(of: stalled, in: latest)))
            let listed = stalled.prefix(3).map {
                "\($0.partition) at \($0.sample.committed.map { "\($0)" } ?? "none") (lag \($0.lag))"
            }
            let more = stalled.count > 3 ? " and \(stalled.count - 3) more" : ""
            return (
                .stalled,
                "messages due and no commit in \(span): " + listed.joined(separator: ", ") + more
            )
        case .lagging:
            let lagging = partitions.filter { $0.status == .lagging }
            let from = lagging.map(\.firstDueLag).reduce(0, +)
            let to = lagging.map(\.dueLag).reduce(0, +)
            let span = Self.seconds(.milliseconds(latest.time - Self.firstTime(of: lagging, in: latest)))
            let listed = lagging.prefix(3).map { "\($0.partition)" }.joined(separator: ", ")
            let more = lagging.count > 3 ? " and \(lagging.count - 3) more" : ""
            return (.lagging, "due lag grew from \(from) to \(to) in \(span) while commits moved: \(listed)\(more)")
        case .ok, .stopped:
            if samples < 2 {
                return (.ok, "one sample: at least two are needed to see movement")
            }
            if totals.dueLag <= 0 { return (.ok, "caught up\(notYetDue)") }
            let rate = totals.rate.map { " at \(Self.rate($0))/s" } ?? ""
            return (.ok, "\(Self.count(totals.dueLag, "message")) due, consuming\(rate)\(notYetDue)")
        }
    }

    private static func firstTime(of partitions: [PartitionLag], in latest: GroupObservation) -> Int64 {
        partitions.map(\.firstTime).min() ?? latest.time
    }

    static func count(_ value: Int64, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }

    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return "\(milliseconds / 1000).\(milliseconds % 1000 / 100) s"
    }

    static func rate(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
