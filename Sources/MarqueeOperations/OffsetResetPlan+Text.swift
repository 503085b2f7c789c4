import MarqueeKafka

// MARK: - OffsetResetPlan + text for people

extension OffsetResetPlan {
    /// What `marquee groups reset-offsets` prints: a row per partition (GROUP, TOPIC, PARTITION, CURRENT-OFFSET,
    /// NEW-OFFSET, CHANGE); a new offset moved to a partition's edge is marked `(first)` or `(end)`.
    public var table: String {
        var table = TextTable([
            .init(header: "GROUP", maxWidth: 60), .init(header: "TOPIC", maxWidth: 80),
            .init(header: "PARTITION", alignment: .right), .init(header: "CURRENT-OFFSET", alignment: .right),
            .init(header: "NEW-OFFSET", alignment: .right), .init(header: "CHANGE", alignment: .right),
        ])
        for row in self.rows {
            var new = "\(row.new)"
            if row.isClamped { new += row.requested < row.new ? " (first)" : " (end)" }
            table.append([
                self.group, row.partition.topic, "\(row.partition.partition)", row.current.map(String.init) ?? "-",
                new, row.change.map { $0 > 0 ? "+\($0)" : "\($0)" } ?? "-",
            ])
        }
        return table.render()
    }

    /// The JSON of `marquee groups reset-offsets`: the plan's fields and `executed`, whether it was applied.
    public struct Output: Encodable, Sendable {
        /// The plan.
        public var plan: OffsetResetPlan
        /// Whether the plan was committed (and read back as planned).
        public var executed: Bool

        /// The output of `plan`, applied or not.
        public init(plan: OffsetResetPlan, executed: Bool) {
            self.plan = plan
            self.executed = executed
        }

        private enum Keys: String, CodingKey { case plan, executed }

        public func encode(to encoder: any Encoder) throws {
            try self.plan.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(self.executed, forKey: .executed)
        }
    }
}
