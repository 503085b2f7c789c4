import MarqueeKafka

// MARK: - DeadLetterPurge + what `marquee dlq purge` says

extension DeadLetterPurge {
    /// How many letters the purge hides, by stage; each partition's new committed offset and its old one; and
    /// how many of the selected letters were purged already.
    ///
    /// - Parameters:
    ///   - alreadyPurged: Selected letters that were purged before.
    ///   - verb: `purged`, or `would be purged (dry run)`.
    public func text(alreadyPurged: Int, verb: String) -> String {
        var byStage: [String: Int] = [:]
        for id in self.hidden { byStage[id.stage, default: 0] += 1 }
        let stages = byStage.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        var lines = [
            "\(TextFormat.count(self.hidden.count, "dead letter")) \(verb)\(stages.isEmpty ? "" : " (\(stages))")"
        ]
        for (partition, offset) in self.commits.sorted(by: { $0.key < $1.key }) {
            let was = self.starts[partition] ?? 0
            lines.append("  \(partition.topic)/\(partition.partition): purged up to offset \(offset) (was \(was))")
        }
        if alreadyPurged > 0 { lines.append("\(alreadyPurged) already purged") }
        return lines.joined(separator: "\n")
    }

    /// Why some selected letters stay visible (a committed offset cannot pass a letter that was not selected), or
    /// `nil` when the purge hides every selected letter.
    public var blockedReason: String? {
        guard !self.blocked.isEmpty else { return nil }
        return "\(TextFormat.count(self.blocked.count, "selected letter")) could not be hidden: each comes after a "
            + "letter of its partition that was not selected, and a purge never hides those "
            + "(\(DeadLetterID.firstFive(self.blocked)))"
    }
}
