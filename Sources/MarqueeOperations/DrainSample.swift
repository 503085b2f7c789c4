public import MarqueeCore
public import MarqueeKafka
import MarqueePipeline
public import MarqueeStore

/// One look at the pipeline for `marquee drain`: each stage's lag and dead letters, what the store holds, and
/// with roots, how far the crawl's jobs got.
public struct DrainSample: Sendable, Hashable {
    /// One stage's figures.
    public struct Stage: Sendable, Hashable {
        /// The stage's name.
        public var name: String
        /// Unconsumed messages on the main topic and the retry tiers.
        public var lag: Int64
        /// Messages held by the dead-letter topic.
        public var deadLetters: Int64
        /// The consumer group read.
        public var group: String
        /// Members of the group (`nil`: the broker did not say).
        public var members: Int?
        /// With no member and lag: the other groups with members that consume the stage's topics.
        public var otherConsumers: [String]
        /// Why partitions count as lag 0 although their end offset reads below the commit, if any do.
        public var endBelowCommitNote: String?

        /// A stage with its figures.
        public init(
            name: String,
            lag: Int64,
            deadLetters: Int64,
            group: String = "",
            members: Int? = nil,
            otherConsumers: [String] = [],
            endBelowCommitNote: String? = nil
        ) {
            self.name = name
            self.lag = lag
            self.deadLetters = deadLetters
            self.group = group
            self.members = members
            self.otherConsumers = otherConsumers
            self.endBelowCommitNote = endBelowCommitNote
        }
    }

    /// The stages, in the layout's order.
    public var stages: [Stage]
    /// What the store holds; `nil` until the indexer created the schema.
    public var counts: StoreCounts?
    /// How far the crawl's jobs got (with roots).
    public var lineage: LineageProgress?
    /// Whether the crawl's roots were given, so the crawl's jobs must finish too.
    public var followsRoots: Bool

    /// A sample of figures already read.
    public init(stages: [Stage], counts: StoreCounts?, lineage: LineageProgress?, followsRoots: Bool) {
        self.stages = stages
        self.counts = counts
        self.lineage = lineage
        self.followsRoots = followsRoots
    }

    /// Reads the figures: each stage's lag (a topic not created yet holds nothing) and dead letters, the store's
    /// counts, and the lineage of `roots` (every root when `roots` is `nil`); for a stage whose group has no member
    /// and lag, the other groups that consume its topics (through `consumers`, which keeps answers a while).
    ///
    /// - Throws: Nothing the broker or the store answer: a figure that cannot be read counts as nothing yet.
    public static func take(
        layout: PipelineLayout,
        admin: KafkaAdmin,
        store: Store,
        roots: [JobID]?,
        consumers: inout OtherConsumersCache
    ) async -> DrainSample {
        var stages: [Stage] = []
        let groups = try? await admin.describeGroups(layout.stages.map(\.group))
        for stage in layout.stages {
            var lag: Int64 = 0
            var below: [LagSample] = []
            for topic in stage.topics.consumed {
                // A topic not created yet holds nothing to consume.
                guard let rows = try? await admin.lag(group: stage.group, topics: [topic]) else { continue }
                lag += rows.map(\.lag).reduce(0, +)
                for row in rows {
                    guard let committed = row.committedOffset, committed > row.endOffset else { continue }
                    below.append(LagSample(partition: row.partition, time: 0, committed: committed, end: row.endOffset))
                }
            }
            let dlq = (try? await admin.watermarks(topic: stage.topics.dlq)) ?? [:]
            let members = groups?[stage.group]?.members.count
            var others: [String] = []
            if members == 0, lag > 0 {
                others = await consumers.consumers(
                    of: stage.topics.consumed,
                    except: stage.group,
                    admin: admin,
                    now: Int64(JobID.nowMilliseconds())
                )
            } else {
                consumers.forget(stage.group)
            }
            stages.append(
                Stage(
                    name: stage.name,
                    lag: lag,
                    deadLetters: dlq.values.map { $0.end - $0.start }.reduce(0, +),
                    group: stage.group,
                    members: members,
                    otherConsumers: others,
                    endBelowCommitNote: LagEvaluation.endBelowCommitNote(below)
                )
            )
        }
        let counts = try? await store.counts()
        let lineage = counts == nil ? nil : try? await store.lineageProgress(roots: roots)
        return DrainSample(
            stages: stages,
            counts: counts,
            lineage: lineage ?? (roots == nil ? nil : LineageProgress()),
            followsRoots: roots != nil
        )
    }

    /// Whether nothing is left to do: no stage has lag, and with roots, every job of the crawl finished.
    public var isIdle: Bool {
        self.stages.allSatisfy { $0.lag == 0 } && (!self.followsRoots || self.lineage?.isComplete == true)
    }

    /// What is still pending, in words.
    public var pendingSummary: String {
        var parts = self.stages.filter { $0.lag > 0 }.map { "\($0.name) lag \($0.lag)" }
        if self.followsRoots, let lineage = self.lineage, !lineage.isComplete {
            if let unfinished = lineage.unfinished, unfinished > 0 {
                let first = lineage.firstUnfinished.map { " (marquee job \($0.rawValue))" } ?? ""
                let jobs = unfinished == 1 ? "1 job of the crawl has" : "\(unfinished) jobs of the crawl have"
                parts.append("\(jobs) no final outcome\(first)")
            } else {
                parts.append(
                    "\(lineage.finished) of \(lineage.expected) jobs finished, \(lineage.retrying) waiting for a retry"
                )
            }
        }
        return parts.isEmpty ? "idle, not yet settled" : parts.joined(separator: ", ")
    }

    /// The lines of the progress display: a line per stage, what is stored, the crawl's jobs (with roots), and
    /// the time elapsed.
    public func lines(elapsed: Duration) -> [String] {
        var lines = self.stages.map { stage in
            "\(Self.padded(stage.name, 8)) lag \(Self.padded(TextFormat.grouped(Int(stage.lag)), 9, left: true))"
                + "   dead letters \(TextFormat.grouped(Int(stage.deadLetters)))"
        }
        if let counts {
            lines.append(
                "stored   \(counts.movies) movies, \(counts.boxOfficeEntries) box-office entries, \(counts.books) "
                    + "books, \(counts.images) images"
            )
        } else {
            lines.append("stored   nothing yet (the indexer has not written its first batch)")
        }
        if self.followsRoots, let lineage {
            lines.append(
                "jobs     \(lineage.finished) of \(lineage.expected) finished, \(lineage.retrying) waiting for a "
                    + "retry, \(lineage.deadLettered) dead-lettered"
            )
        }
        lines.append("elapsed  \(TextFormat.elapsed(elapsed))")
        return lines
    }

    /// The job ids of a roots file: one per line (as `marquee enqueue` prints them), white space removed, blank
    /// lines skipped.
    public static func roots(in text: String) -> [JobID] {
        text.split(whereSeparator: \.isNewline).map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
            .map(JobID.init(rawValue:))
    }

    /// `text` padded with spaces to `width` characters, on the right (or on the left).
    private static func padded(_ text: String, _ width: Int, left: Bool = false) -> String {
        guard text.count < width else { return text }
        let padding = String(repeating: " ", count: width - text.count)
        return left ? padding + text : text + padding
    }
}
