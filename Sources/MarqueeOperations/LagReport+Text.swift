import MarqueeCore
import MarqueeKafka

import struct Foundation.Date

// MARK: - LagReport + text for people

extension LagReport {
    /// What `marquee lag` prints: the time and window, then a block per stage: a heading with the status and its
    /// reason, a table of partitions, a totals line, and notes.
    ///
    /// - Parameter allPartitions: List every partition; by default a topic's idle partitions (no lag, OK) share
    ///   one row.
    public func text(allPartitions: Bool = false) -> String {
        var blocks: [String] = []
        for stage in self.stages {
            var lines: [String] = []
            let members = "\(stage.members) member\(stage.members == 1 ? "" : "s")"
            let state = stage.state == .unknown ? "" : " (\(stage.state))"
            var heading = "\(stage.stage) — group \(stage.group), \(members)\(state): \(stage.status)"
            if let maxLag = self.maxLag, stage.totals.dueLag > maxLag {
                heading += " — due lag \(stage.totals.dueLag) above --max-lag \(maxLag)"
            }
            lines.append(heading)
            lines.append("  \(stage.reason)")
            let hasRetry = stage.partitions.contains { $0.sample.isRetryTier }
            var columns: [TextTable.Column] = [
                .init(header: "TOPIC", maxWidth: 60),
                .init(header: "PARTITION", alignment: .right),
                .init(header: "COMMITTED", alignment: .right),
                .init(header: "END", alignment: .right),
                .init(header: "LAG", alignment: .right),
                .init(header: "LAG AGE", alignment: .right),
                .init(header: "RATE/S", alignment: .right),
                .init(header: "DRAIN", alignment: .right),
            ]
            if hasRetry {
                columns += [.init(header: "OVERDUE", alignment: .right), .init(header: "NOT DUE", alignment: .right)]
            }
            columns.append(.init(header: "STATUS"))
            var table = TextTable(columns)
            // Partitions grouped by topic, in order; idle ones (no lag, OK) fold into one row per topic unless
            // every partition is asked for.
            var topics: [(name: String, partitions: [PartitionLag])] = []
            for partition in stage.partitions {
                if topics.last?.name == partition.partition.topic {
                    topics[topics.count - 1].partitions.append(partition)
                } else {
                    topics.append((partition.partition.topic, [partition]))
                }
            }
            for topic in topics {
                let isIdle: (PartitionLag) -> Bool = { $0.lag == 0 && $0.status == .ok }
                let idle = allPartitions ? [] : topic.partitions.filter(isIdle)
                for partition in topic.partitions where allPartitions || !isIdle(partition) {
                    table.append(Self.row(partition, hasRetry: hasRetry))
                }
                if !idle.isEmpty {
                    let rates = idle.compactMap(\.rate)
                    var row: [String] = [
                        topic.name,
                        idle.count == topic.partitions.count ? "all \(idle.count) idle" : "\(idle.count) more idle",
                        "", "", "0", "", rates.isEmpty ? "—" : LagEvaluation.rate(rates.reduce(0, +)), "",
                    ]
                    if hasRetry { row += ["", ""] }
                    row.append("")
                    table.append(row)
                }
            }
            let totals = stage.totals
            var total: [String] = [
                "total (due \(totals.dueLag))", "", "", "", "\(totals.lag)",
                totals.lagAge.map(\.compactDescription) ?? "—",
                totals.rate.map { LagEvaluation.rate($0) } ?? "—",
                totals.dueLag > 0 ? totals.drainTime.map(\.compactDescription) ?? "—" : "",
            ]
            if hasRetry { total += ["\(totals.overdue)", "\(totals.notYetDue)"] }
            total.append("")
            table.append(total)
            if stage.partitions.isEmpty {
                lines.append("  no topics yet")
            } else {
                lines += table.render().split(separator: "\n").map { "  " + $0 }
            }
            if !stage.missingTopics.isEmpty {
                let names = stage.missingTopics.joined(separator: ", ")
                let verb = stage.missingTopics.count == 1 ? "does" : "do"
                lines.append("  note: \(names) \(verb) not exist yet (no lag)")
            }
            for note in stage.notes { lines.append("  note: \(note)") }
            blocks.append(lines.joined(separator: "\n"))
        }
        let window =
            self.stages.first.map { stage in
                stage.samples == 1 ? "1 sample" : "\(stage.samples) samples over \(stage.window.compactDescription)"
            } ?? "no stages"
        let time = Date(timeIntervalSince1970: Double(self.time) / 1000)
            .formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
        return (["\(time), \(window)"] + blocks).joined(separator: "\n\n")
    }

    /// One partition's row.
    private static func row(_ partition: PartitionLag, hasRetry: Bool) -> [String] {
        let sample = partition.sample
        var row: [String] = [
            sample.partition.topic,
            "\(sample.partition.partition)",
            sample.committed.map { "\($0)" } ?? "—",
            "\(sample.end)",
            "\(sample.lag)",
            partition.lagAge.map(\.compactDescription) ?? "—",
            partition.rate.map { LagEvaluation.rate($0) } ?? "—",
            sample.dueLag > 0 ? partition.drainTime.map(\.compactDescription) ?? "—" : "",
        ]
        if hasRetry {
            let unknown = sample.isRetryTier && sample.lag > 0 ? "?" : ""
            row += [sample.retry.map { "\($0.overdue)" } ?? unknown, sample.retry.map { "\($0.notYetDue)" } ?? unknown]
        }
        row.append(partition.status == .ok ? "" : partition.status.rawValue)
        return row
    }
}

// MARK: - LagReport + the frame of `marquee lag --watch`

extension LagReport {
    /// One redraw of `marquee lag --watch`: a heading with the interval and the window, a blank line, and
    /// ``text(allPartitions:)``.
    ///
    /// - Parameters:
    ///   - interval: The time between samples.
    ///   - samples: The window's size (samples judged).
    ///   - observed: Samples taken so far (the window may not be full yet).
    ///   - allPartitions: List every partition.
    public func watchFrame(interval: Duration, samples: Int, observed: Int, allPartitions: Bool) -> String {
        "marquee lag — every \(interval.compactDescription), status over the last \(samples) samples "
            + "(\(observed) so far) — Ctrl-C to stop\n\n" + self.text(allPartitions: allPartitions)
    }
}
