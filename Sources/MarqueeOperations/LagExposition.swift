import MarqueeKafka

/// A lag report in the Prometheus text format, under kafka-lag-exporter's metric names where it has one, so
/// dashboards and alerts written for it read Marquee's groups as they are.
///
/// Per group, topic and partition: `kafka_consumergroup_group_lag`, `…_lag_seconds` (age of the oldest
/// unconsumed message), `…_offset`; per partition `kafka_partition_latest_offset` and `…_earliest_offset`; per
/// group `kafka_consumergroup_group_max_lag`, `…_max_lag_seconds` and `…_sum_lag`. Marquee's own, per group:
/// `marquee_lag_due` and `marquee_lag_due_seconds` (what the group is expected to run now: retry tiers'
/// not-yet-due messages left out), `marquee_lag_members`, and `marquee_lag_group_status` (1 for the group's
/// status, 0 for the others: OK, LAGGING, STALLED, STOPPED as `marquee lag` judges them).
public enum LagExposition {
    /// The exposition of `report` (each stage's group judged over its window).
    public static func render(_ report: LagReport) -> String {
        var out = MetricsText()
        let groups = report.stages

        out.family("kafka_consumergroup_group_lag", "Messages of the partition the group has not consumed yet.")
        for group in groups {
            for partition in group.partitions {
                out.sample("kafka_consumergroup_group_lag", Self.labels(group, partition), Double(partition.lag))
            }
        }
        out.family(
            "kafka_consumergroup_group_lag_seconds",
            "Age of the partition's oldest unconsumed message (0 when none waits)."
        )
        for group in groups {
            for partition in group.partitions {
                out.sample(
                    "kafka_consumergroup_group_lag_seconds",
                    Self.labels(group, partition),
                    Self.seconds(partition.lagAge)
                )
            }
        }
        out.family("kafka_consumergroup_group_offset", "The group's committed offset of the partition.")
        for group in groups {
            for partition in group.partitions {
                guard let committed = partition.sample.committed else { continue }
                out.sample("kafka_consumergroup_group_offset", Self.labels(group, partition), Double(committed))
            }
        }
        var seen: Set<String> = []
        out.family("kafka_partition_latest_offset", "The partition's end offset.")
        for group in groups {
            for partition in group.partitions where seen.insert("\(partition.partition)").inserted {
                out.sample(
                    "kafka_partition_latest_offset",
                    Self.partitionLabels(partition),
                    Double(partition.sample.end)
                )
            }
        }
        seen = []
        out.family("kafka_partition_earliest_offset", "The partition's first offset still held.")
        for group in groups {
            for partition in group.partitions where seen.insert("\(partition.partition)").inserted {
                out.sample(
                    "kafka_partition_earliest_offset",
                    Self.partitionLabels(partition),
                    Double(partition.sample.start)
                )
            }
        }
        out.family("kafka_consumergroup_group_max_lag", "The group's largest partition lag.")
        for group in groups {
            out.sample(
                "kafka_consumergroup_group_max_lag",
                Self.labels(group),
                Double(group.partitions.map(\.lag).max() ?? 0)
            )
        }
        out.family("kafka_consumergroup_group_max_lag_seconds", "Age of the group's oldest unconsumed message.")
        for group in groups {
            let oldest = group.partitions.compactMap(\.lagAge).max()
            out.sample("kafka_consumergroup_group_max_lag_seconds", Self.labels(group), Self.seconds(oldest))
        }
        out.family("kafka_consumergroup_group_sum_lag", "The group's lag over all its partitions.")
        for group in groups {
            out.sample("kafka_consumergroup_group_sum_lag", Self.labels(group), Double(group.totals.lag))
        }
        out.family(
            "marquee_lag_due",
            "Messages the group is expected to run now: main topics' lag and retry tiers' overdue messages."
        )
        for group in groups {
            out.sample("marquee_lag_due", Self.labels(group), Double(group.totals.dueLag))
        }
        out.family("marquee_lag_due_seconds", "Age of the group's oldest due message (0 when nothing is due).")
        for group in groups {
            out.sample(
                "marquee_lag_due_seconds",
                Self.labels(group),
                group.totals.dueLag > 0 ? Self.seconds(group.totals.lagAge) : 0
            )
        }
        out.family("marquee_lag_members", "Members of the group.")
        for group in groups {
            out.sample("marquee_lag_members", Self.labels(group), Double(group.members))
        }
        out.family(
            "marquee_lag_group_status",
            "1 for the group's status over the window (OK, LAGGING, STALLED, STOPPED), 0 for the others."
        )
        for group in groups {
            for status in LagStatus.allCases {
                out.sample(
                    "marquee_lag_group_status",
                    Self.labels(group) + [("status", status.rawValue)],
                    group.status == status ? 1 : 0
                )
            }
        }
        return out.text
    }

    private static func labels(_ group: GroupLag) -> [(String, String)] {
        [("group", group.group), ("stage", group.stage)]
    }

    private static func labels(_ group: GroupLag, _ partition: PartitionLag) -> [(String, String)] {
        Self.labels(group) + Self.partitionLabels(partition)
    }

    private static func partitionLabels(_ partition: PartitionLag) -> [(String, String)] {
        [("topic", partition.partition.topic), ("partition", "\(partition.partition.partition)")]
    }

    private static func seconds(_ duration: Duration?) -> Double {
        guard let duration else { return 0 }
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Prometheus text exposition lines.
struct MetricsText {
    private(set) var text = ""

    mutating func family(_ name: String, _ help: String) {
        self.text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        let rendered = labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",")
        let number = value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
        self.text += "\(name){\(rendered)} \(number)\n"
    }

    /// A label value with `\`, `"` and line breaks escaped.
    static func escaped(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
