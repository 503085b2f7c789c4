import MarqueeStore

/// What `marquee drain` says once beside its progress: a stage whose group has no member while its lag stays
/// put and another group consumes its topics (or the crawl's lineage says every job finished), and partitions
/// counted as lag 0 because their end offset reads below the commit.
///
/// A plain value fed one sample at a time, so its rules are tested without a broker or a clock.
public struct DrainNotices: Sendable {
    /// How long a group without members must keep the same lag before it counts as nobody's.
    public let patience: Duration
    /// Per stage with no member and lag: that lag, and since when it has not moved.
    private var unmoved: [String: (lag: Int64, since: ContinuousClock.Instant)] = [:]
    /// Notices already given, so each is given once (a stage's notice again once its group recovered and lost
    /// its members anew).
    private var given: Set<String> = []
    /// The stages whose group nobody consumes in, as of the last sample.
    public private(set) var unread: [UnreadGroup] = []

    /// Notices that wait `patience` before a stage's group counts as nobody's (10 seconds by default).
    public init(patience: Duration = .seconds(10)) { self.patience = patience }

    /// Takes a sample and returns the lines to say now (each once).
    public mutating func record(_ sample: DrainSample, now: ContinuousClock.Instant) -> [String] {
        var lines: [String] = []
        var unread: [UnreadGroup] = []
        let crawlFinished = sample.followsRoots && sample.lineage?.isComplete == true
        for stage in sample.stages {
            if let note = stage.endBelowCommitNote, self.given.insert("below:\(stage.name)").inserted {
                lines.append("note: \(stage.name): \(note)")
            }
            guard stage.members == 0, stage.lag > 0 else {
                self.unmoved[stage.name] = nil
                self.given.remove("unread:\(stage.name)")
                continue
            }
            guard let known = self.unmoved[stage.name], known.lag == stage.lag else {
                self.unmoved[stage.name] = (stage.lag, now)
                continue
            }
            guard now - known.since >= self.patience, !stage.otherConsumers.isEmpty || crawlFinished else { continue }
            let notice = UnreadGroup(
                stage: stage.name,
                group: stage.group,
                lag: stage.lag,
                consumers: stage.otherConsumers,
                crawlFinished: crawlFinished
            )
            unread.append(notice)
            if self.given.insert("unread:\(stage.name)").inserted { lines.append("marquee: \(notice.line)") }
        }
        self.unread = unread
        return lines
    }
}
